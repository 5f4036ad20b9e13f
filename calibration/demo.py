"""A synthetic calibration view for ``meeplecam calibrate --demo`` and the tests.

The renderer of :mod:`meeplecam.vision.synth` draws a random table with the start tile alone, as the
wizard asks for; one standing follower of each colour in play is added in a row beside it. The
truth (table outline, homography, follower colours and base points) comes along.
"""

from __future__ import annotations

import numpy as np

DEMO_COLOURS = ("red", "yellow", "green", "blue", "black")


def demo_view(
    seed: int = 1,
    size=(1280, 720),
    colours=DEMO_COLOURS,
    palette: str = "winter",
    markers: bool = False,
):
    """(frame, truth) of a calibration view: the start tile and a row of followers; with
    ``markers`` the printed corner markers lie in the table's corners."""
    from meeplecam.engine import Game, Player, find_tileset
    from meeplecam.vision.synth.scene import Scene

    game = Game.start(find_tileset("winter"), [Player(c, c) for c in colours])
    sheets = printed_corner_markers() if markers else None
    return calibration_view(Scene(game, seed, palette, size, markers=sheets), colours, seed)


def printed_corner_markers():
    """The renderer's corner markers as ``meeplecam markers`` prints them."""
    from meeplecam.vision.synth.scene import MarkerSheets

    from .config import settings

    spec = settings("markers")
    return MarkerSheets(spec["dictionary"], float(spec["marker_mm"]), float(spec["margin_mm"]))


def calibration_view(scene, colours=DEMO_COLOURS, seed: int = 1):
    """(frame, truth) of ``scene``'s table as the wizard asks for it: its game's start tile
    alone, with one standing follower of each of ``colours`` in a row beside it."""
    from meeplecam.vision.synth import figures
    from meeplecam.vision.synth.config import bgr, config
    from meeplecam.vision.synth.render import render, truth
    from meeplecam.vision.synth.scene import TableState

    start = scene.game.start_turn
    state = TableState(((start.cell, start.tile, start.rotation),), (), None, (0,) * 0, 0)
    frame = render(scene, state, effects=False)
    cfg = config()["followers"]
    centre = np.asarray(scene.poses[start.cell].centre)
    followers = []
    side = 1.0 if centre[1] + 120 < scene.table_d else -1.0  # the row stays on the table
    xs = centre[0] + (np.arange(len(colours)) - (len(colours) - 1) / 2) * 40.0
    # The whole row moves to stay on the table (clipping each follower piled two in one place).
    xs += max(0.0, 40.0 - xs.min()) - max(0.0, xs.max() - (scene.table_w - 40.0))
    for x, name in zip(xs, colours, strict=True):
        base = np.array([x, centre[1] + side * 90.0])
        colour = bgr(cfg["colours"].get(name, "#808080"))
        figures.standing_figure(
            frame, scene.camera, base, colour, cfg["height_mm"], scene.optics.light_dir
        )
        followers.append(
            {
                "colour": name,
                "base_mm": base.tolist(),
                "base": scene.camera.project([base])[0].tolist(),
            }
        )
    frame = scene.optics.apply(frame, np.random.default_rng(seed))
    info = truth(scene, state)
    info["followers"] = followers
    return frame, info
