"""Pennant twins told apart side by side on rendered games (``python bench/shields.py --help``).

What the review does at a game's end (``Review._shields_again``), on the last frame of each
synthetic game folder (``meeplecam synth`` output) cut with the renderer's geometry: the tiles of
each pennant pair (M/N, O/P, F/G, Q/R, S/T) with no follower on them, each turned north up
(``twins.shield_view``, measured against its city's median), and every split of them into as many
shielded tiles as the game laid scored by ``twins.shield_margin`` over the type's city. Reported:
pairs (groups with both kinds) whose true split scores highest, and the margins of the true split
and of the best wrong one. Nothing is learned and no model is built. Results print as JSON
(``--out FILE`` writes them too). Nothing here is a test.
"""

from __future__ import annotations

import argparse
import sys
from itertools import combinations
from pathlib import Path

from report import emit


def game_pairs(folder: Path) -> list[dict]:
    """Per pennant pair laid with both kinds and no follower: the true split's margin, the best
    wrong split's, and whether the true one wins."""
    import cv2

    from meeplecam.engine import Turn, read_record_file, record_tileset
    from meeplecam.engine.record import parse_event
    from meeplecam.vision.live.appearance import TerrainScorer
    from meeplecam.vision.live.replay import truth_rectifier
    from meeplecam.vision.live.review import city_of
    from meeplecam.vision.live.twins import has_pennant, pennant_pair, shield_margin, shield_view

    record = read_record_file(folder / "record.json")
    tileset = record_tileset(record)
    events = [parse_event(t, k + 1) for k, t in enumerate(record["turns"])]
    turns = [e for e in events if isinstance(e, Turn)]
    frame = cv2.imread(str(sorted((folder / "frames").glob("*.jpg"))[-1]))
    rectifier = truth_rectifier(folder / "frames")
    cells = [t.cell for t in turns] + [(0, 0)]
    window = (
        min(x for x, _ in cells) - 1,
        min(y for _, y in cells) - 1,
        max(x for x, _ in cells) + 1,
        max(y for _, y in cells) + 1,
    )
    board = rectifier.board(frame, window)
    scorer = TerrainScorer()
    groups: dict[tuple, list[Turn]] = {}
    for turn in turns:
        if turn.meeple is None:
            groups.setdefault(pennant_pair(tileset[turn.tile]), []).append(turn)
    out = []
    for group in groups.values():
        shielded = {k for k, t in enumerate(group) if has_pennant(tileset[t.tile])}
        if not 0 < len(shielded) < len(group):
            continue
        city = city_of(tileset[group[min(shielded)].tile], scorer.config)
        views = [
            shield_view(scorer.prepare(board.cell(*t.cell)), t.rotation, None, city) for t in group
        ]
        margins = {
            split: shield_margin(views, set(split), city)
            for split in combinations(range(len(group)), len(shielded))
        }
        truth = margins.pop(tuple(sorted(shielded)))
        wrong = max(margins.values(), default=float("-inf"))
        out.append(
            {
                "tiles": "".join(t.tile for t in group),
                "right": truth > wrong,
                "true_margin": round(truth, 1),
                "best_wrong_margin": round(wrong, 1),
            }
        )
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", help="folders of synthetic games (game-*/)")
    parser.add_argument("--out", help="also write the results here (JSON)")
    args = parser.parse_args(argv)
    results = {}
    for d in args.dirs:
        pairs = []
        for folder in sorted(Path(d).glob("game-*")):
            pairs += [{"game": folder.name, **p} for p in game_pairs(folder)]
        results[d] = {
            "pairs": len(pairs),
            "right": sum(p["right"] for p in pairs),
            "true_margin_min": min((p["true_margin"] for p in pairs), default=None),
            "best_wrong_margin_max": max((p["best_wrong_margin"] for p in pairs), default=None),
            "wrong": [p for p in pairs if not p["right"]],
        }
        print(f"{d}: {results[d]['right']}/{results[d]['pairs']}", file=sys.stderr)
    emit(results, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
