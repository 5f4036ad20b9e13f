"""Camera intrinsics and lens distortion from views of the ChArUco board (optional step).

Print the board (``meeplecam markers --charuco board.pdf``), hold it in front of the camera in a
handful of different tilts and places, and :func:`calibrate` the views: the result holds the camera
matrix, the distortion coefficients and the RMS reprojection error in pixels (below about 1 px is a
good calibration). Views where the board is not found are skipped and counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import cv2
import numpy as np

from meeplecam.vision.profile import Camera

from .config import settings
from .errors import BoardNotFound
from .markers import charuco_board


@dataclass
class BoardView:
    corners: np.ndarray  # N x 1 x 2 image px of the chessboard corners seen
    ids: np.ndarray  # N x 1 their ids


@dataclass
class Intrinsics:
    matrix: np.ndarray
    distortion: np.ndarray
    image_size: tuple[int, int]
    rms_px: float
    views: int
    skipped: int

    @property
    def focal(self) -> tuple[float, float]:
        return float(self.matrix[0, 0]), float(self.matrix[1, 1])

    def to_profile(self) -> Camera:
        return Camera(
            self.matrix.tolist(),
            self.distortion.ravel().tolist(),
            [int(self.image_size[0]), int(self.image_size[1])],
            float(self.rms_px),
            int(self.views),
        )

    def summary(self) -> str:
        fx, fy = self.focal
        return (
            f"camera: {self.views} views ({self.skipped} skipped), focal {fx:.1f} x {fy:.1f} px, "
            f"centre ({self.matrix[0, 2]:.1f}, {self.matrix[1, 2]:.1f}), reprojection error "
            f"{self.rms_px:.3f} px RMS"
        )


def detect(image: np.ndarray, board=None) -> BoardView | None:
    """The board's chessboard corners in one image, or None when too few are seen."""
    board = board or charuco_board()
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(grey)
    if ids is None or len(ids) < settings("charuco")["min_corners"]:
        return None
    return BoardView(corners, ids)


def calibrate(images: Iterable[np.ndarray], board=None) -> Intrinsics:
    """Intrinsics from several views of the board; :class:`BoardNotFound` with too few views."""
    cfg = settings("charuco")
    board = board or charuco_board()
    obj_pts, img_pts, size, skipped = [], [], None, 0
    for image in images:
        size = (image.shape[1], image.shape[0])
        view = detect(image, board)
        if view is None:
            skipped += 1
            continue
        obj, img = board.matchImagePoints(view.corners, view.ids)
        if obj is None or len(obj) < cfg["min_corners"]:
            skipped += 1
            continue
        obj_pts.append(obj.astype(np.float32))
        img_pts.append(img.astype(np.float32))
    if len(obj_pts) < cfg["min_views"]:
        raise BoardNotFound(
            f"the ChArUco board was found in {len(obj_pts)} view(s), {cfg['min_views']} are needed "
            f"({skipped} skipped): hold the whole board in view at several tilts"
        )
    rms, matrix, dist, _, _ = cv2.calibrateCamera(obj_pts, img_pts, size, None, None)
    return Intrinsics(matrix, dist, size, float(rms), len(obj_pts), skipped)


def undistort_points(points: np.ndarray, camera: Camera, width: int, height: int) -> np.ndarray:
    """Image points (N x 2) of a ``width`` x ``height`` frame with the lens distortion removed
    (same pixel grid: the camera matrix is kept)."""
    k = camera.matrix_for(width, height)
    pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
    out = cv2.undistortPoints(pts, k, np.asarray(camera.distortion), P=k)
    return out.reshape(-1, 2)
