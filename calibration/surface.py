"""The table surface in a calibration view, and the things lying on it.

A calibration view shows the table nearly empty (the start tile, a few followers, maybe the score
track), so the table is the large region of one colour around the frame centre, unlike the floor
around it: vision's :func:`~meeplecam.vision.table.find_table_region` (the same finder the live
tracker uses with no profile) gives its region and a rough outline; :func:`segment` then finds
the table edges at full resolution, the lens distortion that makes them straight, and intersects
the straightened edges (a rounded corner does not move them: vision's
:func:`~meeplecam.vision.edges.refine_outline`, which the live tracker uses too). What lies on the
table is what differs from the table around it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from meeplecam.vision.edges import refine_outline
from meeplecam.vision.errors import TableNotLocated
from meeplecam.vision.table import find_table_region, order_corners

from .errors import CalibrationError


@dataclass
class Surface:
    corners: np.ndarray  # 4 x 2 table corners in frame pixels, clockwise from top-left
    table_mask: np.ndarray  # uint8 0/1 frame size: the table (with what lies on it)
    objects_mask: np.ndarray  # uint8 0/1 frame size: things on the table (tiles, followers, ...)
    colour_lab: np.ndarray  # the table's median Lab colour
    lens_k: float = 0.0  # division-model distortion that straightens the table edges
    contrast: float = 100.0  # Lab distance between the table and what lies just outside it
    # per side, the share of its edge points on its line (a side cut through the table, where a
    # lamp's glare split the table's colour, follows no straight edge)
    support: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)


def segment(frame: np.ndarray) -> Surface:
    h, w = frame.shape[:2]
    try:
        found = find_table_region(frame)
    except TableNotLocated as exc:
        raise CalibrationError(
            f"{exc}: click the table's four corners or lay the printed corner markers"
        ) from None
    s, lab = found.scale, found.lab
    sw = lab.shape[1]
    corners, lens_k, support = refine_outline(frame, order_corners(found.quad / s))
    table_mask = cv2.resize(found.filled, (w, h), interpolation=cv2.INTER_NEAREST)
    # Things on the table: unlike the table around them (a median over several tile sizes), so a
    # smooth glare spot or uneven light is table, and a tile or a follower is not.
    local = cv2.cvtColor(cv2.medianBlur(found.small, 2 * (sw // 20) + 1), cv2.COLOR_BGR2Lab)
    diff = np.linalg.norm(lab - local.astype(np.float32), axis=2)
    inside = cv2.erode(found.filled, np.ones((5, 5), np.uint8))
    tol = max(10.0, 3.0 * float(np.quantile(diff[inside > 0], 0.75)))
    things = ((diff > tol) & (inside > 0)).astype(np.uint8)
    holes = cv2.resize(things, (w, h), interpolation=cv2.INTER_NEAREST)
    colour = np.median(lab[found.region > 0], axis=0)
    return Surface(corners, table_mask, holes, colour, lens_k, found.contrast, support)
