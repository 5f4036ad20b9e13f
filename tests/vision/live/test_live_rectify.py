"""Grid geometry of the live loop: the start tile found alone on a table, and the grid re-fitted
to the laid tiles' borders (``rectify.refine``)."""

from __future__ import annotations

import numpy as np
import pytest
from cameras import camera_view

from meeplecam.engine import Bounds
from meeplecam.vision.live import rectify
from meeplecam.vision.live.rectify import Rectifier


def _last_frame(drawn_game, drawn_frames):
    return drawn_frames[-1], list(drawn_game.game.board.tiles)


def _error(rect: Rectifier, truth: Rectifier, cells) -> np.ndarray:
    pts = [(x + a, y + b) for x, y in cells for a in (0, 1) for b in (0, 1)]
    return np.linalg.norm(rect.to_image(pts) - truth.to_image(pts), axis=1)


def test_refine_pulls_a_perturbed_grid_back_to_the_truth(drawn_game, drawn_frames):
    frame, cells = _last_frame(drawn_game, drawn_frames)
    assert len(cells) >= 8
    truth = Rectifier(drawn_game.grid_to_image, frame_size=frame.shape[1::-1])
    a = np.deg2rad(1.2)  # what one small start tile leaves: a degree, 2 %, a tenth of a cell
    perturb = np.array(
        [[1.02 * np.cos(a), -np.sin(a), 0.1], [np.sin(a), 1.02 * np.cos(a), -0.08], [0, 0, 1.0]]
    )
    bad = Rectifier(truth.grid_to_image @ perturb, frame_size=truth.frame_size)
    before = _error(bad, truth, cells)
    fixed = rectify.refine(bad, frame, cells)
    after = _error(fixed, truth, cells)
    assert before.mean() > 2.0
    assert after.mean() < 0.35 * before.mean() and after.mean() < 1.0, (before.mean(), after)
    gain = rectify.border_score(fixed, frame, cells) / rectify.border_score(bad, frame, cells)
    assert gain > 1.0
    assert rectify.refit(bad, frame, cells).gain == pytest.approx(gain)
    # the truth itself stays where it is
    kept = rectify.refine(truth, frame, cells)
    assert _error(kept, truth, cells).max() < 1.5  # the drawn art is cut to whole pixels


def test_refine_never_returns_a_worse_grid(drawn_game, drawn_frames):
    frame, cells = _last_frame(drawn_game, drawn_frames)
    truth = Rectifier(drawn_game.grid_to_image, frame_size=frame.shape[1::-1])
    out = rectify.refit(truth, np.zeros_like(frame), cells)  # nothing to fit to
    assert out.rectifier is truth and out.gain == 1.0
    assert rectify.refine(truth, frame, []) is truth


def test_two_tiles_beside_the_start_tile_set_its_grid_right(drawn_game):
    """The start tile alone fixes the grid's scale and angle roughly; with the first two tiles
    laid beside it (too few for the full fit) the grid is re-fitted as a whole (scale, turn
    and shift), which the borders between the tiles fix."""
    from meeplecam.engine import Turn

    canvas = drawn_game.canvas.copy()
    turns = [drawn_game.game.start_turn, Turn("U", 1, 0, 0), Turn("U", 0, 1, 90)]
    for turn in turns:
        drawn_game.lay(canvas, turn)
    frame = drawn_game.photo(canvas)
    cells = [t.cell for t in turns]
    truth = Rectifier(drawn_game.grid_to_image, frame_size=frame.shape[1::-1])
    a = np.deg2rad(1.0)  # a degree, 5 %, a twentieth of a cell
    off = np.array(
        [[1.05 * np.cos(a), -np.sin(a), 0.04], [np.sin(a), 1.05 * np.cos(a), -0.03], [0, 0, 1]]
    )
    bad = Rectifier(truth.grid_to_image @ off, frame_size=truth.frame_size)
    before, after = (
        _error(bad, truth, cells),
        _error(rectify.refine(bad, frame, cells), truth, cells),
    )
    assert before.mean() > 1.5
    assert after.mean() < 0.5 * before.mean(), (before.mean(), after.mean())
    assert rectify.refine(bad, frame, cells[:1]) is bad  # one tile: nothing to fit together


