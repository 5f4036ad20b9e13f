"""Zoomed copies of rendered games (``python bench/zoom.py --help``): the camera closed in on the
play area, so that table lies to every side and no table edge is in the picture.

Each frame of a game written by ``meeplecam synth`` is cropped to its final board plus a margin
(``--margin`` px), for the games whose final board lies that far inside the table's outline (the
crop would otherwise show the edge). The record and the truth files are copied unchanged: replay
them with ``python bench/live.py latency --games OUT --geometry find`` (the tracker finds the
start tile itself; the truth's pixel positions no longer hold).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np


def board_box(game: Path, margin: int):
    """The crop (x0, y0, x1, y1) around the final board, kept inside the table's outline, or
    None when the board itself reaches the table's edge."""
    last = json.loads(sorted((game / "truth").glob("*.json"))[-1].read_text())
    corners = np.concatenate([np.asarray(t["corners"], float) for t in last["tiles"]])
    table = np.asarray(last["table"], float)
    xs, ys = np.sort(table[:, 0]), np.sort(table[:, 1])
    inner = np.array([xs[1] + EDGE, ys[1] + EDGE, xs[2] - EDGE, ys[2] - EDGE])
    board = np.r_[corners.min(axis=0), corners.max(axis=0)]
    if (board[:2] <= inner[:2]).any() or (board[2:] >= inner[2:]).any():
        return None
    x0, y0 = np.floor(np.maximum(board[:2] - margin, inner[:2])).astype(int)
    x1, y1 = np.ceil(np.minimum(board[2:] + margin, inner[2:])).astype(int)
    return int(x0), int(y0), int(x1), int(y1)


EDGE = 4  # px kept clear of the table's edge (its rim and shadow)


def main(argv=None) -> int:
    import cv2

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("games", type=Path, help="folder of rendered games (meeplecam synth)")
    p.add_argument("out", type=Path, help="folder for the zoomed copies")
    p.add_argument("--margin", type=int, default=25, help="px around the final board (25)")
    args = p.parse_args(argv)
    kept = 0
    for game in sorted(d for d in args.games.iterdir() if (d / "record.json").is_file()):
        box = board_box(game, args.margin)
        if box is None:
            continue
        x0, y0, x1, y1 = box
        dest = args.out / game.name
        (dest / "frames").mkdir(parents=True, exist_ok=True)
        shutil.copy(game / "record.json", dest)
        shutil.copytree(game / "truth", dest / "truth", dirs_exist_ok=True)
        for frame in sorted((game / "frames").glob("*.jpg")):
            image = cv2.imread(str(frame))
            cv2.imwrite(str(dest / "frames" / frame.name), image[y0:y1, x0:x1])
        kept += 1
        print(f"{game.name}: {x1 - x0}x{y1 - y0} px at ({x0}, {y0})", file=sys.stderr)
    print(f"{kept} zoomed game(s) in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
