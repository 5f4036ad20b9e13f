"""Stage 2: fit the square tile grid on the table and cut every occupied cell out of the image.

``detect(table)`` estimates the grid angle from the orientation of the tile silhouette's edges, the
pitch and phase from where tile borders and the thin gaps between tiles line up (a comb fit of their
projections), then refines each occupied cell's position on the borders around it and fits one
homography from grid indices to image pixels over all cells (robust to a slightly askew camera).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from .config import settings
from .errors import GridNotFound
from .table import Table


@dataclass
class Grid:
    homography: np.ndarray  # 3x3: grid coordinates (col, row; cell corners at integers) -> image px
    cells: dict[tuple[int, int], float] = field(default_factory=dict)  # occupied (col, row) -> fill
    pitch: float = 0.0  # tile size in image pixels (mean)
    angle: float = 0.0  # degrees, grid rotation in the image

    def corners(self, col: int, row: int) -> np.ndarray:
        """Image pixel corners (4x2) of one cell, clockwise from its top-left."""
        g = np.float32([[col, row], [col + 1, row], [col + 1, row + 1], [col, row + 1]])
        return cv2.perspectiveTransform(g.reshape(-1, 1, 2), self.homography).reshape(4, 2)

    def to_image(self, pts: np.ndarray) -> np.ndarray:
        pts = np.asarray(pts, np.float32).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.homography).reshape(-1, 2)

    def to_grid(self, pts: np.ndarray) -> np.ndarray:
        pts = np.asarray(pts, np.float32).reshape(-1, 1, 2)
        inv = np.linalg.inv(self.homography)
        return cv2.perspectiveTransform(pts, inv).reshape(-1, 2)

    def crop(self, image: np.ndarray, col: int, row: int, size: int, inset: float = 0.0):
        """The cell warped to a ``size`` square, north up (optionally trimmed by ``inset``)."""
        a, b = inset, 1 - inset
        g = np.float32(
            [[col + a, row + a], [col + b, row + a], [col + b, row + b], [col + a, row + b]]
        )
        src = cv2.perspectiveTransform(g.reshape(-1, 1, 2), self.homography).reshape(4, 2)
        dst = np.float32([[0, 0], [size, 0], [size, size], [0, size]])
        m = cv2.getPerspectiveTransform(src, dst)
        return cv2.warpPerspective(image, m, (size, size), flags=cv2.INTER_AREA)

    def top_down(self, image: np.ndarray, px_per_tile: int = 64, margin: int = 1):
        """The board rectified top-down at a fixed scale: every cell ``px_per_tile`` square.

        Returns the image and the grid coordinates of its top-left corner (cells ``margin``
        around the occupied ones are included)."""
        cols = [c for c, _ in self.cells]
        rows = [r for _, r in self.cells]
        c0, r0 = min(cols) - margin, min(rows) - margin
        w = (max(cols) + margin + 1 - c0) * px_per_tile
        h = (max(rows) + margin + 1 - r0) * px_per_tile
        to_grid = np.array([[1 / px_per_tile, 0, c0], [0, 1 / px_per_tile, r0], [0, 0, 1]])
        m = np.linalg.inv(self.homography @ to_grid)
        return cv2.warpPerspective(image, m, (w, h), flags=cv2.INTER_AREA), (c0, r0)


def _angle(mask: np.ndarray) -> float:
    soft = cv2.GaussianBlur(mask.astype(np.float32), (7, 7), 0)
    gx = cv2.Sobel(soft, cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(soft, cv2.CV_32F, 0, 1)
    mag = np.hypot(gx, gy)
    sel = mag > 0.05
    deg = np.degrees(np.arctan2(gy[sel], gx[sel])) % 90
    hist, _ = np.histogram(deg, bins=360, range=(0, 90), weights=mag[sel])
    hist = np.convolve(np.r_[hist[-4:], hist, hist[:4]], np.ones(9) / 9, "same")[4:-4]
    peak = int(np.argmax(hist)) * 0.25 + 0.125
    return peak if peak < 45 else peak - 90


def _edges(work: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Where tile borders are: the silhouette's outline plus dark thin gaps inside it."""
    gray = cv2.cvtColor(work, cv2.COLOR_BGR2GRAY)
    soft = cv2.GaussianBlur(mask.astype(np.float32), (3, 3), 0)
    outline = np.hypot(cv2.Sobel(soft, cv2.CV_32F, 1, 0), cv2.Sobel(soft, cv2.CV_32F, 0, 1))
    gaps = cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT, np.ones((5, 5), np.uint8)).astype(np.float32)
    inside = cv2.erode(mask, np.ones((3, 3), np.uint8)).astype(np.float32)
    e = outline / (outline.max() + 1e-6) + inside * gaps / (np.percentile(gaps, 99.5) + 1e-6)
    return np.clip(e, 0, 1.5)


