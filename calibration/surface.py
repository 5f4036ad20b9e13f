"""The table surface in a calibration view, and the things lying on it.

A calibration view shows the table nearly empty (the start tile, a few followers, maybe the score
track), so the table is the large region of one colour around the frame centre, unlike the floor
around it, or, on a floor of nearly its colour, the region of one hue: vision's
:func:`~meeplecam.vision.table.locate_table` (the same finder the live tracker uses with no
profile) gives its region, finds the table edges at full resolution, the lens distortion that
makes them straight, and intersects the straightened edges (a rounded corner does not move
them). What lies on the table is what differs from the table around it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from meeplecam.vision.errors import CameraCovered, TableNotLocated
from meeplecam.vision.table import locate_table, something_in_view

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
    trusted: bool = True  # its colour, or its hue, stands out clearly from the floor's
    by_hue: bool = False  # outlined by its hue alone (see vision.table.locate_table)


def segment(frame: np.ndarray) -> Surface:
    h, w = frame.shape[:2]
    try:
        something_in_view(frame)
        located = locate_table(frame)
    except CameraCovered as exc:
        raise CalibrationError(str(exc)) from None
    except TableNotLocated as exc:
        raise CalibrationError(
            f"{exc}: click the table's four corners or lay the printed corner markers"
        ) from None
    found = located.region
    lab, sw = found.lab, found.lab.shape[1]
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
    return Surface(
        located.corners,
        table_mask,
        holes,
        colour,
        located.lens_k,
        found.contrast,
        located.support,
        located.trusted,
        located.by_hue,
    )
