"""Corners as fractions, clicks, sub-pixel tile corners, the lens and the top-down homography."""

import cv2
import numpy as np
import pytest

from meeplecam.calibration.errors import CalibrationError
from meeplecam.calibration.scale import fit_squares, fit_table_tiles
from meeplecam.calibration.table import parse_points, to_fractions, to_pixels
from meeplecam.vision import lens
from meeplecam.vision.edges import refine_quad
from meeplecam.vision.table import apply_homography as apply


def test_parse_points_pixels_and_fractions():
    pts = parse_points("1200,700 100,650 80,40 1180,60", 1280, 720)  # any order
    assert pts.tolist() == [[80, 40], [1180, 60], [1200, 700], [100, 650]]
    frac = parse_points("0.1,0.1; 0.9,0.1; 0.9,0.9; 0.1,0.9", 1000, 500)
    assert frac[2].tolist() == [900, 450]
    with pytest.raises(CalibrationError, match="four corners"):
        parse_points("1,2 3,4", 100, 100)


def test_fractions_survive_a_resolution_change():
    px = np.array([[64.0, 36.0], [1216.0, 40.0], [1200.0, 700.0], [70.0, 690.0]])
    frac = to_fractions(px, 1280, 720)
    assert np.allclose(to_pixels(frac, 1920, 1080), px * 1.5)


def _camera_homography():
    """A tilted view of the table: table mm -> image pixels."""
    src = np.float32([[0, 0], [1200, 0], [1200, 800], [0, 800]])
    dst = np.float32([[250, 110], [1030, 130], [1190, 660], [90, 630]])
    return cv2.getPerspectiveTransform(src, dst).astype(float)


def _square_mm(x, y, angle_deg, side=45.0):
    a = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    model = np.array([[0, 0], [side, 0], [side, side], [0, side]]) - side / 2
    return model @ rot.T + [x, y]


def _errors_mm(hom_px_to_mm, hom_mm_to_px, points_mm):
    """Distances between true table points and their calibrated positions after the best rigid
    motion (calibration picks its own origin and axes)."""
    est = apply(hom_px_to_mm, apply(hom_mm_to_px, points_mm))
    ce, ct = est.mean(axis=0), points_mm.mean(axis=0)
    u, _, vt = np.linalg.svd((est - ce).T @ (points_mm - ct))
    aligned = (est - ce) @ (u @ vt) + ct
    return np.linalg.norm(aligned - points_mm, axis=1)


def test_squares_alone_give_the_homography():
    cam = _camera_homography()
    rng = np.random.default_rng(0)
    squares = [
        _square_mm(x, y, rng.normal(0, 1.5))
        for x, y in [(150, 150), (1050, 150), (1050, 650), (150, 650), (600, 400), (400, 300)]
    ]
    hom, rms = fit_squares([apply(cam, s) for s in squares], 45.0)
    assert rms < 0.01
    probe = np.array([[0, 0], [1200, 0], [1200, 800], [0, 800], [600, 400]], float)
    assert _errors_mm(hom, cam, probe).max() < 0.05


def test_table_outline_and_one_tile_give_the_homography():
    cam = _camera_homography()
    table_px = apply(cam, np.array([[0, 0], [1200, 0], [1200, 800], [0, 800]], float))
    tile = _square_mm(610, 380, 3.0)
    hom, _ = fit_table_tiles(table_px, [apply(cam, tile)], 45.0)
    assert np.allclose(apply(hom, apply(cam, tile))[0], [0, 0], atol=1e-3)  # origin: the tile
    probe = np.array([[0, 0], [1200, 0], [1200, 800], [0, 800], [300, 500]], float)
    assert _errors_mm(hom, cam, probe).max() < 0.05


