"""Calibration precision over random synthetic scenes (``python bench/calibration.py --help``).

For each scene (a random game on a random table, camera, lens, light and palette from
:mod:`meeplecam.vision.synth`), calibration runs on one rendered frame exactly as
``meeplecam calibrate`` does (table outline, lens, tiles, top-down homography, and its
warnings; the follower step left out):

- ``start``: the frame shows the start tile alone (the calibration the wizard asks for);
- ``game``: the frame shows the game a third of the way through (calibrating from any tiles).

With ``--markers`` the printed table-corner markers lie in the table's corners and calibration
uses them (``meeplecam calibrate --markers``).

Then every tile corner of the finished game (its true image position, distortion included) is
mapped to the table with the calibration and compared with its true position in mm, after the
rigid motion (no scale) that best aligns the calibration's axes with the renderer's. Reported:
RMS of those errors per scene and over all scenes (target <= 1 mm), and the table outline's largest
corner error over the table diagonal (target <= 1 %): over all scenes, and over the scenes whose
profile the wizard saves without a warning (what a user gets).

Results go to ``--out`` (JSON with every scene, and a CSV).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import numpy as np


def rigid_rms(est: np.ndarray, truth: np.ndarray) -> tuple[float, np.ndarray]:
    """RMS distance after the best rotation + translation of ``est`` onto ``truth``."""
    ce, ct = est.mean(axis=0), truth.mean(axis=0)
    u, _, vt = np.linalg.svd((est - ce).T @ (truth - ct))
    if np.linalg.det(u @ vt) < 0:
        vt[-1] *= -1
    aligned = (est - ce) @ (u @ vt) + ct
    err = np.linalg.norm(aligned - truth, axis=1)
    return float(np.sqrt((err**2).mean())), err


def synth_scene(seed: int, mode: str, size, markers: bool = False):
    """(calibration frame, truth of the frame, truth of the finished game) from the renderer;
    with ``markers`` the printed table-corner markers lie in the table's corners."""
    from meeplecam.calibration.demo import printed_corner_markers
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.render import render, truth
    from meeplecam.vision.synth.scene import Scene
    from meeplecam.vision.synth.sequence import table_states

    rng = np.random.default_rng(seed)
    game = random_game(find_tileset("winter"), int(rng.integers(2, 5)), seed=seed)
    palette = ("winter", "summer")[seed % 2]
    scene = Scene(game, seed, palette, size, markers=printed_corner_markers() if markers else None)
    states = [after for _, _, after in table_states(game)]
    state = states[0] if mode == "start" else states[len(states) // 3]
    frame = render(scene, state)
    return frame, truth(scene, state), truth(scene, states[-1])


def measure(frame, frame_truth, final_truth, markers: bool = False) -> dict:
    """Calibrate ``frame`` as ``meeplecam calibrate`` (``--markers``) does (its follower step
    left out: the frame shows the tiles alone) and measure the outline and the homography
    against the truth; the wizard's warnings are kept (a step that warns saves nothing without
    ``--force``)."""
    from meeplecam.calibration import wizard
    from meeplecam.calibration.table import to_pixels

    h, w = frame.shape[:2]
    table_true = np.asarray(frame_truth["table"], float)
    diag = float(np.linalg.norm(table_true[2] - table_true[0]))
    out = {"tiles_in_frame": len(frame_truth["tiles"])}
    result = wizard.run(
        frame, wizard.Options(followers=False, markers=markers), say=lambda line: None
    )
    corners = to_pixels(result.profile.table.corners, w, h)
    out["outline_error"] = float(np.linalg.norm(corners - table_true, axis=1).max() / diag)
    out["outline_contrast"] = result.surface.contrast
    out["warnings"] = result.warnings
    sc = result.profile.scale
    px = np.concatenate([np.asarray(t["corners"], float) for t in final_truth["tiles"]])
    mm = np.concatenate([np.asarray(t["corners_mm"], float) for t in final_truth["tiles"]])
    rms, err = rigid_rms(sc.to_table_points(px, w, h), mm)
    # the live grid is laid from the start tile: where the profile puts it matters as well as
    # the shape (which rigid_rms measures): the true start tile's corners against the profile's
    # start square, [0, tile] mm on both axes (corners' order aside)
    start = next(t for t in final_truth["tiles"] if (t["x"], t["y"]) == (0, 0))
    placed = sc.to_table_points(np.asarray(start["corners"], float), w, h)
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float) * float(sc.tile_mm)
    out["start_tile_mm"] = float(
        min(np.linalg.norm(np.roll(placed, k, axis=0) - square, axis=1).max() for k in range(4))
    )
    out.update(
        lens_k=sc.lens_k,
        tiles_used=sc.tiles_used,
        tile_px=sc.tile_px,
        corners=len(px),
        rms_mm=rms,
        max_mm=float(err.max()),
    )
    return out


