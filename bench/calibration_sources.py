"""Where start-tile calibration's error comes from (``python bench/calibration_sources.py --help``).

For each random synthetic start scene of :mod:`bench/calibration.py <calibration>` the top-down
homography is fitted four times, swapping in the renderer's truth for one part at a time: the
table outline and the start tile's corners as calibration finds them, the true outline with the
found tile, the found outline with the true tile, and both true. Each fit is scored as
``bench/calibration.py`` scores calibration (RMS over the finished game's tile corners, mm, after
the best rigid motion). Prints the median and the count over 1 mm per variant as JSON, and per
palette the median and how far the found start tile's sides lie outside the true ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def scene_errors(seed: int, size) -> dict:
    import calibration as bench
    from meeplecam.calibration import scale as cscale
    from meeplecam.calibration import surface as csurface
    from meeplecam.vision import lens
    from meeplecam.vision.profile import Scale

    frame, frame_truth, final = bench.synth_scene(seed, "start", size)
    w, h = size
    surf = csurface.segment(frame)
    fit = cscale.fit_scale(frame, surf)
    px = np.concatenate([np.asarray(t["corners"], float) for t in final["tiles"]])
    mm = np.concatenate([np.asarray(t["corners_mm"], float) for t in final["tiles"]])
    found = {"table": surf.corners, "tile": fit.quads[0]}
    true = {
        "table": np.asarray(frame_truth["table"], float),
        "tile": np.asarray(frame_truth["tiles"][0]["corners"], float),
    }

    def rms(table, tile) -> float:
        und = [lens.undistort(p, surf.lens_k, size) for p in (table, tile)]
        hom, _ = cscale.fit_table_tiles(und[0], [und[1]], 45.0, size)
        scale = Scale((hom @ np.diag([w, h, 1.0])).tolist(), 45.0, 0, 1, surf.lens_k)
        return bench.rigid_rms(scale.to_table_points(px, w, h), mm)[0]

    return {
        "seed": seed,
        "palette": ("winter", "summer")[seed % 2],  # as bench/calibration.py draws them
        "tile_side_offsets_px": side_offsets(found["tile"], true["tile"]),
        "found": rms(found["table"], found["tile"]),
        "true outline": rms(true["table"], found["tile"]),
        "true tile": rms(found["table"], true["tile"]),
        "both true": rms(true["table"], true["tile"]),
    }


def side_offsets(found: np.ndarray, true: np.ndarray) -> list[float]:
    """How far each side of the found tile lies outside the true one (pixels, negative inside),
    at the side's middle: a rim printed along the tile's edge pulls every side in."""
    k = min(range(4), key=lambda r: float(np.linalg.norm(np.roll(found, r, axis=0) - true)))
    found = np.roll(found, k, axis=0)
    centre = true.mean(axis=0)
    out = []
    for i in range(4):
        a, b = true[i], true[(i + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        normal = np.array([d[1], -d[0]])
        if np.dot((a + b) / 2 - centre, normal) < 0:
            normal = -normal
        moved = (found[i] + found[(i + 1) % 4]) / 2 - (a + b) / 2
        out.append(round(float(np.dot(moved, normal)), 3))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenes", type=int, default=30, help="number of scenes (default 30)")
    p.add_argument("--seed", type=int, default=1000, help="first scene seed (default 1000)")
    p.add_argument("--size", default="1280x720", help="frame size (default 1280x720)")
    args = p.parse_args(argv)
    size = tuple(int(v) for v in args.size.lower().split("x"))
    rows = []
    for seed in range(args.seed, args.seed + args.scenes):
        try:
            rows.append(scene_errors(seed, size))
        except Exception as exc:  # a failed scene is a result too
            rows.append({"seed": seed, "error": f"{type(exc).__name__}: {exc}"})
        print(json.dumps(rows[-1]), file=sys.stderr)
    ok = [r for r in rows if "error" not in r]
    summary = {"scenes": len(rows), "failed": len(rows) - len(ok)}
    for key in ("found", "true outline", "true tile", "both true"):
        values = np.array([r[key] for r in ok])
        summary[key] = {
            "median_mm": round(float(np.median(values)), 2),
            "scenes_over_1mm": int((values > 1.0).sum()),
        }
    for palette in ("winter", "summer"):
        mine = [r for r in ok if r["palette"] == palette]
        if mine:
            offsets = np.concatenate([r["tile_side_offsets_px"] for r in mine])
            summary[palette] = {
                "scenes": len(mine),
                "found_median_mm": round(float(np.median([r["found"] for r in mine])), 2),
                "tile_side_offset_px_median": round(float(np.median(offsets)), 3),
            }
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