def test_a_grid_follows_a_knocked_camera_to_within_a_pixel(drawn_game, drawn_frames):
    """The camera turned 1.5 degrees on its mount and its picture shifted 20 px: the grid
    cut before the knock is carried onto the new view."""
    import cv2

    frame, cells = _last_frame(drawn_game, drawn_frames)
    truth = Rectifier(drawn_game.grid_to_image, frame_size=frame.shape[1::-1])
    h, w = frame.shape[:2]
    knock = np.vstack([cv2.getRotationMatrix2D((w / 2, h / 2), 1.5, 1.0), [0, 0, 1]])
    knock[:2, 2] += (20, -12)
    knocked = cv2.warpPerspective(frame, knock, (w, h), borderMode=cv2.BORDER_REPLICATE)
    moved = Rectifier(knock @ truth.grid_to_image, frame_size=truth.frame_size)
    window = (-3, -3, 3, 3)
    before = truth.board(frame, window)
    followed = rectify.followed(truth, before, truth.board(knocked, window))
    assert followed is not None
    assert _error(truth, moved, cells).mean() > 10
    assert _error(followed, moved, cells).max() < 1.0


def test_a_view_that_did_not_move_or_shows_something_else_is_not_followed(drawn_game, drawn_frames):
    frame, _ = _last_frame(drawn_game, drawn_frames)
    truth = Rectifier(drawn_game.grid_to_image, frame_size=frame.shape[1::-1])
    window = (-3, -3, 3, 3)
    before = truth.board(frame, window)
    assert rectify.followed(truth, before, before) is None
    noise = np.random.default_rng(1).integers(0, 256, frame.shape, dtype=np.uint8)
    assert rectify.followed(truth, before, truth.board(noise, window)) is None


