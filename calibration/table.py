"""The table outline: found automatically (:mod:`surface`, shown for confirmation), given as four
clicks (``--corners``, or a click window), or found from the four printed ArUco corner markers
(:func:`find_corner_markers`). Kept as fractions of the frame. Also the sub-pixel edge tools that
the outline and the tile scale share (:func:`edge_points`, :func:`refine_quad`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cv2
import numpy as np

from meeplecam.vision.table import edge_image, intersect_lines, order_corners, outward_sides

from .config import settings
from .errors import CalibrationError, MarkersNotFound
from .markers import dictionary


def to_fractions(corners_px, width: int, height: int) -> list[list[float]]:
    pts = np.asarray(corners_px, float).reshape(-1, 2) / [width, height]
    return pts.tolist()


def to_pixels(fractions, width: int, height: int) -> np.ndarray:
    return np.asarray(fractions, float).reshape(-1, 2) * [width, height]


def parse_points(text: str, width: int, height: int) -> np.ndarray:
    """Four points from ``"x,y x,y x,y x,y"`` (``;`` also separates): pixels, or fractions when
    every value is at most 1. Returned in pixels, clockwise from the top-left."""
    nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", text)]
    if len(nums) != 8:
        raise CalibrationError(f"give four corners as 'x,y x,y x,y x,y', got {text!r}")
    pts = np.asarray(nums).reshape(4, 2)
    if np.all(np.abs(pts) <= 1.0):
        pts = pts * [width, height]
    return order_corners(pts)


def detect_outline(frame: np.ndarray):
    """The table outline (4 x 2 pixels, clockwise from top-left) and the lens ``k`` that makes its
    edges straight, found from the table surface (:func:`surface.segment`)."""
    from .surface import segment

    found = segment(frame)
    return found.corners, found.lens_k


def click_corners(frame: np.ndarray, window: str = "meeplecam: click the 4 table corners"):
    """Let the user click the four table corners in an OpenCV window (needs a display)."""
    clicks: list[tuple[float, float]] = []
    scale = min(1.0, 1280 / frame.shape[1])
    view = cv2.resize(frame, None, fx=scale, fy=scale) if scale < 1 else frame.copy()

    def on_mouse(event, x, y, _flags, _param):
        if event == cv2.EVENT_LBUTTONDOWN and len(clicks) < 4:
            clicks.append((x / scale, y / scale))
            cv2.circle(view, (x, y), 6, (0, 0, 255), 2)

    try:
        cv2.namedWindow(window)
        cv2.setMouseCallback(window, on_mouse)
        while len(clicks) < 4:
            cv2.imshow(window, view)
            if cv2.waitKey(30) == 27:
                raise CalibrationError("corner clicking cancelled")
        cv2.destroyWindow(window)
    except cv2.error as exc:
        raise CalibrationError(
            f"no window to click in ({exc.err}); give --corners instead"
        ) from None
    return order_corners(np.asarray(clicks))


@dataclass
class CornerMarkers:
    corners: np.ndarray  # 4 x 2 table corners (pixels), clockwise from top-left
    squares: list[np.ndarray]  # each marker's black square (4 x 2 pixels, ArUco corner order)
    ids: list[int]
    side_mm: float


def find_corner_markers(
    frame: np.ndarray, side_mm: float | None = None, margin_mm: float | None = None
) -> CornerMarkers:
    """The four printed table-corner markers (ids 0-3). Each table corner lies ``margin_mm``
    beyond the marker's outermost corner along both marker edges (the paper's corner)."""
    cfg = settings("markers")
    side_mm = float(side_mm or cfg["marker_mm"])
    margin_mm = float(cfg["margin_mm"] if margin_mm is None else margin_mm)
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(dictionary(cfg["dictionary"]), params)
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    found, ids, _ = detector.detectMarkers(grey)
    seen = (
        {}
        if ids is None
        else {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), found, strict=True)}
    )
    squares = {i: seen[i] for i in range(4) if i in seen}
    if len(squares) < 4:
        missing = [i for i in range(4) if i not in squares]
        raise MarkersNotFound(
            f"table-corner markers {missing} not seen (found {sorted(seen)}): make sure all four "
            "lie flat in the table corners, in view and not covered"
        )
    centre = np.mean([s.mean(axis=0) for s in squares.values()], axis=0)
    unit = np.float64([[0, 0], [side_mm, 0], [side_mm, side_mm], [0, side_mm]])
    corners = []
    for sq in squares.values():
        k = int(np.argmax(np.linalg.norm(sq - centre, axis=1)))
        hom = cv2.getPerspectiveTransform(unit.astype(np.float32), sq.astype(np.float32))
        out = unit[k] + np.sign(unit[k] - side_mm / 2) * margin_mm
        p = hom @ [out[0], out[1], 1.0]
        corners.append(p[:2] / p[2])
    return CornerMarkers(
        order_corners(np.asarray(corners)), list(squares.values()), sorted(squares), side_mm
    )


REMAP_WIDTH = 4096  # remap's maps must be under 32767 on each side: points go in rows this long


def _sample(image: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Bilinear samples of a float image (H x W x C) at points (... x 2)."""
    shape = pts.shape[:-1]
    flat = pts.reshape(-1, 2).astype(np.float32)
    n = len(flat)
    width = max(1, min(n, REMAP_WIDTH))
    rows = -(-n // width)
    grid = np.zeros((rows * width, 2), np.float32)
    grid[:n] = flat
    grid = grid.reshape(rows, width, 2)
    out = cv2.remap(
        image, grid[..., 0], grid[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return out.reshape(rows * width, -1)[:n].reshape(*shape, -1)


def edge_points(
    frame: np.ndarray,
    quad: np.ndarray,
    band: float | None = None,
    samples: int | None = None,
    span=(0.12, 0.88),
    inner: float = 0.0,
):
    """Sub-pixel edge points along each side of a rough quad (4 arrays of N x 2 pixels): the
    strongest colour edge along the side's normal within ``band`` pixels. With ``inner`` > 0 a
    surface's own edge instead (:func:`_surface_edge`: the innermost step at least that fraction
    as strong as the strongest beyond which the colour is no longer the surface's; a table's top,
    not its darker front face, nor a grain line in its wood)."""
    cfg = settings("table")
    quad = np.asarray(quad, np.float64).reshape(4, 2)
    side_px = np.mean(np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1))
    band = float(band or max(cfg["edge_band_px"], 0.12 * side_px))
    img = edge_image(frame)
    if img.ndim == 2:
        img = img[..., None]
    step = 0.25
    offsets = np.arange(-band, band + 0.01, step)
    ts = np.linspace(span[0], span[1], int(samples or cfg["edge_samples"]))
    sides = []
    for base, nrm in outward_sides(quad, ts):
        pts = base[:, None, :] + offsets[None, :, None] * nrm
        vals = _sample(img, pts)
        grad = np.linalg.norm(np.diff(vals, axis=1), axis=2)  # samples x offsets
        k = np.argmax(grad, axis=1)
        if inner > 0:
            k = _surface_edge(vals, grad, step, inner)
        # The edge is the centroid of the gradient around its peak (unbiased for any symmetric
        # blur; a parabola through three samples is biased by the sampling phase).
        centre_k = k.astype(np.float64)
        half = round(2.0 / step)
        for _ in range(3):  # centroid in a window re-centred on the last centroid
            idx = np.round(centre_k)[:, None].astype(int) + np.arange(-half, half + 1)[None, :]
            idx = np.clip(idx, 0, grad.shape[1] - 1)
            win = np.take_along_axis(grad, idx, axis=1)
            win = np.clip(win - win.min(axis=1, keepdims=True), 0, None) + 1e-9
            centre_k = (win * idx).sum(axis=1) / win.sum(axis=1)
        off = offsets[0] + step * (centre_k + 0.5)
        sides.append(base + off[:, None] * nrm)
    return sides


def _surface_edge(
    vals: np.ndarray, grad: np.ndarray, step: float, inner: float, chunks: int = 8
) -> np.ndarray:
    """Per normal (``vals`` samples x offsets x channels, ``grad`` their colour steps), the index
    of the surface's own edge: the innermost step at least ``inner`` as strong as the strongest,
    beyond which the colour is no longer the surface's (:func:`_leaves_surface`). Chosen on runs
    of neighbouring normals together, where a wood grain line crossing the normals at a slant
    averages out and the table's edge does not; each normal then takes its strongest step
    within 2 px of its run's."""
    n = len(grad)
    near = np.arange(-round(2.0 / step), round(2.0 / step) + 1)
    k = np.empty(n, int)
    for run in np.array_split(np.arange(n), min(chunks, n)):
        g = grad[run].mean(axis=0)
        peak = np.zeros(len(g), bool)
        peak[1:-1] = (g[1:-1] >= g[:-2]) & (g[1:-1] >= g[2:])
        peak &= g >= inner * g.max()
        pick = peak & _leaves_surface(vals[run], step)
        centre = int(np.argmax(pick) if pick.any() else np.argmax(g))
        idx = np.clip(centre + near, 0, grad.shape[1] - 1)
        k[run] = idx[np.argmax(grad[run][:, idx], axis=1)]
    return k


def _leaves_surface(vals: np.ndarray, step: float, beyond_px: float = 2.0) -> np.ndarray:
    """Per gradient position of a run of normals (``vals`` samples x offsets x channels): whether
    the colour ``beyond_px`` outward of it is no longer the surface's. The surface's colour is
    the normals' inner end (the median over their innermost quarter); "no longer" is farther
    from it than the surface itself strays there (four times the typical spread, at least 6
    levels): a table's darker front face is no longer the surface, a grain line is."""
    n = vals.shape[1]
    inner = vals[:, : max(2, n // 4)]
    ref = np.median(inner.reshape(-1, inner.shape[-1]), axis=0)
    spread = float(np.median(np.linalg.norm(inner - ref, axis=2)))
    ahead = np.clip(np.arange(n - 1) + round(beyond_px / step), 0, n - 1)
    dist = np.linalg.norm(np.median(vals, axis=0)[ahead] - ref, axis=1)
    return dist > max(6.0, 4.0 * spread)


def robust_line(pts: np.ndarray, tol: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    """A line (point, unit direction) through the largest collinear subset of edge points (every
    pair tried, RANSAC-style, since an inner edge of the art can hold nearly half of them), then
    a least-squares refit on those."""
    pts = np.asarray(pts, np.float64)
    n = len(pts)
    i, j = np.triu_indices(n, k=max(1, n // 8))
    d = pts[j] - pts[i]
    length = np.linalg.norm(d, axis=1)
    ok = length > 1e-6
    i, j, d, length = i[ok], j[ok], d[ok], length[ok]
    nrm = np.stack([-d[:, 1], d[:, 0]], axis=1) / length[:, None]
    dist = np.abs(
        (pts[None, :, :] - pts[i][:, None, :]) @ np.zeros(2)
        + np.einsum("pnk,pk->pn", pts[None, :, :] - pts[i][:, None, :], nrm)
    )
    inliers = dist <= tol
    best = int(np.argmax(inliers.sum(axis=1) - 0.01 * dist.clip(max=tol).sum(axis=1)))
    sel = pts[inliers[best]]
    mean = sel.mean(axis=0)
    _, _, vt = np.linalg.svd(sel - mean)
    return mean, vt[0]


def lines_corners(sides) -> np.ndarray | None:
    """Robust lines through 4 sets of edge points, intersected (corner i between sides i-1, i)."""
    return intersect_lines([robust_line(pts) for pts in sides])


def refine_quad(
    frame: np.ndarray,
    quad: np.ndarray,
    band: float | None = None,
    samples: int | None = None,
    span=(0.12, 0.88),
    inner: float = 0.0,
    lens_k: float = 0.0,
) -> np.ndarray:
    """A quad's corners to sub-pixel precision: :func:`edge_points` on each side, a robust line
    through them (straightened by the lens model ``lens_k``), the corners where lines meet."""
    from . import lens

    quad = np.asarray(quad, np.float64).reshape(4, 2)
    size = (frame.shape[1], frame.shape[0])
    sides = edge_points(frame, quad, band, samples, span, inner)
    out = lines_corners([lens.undistort(s, lens_k, size) for s in sides])
    if out is None:
        return quad
    out = lens.distort(out, lens_k, size)
    side_px = np.mean(np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1))
    if np.max(np.linalg.norm(out - quad, axis=1)) > max(0.3 * side_px, 8.0):
        return quad  # the fit ran off: keep the rough corners
    return out