def test_refine_quad_finds_a_tile_to_a_fraction_of_a_pixel():
    cam = _camera_homography()
    tile = _square_mm(600, 400, 4.0)
    scale = 16.0  # drawn top-down at 16 px/mm (pixel u's centre at (u + 0.5) / scale mm)
    canvas = np.full((round(130 * scale), round(130 * scale), 3), (40, 90, 140), np.uint8)
    origin = np.array([535.0, 335.0])
    cv2.fillPoly(
        canvas,
        [np.round(((tile - origin) * scale - 0.5) * 16).astype(np.int32)],
        (230, 235, 240),
        cv2.LINE_8,
        shift=4,
    )  # (LINE_AA would fatten it by a pixel)
    to_mm = np.array(
        [
            [1 / scale, 0, 0.5 / scale + origin[0]],
            [0, 1 / scale, 0.5 / scale + origin[1]],
            [0, 0, 1.0],
        ]
    )
    view = cv2.warpPerspective(
        cv2.GaussianBlur(canvas, (0, 0), 8), cam @ to_mm, (1280, 720), borderValue=(40, 90, 140)
    )
    truth = apply(cam, tile)
    rough = truth + np.random.default_rng(1).normal(0, 1.0, truth.shape)
    found = refine_quad(view, rough)
    assert np.abs(found - truth).max() < 0.1


def test_lens_round_trip_and_plumb_line():
    size = (1280, 720)
    pts = np.random.default_rng(2).uniform(0, 1, (40, 2)) * size
    for k in (-0.15, 0.05):
        assert np.allclose(lens.distort(lens.undistort(pts, k, size), k, size), pts, atol=1e-9)
    # Straight table edges seen through a barrel lens bend; plumb_line finds the bend again.
    t = np.linspace(0.05, 0.95, 60)[:, None]
    edges = [
        np.array([100, 80]) + t * [1080, 20],
        np.array([1180, 100]) + t * [-40, 560],
        np.array([1140, 660]) + t * [-1020, -10],
        np.array([120, 650]) + t * [-20, -570],
    ]
    bent = [lens.distort(e, -0.08, size) for e in edges]
    assert lens.straightness(bent, 0.0, size) > 1.0
    assert abs(lens.plumb_line(bent, size) - (-0.08)) < 0.005


def test_rectangle_aspect_from_a_perspective_view():
    from meeplecam.vision.table import rectangle_aspect

    k = np.array([[900.0, 0, 639.5], [0, 900.0, 359.5], [0, 0, 1]])
    tilt = np.deg2rad(25)
    r = np.array([[1, 0, 0], [0, np.cos(tilt), -np.sin(tilt)], [0, np.sin(tilt), np.cos(tilt)]])
    yaw = np.deg2rad(
        12
    )  # (with no yaw one pair of edges stays parallel: no second vanishing point)
    r = r @ np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    t = np.array([-600.0, -300.0, 1500.0])
    hom = k @ np.column_stack([r[:, 0], r[:, 1], t])
    quad = apply(hom, np.array([[0, 0], [1200, 0], [1200, 800], [0, 800]], float))
    assert rectangle_aspect(quad, (1280, 720)) == pytest.approx(1.5, rel=1e-3)
    # Seen head-on, the proportions cannot be told from the outline alone.
    flat = np.array([[100, 100], [1100, 100], [1100, 600], [100, 600]], float)
    assert rectangle_aspect(flat, (1280, 720)) is None


def test_a_lone_start_tile_fixes_the_scale_before_a_lattice_beside_it():
    """Synthetic scene 1051 (the calibration bench's): the start tile lies alone, and the score
    track beside it, cut into tile-sized cells, fitted as a lattice of 11 "tiles" (60 mm off at
    the finished board's corners). A lone tile is the start tile calibration asks for."""
    pytest.importorskip("meeplecam.vision.synth.render")
    from meeplecam.calibration.scale import fit_scale
    from meeplecam.calibration.surface import segment
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.render import render, truth
    from meeplecam.vision.synth.scene import Scene
    from meeplecam.vision.synth.sequence import table_states

    seed = 1051
    rng = np.random.default_rng(seed)
    game = random_game(find_tileset("winter"), int(rng.integers(2, 5)), seed=seed)
    scene = Scene(game, seed, "summer", (1920, 1080))
    start = next(after for _, _, after in table_states(game))
    frame = render(scene, start)
    fit = fit_scale(frame, segment(frame))
    true = np.asarray(truth(scene, start)["tiles"][0]["corners"], float)
    true_px = np.linalg.norm(true - np.roll(true, 1, axis=0), axis=1).mean()
    assert fit.tiles == 1
    assert abs(fit.tile_px / true_px - 1) < 0.03


