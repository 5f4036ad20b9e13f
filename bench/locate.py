"""How well the table and the start tile are found with no profile (``python bench/locate.py
--help``): what the live tracker does on its first settled frame (``vision.table``).

For each synthetic game folder (``meeplecam synth`` output) the first frames with no hand over the
table are read: the table outline's largest corner error (px, and % of the table's diagonal) on
each, and on each that shows the start tile alone, the start tile's largest corner error (px, the
corners' order aside; the tracker locates on the first settled one, so every such frame counts).
Results print as JSON (``--out FILE`` writes them too).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def _views(folder: Path, frames: int):
    """(frame path, truth) of the first ``frames`` frames with no hand over the table."""
    count = 0
    for truth_path in sorted((folder / "truth").glob("*.json")):
        truth = json.loads(truth_path.read_text())
        if truth["hands"]:
            continue
        yield folder / "frames" / f"{truth_path.stem}.jpg", truth
        count += 1
        if count >= frames:
            return


def _corner_error(found, truth) -> float:
    found, truth = np.asarray(found, float), np.asarray(truth, float)
    return float(min(np.abs(np.roll(found, k, axis=0) - truth).max() for k in range(4)))


def bench_game(folder: Path, frames: int) -> dict:
    import cv2

    from meeplecam.vision.errors import VisionError
    from meeplecam.vision.table import find_start_tile, table_outline

    outline, start = [], []
    for path, truth in _views(folder, frames):
        frame = cv2.imread(str(path))
        table = np.asarray(truth["table"], float)
        diag = float(np.linalg.norm(table[2] - table[0]))
        try:
            corners, _ = table_outline(frame)
            err = _corner_error(corners, table)
            outline.append(
                {"frame": path.stem, "px": round(err, 1), "pct": round(100 * err / diag, 2)}
            )
        except VisionError as exc:
            outline.append({"frame": path.stem, "error": str(exc)})
        if len(truth["tiles"]) == 1:
            try:
                found = find_start_tile(frame)
                err = _corner_error(found.corners, truth["tiles"][0]["corners"])
                start.append({"frame": path.stem, "px": round(err, 1)})
            except VisionError as exc:
                start.append({"frame": path.stem, "error": str(exc)})
    return {"game": folder.name, "outline": outline, "start_tile": start}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="+", metavar="DIR", help="folders of synthetic games")
    parser.add_argument("--frames", type=int, default=6, help="hand-free frames read per game")
    parser.add_argument("--out", metavar="FILE", help="also write the results here (JSON)")
    args = parser.parse_args(argv)
    games = []
    for root in args.games:
        for folder in sorted(Path(root).glob("game-*")):
            games.append(bench_game(folder, args.frames))
            print(f"{folder}", file=sys.stderr)
    outline = [o.get("px", np.inf) for g in games for o in g["outline"]]
    pct = [o.get("pct", np.inf) for g in games for o in g["outline"]]
    start = [s.get("px", np.inf) for g in games for s in g["start_tile"]]
    first = [g["start_tile"][0].get("px", np.inf) for g in games if g["start_tile"]]
    summary = {
        "games": len(games),
        "outline_frames": len(outline),
        "outline_median_px": round(float(np.median(outline)), 1) if outline else None,
        "outline_within_1pct": int(np.sum(np.asarray(pct) <= 1.0)),
        "outline_over_50px_or_failed": int(np.sum(np.asarray(outline) > 50)),
        "start_tile_games": len(first),
        "start_tile_within_2px_first_frame": int(np.sum(np.asarray(first) <= 2.0)),
        "start_tile_failed_first_frame": int(np.sum(np.isinf(first))),
        "start_tile_frames": len(start),
        "start_tile_frames_within_2px": int(np.sum(np.asarray(start) <= 2.0)),
        "start_tile_frames_failed": int(np.sum(np.isinf(start))),
    }
    text = json.dumps({"summary": summary, "games": games}, indent=2)
    print(json.dumps(summary, indent=2))
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
