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

from dataclasses import dataclass, replace
from functools import cache

import cv2
import numpy as np

from meeplecam.vision import lens
from meeplecam.vision.edges import refine_quad
from meeplecam.vision.table import (
    ASPECT_SURE,
    aspect_wobble,
    edge_image,
    intersect_lines,
    order_corners,
    outward_sides,
    rectangle_aspect,
    side_lengths,
    side_sharpness,
)
from meeplecam.vision.table import apply_homography as apply

from .config import settings
from .errors import TileNotFound
from .surface import Surface


def _squareness(cnt: np.ndarray) -> tuple[float, float]:
    (_, _), (a, b), _ = cv2.minAreaRect(cnt)
    area = cv2.contourArea(cnt)
    if min(a, b) <= 0:
        return 9.0, 0.0
    return max(a, b) / min(a, b), area / (a * b)


def find_tiles(
    frame: np.ndarray | None, surface: Surface, singles_only: bool = False
) -> list[np.ndarray]:
    """Rough tile quadrilaterals (pixels, clockwise from top-left), the one nearest the table's
    centre first: lone square things of a tile's size on the table, or (unless ``singles_only``)
    the cells of the largest group of tiles."""
    cfg = settings("scale")
    diag = float(np.linalg.norm(surface.corners[2] - surface.corners[0]))
    lo, hi = cfg["tile_of_diagonal"]
    objects = cv2.morphologyEx(surface.objects_mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(objects, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    img = edge_image(frame) if frame is not None else None
    singles, groups = [], []
    for cnt in contours:
        area = cv2.contourArea(cnt)
        side = np.sqrt(max(area, 0))
        if side < lo * diag:
            continue
        ratio, fill = _squareness(cnt)
        if side <= hi * diag and ratio < cfg["max_aspect"] and fill > cfg["min_fill"]:
            box = order_corners(cv2.boxPoints(cv2.minAreaRect(cnt)))
            # a tile's sides are sharp steps (one may be faint); a lamp's glare on the table,
            # as square and larger, is soft (it was taken for the start tile, 1.5 times its size;
            # across wood grain two of its sides are sharp). Measured at 1920x1080: the start
            # tile's second softest side 2.8 or more in 100 scenes, the glare's 0.9 and 1.0
            sharp = cfg["min_side_sharpness"]
            if img is None or sorted(side_sharpness(img, box))[1] >= sharp:
                singles.append(box)
        elif side > hi * diag:
            groups.append(cnt)
    quads = _tile_sized(singles, surface.corners)
    if not quads and groups and not singles_only:
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
    mask = np.zeros(surface.objects_mask.shape, np.uint8)
    cv2.drawContours(mask, [cnt], -1, 1, -1)
    grid = _grid(frame, mask & surface.objects_mask)
    return [order_corners(grid.corners(c, r)) for c, r in grid.cells]


def _grid(frame: np.ndarray, mask: np.ndarray):
    """Vision's grid fit on a group of tiles' silhouette (``mask``, frame size)."""
    from meeplecam.vision import grid as vgrid
    from meeplecam.vision.errors import VisionError
    from meeplecam.vision.table import Table, to_work

    # Vision's grid fit expects the tiles to fill much of its picture (a scan of a board): give
    # it the group's surroundings only.
    ys, xs = np.nonzero(mask)
    pad = max(8, int(0.1 * max(np.ptp(xs), np.ptp(ys))))
    x0, y0 = max(xs.min() - pad, 0), max(ys.min() - pad, 0)
    x1, y1 = min(xs.max() + pad + 1, mask.shape[1]), min(ys.max() + pad + 1, mask.shape[0])
    crop = frame[y0:y1, x0:x1]
    up = 1000 / max(crop.shape[:2])  # and at the size of a board's picture
    work = cv2.resize(crop, None, fx=up, fy=up, interpolation=cv2.INTER_CUBIC)
    work, s = to_work(work)
    small = cv2.resize(
        mask[y0:y1, x0:x1], (work.shape[1], work.shape[0]), interpolation=cv2.INTER_NEAREST
    )
    try:
        grid = vgrid.detect(Table(None, s, work, small, small))
    except VisionError as exc:
        raise TileNotFound(f"the tiles' grid could not be fitted: {exc}") from None
    back = np.array([[1 / up, 0, x0], [0, 1 / up, y0], [0, 0, 1.0]])
    grid.homography = back @ grid.homography
    return grid


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
    return gauge_on_tile(hom, quads, side_mm)


def fit_table_tiles(table_px, quads_px, side_mm: float = 45.0, size=None, tile_beyond=None):
    """The homography (pixels -> mm) from the table outline (a rectangle of unknown size: it fixes
    the perspective, its corners being far apart) and the tiles (squares of ``side_mm``: they fix
    the table's width and depth). Where the outline also gives the table's proportions (``size``:
    the frame's, for :func:`~meeplecam.vision.table.rectangle_aspect`) and the tiles disagree
    with them, a tile side was missed against a table of its colour (or found beyond the tile):
    the table's proportions and each tile's larger extent (its shorter one, where the picture
    shows a side found beyond it) are used instead; given ``tile_beyond`` ((corners a side's
    move gives, corners found, the side), in pixels -> what the picture shows of the tile
    beyond it: :func:`square_up`), the wrong side is then put back a tile's side from the one
    opposite before the axes are laid on the first tile: else the start tile, and the whole
    grid with it, lies half the missed strip off. Returns (H, rms_mm)."""
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
    missed = aspect is not None and abs((sy / sx) / aspect - 1) > cfg["aspect_tolerance"]
    if missed:
        # The tiles disagree with the table's proportions: a side was missed (an edge against a
        # table of its colour makes a tile smaller), or found out on the bare table (a wood
        # grain's line beside a lamp's glare makes it larger). Metric up to scale: (u, v /
        # aspect); each tile's larger extent is its side unless the picture shows the latter.
        slack = cfg["missed_side_slack_mm"]
        extents, first_whole = [], False
        for k, q in enumerate(quads):
            c = apply(h_unit, q) * [1.0, 1.0 / aspect]
            sides = side_lengths(c)
            short, long = sorted(((sides[1] + sides[3]) / 2, (sides[0] + sides[2]) / 2))
            beyond = False
            if tile_beyond is not None:
                as_short, as_long = (
                    np.diag([side_mm / e, side_mm / e / aspect, 1.0]) @ h_unit
                    for e in (short, long)
                )
                beyond = any(
                    _art_on_one_side(*arts) is not None
                    for arts in _strips(as_short, q, side_mm, slack, tile_beyond)
                )
                if k == 0 and not beyond:  # the start tile: does the picture show it whole?
                    grown = _strips(as_long, q, side_mm, slack, tile_beyond)
                    bare = [art < BARE_TABLE for arts in grown for art in arts]  # NaN: not bare
                    first_whole = bool(bare) and all(bare)
            extents.append(short if beyond else long)
        # A table tilted away about one axis only tells its proportions poorly (snowy 07006:
        # 1.56 for 1.76, and a corner a pixel off would lose them): a tile found right then
        # disagrees with them, and is taken as found where the picture shows it whole (what
        # either side's move would add to it is bare table).
        missed = not (first_whole and aspect_wobble(table_px, size) > ASPECT_SURE)
    if missed:
        sx = float(np.median(extents)) / side_mm
        sy = sx * aspect
    metric = np.diag([1 / sx, 1 / sy, 1.0]) @ h_unit
    if missed and tile_beyond is not None:
        quads = [_squared(metric, q, side_mm, slack, tile_beyond) for q in quads]
    return gauge_on_tile(metric, quads, side_mm)


def _in_mm(metric: np.ndarray, found_px: np.ndarray, tile_beyond):
    """``tile_beyond`` (pixels) as :func:`square_up` asks it (table mm under ``metric``)."""
    back = np.linalg.inv(metric)
    return lambda corners_mm, side: tile_beyond(apply(back, corners_mm), found_px, side)


def _squared(metric: np.ndarray, q: np.ndarray, side_mm: float, slack: float, tile_beyond):
    """Tile corners ``q`` (pixels) with a side missed or found beyond it put back."""
    beyond = _in_mm(metric, q, tile_beyond)
    return apply(np.linalg.inv(metric), square_up(apply(metric, q), None, side_mm, slack, beyond))


def _strips(metric, q, side_mm: float, slack: float, tile_beyond) -> list[tuple[float, float]]:
    """For each pair of a tile's sides (``q``, pixels) that lies more than ``slack`` nearer or
    farther apart than ``side_mm`` under ``metric``: the share of tile art in the strip that
    moving either of them to lie a tile's side from the other adds (or cuts off), NaN where a
    strip is too thin to tell (:func:`_unlike_table`)."""
    q_mm = apply(metric, q)
    beyond = _in_mm(metric, q, tile_beyond)
    sides = _sides(q_mm)
    out = []
    for i, j in ((0, 2), (1, 3)):
        if abs(np.dot(sides[i][0] - sides[j][0], sides[i][1]) - side_mm) > slack:
            (art_i, _), (art_j, _) = _moves(q_mm, i, j, side_mm, beyond)
            out.append((art_i, art_j))
    return out


# of a strip beside a tile, the share unlike the table around it that still counts as bare table
# (a follower's shadow, the tile's own border): a city of the table's colour shows 0.14 to 0.55
# (snowy 07012, 07015), bare table beside a tile 0 to 0.03
BARE_TABLE = 0.05


def square_up(
    corners_mm: np.ndarray, sharpness, side_mm: float, slack_mm: float, tile_beyond=None
) -> np.ndarray:
    """A tile's corners in table mm (clockwise) where a pair of opposite sides lies more than
    ``slack_mm`` nearer or farther apart than ``side_mm``: the softer of the two (``sharpness``
    per side, side i from corner i to i + 1), an edge missed against a city of the table's
    colour, is moved to lie ``side_mm`` from the sharper one. With ``tile_beyond`` ((corners in
    table mm a side's move gives, the side) -> (the share of the strip the move adds or cuts off
    that is unlike the table, how sharp a step the picture shows at the side's new place)), the
    side moved is, for a pair too near, the one whose added strip shows tile art where the
    other's shows none (a city of the table's colour still has windows and walls), for a pair
    too far apart, the one whose cut-off strip is bare table where the other's is tile art;
    where both or neither do, the one whose new place shows the sharper step, the tile's own
    edge (the side found in the missed one's stead is the city's border inside the tile, often
    the sharper of the two found)."""
    q = np.asarray(corners_mm, np.float64).reshape(4, 2)
    lines, sides = _lines(q), _sides(q)
    for i, j in ((0, 2), (1, 3)):
        gap = float(np.dot(sides[i][0] - sides[j][0], sides[i][1]))
        if abs(gap - side_mm) <= slack_mm:
            continue
        if tile_beyond is None:
            weak, strong = (i, j) if sharpness[i] < sharpness[j] else (j, i)
        else:
            (art_i, step_i), (art_j, step_j) = _moves(q, i, j, side_mm, tile_beyond)
            art_side = _art_on_one_side(art_i, art_j)
            if art_side is not None:
                # too near: the side with art beyond it; too far: the one with none inside
                weak, strong = (i, j) if (art_side == 0) == (gap < side_mm) else (j, i)
            else:
                weak, strong = (i, j) if step_i >= step_j else (j, i)
        lines = _moved(q, lines, weak, strong, side_mm)
    out = intersect_lines(lines)
    return q if out is None else out


def _art_on_one_side(art_i: float, art_j: float) -> int | None:
    """0 or 1: which of two strips shows tile art where the other is bare table; None where
    both or neither do, or a strip was too thin to tell (NaN)."""
    if np.isnan(art_i) or np.isnan(art_j):
        return None
    if min(art_i, art_j) < BARE_TABLE <= max(art_i, art_j):
        return 0 if art_i > art_j else 1
    return None


def _sides(q: np.ndarray) -> list:
    """(middle, outward normal) of each side of corners ``q``."""
    return [(mid[0], out) for mid, out in outward_sides(q, np.array([0.5]))]


def _lines(q: np.ndarray) -> list:
    """(a point, the direction) of each side of corners ``q``."""
    return [(mid, np.array([out[1], -out[0]])) for mid, out in _sides(q)]


def _moved(q: np.ndarray, lines: list, weak: int, strong: int, side_mm: float) -> list:
    """``lines`` with side ``weak`` moved to lie ``side_mm`` from side ``strong`` of ``q``."""
    mid, out = _sides(q)[strong]
    along = np.array([out[1], -out[0]])
    return [(mid - out * side_mm, along) if k == weak else ln for k, ln in enumerate(lines)]


def _moves(q: np.ndarray, i: int, j: int, side_mm: float, tile_beyond) -> list:
    """``tile_beyond`` of moving side i, then side j, to lie ``side_mm`` from the other."""
    seen, lines = [], _lines(q)
    for weak, strong in ((i, j), (j, i)):
        candidate = intersect_lines(_moved(q, lines, weak, strong, side_mm))
        seen.append((0.0, -np.inf) if candidate is None else tile_beyond(candidate, weak))
    return seen


def gauge_on_tile(hom: np.ndarray, quads, side_mm: float):
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
    # A tile lying alone is the start tile as calibration asks for it; a lattice of abutting
    # tiles is a game in progress (with a lone tile beside it, the lattice was mostly the score
    # track's squares or its picture cut into tile-sized cells).
    try:
        rough = _lone_tiles(frame, surface)
    except TileNotFound:
        lattice = _lattice_scale(frame, surface, tile_mm)
        if lattice is not None:
            return lattice
        rough = find_tiles(frame, surface)
    rough = rough[: int(cfg["max_tiles"])]
    quads = []
    for q in rough:
        side = np.mean(side_lengths(q))
        q = refine_quad(frame, q, band=max(3.0, cfg["band"] * side), lens_k=surface.lens_k)
        quads.append(refine_quad(frame, q, band=2.0, lens_k=surface.lens_k))
    und = [lens.undistort(q, surface.lens_k, size) for q in quads]
    if use_table:
        table = lens.undistort(surface.corners, surface.lens_k, size)

        @cache  # made once, and only where a side was missed
        def edges() -> np.ndarray:
            return edge_image(frame)

        def tile_beyond(corners_px, found_px, side):  # undistorted pixels, as the fit has them
            at = lens.distort(corners_px, surface.lens_k, size)
            found = lens.distort(found_px, surface.lens_k, size)
            return _unlike_table(frame, found, at, side), side_sharpness(edges(), at)[side]

        hom, rms = fit_table_tiles(table, und, tile_mm, size, tile_beyond)
    else:
        hom, rms = fit_squares(und, tile_mm)
    side = float(np.mean([side_lengths(q).mean() for q in quads]))
    return ScaleFit(hom, surface.lens_k, side, len(quads), rms, quads)


def _unlike_table(frame: np.ndarray, found: np.ndarray, moved: np.ndarray, side: int) -> float:
    """The share of the strip a side's move adds to a tile or cuts off it (``found`` ->
    ``moved``, frame px) whose colour is unlike the table's around the tile: tile art (a city of
    the table's colour still has its windows, walls and snow) where the side was missed or is
    moved into the tile, bare table where not, or where it was found beyond the tile."""
    j = (side + 1) % 4
    strip = np.array([found[side], found[j], moved[j], moved[side]])
    tile = float(np.mean(side_lengths(found)))
    x0, y0 = np.floor(found.min(axis=0) - tile).astype(int)
    x1, y1 = np.ceil(found.max(axis=0) + tile).astype(int)
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    roi = cv2.cvtColor(frame[y0:y1, x0:x1], cv2.COLOR_BGR2Lab).astype(np.float32)
    off = np.array([x0, y0], float)

    def mask(poly, grow: float = 0.0) -> np.ndarray:
        m = np.zeros(roi.shape[:2], np.uint8)
        cv2.fillPoly(m, [np.round(poly - off).astype(np.int32)], 1)
        if grow > 0:
            k = max(3, round(grow) | 1)
            m = cv2.dilate(m, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
        return m > 0

    inside = mask(strip)
    kept = (mask(found) & mask(moved)).astype(np.uint8)  # the tile both ways
    inside &= ~cv2.dilate(kept, np.ones((5, 5), np.uint8)).astype(bool)
    ring = mask(found, 1.4 * tile) & ~mask(found, 1.0 * tile)
    if inside.sum() < 2 * tile or ring.sum() < 20:
        return np.nan  # a strip a pixel or two wide: the tile's blurred edge, not its art
    table = np.median(roi[ring], axis=0)
    spread = np.median(np.linalg.norm(roi[ring] - table, axis=1))
    far = np.linalg.norm(roi[inside] - table, axis=1) > max(10.0, 3.0 * spread)
    return float(far.mean())


def _lone_tiles(frame: np.ndarray, surface: Surface) -> list[np.ndarray]:
    """:func:`find_tiles`' lone tiles; failing that, those among the things near a sharp colour
    step (a lamp's glare beside the start tile had joined it into no square)."""
    from meeplecam.vision.table import objects_on_table, sharp_reach

    try:
        return find_tiles(frame, surface, singles_only=True)
    except TileNotFound:
        diag = float(np.linalg.norm(surface.corners[2] - surface.corners[0]))
        inside = cv2.erode(surface.table_mask, np.ones((15, 15), np.uint8))
        sharp = objects_on_table(frame, inside, reach=sharp_reach(diag))
        return find_tiles(frame, replace(surface, objects_mask=sharp), singles_only=True)


def _tile_groups(surface: Surface) -> list[np.ndarray]:
    """Silhouettes (uint8 masks, frame size) of the things on the table large enough to be a
    group of abutting tiles, largest first. A game in progress fills the surface's local-colour
    window with tiles, so its objects mask breaks a group into fragments; closing it over less
    than half a tile joins them again. A solid rectangle (the score track, a box) is no group."""
    cfg = settings("scale")
    diag = float(np.linalg.norm(surface.corners[2] - surface.corners[0]))
    k = max(3, round(cfg["group_close_of_diagonal"] * diag) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    closed = cv2.morphologyEx(surface.objects_mask, cv2.MORPH_CLOSE, kernel)
    contours, _ = cv2.findContours(closed, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = []
    for cnt in sorted(contours, key=cv2.contourArea, reverse=True)[:3]:
        area = cv2.contourArea(cnt)
        (_, _), (a, b), _ = cv2.minAreaRect(cnt)
        if area <= (cfg["tile_of_diagonal"][1] * diag) ** 2:
            break
        if area > cfg["group_solid_fill"] * a * b:
            continue
        mask = np.zeros_like(surface.objects_mask)
        cv2.drawContours(mask, [cnt], -1, 1, -1)
        out.append(mask & closed)  # an empty cell inside the group stays empty
    return out


def _side_targets(cells: set, tile_mm: float):
    """Every tile side to look for, as (cell, side index N/E/S/W = 0..3, axis, m, q, weight),
    the side lying at ``pitch * m + q`` mm along ``axis`` (``pitch``: a tile plus the gap between
    tiles): an outer side is the tile's edge against the table; a side shared with a neighbour is
    the middle of the gap between them (seen once, and trusted less: the gap is a pixel wide)."""
    out = []
    steps = ((0, -1), (1, 0), (0, 1), (-1, 0))
    for c, r in sorted(cells):
        for i, (dc, dr) in enumerate(steps):
            shared = (c + dc, r + dr) in cells
            if shared and i in (0, 3):
                continue  # seen from the neighbour's E or S side
            axis = 1 if i in (0, 2) else 0
            idx = r if axis else c
            if shared:
                out.append(((c, r), i, axis, idx + 0.5, tile_mm / 2, 0.5))
            else:
                out.append(((c, r), i, axis, idx, tile_mm if i in (1, 2) else 0.0, 1.0))
    return out


def _irls(residual, theta: np.ndarray, weights: np.ndarray, scale: float, steps: int = 8):
    """Gauss-Newton with Tukey weights (an art edge taken for a tile edge counts for nothing)."""
    for _ in range(steps):
        r = residual(theta)
        u = r / (4.685 * scale)
        w = weights * np.where(np.abs(u) < 1, (1 - u**2) ** 2, 0.0)
        jac = np.empty((len(r), len(theta)))
        for j in range(len(theta)):
            d = np.zeros_like(theta)
            d[j] = 1e-6 * max(1.0, abs(theta[j]))
            jac[:, j] = (residual(theta + d) - r) / d[j]
        sw = np.sqrt(w)
        step, *_ = np.linalg.lstsq(jac * sw[:, None], -r * sw, rcond=None)
        theta = theta + step
        if np.max(np.abs(step[:8])) < 1e-9:
            break
    r = residual(theta)
    inl = np.abs(r) < 3 * scale
    return theta, float(np.sqrt(np.mean(r[inl] ** 2))) if inl.any() else float("inf")


def fit_lattice(
    frame, cells, grid_px, lens_k: float, tile_mm: float = 45.0, rounds: int = 3, undistorted=False
):
    """The homography (undistorted pixels -> mm) under which the tiles of a group lie on a square
    lattice: each tile a ``tile_mm`` square at ``pitch * (col, row)``, the pitch (a tile plus the
    gap between tiles) fitted too. Edge points are searched along every tile side predicted by the
    current fit and the homography and the pitch minimise their distances from the lattice lines
    (robustly), so hundreds of edge points over the whole group fix the perspective and the scale
    together, where one tile's corners fix them only to a few per cent. ``grid_px`` maps grid
    coordinates (cell corners at integers) to frame pixels. Returns (H, pitch_mm, rms_mm, quads)
    with ``quads`` the fitted tiles in frame pixels."""
    from meeplecam.vision.edges import edge_points

    size = (frame.shape[1], frame.shape[0])
    cells = sorted(set(cells))
    g = np.array([[c + u, r + v] for c, r in cells for u, v in ((0, 0), (1, 0), (1, 1), (0, 1))])
    und = apply(grid_px, g)
    if not undistorted:
        und = lens.undistort(und, lens_k, size)
    # Normalised pixels keep the Gauss-Newton steps well conditioned.
    centre = und.mean(axis=0)
    spread = float(np.linalg.norm(und - centre, axis=1).mean())
    norm = np.array([[1, 0, -centre[0]], [0, 1, -centre[1]], [0, 0, spread]]) / spread
    norm[2, 2] = 1.0
    pitch = tile_mm * 1.03
    grid_to_n, _ = cv2.findHomography(g.astype(np.float64), apply(norm, und))
    a0 = np.diag([pitch, pitch, 1.0]) @ np.linalg.inv(grid_to_n)
    theta = np.append((a0 / a0[2, 2]).ravel()[:8], pitch)
    side_px = float(np.median(np.linalg.norm(und[1::4] - und[0::4], axis=1)))
    targets = _side_targets(set(cells), tile_mm)
    by_cell: dict = {}
    for t in targets:
        by_cell.setdefault(t[0], []).append(t)
    rms = float("inf")

    def squares(th):
        p = th[8]
        sq = np.array([[0, 0], [tile_mm, 0], [tile_mm, tile_mm], [0, tile_mm]])
        return {cr: sq + p * np.array(cr, float) for cr in cells}

    def to_px(th, mm):
        a = np.append(th[:8], 1.0).reshape(3, 3)
        return apply(np.linalg.inv(norm) @ np.linalg.inv(a), mm)

    for rnd in range(rounds):
        band = max(2.0, (0.15 if rnd == 0 else 0.07) * side_px)
        sq = squares(theta)
        pts, axis, m, q, wts = [], [], [], [], []
        for cr, sides in by_cell.items():
            quad = lens.distort(to_px(theta, sq[cr]), lens_k, size)
            found = edge_points(frame, quad, band=band, samples=12, span=(0.15, 0.85))
            for _, i, ax, mi, qi, w in sides:
                pts.append(apply(norm, lens.undistort(found[i], lens_k, size)))
                n = len(found[i])
                axis += [ax] * n
                m += [mi] * n
                q += [qi] * n
                wts += [w] * n
        pts = np.concatenate(pts)
        axis, m, q, wts = (np.asarray(v, float) for v in (axis, m, q, wts))
        rows = np.arange(len(pts))
        ax = axis.astype(int)

        def residual(th, pts=pts, ax=ax, m=m, q=q, rows=rows):
            mm = _apply_params(th, pts)
            return mm[rows, ax] - (th[8] * m + q)

        scale = 0.03 * tile_mm if rnd == 0 else 0.015 * tile_mm
        theta, rms = _irls(residual, theta, wts, scale)
    hom = np.append(theta[:8], 1.0).reshape(3, 3) @ norm
    sq = squares(theta)
    quads = [lens.distort(to_px(theta, sq[cr]), lens_k, size) for cr in cells]
    return hom / hom[2, 2], float(theta[8]), rms, quads, cells


def _apply_params(theta: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return apply(np.append(theta[:8], 1.0).reshape(3, 3), pts)


def _lattice_scale(frame: np.ndarray, surface: Surface, tile_mm: float) -> ScaleFit | None:
    """The scale from a group of abutting tiles (a game in progress) by :func:`fit_lattice`; None
    when there is no such group of at least ``scale.min_lattice_tiles`` tiles."""
    cfg = settings("scale")
    lo, hi = cfg["lattice_pitch"]
    for group in _tile_groups(surface):
        try:
            grid = _grid(frame, group)
        except TileNotFound:
            continue
        if len(grid.cells) < cfg["min_lattice_tiles"]:
            continue
        hom, pitch, rms, quads, cells = fit_lattice(
            frame, list(grid.cells), grid.homography, surface.lens_k, tile_mm
        )
        # Tiles with a gap between them, sharply on their lattice (a score track's squares or a
        # misread grid are not).
        if not (lo <= pitch / tile_mm <= hi and rms < cfg["max_lattice_rms"] * tile_mm):
            continue
        # A grid at half or twice the tiles' pitch can still fit their edges: the fitted tiles
        # must cover about as much of the picture as the group does.
        cover = sum(cv2.contourArea(np.float32(q)) for q in quads) / max(int(group.sum()), 1)
        if not 0.6 <= cover <= 1.3:
            continue
        # The grid fit may count a follower or a shadow beside the group as a tile: keep the cells
        # the group's silhouette fills, and fit again without the others.
        full = [c for c, q in zip(cells, quads, strict=True) if _filled(group, q) > 0.8]
        if len(full) >= cfg["min_lattice_tiles"] and len(full) < len(cells):
            grid_und = np.linalg.inv(hom) @ np.diag([pitch, pitch, 1.0])
            hom, pitch, rms, quads, cells = fit_lattice(
                frame, full, grid_und, surface.lens_k, tile_mm, rounds=2, undistorted=True
            )
        break
    else:
        return None
    # The start tile is the origin: with no way to tell it, the tile nearest the table's centre.
    centre = lens.undistort(surface.corners, surface.lens_k, (frame.shape[1], frame.shape[0]))
    centre_mm = apply(hom, centre).mean(axis=0)
    first = int(
        np.argmin([np.linalg.norm(pitch * np.array(c) + tile_mm / 2 - centre_mm) for c in cells])
    )
    origin = np.array(
        [[1, 0, -pitch * cells[first][0]], [0, 1, -pitch * cells[first][1]], [0, 0, 1.0]]
    )
    hom = origin @ hom
    side = float(np.mean([side_lengths(q).mean() for q in quads]))
    order = [first] + [i for i in range(len(quads)) if i != first]
    return ScaleFit(
        hom / hom[2, 2], surface.lens_k, side, len(cells), rms, [quads[i] for i in order]
    )


def _filled(mask: np.ndarray, quad: np.ndarray) -> float:
    """The share of a tile's middle (its corners pulled halfway to its centre) that ``mask``
    covers."""
    c = quad.mean(axis=0)
    inner = np.round(c + 0.5 * (quad - c)).astype(np.int32)
    cell = np.zeros_like(mask)
    cv2.fillPoly(cell, [inner], 1)
    n = int(cell.sum())
    return float((cell & mask).sum() / n) if n else 0.0