def test_a_start_tile_beside_a_lamps_glare_is_still_found_alone():
    """Calibration view 1223 (the colours bench's): a glare streak on dark wood joins the start
    tile into a shapeless blob, and the score track's picture was then fitted as a lattice of
    18 "tiles". What lies near a sharp colour step (a tile's edge, not the glare's) is looked at
    again for a lone tile first. (Its size is still 6 % off: the side against the glare is
    found outside the tile.)"""
    pytest.importorskip("meeplecam.vision.synth.render")
    from meeplecam.calibration.demo import calibration_view
    from meeplecam.calibration.scale import fit_scale
    from meeplecam.calibration.surface import segment
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.scene import Scene

    game = random_game(find_tileset("winter"), 5, seed=1223)
    scene = Scene(game, 1223, "summer", (1280, 720))
    frame, view = calibration_view(scene, ["red", "yellow", "green", "blue", "black"], 1223)
    fit = fit_scale(frame, segment(frame))
    true = np.asarray(view["tiles"][0]["corners"], float)
    true_px = np.linalg.norm(true - np.roll(true, 1, axis=0), axis=1).mean()
    assert fit.tiles == 1
    assert abs(fit.tile_px / true_px - 1) < 0.1


def _bench_scene(seed: int):
    """The calibration bench's start-tile frame for ``seed`` (bench/calibration.py) and its table
    corners."""
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.render import render, truth
    from meeplecam.vision.synth.scene import Scene
    from meeplecam.vision.synth.sequence import table_states

    rng = np.random.default_rng(seed)
    game = random_game(find_tileset("winter"), int(rng.integers(2, 5)), seed=seed)
    scene = Scene(game, seed, ("winter", "summer")[seed % 2], (1920, 1080))
    start = next(after for _, _, after in table_states(game))
    return render(scene, start), np.asarray(truth(scene, start)["table"], float)


def test_an_outline_cut_through_the_table_by_a_lamps_glare_gives_way_to_its_hue():
    """Scene 1046: a lamp's glare on the far side of a wooden table split its colour, and the
    colour's outline ran along the split, cutting off a fifth of the table; the cut follows no
    straight edge (the wizard warned and saved nothing). The table's hue is not split: its
    outline is straight on every side and is taken, within 1.5 % of the diagonal (the glare
    still bends the far side a little), and the wizard has nothing to say about the table."""
    pytest.importorskip("meeplecam.vision.synth.render")
    from meeplecam.calibration import wizard

    frame, table = _bench_scene(1046)
    result = wizard.run(frame, wizard.Options(), say=lambda line: None)
    corners = result.surface.corners
    assert np.linalg.norm(corners - table, axis=1).max() < 0.015 * np.linalg.norm(
        table[2] - table[0]
    )
    assert not any("outline" in w or "floor" in w for w in result.warnings)


