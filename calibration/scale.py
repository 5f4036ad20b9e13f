"""The top-down scale: every tile is a 45 mm square, the table a rectangle.

:func:`find_tiles` locates the tiles among the things lying on the table (the start tile alone, or
every tile of a game in progress, cut into cells by vision's grid fit), each tile's corners are
refined to sub-pixel precision (:func:`~.table.refine_quad`, lens distortion undone), and
:func:`fit_table_tiles` finds the homography under which the table outline is a rectangle (its
far-apart corners fix the perspective) and the tiles are 45 mm squares (they fix the table's width
and depth); :func:`fit_squares` uses tiles alone (enough when many tiles spread over the table).
The start tile's top-left corner is the origin and its top edge the x axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from meeplecam.vision.table import order_corners

from . import lens
from .config import settings
from .errors import TileNotFound
from .surface import Surface
from .table import apply, refine_quad


def _squareness(cnt: np.ndarray) -> tuple[float, float]:
    (_, _), (a, b), _ = cv2.minAreaRect(cnt)
    area = cv2.contourArea(cnt)
    if min(a, b) <= 0:
        return 9.0, 0.0
    return max(a, b) / min(a, b), area / (a * b)


def find_tiles(frame: np.ndarray, surface: Surface) -> list[np.ndarray]:
    """Rough tile quadrilaterals (pixels, clockwise from top-left), the one nearest the table's
    centre first: lone square things of a tile's size on the table, or the cells of the largest
    group of tiles."""
    cfg = settings("scale")
    diag = float(np.linalg.norm(surface.corners[2] - surface.corners[0]))
    lo, hi = cfg["tile_of_diagonal"]
    objects = cv2.morphologyEx(surface.objects_mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(objects, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    singles, groups = [], []
    for cnt in contours:
        area = cv2.contourArea(cnt)
        side = np.sqrt(max(area, 0))
        if side < lo * diag:
            continue
        ratio, fill = _squareness(cnt)
        if side <= hi * diag and ratio < cfg["max_aspect"] and fill > cfg["min_fill"]:
            singles.append(order_corners(cv2.boxPoints(cv2.minAreaRect(cnt))))
        elif side > hi * diag:
            groups.append(cnt)
    quads = _tile_sized(singles, surface.corners)
    if not quads and groups:
        quads = _grid_cells(frame, surface, max(groups, key=cv2.contourArea))
    if not quads:
        raise TileNotFound(
            "no tile found on the table to fix the scale: lay the start tile on "
            "the table, away from other things"
        )
    centre = surface.corners.mean(axis=0)
    quads.sort(key=lambda q: np.linalg.norm(q.mean(axis=0) - centre))
    return quads


def _tile_sized(quads: list[np.ndarray], table_px: np.ndarray) -> list[np.ndarray]:
    """The quads of a tile's size: a standing follower is square-ish in the picture too, but its
    footprint is a fraction of a tile's. Sizes are compared with the table outline's perspective
    undone (all tiles have the same area on the table, whether near or far from the camera), so
    only the largest kind of square thing is kept."""
    if len(quads) < 2:
        return quads
    unit = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]])
    to_unit = cv2.getPerspectiveTransform(np.float32(table_px), unit).astype(np.float64)
    areas = np.array([cv2.contourArea(np.float32(apply(to_unit, q))) for q in quads])
    keep = areas >= settings("scale")["min_tile_area_ratio"] * areas.max()
    return [q for q, k in zip(quads, keep, strict=True) if k]


def _grid_cells(frame: np.ndarray, surface: Surface, cnt: np.ndarray) -> list[np.ndarray]:
    """The cells of a group of tiles, by vision's grid fit on its silhouette."""
    from meeplecam.vision import grid as vgrid
    from meeplecam.vision.errors import VisionError
    from meeplecam.vision.table import Table, to_work

    work, s = to_work(frame)
    mask = np.zeros(work.shape[:2], np.uint8)
    cv2.drawContours(mask, [np.round(cnt * s).astype(np.int32)], -1, 1, -1)
    mask &= cv2.resize(
        surface.objects_mask, (work.shape[1], work.shape[0]), interpolation=cv2.INTER_NEAREST
    )
    try:
        grid = vgrid.detect(Table(None, s, work, mask, mask))
    except VisionError as exc:
        raise TileNotFound(f"the tiles' grid could not be fitted: {exc}") from None
    return [order_corners(grid.corners(c, r)) for c, r in grid.cells]


def _square_fit(pts_mm: np.ndarray, side: float) -> np.ndarray:
    """The ``side`` square (corners clockwise from top-left) nearest to 4 points (rigid fit)."""
    model = np.float64([[0, 0], [side, 0], [side, side], [0, side]])
    model -= model.mean(axis=0)
    c = pts_mm.mean(axis=0)
    u, _, vt = np.linalg.svd(model.T @ (pts_mm - c))
    if np.linalg.det(u @ vt) < 0:
        vt[-1] *= -1
    return model @ (u @ vt) + c