def _precision(rows) -> dict:
    rms = np.array([r["rms_mm"] for r in rows])
    outline = np.array([r["outline_error"] for r in rows])
    start = np.array([r["start_tile_mm"] for r in rows])
    return {
        "scenes": len(rows),
        "rms_mm_all_corners": float(np.sqrt((rms**2).mean())),
        "rms_mm_median_scene": float(np.median(rms)),
        "rms_mm_worst_scene": float(rms.max()),
        "scenes_over_1mm": int((rms > 1.0).sum()),
        "outline_error_max_pct": float(100 * outline.max()),
        "outline_error_median_pct": float(100 * np.median(outline)),
        "scenes_over_1pct": int((outline > 0.01).sum()),
        "start_tile_mm_median_scene": float(np.median(start)),
        "start_tile_mm_worst_scene": float(start.max()),
        "scenes_start_tile_over_2mm": int((start > 2.0).sum()),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenes", type=int, default=100, help="number of random scenes (default 100)")
    p.add_argument("--seed", type=int, default=1000, help="first scene seed (default 1000)")
    p.add_argument("--mode", choices=("start", "game", "both"), default="both")
    p.add_argument(
        "--size",
        default="1920x1080",
        help="frame size (default 1920x1080: what calibrate asks a webcam for)",
    )
    p.add_argument(
        "--markers",
        action="store_true",
        help="the printed table-corner markers (meeplecam markers) lie in the table's corners "
        "and calibration uses them (meeplecam calibrate --markers)",
    )
    p.add_argument("--out", default="bench/results/calibration", help="output path without suffix")
    args = p.parse_args(argv)
    size = tuple(int(v) for v in args.size.lower().split("x"))
    modes = ("start", "game") if args.mode == "both" else (args.mode,)
    rows, started = [], time.monotonic()
    for mode in modes:
        for seed in range(args.seed, args.seed + args.scenes):
            row = {"mode": mode, "seed": seed}
            try:
                frames = synth_scene(seed, mode, size, args.markers)
                row.update(measure(*frames, markers=args.markers))
            except Exception as exc:  # a failed scene is a result too
                row["error"] = f"{type(exc).__name__}: {exc}"
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    summary = {
        "source": "renderer",
        "markers": args.markers,
        "size": list(size),
        "scenes": args.scenes,
        "first_seed": args.seed,
        "seconds": round(time.monotonic() - started, 1),
    }
    for mode in modes:
        ok = [r for r in rows if r["mode"] == mode and "error" not in r]
        failed = [r for r in rows if r["mode"] == mode and "error" in r]
        if not ok:
            summary[mode] = {"failed": len(failed)}
            continue
        saved = [r for r in ok if not r["warnings"]]
        summary[mode] = {
            "failed": len(failed),
            **_precision(ok),
            # what a user gets: a profile saved without a warning
            "saved_without_warning": _precision(saved) if saved else {"scenes": 0},
        }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"summary": summary, "scenes": rows}, indent=1))
    keys = sorted({k for r in rows for k in r})
    with out.with_suffix(".csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
