"""Stage 1: find the table surface and the tiles' silhouette on it.

``detect(image)`` returns a :class:`Table`: the outline (corners clockwise from the one nearest the
image's top-left corner, in image pixels), the working scale and the mask of tile-coloured pixels.
Tiles are saturated (green fields, orange/brown cities); a table surface is usually not (white,
black, grey, wood is darker and less saturated than the tiles' green). The table is the region of
surface colour connected to the tiles, grown by flood fill from the ring around them.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .config import settings, work_width
from .errors import NoTiles, TableNotLocated


@dataclass
class Table:
    corners: np.ndarray | None  # 4x2 float, image pixels, clockwise from top-left; None = not found
    scale: float  # work image pixels per image pixel
    work: np.ndarray  # the image at working scale (BGR)
    tile_mask: np.ndarray  # uint8 0/1 at working scale: tile-coloured pixels
    surface_mask: np.ndarray  # uint8 0/1 at working scale: the table surface (tiles included)

    def contains(self, points: np.ndarray) -> np.ndarray:
        """Which image points (N x 2) lie on the table (True everywhere when no outline)."""
        if self.corners is None:
            return np.ones(len(points), bool)
        poly = self.corners.astype(np.float32).reshape(-1, 1, 2)
        return np.array(
            [cv2.pointPolygonTest(poly, (float(x), float(y)), False) >= 0 for x, y in points]
        )


def to_work(image: np.ndarray) -> tuple[np.ndarray, float]:
    """The image resized so that its longer side is the working width."""
    scale = work_width() / max(image.shape[:2])
    if scale >= 1:
        return image.copy(), 1.0
    return cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA), scale


def tile_colour_mask(work: np.ndarray, cfg: dict | None = None) -> np.ndarray:
    cfg = cfg or settings("table")
    hsv = cv2.cvtColor(work, cv2.COLOR_BGR2HSV)
    mask = (hsv[..., 1] > cfg["tile_saturation"]) & (hsv[..., 2] > cfg["tile_value"])
    mask = mask.astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))


def order_corners(pts: np.ndarray) -> np.ndarray:
    """Four points clockwise (in image coordinates, y down), starting nearest the top-left."""
    pts = np.asarray(pts, np.float64).reshape(-1, 2)
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])  # clockwise on screen as angle grows
    pts = pts[np.argsort(ang)]
    start = int(np.argmin(np.hypot(pts[:, 0], pts[:, 1])))
    return np.roll(pts, -start, axis=0)


def _quad(contour: np.ndarray, eps: float) -> np.ndarray:
    hull = cv2.convexHull(contour)
    peri = cv2.arcLength(hull, True)
    for k in (eps, eps * 2, eps * 4, eps * 8):
        approx = cv2.approxPolyDP(hull, k * peri, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float64)
    rect = cv2.minAreaRect(hull)
    return cv2.boxPoints(rect).astype(np.float64)


def detect(image: np.ndarray) -> Table:
    """Find the table and the tiles on it; raises :class:`NoTiles` for an empty table."""
    cfg = settings("table")
    work, scale = to_work(image)
    h, w = work.shape[:2]
    mask = tile_colour_mask(work, cfg)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    if n <= 1:
        raise NoTiles("no tiles on the table: nothing tile-coloured (green or brown) in the image")
    big = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    if stats[big, cv2.CC_STAT_AREA] < 0.002 * h * w:
        raise NoTiles("no tiles on the table: the largest tile-coloured patch is too small")
    # Surface: flood from a ring just outside the tile cluster, through similar colours.
    cluster = (labels == big).astype(np.uint8)
    ring = cv2.dilate(cluster, np.ones((15, 15), np.uint8)) - cv2.dilate(
        cluster, np.ones((7, 7), np.uint8)
    )
    ys, xs = np.nonzero(ring & (1 - mask))
    if len(xs) == 0:
        raise TableNotLocated("the tiles fill the whole image: no table surface around them")
    blur = cv2.GaussianBlur(work, (5, 5), 0)
    lab = cv2.cvtColor(blur, cv2.COLOR_BGR2Lab)
    seed_colour = np.median(lab[ys, xs], axis=0)
    dist = np.linalg.norm(lab.astype(np.float32) - seed_colour.astype(np.float32), axis=2)
    surface = (dist < cfg["flood_tolerance"]).astype(np.uint8) | cluster
    surface = cv2.morphologyEx(surface, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
    _, lab2, st2, _ = cv2.connectedComponentsWithStats(surface)
    comp = lab2[cluster > 0]
    comp = np.bincount(comp[comp > 0]).argmax() if np.any(comp > 0) else 0
    corners = None
    if comp and st2[comp, cv2.CC_STAT_AREA] >= cfg["min_table_fraction"] * h * w:
        region = (lab2 == comp).astype(np.uint8)
        region = cv2.morphologyEx(region, cv2.MORPH_OPEN, np.ones((7, 7), np.uint8))
        contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if contours:
            cnt = max(contours, key=cv2.contourArea)
            quad = _quad(cnt, cfg["poly_epsilon"])
            quad[:, 0] = np.clip(quad[:, 0], 0, w - 1)
            quad[:, 1] = np.clip(quad[:, 1], 0, h - 1)
            corners = order_corners(quad / scale)
            surface = region
    return Table(corners, scale, work, mask, surface)


def rectify(image: np.ndarray, corners: np.ndarray, px_per_unit: float = 1.0) -> np.ndarray:
    """Warp the table quadrilateral to a top-down rectangle (sides' mean lengths, times a scale)."""
    c = np.asarray(corners, np.float32)
    wdt = (np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 2 * px_per_unit
    hgt = (np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 2 * px_per_unit
    dst = np.float32([[0, 0], [wdt - 1, 0], [wdt - 1, hgt - 1], [0, hgt - 1]])
    m = cv2.getPerspectiveTransform(c, dst)
    return cv2.warpPerspective(image, m, (round(wdt), round(hgt)))
