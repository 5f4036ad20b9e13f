"""The live scorer's pennant blot test on rendered games, with no profile (``python bench/blot.py
--help``).

For each synthetic game folder (``meeplecam synth`` output), every laid tile is cut with the
renderer's geometry (a stand-in for calibration) in the order it was laid, and a fresh
:class:`~meeplecam.vision.live.appearance.TerrainScorer` learns them in that order as the players
would confirm them. Before each pennant twin (M/N, O/P, F/G, Q/R, S/T) with no follower on it is
learned, the blot test reads it: its term for the true option, from -1 (surely the twin) to 1, is
counted right above 0.25, wrong below -0.25 (a margin the tracker commits on), else unsure. Reported
per folder and split into the turns before the table had shown a city with a pennant and one
without (``early``: the prior decides) and after (``late``). Results print as JSON (``--out FILE``
writes them too). Nothing here is a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from report import emit
from twins import TWIN_OF, laid_cells, tally

SURE = 0.25  # a blot term beyond this decides a pair of twins on its own (2 x 0.04 x 0.25 = 0.02)


def bench_folder(folder: Path) -> dict[str, int]:
    import numpy as np

    from meeplecam.engine import read_record_file, record_tileset
    from meeplecam.vision.live.appearance import TerrainScorer, _lab
    from meeplecam.vision.live.twins import choose_lightness

    tileset = record_tileset(read_record_file(folder / "record.json"))
    scorer = TerrainScorer()
    counts: dict[str, int] = {}
    for tile_id, rotation, covered, cell in laid_cells(folder, lambda tile_id: True):
        tile = tileset[tile_id]
        crop = scorer.prepare(cell)
        if tile_id in TWIN_OF and not covered:
            phase = "early" if choose_lightness(scorer.pennant_seen) is None else "late"
            keep = np.ones(crop.shape[:2], bool)
            says = scorer._pennant_term(_lab(crop), tile, rotation, keep)
            verdict = "right" if says > SURE else "wrong" if says < -SURE else "unsure"
            counts[f"{phase}_{verdict}"] = counts.get(f"{phase}_{verdict}", 0) + 1
        scorer.learn(crop, tile, rotation, cell=cell)
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", help="folders of synthetic games (game-* inside)")
    parser.add_argument("--count", type=int, default=20, help="games per folder")
    parser.add_argument("--out", metavar="FILE", help="also write the results here (JSON)")
    args = parser.parse_args(argv)
    emit(tally(args.folders, args.count, bench_folder), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
