"""Ground truth is exact: a flat-colour pass through the same camera, read back with OpenCV
(independently of the projection code), lands where the truth says (<= 2 px)."""

import cv2
import numpy as np
import pytest

from meeplecam.engine import find_tileset, load_tile_file
from meeplecam.engine.playout import random_game
from meeplecam.vision.synth.render import render_flat, truth
from meeplecam.vision.synth.scene import Scene
from meeplecam.vision.synth.sequence import table_states


def _quad_corners(mask: np.ndarray) -> np.ndarray:
    """Four corners of a convex blob: approximate polygon, then each side refitted as a line
    through its boundary points, corners = intersections."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    contour = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float64)
    hull = cv2.convexHull(contour.astype(np.float32)).reshape(-1, 2)
    peri = cv2.arcLength(hull, True)
    for eps in (0.02, 0.04, 0.06, 0.1):
        approx = cv2.approxPolyDP(hull, eps * peri, True).reshape(-1, 2)
        if len(approx) == 4:
            break
    assert len(approx) == 4, "flat tile is not a quadrilateral"
    centre = contour.mean(axis=0)
    lines = []
    for i in range(4):
        a, b = approx[i], approx[(i + 1) % 4]
        length = np.linalg.norm(b - a)
        along = (contour - a) @ ((b - a) / length)
        keep = (along > 0.1 * length) & (along < 0.9 * length)
        p, u = a, (b - a) / length
        for band in (2.5, 1.0):
            rel = contour - p
            d = np.abs(u[0] * rel[:, 1] - u[1] * rel[:, 0])
            pts = contour[keep & (d < band)]
            if len(pts) < 3:
                break
            vx, vy, x0, y0 = cv2.fitLine(pts.astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01).ravel()
            p, u = np.array([x0, y0], float), np.array([vx, vy], float)
        normal = np.array([-u[1], u[0]])
        if (p - centre) @ normal < 0:
            normal = -normal
        lines.append((p + normal * 0.5, u))  # boundary pixel centres lie half a pixel inside
    corners = []
    for i in range(4):
        (p, u), (q, v) = lines[i - 1], lines[i]
        s = np.linalg.solve(np.column_stack([u, -v]), q - p)
        corners.append(p + u * s[0])
    return np.array(corners)


GINGERBREAD = find_tileset(
    "winter+gingerbread", load_tile_file("engine/data/gingerbread-template.toml")
)


@pytest.mark.parametrize("seed", [3, 11])
def test_flat_pass_matches_projected_truth(seed):
    tileset = GINGERBREAD if seed == 11 else find_tileset("winter")
    game = random_game(tileset, 2, seed=seed, max_turns=30, follower_chance=0.8)
    scene = Scene(game, seed, "winter", (1280, 800))
    state = list(table_states(game))[-1][2]
    flat, legend = render_flat(scene, state)
    info = truth(scene, state)
    by_cell = {(t["x"], t["y"]): t for t in info["tiles"]}
    worst = 0.0
    checked = 0
    for colour, what in legend.items():
        mask = np.all(flat == np.array(colour, np.uint8), axis=2).astype(np.uint8)
        if what[0] == "tile":
            assert mask.sum() > 50, f"tile {what[1]} not visible"
            found = _quad_corners(mask * 255)
            expected = np.array(by_cell[what[1]]["corners"])
            for c in expected:
                worst = max(worst, np.linalg.norm(found - c, axis=1).min())
            checked += 1
        elif what[0] == "follower":
            _, cell, segment = what
            ys, xs = np.nonzero(mask)
            assert len(xs) > 3, f"follower marker at {cell} not visible"
            base = next(
                f["base"]
                for f in info["followers"]
                if (f["x"], f["y"]) == cell and f["segment"] == segment
            )
            err = np.hypot(xs.mean() - base[0], ys.mean() - base[1])
            assert err <= 2.0, f"follower base at {cell} off by {err:.2f} px"
        else:
            ys, xs = np.nonzero(mask)
            base = info["gingerbread"]["base"]
            assert np.hypot(xs.mean() - base[0], ys.mean() - base[1]) <= 2.0
    assert checked == len(state.tiles)
    assert worst <= 2.0, f"worst tile corner error {worst:.2f} px"


def test_table_outline_and_homography_agree():
    game = random_game(find_tileset("winter"), 2, seed=5, max_turns=10)
    scene = Scene(game, 5, "summer", (480, 320))
    state = list(table_states(game))[-1][2]
    info = truth(scene, state)
    table = np.array(info["table"])
    assert (table[:, 0] >= 0).all() and (table[:, 0] < 480).all()
    assert (table[:, 1] >= 0).all() and (table[:, 1] < 320).all()
    # the homography is the undistorted camera: with distortion switched off it is exact
    cam = scene.camera
    cam.dist = np.zeros(5)
    H = np.array(info["homography"])
    mm = np.array([[0, 0], [scene.table_w, 0], [100.0, 250.0]])
    q = np.column_stack([mm, np.ones(3)]) @ H.T
    assert np.allclose(q[:, :2] / q[:, 2:], cam.project(mm), atol=1e-6)


def test_textured_tiles_lie_where_the_flat_pass_puts_them(monkeypatch):
    """The real drawing path (art warped onto the canvas, bilinear camera warp) covers the same
    pixels as the flat pass: tiles drawn white on a black table."""
    from meeplecam.vision.synth import scene as scene_module
    from meeplecam.vision.synth.render import warp

    monkeypatch.setattr(
        scene_module,
        "tile_art",
        lambda tile, rotation, palette, px, variant=0: np.full((px, px, 3), 255, np.uint8),
    )
    game = random_game(find_tileset("winter"), 2, seed=8, max_turns=25)
    scene = Scene(game, 8, "winter", (960, 600))
    scene._base = np.zeros((scene.canvas_size[1], scene.canvas_size[0], 3), np.uint8)
    scene.shadow_mm = np.zeros(2)
    state = list(table_states(game))[-1][2]
    drawn = warp(scene, scene.tiles_canvas(state.tiles))[..., 0] > 127
    flat, _ = render_flat(scene, state)
    tiles = flat.any(axis=2)
    disagree = drawn ^ tiles
    # only pixels beside a tile's outline may disagree (gaps narrower than a pixel included)
    ids = (flat.astype(np.float32) @ np.array([1.0, 256.0, 65536.0], np.float32)).astype(np.float32)
    kernel = np.ones((3, 3), np.uint8)
    edge = (cv2.dilate(ids, kernel) != cv2.erode(ids, kernel)).astype(np.uint8)
    assert tiles.sum() > 1000
    assert (disagree & (edge == 0)).sum() == 0


def test_tile_coverage_is_neither_fat_nor_thin():
    """Anti-aliased tile masks have the true area and centre (OpenCV's AA fill is ~0.5 px fat)."""
    from meeplecam.vision.synth.scene import coverage

    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.uniform(-0.05, 0.05)
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        side = rng.uniform(20, 70)
        centre = rng.uniform(40, 60, 2)
        poly = (np.array([(0, 0), (1, 0), (1, 1), (0, 1)]) - 0.5) * side @ rot.T + centre
        mask = coverage(poly, (100, 100))
        assert abs(mask.sum() - side**2) / side**2 < 0.003
        ys, xs = np.mgrid[0:100, 0:100]
        c = np.array([(mask * xs).sum(), (mask * ys).sum()]) / mask.sum()
        assert np.hypot(*(c - centre)) < 0.02


def test_label_frame_agrees_with_truth():
    """Per-pixel labels: each follower's base pixel lies on its own tile and segment, and the
    labelled tile pixels are those of the flat pass."""
    from meeplecam.vision.synth.render import render_labels

    game = random_game(find_tileset("winter"), 2, seed=6, max_turns=30, follower_chance=0.9)
    scene = Scene(game, 6, "winter", (960, 600))
    state = list(table_states(game))[-1][2]
    labels = render_labels(scene, state)
    info = truth(scene, state)
    cells = [t[0] for t in state.tiles]
    assert info["followers"]
    for f in info["followers"]:
        u, v = (round(c) for c in f["base"])
        assert cells[labels["tile"][v, u]] == (f["x"], f["y"])
        assert labels["segment"][v, u] == f["segment"]
    flat, legend = render_flat(scene, state)
    tiles = np.zeros(flat.shape[:2], bool)
    for colour, what in legend.items():
        if what[0] == "tile":
            tiles |= np.all(flat == np.array(colour, np.uint8), axis=2)
    under_followers = np.all(flat[..., :1] == 255, axis=2)  # the follower discs hide tile pixels
    assert np.array_equal(tiles, (labels["tile"] >= 0) & ~under_followers)