def _period(profile: np.ndarray, lo: float, hi: float) -> tuple[float, float]:
    """Tile pitch from the autocorrelation of a border profile (shortest strong lag wins)."""
    p = profile - np.convolve(profile, np.ones(31) / 31, "same")
    ac = np.correlate(p, p, "full")[len(p) - 1 :]
    ac = ac / (ac[0] + 1e-9)
    lo_i, hi_i = int(lo), min(int(hi), len(ac) - 2)
    if hi_i <= lo_i:
        return 0.0, 0.0
    best = lo_i + int(np.argmax(ac[lo_i:hi_i]))
    for div in (3, 2):
        cand = round(best / div)
        if cand >= lo_i:
            k = cand - 1 + int(np.argmax(ac[cand - 1 : cand + 2]))
            if ac[k] >= 0.8 * ac[best]:
                best = k
                break
    a, b, c = ac[best - 1], ac[best], ac[best + 1]
    den = a - 2 * b + c
    off = 0.5 * (a - c) / den if abs(den) > 1e-9 else 0.0
    return float(best + np.clip(off, -0.5, 0.5)), float(ac[best])


def _phase(profile: np.ndarray, period: float) -> float:
    x = np.arange(len(profile), dtype=np.float64)
    nb = max(4, int(period))
    idx = ((x % period) * nb / period).astype(int) % nb
    m = np.bincount(idx, weights=profile, minlength=nb)[:nb] / (
        np.bincount(idx, minlength=nb)[:nb] + 1e-9
    )
    m = m + 0.5 * (np.roll(m, 1) + np.roll(m, -1))
    return (int(np.argmax(m)) + 0.5) * period / nb


def _vanishing(segs: np.ndarray) -> np.ndarray | None:
    """Least-squares common point (homogeneous) of line segments (N x 4), weighted by length."""
    if len(segs) < 2:
        return None
    p1 = np.c_[segs[:, :2], np.ones(len(segs))]
    p2 = np.c_[segs[:, 2:], np.ones(len(segs))]
    lines = np.cross(p1, p2)
    lines /= np.linalg.norm(lines[:, :2], axis=1, keepdims=True) + 1e-9
    length = np.linalg.norm(segs[:, 2:] - segs[:, :2], axis=1)
    _, _, vt = np.linalg.svd(lines * length[:, None])
    return vt[-1]