def test_an_outline_whose_sides_follow_no_edge_warns(monkeypatch):
    """Whatever finds the outline, a side that follows no straight edge is named, and nothing
    is saved without --force."""
    pytest.importorskip("meeplecam.vision.synth.render")
    from dataclasses import replace

    from meeplecam.calibration import surface, wizard

    frame, _ = _bench_scene(1046)
    found = surface.segment(frame)
    cut = replace(found, support=(0.1, 0.8, 0.7, 0.8))
    monkeypatch.setattr(wizard, "segment", lambda frame: cut)
    result = wizard.run(frame, wizard.Options(), say=lambda line: None)
    assert any("top side follows no straight table edge" in w for w in result.warnings)
    assert not result.ok
    # the edges found moved the rough outline far and along no line: none of them is kept
    lost = replace(found, support=(0.0,) * 4)
    monkeypatch.setattr(wizard, "segment", lambda frame: lost)
    result = wizard.run(frame, wizard.Options(), say=lambda line: None)
    assert any("no side of the detected outline follows" in w for w in result.warnings)


def test_an_outline_found_right_does_not_warn_though_its_region_spills():
    """Scene 1028: the table's region spills over its outline (fill 1.23: the old test warned
    that the outline fitted loosely), yet the outline is right to 0.1 % of the diagonal, every
    side a straight edge: no warning about the table."""
    pytest.importorskip("meeplecam.vision.synth.render")
    from meeplecam.calibration.surface import segment

    frame, table = _bench_scene(1028)
    surface = segment(frame)
    diagonal = np.linalg.norm(table[2] - table[0])
    assert np.linalg.norm(surface.corners - table, axis=1).max() < 0.002 * diagonal
    assert min(surface.support) > 0.9


def test_a_lamps_glare_on_wood_is_no_start_tile():
    """Scene 1071: a lamp's glare on the wood, square and half as large again as the start tile,
    was taken for it (and the start tile itself then dropped as a follower-sized thing): the
    scale came out 1.5 times too large, without a warning (67 mm RMS over the board). Across
    the grain two of the glare's sides are sharp steps, the other two soft; a tile's are all
    sharp (one may be faint)."""
    pytest.importorskip("meeplecam.vision.synth.render")
    from meeplecam.calibration.scale import fit_scale
    from meeplecam.calibration.surface import segment

    frame, _ = _bench_scene(1071)
    fit = fit_scale(frame, segment(frame))
    # the true start tile: its middle, and its mean side in pixels (a side is still found a
    # little inside: 44.7 px, its middle 3 px off)
    assert np.linalg.norm(fit.quads[0].mean(axis=0) - (764, 571)) < 8  # the glare: 620 px off
    assert abs(fit.tile_px / 47.9 - 1) < 0.1


def test_a_tile_side_missed_against_the_table_is_put_back_from_its_opposite_side():
    # the start tile's city along its north side, of the table's colour: its edge was found
    # 9 mm inside; the sharper south side and the tile's size put it back
    from meeplecam.calibration.scale import square_up

    found = np.array([[0.0, 9.0], [45.0, 9.0], [45.0, 45.0], [0.0, 45.0]])
    squared = square_up(found, [0.6, 3.0, 3.2, 3.1], 45.0, 2.0)
    assert np.allclose(squared, [[0, 0], [45, 0], [45, 45], [0, 45]], atol=1e-6)
    # a tile found right stays as it is
    assert np.allclose(square_up(squared, [3.0] * 4, 45.0, 2.0), squared)


def test_a_tile_side_found_out_on_the_table_is_moved_in_where_it_leaves_bare_table():
    # the north side found on a line of the wood's grain 12 mm above the tile: moving it in
    # leaves a strip of bare table, moving the south side in would cut through the tile's art
    from meeplecam.calibration.scale import square_up

    found = np.array([[0.0, -12.0], [45.0, -12.0], [45.0, 45.0], [0.0, 45.0]])

    def tile_beyond(corners_mm, side):  # (share unlike the table, step at the new place)
        cut_from_north = side == 0
        return (0.0, 1.0) if cut_from_north else (0.6, 2.0)

    squared = square_up(found, None, 45.0, 2.0, tile_beyond)
    assert np.allclose(squared, [[0, 0], [45, 0], [45, 45], [0, 45]], atol=1e-6)

    # strips too thin to tell art from table (NaN): the side whose new place is the sharper
    # step, the tile's own edge, moves
    def too_thin(corners_mm, side):
        return (np.nan, 4.0) if side == 0 else (np.nan, 1.0)

    squared = square_up(found, None, 45.0, 2.0, too_thin)
    assert np.allclose(squared, [[0, 0], [45, 0], [45, 45], [0, 45]], atol=1e-6)


