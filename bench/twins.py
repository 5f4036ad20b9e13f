"""The appearance model's pennant-twin test on rendered games (``python bench/twins.py --help``).

For each synthetic game folder (``meeplecam synth`` output), every tile of a pennant pair (M/N,
O/P, F/G, Q/R, S/T) is cut from the first settled frame with no hand that shows it, with the
renderer's geometry (a stand-in for calibration), and the model of the art the game was drawn
with (``vision.model.build_from_art``) compares it with both twins' art where they differ
(``AppearanceModel.twin_distances``). Reported per folder: right and wrong over the cells with no
follower on them (a follower covers part of the city; the live scorer leaves its pixels out, this
census does not), how many were near a tie (margin under 0.1 of 1), and the same over all cells.
``--blur`` sets the art's blur (``vision.model.TWIN_BLUR``, of the tile's side; 0: sharp art) to
compare. Results print as JSON (``--out FILE`` writes them too). Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from report import emit

PAIRS = ("MN", "OP", "FG", "QR", "ST")
TWIN_OF = {a: b for pair in PAIRS for a, b in (pair, pair[::-1])}
INSET = 0.02  # of the cell trimmed, as the live scorer trims it for the model


def laid_cells(folder: Path, wanted=lambda tile_id: tile_id in TWIN_OF):
    """(tile, rotation, follower on it, cell picture) of each tile laid whose id is
    ``wanted`` (the pennant twins unless told), in the order they were laid, each cut from the
    first settled frame with no hand that shows it."""
    import cv2

    from meeplecam.vision.live.replay import truth_rectifier

    rectifier = truth_rectifier(folder / "frames")
    seen: set = set()
    for truth_path in sorted((folder / "truth").glob("*.json")):
        truth = json.loads(truth_path.read_text())
        if truth["phase"] != "settled" or truth["hands"]:
            continue
        frame = None
        for tile in truth["tiles"]:
            cell = (tile["x"], tile["y"])
            if cell in seen:
                continue
            seen.add(cell)
            if not wanted(tile["tile"]):
                continue
            if frame is None:
                frame = cv2.imread(str(folder / "frames" / f"{truth_path.stem}.jpg"))
            board = rectifier.board(frame, (*cell, *cell))
            covered = any((f["x"], f["y"]) == cell for f in truth["followers"])
            yield tile["tile"], tile["rotation"], covered, board.image


def bench_folder(folder: Path) -> dict:
    from meeplecam.engine import read_record_file, record_tileset
    from meeplecam.vision.model import build_from_art, features

    record = read_record_file(folder / "record.json")
    tileset = record_tileset(record)
    truth = json.loads(min((folder / "truth").glob("*.json")).read_text())
    model = build_from_art(tileset, truth["palette"])
    counts = {"free": [0, 0, 0], "all": [0, 0, 0]}  # right, wrong, near a tie
    for tile, rotation, covered, cell in laid_cells(folder):
        if TWIN_OF[tile] not in tileset:
            continue
        d = round(cell.shape[0] * INSET)
        feats = features(cell[d:-d, d:-d], model.size)
        found = model.twin_distances(feats, (tile, rotation), (TWIN_OF[tile], rotation))
        if found is None:
            continue
        mine, theirs = found
        margin = (theirs - mine) / (theirs + mine + 1e-9)
        for key in ("all",) if covered else ("all", "free"):
            counts[key][0 if margin > 0 else 1] += 1
            counts[key][2] += abs(margin) < 0.1
    return {
        f"{what}_{name}": n
        for what, (right, wrong, near) in counts.items()
        for name, n in (("right", right), ("wrong", wrong), ("near_tie", near))
    }


def tally(folders, count: int, per_game) -> dict[str, dict[str, int]]:
    """Per folder, the sums of ``per_game(game folder)``'s counts over its first ``count``
    games, with the running totals on stderr."""
    results = {}
    for folder in folders:
        total: dict[str, int] = {}
        for game in sorted(Path(folder).glob("game-*"))[:count]:
            for key, n in per_game(game).items():
                total[key] = total.get(key, 0) + n
            print(f"{game.name}: {total}", file=sys.stderr, flush=True)
        results[folder] = dict(sorted(total.items()))
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", help="folders of synthetic games (game-* inside)")
    parser.add_argument("--count", type=int, default=20, help="games per folder")
    parser.add_argument("--blur", type=float, help="the art's blur, of the tile's side (0: sharp)")
    parser.add_argument("--out", metavar="FILE", help="also write the results here (JSON)")
    args = parser.parse_args(argv)
    from meeplecam.vision import model

    if args.blur is not None:
        model.TWIN_BLUR = args.blur
    results = {"twin_blur": model.TWIN_BLUR, "folders": {}}
    results["folders"] = tally(args.folders, args.count, bench_folder)
    emit(results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
