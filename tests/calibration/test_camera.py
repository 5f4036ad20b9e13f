"""ChArUco intrinsics from synthetic views of a board rendered with known intrinsics."""

import cv2
import numpy as np
import pytest

from meeplecam.calibration import camera
from meeplecam.calibration.errors import BoardNotFound
from meeplecam.calibration.markers import charuco_board

K = np.array([[1000.0, 0, 640], [0, 1000.0, 360], [0, 0, 1]])
SIZE = (1280, 720)


def _view(board, texture, px_per_mm, rvec, tvec):
    """The board (texture, flat in its plane, mm) seen by camera K at pose (rvec, tvec)."""
    r, _ = cv2.Rodrigues(np.asarray(rvec, float))
    plane = K @ np.column_stack([r[:, 0], r[:, 1], np.asarray(tvec, float)])
    tex_to_mm = np.diag([1 / px_per_mm, 1 / px_per_mm, 1.0])
    img = cv2.warpPerspective(
        texture, plane @ tex_to_mm, SIZE, flags=cv2.INTER_AREA, borderValue=200
    )
    return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)


def _views(n=8, seed=3):
    board = charuco_board()
    sx, sy = board.getChessboardSize()
    sq = board.getSquareLength()
    px_per_mm = 8.0
    w, h = round(sx * sq * px_per_mm), round(sy * sq * px_per_mm)
    texture = board.generateImage((w, h), marginSize=0, borderBits=1)
    rng = np.random.default_rng(seed)
    views = []
    for _ in range(n):
        rvec = [rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5), rng.uniform(-0.3, 0.3)]
        cx, cy = sx * sq / 2, sy * sq / 2
        r, _ = cv2.Rodrigues(np.asarray(rvec))
        centre = np.array([rng.uniform(-60, 60), rng.uniform(-30, 30), rng.uniform(380, 520)])
        tvec = centre - r @ [cx, cy, 0]
        views.append(_view(board, texture, px_per_mm, rvec, tvec))
    return views


def test_intrinsics_recovered_from_synthetic_views():
    result = camera.calibrate(_views())
    fx, fy = result.focal
    assert abs(fx - 1000) / 1000 < 0.03 and abs(fy - 1000) / 1000 < 0.03
    assert abs(result.matrix[0, 2] - 640) < 25 and abs(result.matrix[1, 2] - 360) < 25
    assert result.rms_px < 1.0
    assert "reprojection error" in result.summary()
    cam = result.to_profile()
    assert cam.image_size == [1280, 720] and cam.rms_px == pytest.approx(result.rms_px)


def test_too_few_views_is_a_clear_error():
    blank = np.full((720, 1280, 3), 128, np.uint8)
    with pytest.raises(BoardNotFound, match="found in 0 view"):
        camera.calibrate([blank] * 5)