def _game_start_frame(seed: int, size=(1920, 1080)):
    """The first frame of the synthetic snowy game ``seed`` as ``meeplecam synth`` writes it
    (the start tile alone, JPEG at quality 92), the scene and the table's corners."""
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.render import render, truth
    from meeplecam.vision.synth.scene import Scene
    from meeplecam.vision.synth.sequence import table_states

    game = random_game(find_tileset("winter"), 2, seed=seed)
    scene = Scene(game, seed, "winter", size)
    start = next(after for _, _, after in table_states(game))
    _, jpeg = cv2.imencode(".jpg", render(scene, start), [cv2.IMWRITE_JPEG_QUALITY, 92])
    table = np.asarray(truth(scene, start)["table"], float)
    return cv2.imdecode(jpeg, cv2.IMREAD_COLOR), scene, table


@pytest.mark.parametrize(
    "seed",
    [
        # a table tilted away about one axis only: its proportions came out 1.56 for 1.76, and
        # the start tile, found right, was taken for one with a side missed (12 % too large)
        7006,
        # a lamp's glare beside the start tile: its north side found on a line of the wood's
        # grain, 15 px out, and the tile taken for a whole one (the table a third too small)
        7010,
    ],
)
def test_a_start_tile_found_too_long_or_right_gives_the_tables_size(seed):
    pytest.importorskip("meeplecam.vision.synth.render")
    from meeplecam.calibration.wizard import Options, run

    frame, scene, table = _game_start_frame(seed)
    result = run(frame, Options(followers=False), say=lambda line: None)
    corners = result.profile.scale.to_table_points(table, 1920, 1080)
    width = np.linalg.norm(corners[1] - corners[0])
    depth = np.linalg.norm(corners[3] - corners[0])
    assert width == pytest.approx(scene.table_w, rel=0.02)
    assert depth == pytest.approx(scene.table_d, rel=0.02)


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_a_start_tile_whose_city_edge_the_table_hides_is_laid_where_it_lies(size):
    """Snowy scene 7012: the start tile's city roofs are the table's own orange-brown, so its
    north edge is lost and the tile is found a third short. The table's proportions give its
    scale back; its north side is put back a tile's side from the south one (the strip that
    adds shows the city's windows and walls, where moving the south side would add bare
    table), or the grid, laid from the start tile, lay 7 px (at 720p) off and the game read
    with that profile went wrong from the first turn."""
    pytest.importorskip("meeplecam.vision.synth.render")
    from meeplecam.calibration.demo import calibration_view
    from meeplecam.calibration.wizard import Options, run
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.live.rectify import ProfileRectifier
    from meeplecam.vision.synth.scene import Scene

    game = random_game(find_tileset("winter"), 2, seed=7012)
    frame, view = calibration_view(Scene(game, 7012, "winter", size), ["red", "yellow"], 7012)
    result = run(frame, Options(followers=False), say=lambda line: None)
    found = result.quads[0]
    true = np.asarray(view["tiles"][0]["corners"], float)
    side = np.linalg.norm(true[1] - true[0])
    assert np.abs(found - true).max() > 0.2 * side  # the edge the table hides
    start = ProfileRectifier(result.profile.scale, size).cell_corners(0, 0)
    assert np.abs(start - true).max() < 0.05 * side


def test_a_covered_camera_is_said_to_be_covered_not_a_table_to_click():
    from meeplecam.calibration.surface import segment

    with pytest.raises(CalibrationError, match="camera covered") as caught:
        segment(np.zeros((720, 1280, 3), np.uint8))
    assert "four corners" not in str(caught.value)
