"""Sub-pixel edges of a quadrilateral seen in a frame: a tile's sides (:func:`refine_quad`) and a
table's (:func:`refine_outline`, which also finds the lens distortion that straightens them).

Along each side's normal the colour steps are sampled every quarter pixel; the edge is the
centroid of the step around its peak (unbiased for any symmetric blur), a robust line goes
through the points of a side, and the lines meet at the corners. Calibration measures with these
(the table and the start tile of a profile); the live tracker refines a table outline found with
no profile with the same code.
"""

from __future__ import annotations

import cv2
import numpy as np

from . import lens
from .table import edge_image, intersect_lines, outward_sides, robust_line, side_lengths

EDGE_BAND_PX = 4  # searched either side of a rough side at least (pixels)
EDGE_SAMPLES = 40  # normals along a side

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
    window: float = 2.0,
):
    """Sub-pixel edge points along each side of a rough quad (4 arrays of N x 2 pixels): the
    strongest colour edge along the side's normal within ``band`` pixels. With ``inner`` > 0 a
    surface's own edge instead (:func:`_surface_edge`: the innermost step at least that fraction
    as strong as the strongest beyond which the colour is no longer the surface's; a table's top,
    not its darker front face, nor a grain line in its wood). The edge is placed from the steps
    within ``window`` pixels of it: less than the distance to the next edge parallel to it."""
    quad = np.asarray(quad, np.float64).reshape(4, 2)
    side_px = np.mean(side_lengths(quad))
    band = float(band or max(EDGE_BAND_PX, 0.12 * side_px))
    img = edge_image(frame)
    if img.ndim == 2:
        img = img[..., None]
    step = 0.25
    half = max(1, round(window / step))
    # sampled beyond the band by the window, so that an edge near the band's end is not placed
    # from a window cut short (which pulls it inwards)
    offsets = np.arange(-band - half * step, band + half * step + 0.01, step)
    ts = np.linspace(span[0], span[1], int(samples or EDGE_SAMPLES))
    sides = []
    for base, nrm in outward_sides(quad, ts):
        pts = base[:, None, :] + offsets[None, :, None] * nrm
        vals = _sample(img, pts)
        grad = np.linalg.norm(np.diff(vals, axis=1), axis=2)  # samples x offsets
        searched = grad[:, half : grad.shape[1] - half]
        if inner > 0:
            k = half + _surface_edge(vals[:, half : vals.shape[1] - half], searched, step, inner)
        else:
            k = half + np.argmax(searched, axis=1)
        # The edge is the centroid of the gradient around its peak (unbiased for any symmetric
        # blur; a parabola through three samples is biased by the sampling phase).
        centre_k = k.astype(np.float64)
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


def lines_corners(sides) -> np.ndarray | None:
    """Robust lines through 4 sets of edge points, intersected (corner i between sides i-1, i)."""
    lines = [robust_line(pts, stride=8) for pts in sides]
    return None if any(line is None for line in lines) else intersect_lines(lines)


def refine_quad(
    frame: np.ndarray,
    quad: np.ndarray,
    band: float | None = None,
    samples: int | None = None,
    span=(0.12, 0.88),
    inner: float = 0.0,
    lens_k: float = 0.0,
    window: float = 2.0,
) -> np.ndarray:
    """A quad's corners to sub-pixel precision: :func:`edge_points` on each side, a robust line
    through them (straightened by the lens model ``lens_k``), the corners where lines meet."""
    quad = np.asarray(quad, np.float64).reshape(4, 2)
    size = (frame.shape[1], frame.shape[0])
    sides = edge_points(frame, quad, band, samples, span, inner, window)
    out = lines_corners([lens.undistort(s, lens_k, size) for s in sides])
    if out is None:
        return quad
    out = lens.distort(out, lens_k, size)
    side_px = np.mean(side_lengths(quad))
    if np.max(np.linalg.norm(out - quad, axis=1)) > max(0.3 * side_px, 8.0):
        return quad  # the fit ran off: keep the rough corners
    return out


def refine_outline(frame: np.ndarray, quad: np.ndarray, samples: int = 80):
    """Sub-pixel table corners and the lens: edge points along each side, the division-model
    ``k`` that straightens them (:func:`lens.plumb_line`), lines through the straightened points,
    and their intersections put back into the (distorted) frame. Returns (corners, k, support:
    per side the share of its edge points within a pixel of its line)."""
    size = (frame.shape[1], frame.shape[0])
    side = np.mean(side_lengths(quad))
    band = max(4.0, 0.015 * side)
    sides = edge_points(frame, quad, band=band, samples=samples, span=(0.1, 0.9), inner=0.25)
    k = lens.plumb_line(sides, size)
    straight = [lens.undistort(s, k, size) for s in sides]
    lines = [robust_line(pts, stride=8) for pts in straight]
    if any(line is None for line in lines):
        return quad, 0.0, (0.0,) * 4
    support = tuple(
        float((np.abs((pts - point) @ np.array([-d[1], d[0]])) <= 1.0).mean())
        for pts, (point, d) in zip(straight, lines, strict=True)
    )
    corners = intersect_lines(lines)
    if corners is None:
        return quad, 0.0, (0.0,) * 4
    return lens.distort(corners, k, size), k, support