def _rectifier(mask: np.ndarray, angle: float) -> np.ndarray:
    """A homography that makes the tiles' outline edges parallel to the axes (undoes perspective).

    Each family of outline edges (along and across the grid) meets at a vanishing point; mapping
    the two points to infinity in x and y rectifies the table plane up to scale per axis.
    """
    h, w = mask.shape
    edges = cv2.Canny(mask * 255, 50, 150)
    segs = cv2.HoughLinesP(
        edges, 1, np.pi / 360, 20, minLineLength=max(15, 0.03 * max(h, w)), maxLineGap=3
    )
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    fallback = np.vstack([rot, [0, 0, 1]])
    if segs is None or len(segs) < 6:
        return fallback
    segs = segs.reshape(-1, 4).astype(np.float64)
    ang = np.degrees(np.arctan2(segs[:, 3] - segs[:, 1], segs[:, 2] - segs[:, 0]))
    d = (ang + angle) % 180  # angle along the grid's x axis ~ 0 (or 180), y axis ~ 90
    fam_x = segs[np.minimum(d, 180 - d) < 12]
    fam_y = segs[np.abs(d - 90) < 12]
    vx, vy = _vanishing(fam_x), _vanishing(fam_y)
    if vx is None or vy is None or len(fam_x) < 3 or len(fam_y) < 3:
        return fallback
    centre = np.array([w / 2, h / 2, 1.0])
    # orient each vanishing direction along +x / +y of the rotated grid
    dir_x = np.array([np.cos(np.radians(-angle)), np.sin(np.radians(-angle))])
    dir_y = np.array([-dir_x[1], dir_x[0]])
    for v, dref in ((vx, dir_x), (vy, dir_y)):
        vec = v[:2] - v[2] * centre[:2]  # direction from the centre towards the vanishing point
        if vec @ dref < 0:
            v *= -1
    inv = np.column_stack([vx, vy, centre])
    if abs(np.linalg.det(inv)) < 1e-12:
        return fallback
    hom = np.linalg.inv(inv)
    # rescale so that the work image keeps its size around the centre
    pts = cv2.perspectiveTransform(
        np.float32(
            [[w / 2 - 50, h / 2], [w / 2 + 50, h / 2], [w / 2, h / 2 - 50], [w / 2, h / 2 + 50]]
        ).reshape(-1, 1, 2),
        hom,
    ).reshape(-1, 2)
    sx = 100 / max(1e-9, abs(pts[1, 0] - pts[0, 0]) + abs(pts[1, 1] - pts[0, 1]))
    sy = 100 / max(1e-9, abs(pts[3, 1] - pts[2, 1]) + abs(pts[3, 0] - pts[2, 0]))
    s = (sx + sy) / 2
    fix = np.array([[s, 0, w / 2], [0, s, h / 2], [0, 0, 1]])
    rect = fix @ hom
    # sanity: the mask must stay in view and not blow up
    ys, xs = np.nonzero(mask)
    sample = np.float32(np.c_[xs[:: max(1, len(xs) // 500)], ys[:: max(1, len(ys) // 500)]])
    out = cv2.perspectiveTransform(sample.reshape(-1, 1, 2), rect).reshape(-1, 2)
    if not np.all(np.isfinite(out)) or np.ptp(out[:, 0]) > 3 * w or np.ptp(out[:, 1]) > 3 * h:
        return fallback
    return rect


def detect(table: Table) -> Grid:
    """Fit the grid to the tiles on the table and list the occupied cells."""
    cfg = settings("grid")
    work, mask = table.work, _main_cluster(table.tile_mask)
    if table.corners is not None:  # only tiles on the table
        poly = np.zeros_like(mask)
        cv2.fillPoly(poly, [np.round(table.corners * table.scale).astype(np.int32)], 1)
        mask = mask & cv2.erode(poly, np.ones((5, 5), np.uint8))
    h, w = mask.shape
    angle = _angle(mask)
    rect = _rectifier(mask, angle)
    # a canvas that holds every tile pixel after rectification, with a margin
    ys0, xs0 = np.nonzero(mask)
    box = np.float32(
        [
            [xs0.min(), ys0.min()],
            [xs0.max(), ys0.min()],
            [xs0.max(), ys0.max()],
            [xs0.min(), ys0.max()],
        ]
    )
    out = cv2.perspectiveTransform(box.reshape(-1, 1, 2), rect).reshape(-1, 2)
    margin = 0.05 * max(h, w)
    shift = np.array(
        [[1, 0, margin - out[:, 0].min()], [0, 1, margin - out[:, 1].min()], [0, 0, 1]]
    )
    rect = shift @ rect
    w = int(min(3 * work.shape[1], np.ptp(out[:, 0]) + 2 * margin))
    h = int(min(3 * work.shape[0], np.ptp(out[:, 1]) + 2 * margin))
    mask_r = cv2.warpPerspective(mask, rect, (w, h), flags=cv2.INTER_NEAREST)
    edges_r = cv2.warpPerspective(_edges(work, mask), rect, (w, h))
    ys, xs = np.nonzero(mask_r)
    if len(xs) < 100:
        raise GridNotFound("too few tile pixels to fit a grid")
    lo = max(8.0, cfg["min_tile_frac"] * max(h, w))
    hi = cfg["max_tile_frac"] * max(h, w)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    vert = cv2.morphologyEx(edges_r, cv2.MORPH_OPEN, np.ones((15, 1), np.uint8))
    horiz = cv2.morphologyEx(edges_r, cv2.MORPH_OPEN, np.ones((1, 15), np.uint8))
    prof_x = vert[y0:y1, :].sum(axis=0)
    prof_y = horiz[:, x0:x1].sum(axis=1)
    px, cx = _period(prof_x, lo, hi)
    py, cy = _period(prof_y, lo, hi)
    if min(cx, cy) < 0.05 or min(px, py) <= 0:
        raise GridNotFound("no regular grid of tile borders found on the table")
    if abs(px - py) > cfg["max_aspect"] * max(px, py):
        p = px if cx >= cy else py
        lo2, hi2 = p * (1 - cfg["max_aspect"]), p * (1 + cfg["max_aspect"])
        if cx >= cy:
            py, _ = _period(prof_y, lo2, hi2)
        else:
            px, _ = _period(prof_x, lo2, hi2)
    phx, phy = _phase(prof_x, px), _phase(prof_y, py)
    c_lo, c_hi = int(np.floor((x0 - phx) / px)) - 1, int(np.ceil((x1 - phx) / px)) + 1
    r_lo, r_hi = int(np.floor((y0 - phy) / py)) - 1, int(np.ceil((y1 - phy) / py)) + 1
    base = np.array([[px, 0, phx + c_lo * px], [0, py, phy + r_lo * py], [0, 0, 1]])
    hom = _refine(base, edges_r, mask_r, (c_hi - c_lo, r_hi - r_lo), cfg)
    cells = _occupied(hom, mask_r, (c_hi - c_lo, r_hi - r_lo), cfg)
    if not cells:
        raise GridNotFound("a grid was fitted but no cell holds a tile")
    cells = _largest_group(cells)
    hom = _refine(hom, edges_r, mask_r, (c_hi - c_lo, r_hi - r_lo), cfg, cells)
    cells = _largest_group(_occupied(hom, mask_r, (c_hi - c_lo, r_hi - r_lo), cfg))
    if not cells:  # the refined grid lost every tile: it fitted something else
        raise GridNotFound("the fitted grid holds no tile after refinement")
    # drop empty border rows/columns so that indices start at 0
    c0 = min(c for c, _ in cells)
    r0 = min(r for _, r in cells)
    cells = {(c - c0, r - r0): v for (c, r), v in cells.items()}
    hom = hom @ np.array([[1, 0, c0], [0, 1, r0], [0, 0, 1]])
    full = np.diag([1 / table.scale, 1 / table.scale, 1.0]) @ np.linalg.inv(rect) @ hom
    full /= full[2, 2]
    result = Grid(full, cells, angle=float(angle))
    sides = [np.linalg.norm(np.diff(result.corners(c, r), axis=0), axis=1).mean() for c, r in cells]
    result.pitch = float(np.mean(sides))
    return result


def _largest_group(cells: dict) -> dict:
    """The largest edge-connected group of cells: a Carcassonne board is always one group, so
    anything apart from it (a hand, a loose tile, the box) is not part of the board."""
    seen: set = set()
    best: list = []
    for start in cells:
        if start in seen:
            continue
        group, stack = [], [start]
        seen.add(start)
        while stack:
            c, r = stack.pop()
            group.append((c, r))
            for n in ((c + 1, r), (c - 1, r), (c, r + 1), (c, r - 1)):
                if n in cells and n not in seen:
                    seen.add(n)
                    stack.append(n)
        if len(group) > len(best):
            best = group
    return {c: cells[c] for c in best}


def _main_cluster(mask: np.ndarray) -> np.ndarray:
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    if n <= 2:
        return mask
    areas = stats[1:, cv2.CC_STAT_AREA]
    keep = 1 + np.nonzero(areas >= 0.02 * areas.max())[0]
    return np.isin(labels, keep).astype(np.uint8)


def _occupied(hom, mask_r, shape, cfg) -> dict[tuple[int, int], float]:
    h, w = mask_r.shape
    cells = {}
    inner = 0.15
    for r in range(shape[1]):
        for c in range(shape[0]):
            g = np.float32([[c + inner, r + inner], [c + 1 - inner, r + 1 - inner]])
            (xa, ya), (xb, yb) = cv2.perspectiveTransform(g.reshape(-1, 1, 2), hom).reshape(2, 2)
            xa, ya, xb, yb = int(xa), int(ya), int(np.ceil(xb)), int(np.ceil(yb))
            if xa < 0 or ya < 0 or xb > w or yb > h or xb <= xa or yb <= ya:
                continue
            fill = float(mask_r[ya:yb, xa:xb].mean())
            if fill >= cfg["occupied_fraction"]:
                cells[(c, r)] = fill
    return cells


def _refine(hom, edges_r, mask_r, shape, cfg, cells=None) -> np.ndarray:
    """Shift each cell onto the borders around it, then refit one homography through all shifts."""
    h, w = edges_r.shape
    col_cum = np.vstack([np.zeros((1, w)), np.cumsum(edges_r, axis=0, dtype=np.float64)])
    row_cum = np.hstack([np.zeros((h, 1)), np.cumsum(edges_r, axis=1, dtype=np.float64)])
    if cells is None:
        cells = _occupied(hom, mask_r, shape, cfg)
    pitch = float(np.sqrt(abs(np.linalg.det(hom[:2, :2]))))
    for it in range(cfg["refine_iterations"]):
        max_shift = max(1, round(cfg["refine_shift"] * (0.5**it) * pitch))
        step = max(1, max_shift // 4)
        src, dst = [], []
        for c, r in cells:
            g = np.float32([[c, r], [c + 1, r], [c + 1, r + 1], [c, r + 1]])
            quad = cv2.perspectiveTransform(g.reshape(-1, 1, 2), hom).reshape(4, 2)
            xa, ya = np.round(quad.min(axis=0)).astype(int)
            xb, yb = np.round(quad.max(axis=0)).astype(int)
            best, bd = -1.0, (0, 0)
            for dy in range(-max_shift, max_shift + 1, step):
                for dx in range(-max_shift, max_shift + 1, step):
                    a, b, lft, rgt = ya + dy, yb + dy, xa + dx, xb + dx
                    if a < 0 or lft < 0 or b >= h or rgt >= w:
                        continue
                    s = (
                        col_cum[b, lft]
                        - col_cum[a, lft]
                        + col_cum[b, rgt]
                        - col_cum[a, rgt]
                        + row_cum[a, rgt]
                        - row_cum[a, lft]
                        + row_cum[b, rgt]
                        - row_cum[b, lft]
                    )
                    if s > best:
                        best, bd = s, (dx, dy)
            src.extend(g)
            dst.extend(quad + bd)
        if len(src) < 8:
            break
        new, _ = cv2.findHomography(
            np.float32(src), np.float32(dst), cv2.RANSAC, max(2.0, 0.06 * pitch)
        )
        if new is None:
            break
        hom = new
    return hom
