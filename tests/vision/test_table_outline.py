"""Stage 1: the table's outline."""

import numpy as np
import pytest

from meeplecam.vision.table import four_lines, table_outline


def test_a_table_half_in_the_lamps_fall_off_is_outlined_whole():
    """Synthetic scene 1319: the lamp lights the table's right half; its left half is as dark as
    the floor (the two share a colour class) but keeps the wood's hue. The outline took in the
    lit half alone, and calibration then took a follower for the start tile."""
    pytest.importorskip("meeplecam.vision.synth.render")
    from meeplecam.calibration.demo import calibration_view
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.scene import Scene

    game = random_game(find_tileset("winter"), 5, seed=1319)
    scene = Scene(game, 1319, "summer", (1280, 720))
    frame, view = calibration_view(scene, ["red", "yellow", "green", "blue", "black"], 1319)
    corners, _ = table_outline(frame)
    true = np.asarray(view["table"])
    diagonal = np.linalg.norm(true[2] - true[0])
    assert np.linalg.norm(corners - true, axis=1).max() < 0.01 * diagonal


def test_a_region_too_small_for_sides_has_no_four_lines():
    speck = np.array([[10.0, 10.0], [11.0, 10.0], [11.0, 11.0], [10.0, 11.0]] * 6)
    assert four_lines(speck) is None


def test_a_table_of_the_floors_colour_is_outlined_by_its_hue():
    """Synthetic scene 7002: a grey-brown table on a pinkish wood floor of the same lightness
    (Lab contrast 5 at the rim, the lamp's fall-off larger than that). By colour the table
    was refused; its hue differs by a few units all over, and its sides are straight."""
    pytest.importorskip("meeplecam.vision.synth.render")
    from meeplecam.calibration.demo import calibration_view
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.scene import Scene
    from meeplecam.vision.table import locate_table

    game = random_game(find_tileset("winter"), 2, seed=7002)
    scene = Scene(game, 7002, "winter", (1280, 720))
    frame, view = calibration_view(scene, ["red", "yellow"], 7002)
    found = locate_table(frame)
    assert found.region.contrast < 10  # the colour alone would not do
    true = np.asarray(view["table"])
    diagonal = np.linalg.norm(true[2] - true[0])
    assert np.linalg.norm(found.corners - true, axis=1).max() < 0.01 * diagonal
    assert found.trusted and found.by_hue and found.weakest_side >= 0.25


def _table_seen(yaw_deg: float) -> np.ndarray:
    """A 1200 x 800 mm table's corners seen by a 1280 x 720 camera tilted 25° towards it and
    turned ``yaw_deg`` about the vertical."""
    k = np.array([[900.0, 0, 639.5], [0, 900.0, 359.5], [0, 0, 1]])
    tilt, yaw = np.deg2rad(25), np.deg2rad(yaw_deg)
    r = np.array([[1, 0, 0], [0, np.cos(tilt), -np.sin(tilt)], [0, np.sin(tilt), np.cos(tilt)]])
    r = r @ np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    hom = k @ np.column_stack([r[:, 0], r[:, 1], [-600.0, -300.0, 1500.0]])
    corners = np.array([[0, 0], [1200, 0], [1200, 800], [0, 800]], float)
    seen = np.c_[corners, np.ones(4)] @ hom.T
    return seen[:, :2] / seen[:, 2:]


def test_a_tables_proportions_are_sure_only_where_a_pixel_does_not_change_them():
    from meeplecam.vision.table import rectangle_aspect, sure_aspect

    turned = _table_seen(12)  # both pairs of sides meet far off: the proportions are well told
    assert sure_aspect(turned, (1280, 720)) == pytest.approx(1.5, rel=1e-3)
    # Turned by a degree, the left and right sides nearly parallel: exact corners still give the
    # proportions, but a pixel off would change them by several per cent.
    nearly = _table_seen(1)
    assert rectangle_aspect(nearly, (1280, 720)) == pytest.approx(1.5, rel=1e-3)
    assert sure_aspect(nearly, (1280, 720)) is None


def test_how_much_a_pixel_changes_a_tables_proportions():
    from meeplecam.vision.table import aspect_wobble

    assert aspect_wobble(_table_seen(12), (1280, 720)) < 0.02
    assert aspect_wobble(_table_seen(1), (1280, 720)) > 0.02
    head_on = np.array([[100, 100], [1100, 100], [1100, 700], [100, 700]], float)
    assert aspect_wobble(head_on, (1280, 720)) == np.inf  # no perspective: no proportions


def _scripted_refinement(monkeypatch, rounds):
    """Each round of the sub-pixel refinement returns the next of ``rounds`` ((shift of every
    corner in px, per-side support)), whatever it is given."""
    from meeplecam.vision import edges

    rough = np.array([[100.0, 100.0], [900.0, 100.0], [900.0, 600.0], [100.0, 600.0]])
    script = iter(rounds)

    def refine(frame, quad):
        shift, support = next(script)
        return rough + shift, 0.0, support

    monkeypatch.setattr(edges, "refine_outline", refine)
    return rough


def test_the_edges_are_followed_while_the_sides_grow_straighter_as_a_whole(monkeypatch):
    """Snowy game 07006: the search band reaches a faint table edge one side at a time, and the
    weakest side wavers on the way (0.66 -> 0.50 -> 0.80 on its line). Stopping at the first
    waver left the outline 20 px short; the rounds go on while the sides as a whole straighten,
    until one moves no corner by half a pixel."""
    from types import SimpleNamespace

    from meeplecam.vision.table import _refined

    rough = _scripted_refinement(
        monkeypatch,
        [
            (8.0, (0.39, 0.51, 0.32, 0.51)),
            (12.0, (0.48, 0.57, 0.38, 0.54)),
            (16.0, (0.86, 0.66, 0.74, 0.76)),
            (19.0, (0.95, 0.70, 0.50, 0.92)),
            (20.0, (0.94, 0.80, 1.00, 0.92)),
            (20.2, (0.94, 0.86, 1.00, 0.89)),  # the same edges again
        ],
    )
    found = _refined(
        np.zeros((700, 1000, 3), np.uint8), SimpleNamespace(quad=rough, scale=1.0), True
    )
    assert np.allclose(found.corners, rough + 20.0)
    assert found.support == (0.94, 0.80, 1.00, 0.92)


def test_a_round_that_leaves_the_sides_less_straight_found_something_elses_edge(monkeypatch):
    from types import SimpleNamespace

    from meeplecam.vision.table import _refined

    rough = _scripted_refinement(
        monkeypatch,
        [
            (2.0, (0.90, 1.00, 0.95, 1.00)),
            (5.0, (0.75, 1.00, 0.76, 0.99)),  # the table's lower rim: fewer points on lines
        ],
    )
    found = _refined(
        np.zeros((700, 1000, 3), np.uint8), SimpleNamespace(quad=rough, scale=1.0), True
    )
    assert np.allclose(found.corners, rough + 2.0)
