"""``meeplecam calibrate --demo --seed N`` over many seeds (``python bench/calibrate_demo.py
--help``): how often the wizard saves a profile with the start tile at its true size (within 3 %)
and the five follower colours named right, how often it warns (and saves nothing without
``--force``), and how often it saves something wrong without a word. ``--markers``: the same with
the printed corner markers laid (``calibrate --demo --markers``).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
from report import emit

FIVE = ["red", "yellow", "green", "blue", "black"]


def seed_row(seed: int, size, markers: bool = False) -> dict:
    from meeplecam.calibration import wizard
    from meeplecam.calibration.demo import demo_view

    frame, truth = demo_view(seed, size=size, markers=markers)
    result = wizard.run(frame, wizard.Options(markers=markers), say=lambda line: None)
    tile = np.asarray(truth["tiles"][0]["corners"], float)
    true_px = float(np.linalg.norm(tile - np.roll(tile, 1, axis=0), axis=1).mean())
    scale = result.profile.scale
    followers = result.profile.followers
    return {
        "seed": seed,
        "saved": result.ok,
        "warnings": result.warnings,
        "tile_right": scale is not None and abs(scale.tile_px / true_px - 1) < 0.03,
        "names": followers.names if followers is not None else [],
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=20, help="seeds 1..N (default 20)")
    p.add_argument("--size", default="1280x720", help="frame size (default 1280x720)")
    p.add_argument("--markers", action="store_true", help="the corner markers laid (--markers)")
    p.add_argument("--out", metavar="FILE", help="also write every seed's row (JSON)")
    args = p.parse_args(argv)
    size = tuple(int(v) for v in args.size.lower().split("x"))
    rows = []
    for seed in range(1, args.seeds + 1):
        rows.append(seed_row(seed, size, args.markers))
        print(json.dumps(rows[-1]), file=sys.stderr)
    right = [r for r in rows if r["saved"] and r["tile_right"] and r["names"] == FIVE]
    summary = {
        "size": list(size),
        "markers": args.markers,
        "seeds": len(rows),
        "saved_right": len(right),
        "warned": sum(not r["saved"] for r in rows),
        "saved_wrong": [r["seed"] for r in rows if r["saved"] and r not in right],
    }
    emit(summary, args.out, {"summary": summary, "seeds": rows}, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
