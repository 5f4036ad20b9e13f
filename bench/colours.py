"""Follower colours from one calibration frame, classified on rendered followers
(``python bench/colours.py --help``).

The calibration acceptance: on synthetic tables with random camera pose and light, the follower
colours learned from one frame classify at least 99.5 % of rendered followers correctly. For each
random scene (a random game of five players, the winter or the summer palette, table, camera, lens
and light drawn from the seed):

1. the wizard (``meeplecam calibrate``) runs on the view it asks for: the game's start tile alone
   with one standing follower of each colour beside it, the colours named left to right as the
   user gives them (``--colours``); where it does not find all five, the user taps them (the
   page's taps: here their true places);
2. four table states spread over the game are rendered, and every follower on the board
   (knights, thieves and monks standing, farmers lying, in shade or glare) is classified from its
   own pixels with the profile's colours (median pixel, nearest colour, allowing for the chroma
   it takes from the median of what is around it: what the profile's ``classify`` does). A
   follower's pixels are those that change when the frame is rendered again with its player's
   colour swapped (the figure changes; its shadow, the tiles and the noise do not; one player's
   colour at a time, so that a neighbour of another colour is left out), within half a tile of
   the figure's middle; what is around it, the pixels there that no figure of its player changes.

Prints a JSON summary (followers classified right, per colour, per pose; scenes where calibration
warned) and writes the per-scene rows with ``--out``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

import numpy as np
from report import emit

COLOURS = ["red", "yellow", "green", "blue", "black"]
STATES = 4  # table states rendered per scene
CHANGED = 40  # |BGR difference| (sum of channels) of a figure's pixel under swapped colours


def _figure_pixels(frame, change, middle, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """BGR pixels of ``frame`` within ``radius`` of ``middle``: those that the figure covers
    whole (whose ``change`` under swapped colours is over half the largest there: a small
    figure's rim is blended with the tile under it), and those it does not touch (what is
    around it)."""
    h, w = frame.shape[:2]
    x0, y0 = np.clip(np.floor(middle - radius).astype(int), 0, [w, h])
    x1, y1 = np.clip(np.ceil(middle + radius).astype(int) + 1, 0, [w, h])
    ys, xs = np.mgrid[y0:y1, x0:x1]
    near = (xs - middle[0]) ** 2 + (ys - middle[1]) ** 2 <= radius**2
    window = np.where(near, change[y0:y1, x0:x1], 0)
    crop = frame[y0:y1, x0:x1]
    around = crop[near & (window <= CHANGED)]
    if window.max() <= CHANGED:
        return np.empty((0, 3), frame.dtype), around
    return crop[window > max(CHANGED, 0.5 * window.max())], around


def _middle(scene, follower) -> np.ndarray:
    """Where a follower's figure is in the frame: the middle of a standing one, a lying one's
    centre."""
    from meeplecam.vision.synth.config import config

    base = np.asarray(follower["base_mm"], float)
    height = config()["followers"]["height_mm"] if follower["pose"] == "standing" else 0.0
    return scene.camera.project([[base[0], base[1], -height / 2]])[0]


def _calibrated_colours(frame, taps, row):
    """The wizard's follower colours from ``frame`` (found, or at the ``taps``), or None; its
    warnings go to ``row``."""
    from meeplecam.calibration import wizard
    from meeplecam.calibration.errors import CalibrationError

    options = wizard.Options(colour_names=COLOURS, taps=taps)
    try:
        result = wizard.run(frame, options, say=lambda line: None)
    except CalibrationError as exc:  # e.g. a follower not found: the user is told and taps it
        row["warnings"] = [str(exc)]
        return None
    row["warnings"] = result.warnings
    model = result.profile.followers
    return model if model is not None and model.names == COLOURS else None


def scene_rows(seed: int, size) -> dict:
    from meeplecam.calibration.colours import classify_patches, to_lab
    from meeplecam.calibration.demo import calibration_view
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.render import Extras, render, truth
    from meeplecam.vision.synth.scene import Scene
    from meeplecam.vision.synth.sequence import table_states

    palette = ("winter", "summer")[seed % 2]
    game = random_game(find_tileset("winter"), len(COLOURS), seed=seed)
    scene = Scene(game, seed, palette, size)
    frame, view = calibration_view(scene, COLOURS, seed)
    row = {"seed": seed, "palette": palette, "tapped": False, "warnings": [], "followers": []}
    model = _calibrated_colours(frame, None, row)
    if model is None:  # the page then asks the user to tap the followers
        row["tapped"] = True
        model = _calibrated_colours(frame, [tuple(f["base"]) for f in view["followers"]], row)
    row["calibrated"] = model is not None
    if model is None:
        return row
    states = [after for _, _, after in table_states(game)]
    corners = np.asarray(truth(scene, states[0])["tiles"][0]["corners"], float)
    radius = 0.5 * float(np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1).mean())
    true_colours = list(scene.colours)
    picked = np.linspace(len(states) // 4, len(states) - 1, STATES, dtype=int)
    for state in [states[i] for i in picked]:
        extras = Extras(seed=seed)
        shown = render(scene, state, extras)
        changed = []  # per player: how much each pixel changes with that player's colour
        for player, colour in enumerate(true_colours):
            scene.colours = list(true_colours)
            scene.colours[player] = tuple(255 - c for c in colour)
            swapped = render(scene, state, extras)
            changed.append(np.abs(shown.astype(int) - swapped.astype(int)).sum(axis=2))
        scene.colours = true_colours
        patches, arounds, names, poses = [], [], [], []
        for follower in truth(scene, state, extras)["followers"]:
            change = changed[follower["player"]]
            pixels, around = _figure_pixels(shown, change, _middle(scene, follower), radius)
            if len(pixels) < 5 or len(around) < 5:
                continue  # hidden under another figure
            patches.append(to_lab(pixels))
            arounds.append(to_lab(around))
            names.append(follower["colour"])
            poses.append(follower["pose"])
        read = classify_patches(model, patches, arounds)
        for name, got, pose in zip(names, read, poses, strict=True):
            row["followers"].append({"colour": name, "read": got, "pose": pose})
    return row


def summary(rows) -> dict:
    followers = [f for r in rows for f in r["followers"]]
    right = sum(f["colour"] == f["read"] for f in followers)

    def rate(subset) -> str:
        ok = sum(f["colour"] == f["read"] for f in subset)
        return f"{ok}/{len(subset)}"

    # what a user gets: a step that warns saves no profile (without --force)
    unwarned = [f for r in rows if not r["warnings"] for f in r["followers"]]
    return {
        "scenes": len(rows),
        "scenes_calibrated": sum(r["calibrated"] for r in rows),
        "scenes_followers_tapped": sum(r["tapped"] for r in rows),
        "scenes_with_warnings": sum(bool(r["warnings"]) for r in rows),
        "followers": len(followers),
        "followers_right": right,
        "followers_right_pct": round(100 * right / max(1, len(followers)), 2),
        "followers_right_in_scenes_saved_without_warning": rate(unwarned),
        "per_colour": {c: rate([f for f in followers if f["colour"] == c]) for c in COLOURS},
        "per_pose": {
            p: rate([f for f in followers if f["pose"] == p]) for p in ("standing", "lying")
        },
        "confusions": Counter(
            f"{f['colour']}->{f['read']}" for f in followers if f["colour"] != f["read"]
        ).most_common(),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenes", type=int, default=30, help="number of scenes (default 30)")
    p.add_argument("--seed", type=int, default=1000, help="first scene seed (default 1000)")
    p.add_argument("--size", default="1280x720", help="frame size (default 1280x720)")
    p.add_argument("--out", metavar="FILE", help="also write the summary and every scene (JSON)")
    args = p.parse_args(argv)
    size = tuple(int(v) for v in args.size.lower().split("x"))
    rows = []
    started = time.monotonic()
    for k in range(args.scenes):
        rows.append(scene_rows(args.seed + k, size))
        r = rows[-1]
        wrong = sum(f["colour"] != f["read"] for f in r["followers"])
        print(
            f"scene {r['seed']}: {len(r['followers'])} followers, {wrong} wrong"
            + (", followers tapped" if r["tapped"] else "")
            + ("" if r["calibrated"] else ", calibration found no colours")
            + (f" ({time.monotonic() - started:.0f} s)"),
            file=sys.stderr,
        )
    out = summary(rows)
    emit(out, args.out, {"summary": out, "scenes": rows}, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