def _rectangle_fit(pts_mm: np.ndarray) -> np.ndarray:
    """The rectangle (any size) nearest to 4 points clockwise from top-left."""
    p = np.asarray(pts_mm, float)
    e1 = (p[1] - p[0]) + (p[2] - p[3])
    e2 = (p[3] - p[0]) + (p[2] - p[1])
    a = np.arctan2(e1[1], e1[0])
    b = np.arctan2(-e2[0], e2[1])
    ang = np.arctan2(np.sin(a) + np.sin(b), np.cos(a) + np.cos(b))
    ux, uy = np.array([np.cos(ang), np.sin(ang)]), np.array([-np.sin(ang), np.cos(ang)])
    c = p.mean(axis=0)
    x, y = (p - c) @ ux, (p - c) @ uy
    w = ((x[1] + x[2]) - (x[0] + x[3])) / 2
    d = ((y[2] + y[3]) - (y[0] + y[1])) / 2
    model = np.array([[-w, -d], [w, -d], [w, d], [-w, d]]) / 2
    return c + model[:, :1] * ux + model[:, 1:] * uy


def weighted_homography(src: np.ndarray, dst: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Normalised DLT with a weight per correspondence."""

    def norm(p):
        c = p.mean(axis=0)
        s = np.sqrt(2) / (np.linalg.norm(p - c, axis=1).mean() + 1e-12)
        return np.array([[s, 0, -s * c[0]], [0, s, -s * c[1]], [0, 0, 1.0]])

    ts, td = norm(src), norm(dst)
    a = apply(ts, src)
    b = apply(td, dst)
    rows = []
    for (x, y), (u, v), w in zip(a, b, weights, strict=True):
        rows.append(w * np.array([x, y, 1, 0, 0, 0, -u * x, -u * y, -u]))
        rows.append(w * np.array([0, 0, 0, x, y, 1, -v * x, -v * y, -v]))
    _, _, vt = np.linalg.svd(np.asarray(rows))
    h = vt[-1].reshape(3, 3)
    h = np.linalg.inv(td) @ h @ ts
    return h / h[2, 2]


def fit_squares(quads_px, side_mm: float = 45.0, iterations: int | None = None, init=None):
    """The homography (pixels -> mm) under which every quad is a ``side_mm`` square (tiles only:
    many tiles spread over the table are needed for the perspective), refined from ``init`` (else
    from the first quad alone). Returns (H, rms_mm)."""
    if not quads_px:
        raise TileNotFound("no tile to fix the scale")
    iterations = iterations or int(settings("scale")["iterations"])
    quads = [np.asarray(q, np.float64).reshape(4, 2) for q in quads_px]
    square = np.float64([[0, 0], [side_mm, 0], [side_mm, side_mm], [0, side_mm]])
    if init is None:
        init = cv2.getPerspectiveTransform(quads[0].astype(np.float32), square.astype(np.float32))
    hom = np.asarray(init, np.float64)
    src = np.concatenate(quads)
    if len(quads) > 1:
        for _ in range(iterations):
            mapped = apply(hom, src).reshape(-1, 4, 2)
            ideal = np.concatenate([_square_fit(m, side_mm) for m in mapped])
            hom = weighted_homography(src, ideal, np.ones(len(src)))
    return _gauge(hom, quads, side_mm)


def rectangle_aspect(quad_px, size) -> float | None:
    """Width over depth of the rectangle seen as ``quad_px`` (clockwise from top-left), for a
    camera with square pixels and its principal point at the frame centre (Zhang and He's
    whiteboard method); None when the view is too nearly head-on to tell."""
    c = np.array([(size[0] - 1) / 2, (size[1] - 1) / 2])
    q = np.asarray(quad_px, float) - c
    m1, m2, m4, m3 = (np.r_[p, 1.0] for p in q)  # TL, TR, BR, BL
    k2 = np.dot(np.cross(m1, m4), m3) / np.dot(np.cross(m2, m4), m3)
    k3 = np.dot(np.cross(m1, m4), m2) / np.dot(np.cross(m3, m4), m2)
    n2, n3 = k2 * m2 - m1, k3 * m3 - m1
    if abs(n2[2] * n3[2]) < 1e-12:
        return None
    f2 = -(n2[0] * n3[0] + n2[1] * n3[1]) / (n2[2] * n3[2])
    if not np.isfinite(f2) or f2 <= (0.3 * max(size)) ** 2 or f2 >= (5 * max(size)) ** 2:
        return None
    a2 = (n2[0] ** 2 + n2[1] ** 2) / f2 + n2[2] ** 2
    a3 = (n3[0] ** 2 + n3[1] ** 2) / f2 + n3[2] ** 2
    return float(np.sqrt(a2 / a3))


def fit_table_tiles(table_px, quads_px, side_mm: float = 45.0, size=None):
    """The homography (pixels -> mm) from the table outline (a rectangle of unknown size: it fixes
    the perspective, its corners being far apart) and the tiles (squares of ``side_mm``: they fix
    the table's width and depth). Where the outline also gives the table's proportions (``size``:
    the frame's, for :func:`rectangle_aspect`) and the tiles disagree with them, a tile side was
    missed against a table of its colour: the table's proportions and each tile's larger extent
    are used instead. Returns (H, rms_mm)."""
    cfg = settings("scale")
    if not quads_px:
        raise TileNotFound("no tile to fix the scale")
    unit = np.float64([[0, 0], [1000, 0], [1000, 1000], [0, 1000]])
    h_unit = cv2.getPerspectiveTransform(np.float32(table_px), np.float32(unit)).astype(np.float64)
    quads = [np.asarray(q, np.float64).reshape(4, 2) for q in quads_px]
    ex, ey = [], []
    for q in quads:
        c = apply(h_unit, q)
        e1 = ((c[1] - c[0]) + (c[2] - c[3])) / 2
        e2 = ((c[3] - c[0]) + (c[2] - c[1])) / 2
        ex.append(e1[0] ** 2 + e2[0] ** 2)  # = (side * sx)² for a square under diag(sx, sy)
        ey.append(e1[1] ** 2 + e2[1] ** 2)
    sx, sy = np.sqrt(np.median(ex)) / side_mm, np.sqrt(np.median(ey)) / side_mm
    aspect = rectangle_aspect(table_px, size) if size is not None else None
    if aspect is not None and abs((sy / sx) / aspect - 1) > cfg["aspect_tolerance"]:
        # The tiles disagree with the table's proportions: a side was missed (an edge against a
        # table of its colour makes a tile smaller). Metric up to scale: (u, v / aspect); each
        # tile's larger extent is its side.
        extents = []
        for q in quads:
            c = apply(h_unit, q) * [1.0, 1.0 / aspect]
            sides = np.linalg.norm(c - np.roll(c, 1, axis=0), axis=1)
            extents.append(max((sides[1] + sides[3]) / 2, (sides[0] + sides[2]) / 2))
        sx = float(np.median(extents)) / side_mm
        sy = sx * aspect
    return _gauge(np.diag([1 / sx, 1 / sy, 1.0]) @ h_unit, quads, side_mm)


def _gauge(hom: np.ndarray, quads, side_mm: float):
    """Move the table axes so that the first tile's fitted square is the axis-aligned square at the
    origin (a rigid motion, so distances are kept); also the RMS of the tiles' misfit (mm)."""
    square = np.float64([[0, 0], [side_mm, 0], [side_mm, side_mm], [0, side_mm]])
    first = _square_fit(apply(hom, quads[0]), side_mm)
    gauge = cv2.getPerspectiveTransform(first.astype(np.float32), square.astype(np.float32))
    hom = gauge.astype(np.float64) @ hom
    mapped = apply(hom, np.concatenate(quads)).reshape(-1, 4, 2)
    resid = np.concatenate([m - _square_fit(m, side_mm) for m in mapped])
    return hom / hom[2, 2], float(np.sqrt((resid**2).sum(axis=1).mean()))


@dataclass
class ScaleFit:
    homography: np.ndarray  # undistorted pixels -> table mm
    lens_k: float
    tile_px: float  # mean tile side in pixels
    tiles: int
    rms_mm: float  # how far the tiles are from perfect squares under the fit
    quads: list[np.ndarray]  # refined tile corners (frame pixels)


def fit_scale(
    frame: np.ndarray, surface: Surface, tile_mm: float | None = None, use_table: bool = True
) -> ScaleFit:
    """Locate the tiles, refine their corners and fit the top-down homography."""
    cfg = settings("scale")
    tile_mm = float(tile_mm or cfg["tile_mm"])
    size = (frame.shape[1], frame.shape[0])
    rough = find_tiles(frame, surface)[: int(cfg["max_tiles"])]
    quads = []
    for q in rough:
        side = np.mean(np.linalg.norm(q - np.roll(q, 1, axis=0), axis=1))
        q = refine_quad(frame, q, band=max(3.0, cfg["band"] * side), lens_k=surface.lens_k)
        quads.append(refine_quad(frame, q, band=2.0, lens_k=surface.lens_k))
    und = [lens.undistort(q, surface.lens_k, size) for q in quads]
    if use_table:
        table = lens.undistort(surface.corners, surface.lens_k, size)
        hom, rms = fit_table_tiles(table, und, tile_mm, size)
    else:
        hom, rms = fit_squares(und, tile_mm)
    side = float(np.mean([np.linalg.norm(q - np.roll(q, 1, axis=0), axis=1).mean() for q in quads]))
    return ScaleFit(hom, surface.lens_k, side, len(quads), rms, quads)
