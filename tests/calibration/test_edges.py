"""The sub-pixel edge finders against pictures drawn exactly (each pixel the area-average of 8 x 8
sub-samples, pixel centres at integers as OpenCV samples them), so any bias is the finder's:
calibration's :func:`edge_points` / :func:`refine_quad` / :func:`refine_outline` and vision's
:func:`refine_square` / :func:`edge_offsets`. A side's bias is the mean signed distance (outward
positive) of the found edge from the true side."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from meeplecam.vision.edges import edge_points, refine_outline, refine_quad
from meeplecam.vision.table import edge_offsets, order_corners, refine_square

TILE, TABLE, BAND, FLOOR = (200, 210, 220), (45, 62, 92), (24, 31, 50), (120, 110, 125)


def _halfplanes(quad, xs, ys):
    inside = np.ones((len(ys), len(xs)), bool)
    c = quad.mean(axis=0)
    for a, b in zip(quad, np.roll(quad, -1, axis=0), strict=True):
        n = np.array([a[1] - b[1], b[0] - a[0]])
        s = np.sign(np.dot(c - a, n))
        inside &= ((xs[None, :] - a[0]) * n[0] + (ys[:, None] - a[1]) * n[1]) * s >= 0
    return inside


def _draw(size, layers, blur=0.8, ss=8):
    """``layers``: (quad, BGR) painted in order over black; exact area coverage, then a mild blur."""
    w, h = size
    xs = (np.arange(w * ss) + 0.5) / ss - 0.5  # sub-sample centres in frame pixels
    ys = (np.arange(h * ss) + 0.5) / ss - 0.5
    img = np.zeros((h * ss, w * ss, 3), np.float32)
    for quad, colour in layers:
        img[_halfplanes(np.asarray(quad, float), xs, ys)] = colour
    img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
    img = cv2.GaussianBlur(img, (0, 0), blur)
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def _square(centre, side, angle):
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return order_corners(np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * side / 2 @ rot.T + centre)


def _outward(quad, i):
    a, b = quad[i], quad[(i + 1) % 4]
    d = (b - a) / np.linalg.norm(b - a)
    n = np.array([-d[1], d[0]])
    return a, -n if np.dot(quad.mean(axis=0) - a, n) > 0 else n


def _side_bias(truth, sides):
    return np.array(
        [
            np.mean((pts - _outward(truth, i)[0]) @ _outward(truth, i)[1])
            for i, pts in enumerate(sides)
        ]
    )


def _corner_bias(truth, found):
    """Per side, the mean outward offset of its two found corners from the true side."""
    out = []
    for i in range(4):
        a, n = _outward(truth, i)
        out.append(np.mean([(found[i] - a) @ n, (found[(i + 1) % 4] - a) @ n]))
    return np.array(out)


TILES = [(24.0, 0.0), (31.3, 0.13), (44.7, 0.41), (58.9, 0.77)]


@pytest.mark.parametrize("side,angle", TILES)
def test_tile_edges_are_unbiased(side, angle):
    rng = np.random.default_rng(int(side))
    truth = _square(np.array([80.0, 70.0]) + rng.uniform(-0.5, 0.5, 2), side, angle)
    table = np.array([[0, 0], [160, 0], [160, 140], [0, 140]], float)
    img = _draw((160, 140), [(table, TABLE), (truth, TILE)])
    rough = truth + rng.normal(0, 0.7, truth.shape)
    # calibration
    assert np.abs(_side_bias(truth, edge_points(img, rough, band=3.0))).max() <= 0.15
    assert np.abs(_corner_bias(truth, refine_quad(img, rough))).max() <= 0.15
    # vision
    assert np.abs(_corner_bias(truth, refine_square(img, rough))).max() <= 0.15
    blurred = cv2.GaussianBlur(img, (3, 3), 0).astype(np.float32)
    for i in range(4):
        a, n = _outward(rough, i)
        base = a + np.outer(np.linspace(0.15, 0.85, 20), rough[(i + 1) % 4] - a)
        off, _ = edge_offsets(blurred, base, np.tile(n, (len(base), 1)), 3.0)
        found = base + off[:, None] * n
        assert abs(_side_bias(truth, [found] * 4)[i]) <= 0.15


def test_table_outline_edges_are_unbiased():
    size = (640, 400)
    truth = np.array([[90.3, 60.6], [560.2, 52.4], [590.7, 340.1], [60.4, 350.8]])
    floor = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], float)
    img = _draw(size, [(floor, FLOOR), (truth, TABLE)])
    rough = truth + np.random.default_rng(4).normal(0, 1.5, truth.shape)
    corners, k, support = refine_outline(img, rough)
    assert abs(k) < 0.01
    assert np.abs(_corner_bias(truth, corners)).max() <= 0.15
    assert min(support) > 0.9  # every side is one straight edge


@pytest.mark.xfail(
    strict=True,
    reason="edge_points(inner=0.25) takes the table -> band step now (the colour beyond it is no "
    "longer the table's), but the band -> floor step, 2.4x as strong and 3.5 px out, pulls the "
    "gradient centroid 1.3 px outward (a 1 px centroid window: no better on the bench)",
)
def test_table_outline_edges_are_unbiased_and_skip_the_front_band():
    """A table top, its darker front edge (a band below the near side, as a camera above and in
    front of the table sees it) and a lighter floor: the strongest step is band -> floor, the
    table's edge is the weaker table -> band step (taking the strongest put the near side 2-5 px
    too far out on the synthetic scenes)."""
    size = (640, 400)
    truth = np.array([[90.3, 60.6], [560.2, 52.4], [590.7, 340.1], [60.4, 350.8]])
    band = truth.copy()
    band[2:, 1] += 3.5
    floor = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], float)
    img = _draw(size, [(floor, FLOOR), (band, BAND), (truth, TABLE)])
    rough = truth + np.random.default_rng(3).normal(0, 1.5, truth.shape)
    side = np.mean(np.linalg.norm(truth - np.roll(truth, 1, axis=0), axis=1))
    sides = edge_points(
        img, rough, band=max(4.0, 0.015 * side), samples=60, span=(0.1, 0.9), inner=0.25
    )
    # The band's outer edge, stronger and 3.5 px away, still pulls the gradient centroid out by
    # about half a pixel (cutting the centroid at the valley between the two pulled it in as
    # much): far better than the 3.5 px of taking the band's outer side, not yet 0.15 px.
    assert np.abs(_side_bias(truth, sides)).max() <= 0.6
    corners, k, _ = refine_outline(img, rough)
    assert abs(k) < 0.01
    assert np.abs(_corner_bias(truth, corners)).max() <= 0.6


def test_table_outline_is_not_a_wood_grain_line_inside_it():
    """A wood table whose grain runs along its far side: thin dark lines a few pixels inside the
    edge, slanting across it, more than half as strong as the table's own low-contrast edge. The
    outline is where the table's colour ends, not the innermost strong line (the innermost line
    had put the far side of a synthetic table 15 px inside it)."""
    size = (640, 400)
    truth = np.array([[90.3, 60.6], [560.2, 52.4], [590.7, 340.1], [60.4, 350.8]])
    floor = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], float)
    table, grain, ground = (90, 120, 160), (70, 95, 128), (92, 132, 128)
    layers = [(floor, ground), (truth, table)]
    for x0, x1, depth in ((100, 330, 6.0), (250, 480, 3.0), (380, 555, 9.0)):
        y0, y1 = (np.interp(x, truth[:2, 0], truth[:2, 1]) for x in (x0, x1))
        line = np.array([[x0, y0 + depth], [x1, y1 + depth + 3], [x1, y1 + depth + 4]])
        layers.append((np.vstack([line, [x0, y0 + depth + 1]]), grain))
    img = _draw(size, layers)
    rough = truth + np.random.default_rng(5).normal(0, 1.5, truth.shape)
    corners, _, _ = refine_outline(img, rough)
    assert np.abs(_corner_bias(truth, corners)).max() <= 0.3
