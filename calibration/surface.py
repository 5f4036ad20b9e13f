"""The table surface in a calibration view, and the things lying on it.

A calibration view shows the table nearly empty (the start tile, a few followers, maybe the score
track), so the table is the large region of one colour around the frame centre, unlike the floor
around it. :func:`segment` clusters the colours (k-means in Lab on a small copy), takes the cluster
that fills the centre but not the frame border, fills it (tiles and followers on it become holes
of the surface colour), finds the table edges at full resolution, the lens distortion that makes
them straight (:mod:`lens`), and intersects the straightened edges (a rounded corner does not move
them). What lies on the table is what differs from the table around it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from meeplecam.vision.table import (
    fit_sides,
    four_lines,
    largest_region,
    order_corners,
    outline_contrast,
)

from .errors import CalibrationError

WORK = 480


@dataclass
class Surface:
    corners: np.ndarray  # 4 x 2 table corners in frame pixels, clockwise from top-left
    table_mask: np.ndarray  # uint8 0/1 frame size: the table (with what lies on it)
    objects_mask: np.ndarray  # uint8 0/1 frame size: things on the table (tiles, followers, ...)
    colour_lab: np.ndarray  # the table's median Lab colour
    score: float  # how well the region fits its quadrilateral (1 = exactly)
    lens_k: float = 0.0  # division-model distortion that straightens the table edges
    contrast: float = 100.0  # Lab distance between the table and what lies just outside it


def segment(frame: np.ndarray, k: int = 4) -> Surface:
    h, w = frame.shape[:2]
    s = WORK / max(h, w)
    small = cv2.resize(frame, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA)
    small = cv2.bilateralFilter(small, 7, 30, 7)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab).astype(np.float32)
    sh, sw = lab.shape[:2]
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(7)
    _, labels, centres = cv2.kmeans(lab.reshape(-1, 3), k, None, crit, 3, cv2.KMEANS_PP_CENTERS)
    labels = labels.reshape(sh, sw)
    border = np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]])
    centre = labels[sh // 4 : 3 * sh // 4, sw // 4 : 3 * sw // 4]
    c_share = np.bincount(centre.ravel(), minlength=k) / centre.size
    b_share = np.bincount(border, minlength=k) / border.size
    best = int(np.argmax(c_share - b_share))
    if c_share[best] - b_share[best] < 0.2:
        raise CalibrationError(
            "the table does not stand out from its surroundings: click its "
            "four corners or lay the printed corner markers"
        )
    mask = (labels == best).astype(np.uint8)
    # Other shades of the table (wood grain, light falling off across it): clusters of a near
    # colour, rare at the frame border, or common in its middle.
    for j in range(k):
        near = np.linalg.norm(centres[j] - centres[best])
        if (
            j != best
            and b_share[j] < 0.2
            and (near < 18 or (near < 35 and c_share[j] - b_share[j] > 0.05))
        ):
            mask |= (labels == j).astype(np.uint8)
    found = largest_region(mask)
    if found is None:
        raise CalibrationError("no table surface found")
    cnt, region, filled = found
    quad = four_lines(cnt.reshape(-1, 2).astype(np.float64))
    if quad is None:
        quad = _quad(cv2.convexHull(cnt))
    if quad is None:
        raise CalibrationError("the table's outline is not a quadrilateral")
    quad = fit_sides(cnt.reshape(-1, 2).astype(np.float64), order_corners(quad))
    score = float(cv2.contourArea(cnt) / max(cv2.contourArea(quad.astype(np.float32)), 1.0))
    corners, lens_k = refine_outline(frame, order_corners(quad / s))
    table_mask = cv2.resize(filled, (w, h), interpolation=cv2.INTER_NEAREST)
    # Things on the table: unlike the table around them (a median over several tile sizes), so a
    # smooth glare spot or uneven light is table, and a tile or a follower is not.
    local = cv2.cvtColor(cv2.medianBlur(small, 2 * (sw // 20) + 1), cv2.COLOR_BGR2Lab)
    diff = np.linalg.norm(lab - local.astype(np.float32), axis=2)
    inside = cv2.erode(filled, np.ones((5, 5), np.uint8))
    tol = max(10.0, 3.0 * float(np.quantile(diff[inside > 0], 0.75)))
    things = ((diff > tol) & (inside > 0)).astype(np.uint8)
    holes = cv2.resize(things, (w, h), interpolation=cv2.INTER_NEAREST)
    colour = np.median(lab[region > 0], axis=0)
    return Surface(corners, table_mask, holes, colour, score, lens_k, outline_contrast(lab, quad))


def _quad(hull: np.ndarray) -> np.ndarray | None:
    peri = cv2.arcLength(hull, True)
    for eps in (0.01, 0.02, 0.03, 0.05, 0.08):
        approx = cv2.approxPolyDP(hull, eps * peri, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float64)
    return None


def _densify(poly: np.ndarray, step: float = 1.5) -> np.ndarray:
    """Points every ``step`` pixels along a closed polygon (the convex hull bridges the notch a
    score track or a box at the table's edge cuts into its outline)."""
    out = []
    for a, b in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        n = max(1, int(np.linalg.norm(b - a) / step))
        out.append(a + np.outer(np.arange(n) / n, b - a))
    return np.concatenate(out)


def refine_outline(frame: np.ndarray, quad: np.ndarray, samples: int = 80):
    """Sub-pixel table corners and the lens: edge points along each side, the division-model
    ``k`` that straightens them (:func:`lens.plumb_line`), lines through the straightened points,
    and their intersections put back into the (distorted) frame. Returns (corners, k)."""
    from . import lens
    from .table import edge_points, lines_corners

    size = (frame.shape[1], frame.shape[0])
    side = np.mean(np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1))
    band = max(4.0, 0.015 * side)
    sides = edge_points(frame, quad, band=band, samples=samples, span=(0.1, 0.9), inner=0.5)
    k = lens.plumb_line(sides, size)
    corners = lines_corners([lens.undistort(s, k, size) for s in sides])
    if corners is None:
        return quad, 0.0
    return lens.distort(corners, k, size), k
