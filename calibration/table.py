"""The table outline: found automatically (:mod:`surface`, shown for confirmation), given as four
clicks (``--corners``, or a click window), or found from the four printed ArUco corner markers
(:func:`find_corner_markers`). Kept as fractions of the frame. (The sub-pixel edge tools that
the outline and the tile scale share are vision's :mod:`meeplecam.vision.edges`.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cv2
import numpy as np

from meeplecam.vision.edges import refine_quad
from meeplecam.vision.table import order_corners, side_lengths

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


def _refined_square(frame: np.ndarray, square: np.ndarray, nearest: float) -> np.ndarray:
    """A marker's black square to a small fraction of a pixel: ArUco's corners (refined on a
    few pixels round each corner) lie a few tenths of a pixel inside a blurred square, half a
    percent of its size; each side's edge is found along its whole length instead, from the
    steps nearer to it than the next edge parallel to it (the border's inner edge, or the
    paper's: ``nearest``, as a share of the square's side)."""
    side = float(np.mean(side_lengths(square)))
    near = nearest * side
    return refine_quad(frame, square, band=max(1.0, 0.3 * near), window=max(0.75, 0.4 * near))


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
    modules = detector.getDictionary().markerSize + 2  # with the black border
    nearest = min(margin_mm / side_mm, 1 / modules)
    squares = {i: _refined_square(frame, seen[i], nearest) for i in range(4) if i in seen}
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