def test_start_tile_found_alone_on_a_table():
    """A table (with its perspective) holding a score track, a follower and the start tile: the
    start tile, not the larger board nor the follower, names cell (0, 0)."""
    import cv2

    h_img = np.array([[0.9, 0.05, 300], [-0.02, 0.75, 150], [0, 0.0002, 1.0]])
    frame = np.full((600, 1000, 3), (40, 45, 50), np.uint8)  # the floor
    rng = np.random.default_rng(1)

    def quad(x0, y0, x1, y1):
        pts = np.float64([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        return rectify._apply(h_img, pts)

    cv2.fillPoly(frame, [np.int32(quad(0, 0, 700, 500))], (225, 230, 232))  # a white table
    cv2.fillPoly(frame, [np.int32(quad(480, 40, 660, 160))], (60, 140, 200))  # score track
    cv2.fillPoly(frame, [np.int32(quad(150, 380, 160, 390))], (30, 30, 200))  # a follower
    tile = quad(300, 220, 330, 250)
    cv2.fillPoly(frame, [np.int32(np.round(tile))], (190, 200, 205))
    inner = quad(300, 220, 330, 228)
    cv2.fillPoly(frame, [np.int32(np.round(inner))], (60, 110, 190))  # a city along the top
    frame = cv2.add(frame, rng.integers(0, 4, frame.shape, dtype=np.uint8))
    rect = rectify.from_detection(frame)
    err = np.linalg.norm(rect.to_image([(0, 0), (1, 1)]) - tile[[0, 2]], axis=1)
    assert err.max() < 1.5, err


def _start_view(seed: int, palette: str, surface: str | None):
    """The renderer's first view of a game with the start tile alone and no hand over the
    table (1920x1080), and its truth."""
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.render import render, truth
    from meeplecam.vision.synth.scene import Scene
    from meeplecam.vision.synth.sequence import views

    game = random_game(find_tileset("winter"), 2, seed=seed)
    scene = Scene(game, seed, palette, (1920, 1080), surface)
    for state, extras in views(scene, seed):
        info = truth(scene, state, extras)
        if len(info["tiles"]) == 1 and not info["hands"]:
            return render(scene, state, extras), info
    raise AssertionError("no view of the start tile alone")


def _start_frame(seed: int, palette: str, surface: str | None):
    """The first view of the start tile alone, and the tile's true corners."""
    frame, info = _start_view(seed, palette, surface)
    return frame, np.array(info["tiles"][0]["corners"])


def _true_cell_centre(info: dict, x: int, y: int) -> np.ndarray:
    """Where the camera sees the middle of cell (x, y) of a grid laid from the start tile (its
    45 mm side plus the renderer's gap), lens included."""
    import cv2

    c = np.array(info["tiles"][0]["corners_mm"], float)
    east, south = (c[1] - c[0]) / 45.0, (c[3] - c[0]) / 45.0
    pitch = 45.0 + rectify.GAP_MM
    mm = c.mean(axis=0) + pitch * (x * east + y * south)
    cam = info["camera"]
    pts, _ = cv2.projectPoints(
        np.array([[mm[0], mm[1], 0.0]]),
        np.array(cam["rvec"]),
        np.array(cam["tvec"]),
        np.array(cam["K"]),
        np.array(cam["dist"]),
    )
    return pts.reshape(2)


@pytest.mark.parametrize(
    ("seed", "palette", "surface"),
    [
        (9001, "winter", "white"),  # a lamp's glare on the white table, larger than the tile
        (8005, "scans", None),  # a tan city on light wood: its wall is the stronger edge
        (7012, "winter", None),  # a city cap the table's colour: the tile is completed
        (7010, "winter", None),  # a soft shade beside the tile, joined to it
        (8017, "scans", None),  # a lamp's glare beside the tile on a dark table
    ],
    ids=[
        "glare on a white table",
        "city the colour of the table",
        "city cap the colour of the table",
        "shade beside the tile",
        "glare beside the tile",
    ],
)
def test_start_tile_found_where_the_table_looks_like_the_tile(seed, palette, surface):
    from meeplecam.vision.synth import art
    from meeplecam.vision.table import find_start_tile

    if palette == "scans" and not art.scans_available():
        pytest.skip("../shared/data/winter-tiles is absent")
    frame, corners = _start_frame(seed, palette, surface)
    found = np.asarray(find_start_tile(frame).corners)
    err = min(np.abs(np.roll(found, k, axis=0) - corners).max() for k in range(4))
    assert err < 1.5, err


@pytest.mark.parametrize("half_height", [220, 330])
def test_start_tile_found_where_the_table_fills_the_picture(half_height):
    """A camera zoomed onto the play area sees table to every side, so no table stands out
    from its surroundings: the frame stands in for the outline and the tile alone names cell
    (0, 0) (it was never located, and a replay read nothing)."""
    import cv2

    from meeplecam.vision.table import find_start_tile

    frame, corners = _start_frame(7002, "winter", None)
    centre = corners.mean(axis=0)
    half = np.array([half_height * 16 / 9, half_height])
    x0, y0 = np.round(centre - half).astype(int)
    x1, y1 = np.round(centre + half).astype(int)
    zoom = 1280 / (x1 - x0)
    view = cv2.resize(frame[y0:y1, x0:x1], (1280, round((y1 - y0) * zoom)))
    tile = (corners - (x0, y0) + 0.5) * zoom - 0.5
    found = np.asarray(find_start_tile(view).corners)
    err = min(np.abs(np.roll(found, k, axis=0) - tile).max() for k in range(4))
    assert err < 2.0, err
    rect = rectify.from_detection(view)
    assert np.abs(rect.to_image([(0.5, 0.5)])[0] - tile.mean(axis=0)).max() < 2.0


def test_a_band_of_the_tables_own_grain_is_not_taken_for_the_table():
    """Zoomed in on a wooden table, k-means found a band of lighter grain around the start tile
    and its corners gave the grid a perspective the camera does not have (cells two away were
    placed 10 px off). A table must stand out from what lies beyond its rim; here nothing does,
    so the frame stands in for it and the tile alone lays the grid."""
    from meeplecam.vision.synth import art

    if not art.scans_available():
        pytest.skip("../shared/data/winter-tiles is absent")
    frame, info = _start_view(8014, "scans", None)
    corners = np.array(info["tiles"][0]["corners"])
    x0, y0 = np.round(corners.mean(axis=0) - 300).astype(int)
    view = frame[y0 : y0 + 600, x0 : x0 + 600]
    rect = rectify.from_detection(view)
    # the band's edge, cut by the frame's border, is no table's: no play area from it
    assert rect.table_edge is None or rectify.play_area(rect, rect.table_edge, [(0, 0)]) is None
    for cell in [(2, 2), (-2, -2), (2, -2)]:
        seen = rect.to_image([(cell[0] + 0.5, cell[1] + 0.5)])[0] + (x0, y0)
        assert np.abs(seen - _true_cell_centre(info, *cell)).max() < 4.0, (cell, seen)


@pytest.mark.parametrize("foot", [(2.0, 12.0), (-14.0, 1.0), (9.0, -10.0)])
def test_the_camera_is_placed_from_the_grid_alone(foot):
    """A camera south, west or north-east of the board: the point below it comes out of the
    table's homography, and a standing figure leans away from it in the top-down picture."""
    hom = camera_view(foot, height=25.0, yaw_deg=3.0)
    found = rectify.camera_foot(hom, (1920, 1080))
    assert found is not None and np.allclose(found, foot, atol=0.05)
    away = np.array([0.5, 0.5]) - np.array(foot)
    lean = Rectifier(hom, frame_size=(1920, 1080)).lean((0, 0))
    assert np.allclose(lean, away / np.linalg.norm(away), atol=0.01)


def test_without_the_frame_size_a_figure_leans_north():
    rect = Rectifier(camera_view((-14.0, 1.0), 25.0, 0.0))
    assert rect.camera_foot is None
    assert rect.lean((0, 0)) == (0.0, -1.0)


def test_the_play_area_is_the_cells_that_lie_on_the_table():
    # cells 100 px wide, cell (0, 0) from (500, 300); the table from (200, 100) to (1000, 800)
    rect = Rectifier(np.array([[100.0, 0, 500], [0, 100, 300], [0, 0, 1]]))
    edge = [(200, 100), (1000, 100), (1000, 800), (200, 800)]
    assert rectify.play_area(rect, edge, [(0, 0), (4, 4)]) == Bounds(-3, 4, -2, 4)
    # a tile the camera read off that table: the edge is no edge of this board
    assert rectify.play_area(rect, edge, [(0, 0), (5, 0)]) is None
    # a table the frame's border cuts: its edge there is the frame's
    framed = Rectifier(rect.grid_to_image, frame_size=(1280, 720))
    assert rectify.play_area(framed, edge, [(0, 0)]) is None
    framed_whole = Rectifier(rect.grid_to_image, frame_size=(1280, 900))
    assert rectify.play_area(framed_whole, edge, [(0, 0)]) == Bounds(-3, 4, -2, 4)
    # the west edge through column -3 (x 200 to 300): a tile there hanging a third over the
    # edge is on the table, one hanging four fifths over is not
    third = [(233, 100), (1000, 100), (1000, 800), (233, 800)]
    assert rectify.play_area(rect, third, [(0, 0)]).min_x == -3
    most = [(280, 100), (1000, 100), (1000, 800), (280, 800)]
    assert rectify.play_area(rect, most, [(0, 0)]).min_x == -2


def test_the_table_s_edge_found_with_the_start_tile_gives_the_play_area():
    # the cells whose middle lies on the rendered table, from the table's and the start tile's
    # corners in mm, against those found in the picture
    frame, info = _start_view(3, "winter", None)
    rect = rectify.from_detection(frame)
    assert rect.table_edge is not None
    found = rectify.play_area(rect, rect.table_edge, [(0, 0)])
    c = np.array(info["tiles"][0]["corners_mm"], float)
    east, south = (c[1] - c[0]) / 45.0, (c[3] - c[0]) / 45.0
    pitch = 45.0 + rectify.GAP_MM
    to_mm = np.array([[*(pitch * east), 0], [*(pitch * south), 0], [0, 0, 1]]).T
    to_mm[:2, 2] = c.mean(axis=0) - pitch * (east + south) / 2
    width, depth = info["table_mm"]
    table_mm = [(0, 0), (width, 0), (width, depth), (0, depth)]
    expected = rectify.play_area(Rectifier(to_mm), table_mm, [(0, 0)])
    sides = ("min_x", "max_x", "min_y", "max_y")
    assert all(abs(getattr(found, k) - getattr(expected, k)) <= 1 for k in sides), (found, expected)
