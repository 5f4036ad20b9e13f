"""Lens distortion without a calibration board: the table's straight edges (plumb lines).

A webcam's barrel distortion bends the table's edges. The one-parameter division model
``x_u = c + (x_d - c) / (1 + k r_d²)`` (``c`` the frame centre, ``r_d`` the distance from it over
half the frame diagonal) straightens them; :func:`plumb_line` finds the ``k`` under which the
sampled edge points lie best on straight lines. The same ``k`` is stored in the profile
(``scale.lens_k``) and undone before the top-down homography.
"""

from __future__ import annotations

import numpy as np

from meeplecam.vision.profile import distort_division, undistort_division


def undistort(points, k: float, size) -> np.ndarray:
    """Distorted frame pixels (N x 2) -> undistorted pixels (same frame)."""
    return undistort_division(points, k, size)


def distort(points, k: float, size) -> np.ndarray:
    """Undistorted pixels -> distorted frame pixels (inverse of :func:`undistort`)."""
    return distort_division(points, k, size)


def straightness(point_sets, k: float, size) -> float:
    """RMS distance (pixels) of undistorted points from the best line through each set."""
    total, n = 0.0, 0
    for pts in point_sets:
        u = undistort(pts, k, size)
        u = u - u.mean(axis=0)
        sv = np.linalg.svd(u, compute_uv=False)
        total += sv[-1] ** 2
        n += len(u)
    return float(np.sqrt(total / max(n, 1)))


def plumb_line(point_sets, size, limit: float = 0.4) -> float:
    """The division-model ``k`` that makes each set of edge points most nearly straight."""
    grid = np.linspace(-limit, limit, 81)
    costs = [straightness(point_sets, k, size) for k in grid]
    i = int(np.argmin(costs))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    phi = (np.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(40):
        c1, c2 = b - phi * (b - a), a + phi * (b - a)
        if straightness(point_sets, c1, size) < straightness(point_sets, c2, size):
            b = c2
        else:
            a = c1
    return float((a + b) / 2)
