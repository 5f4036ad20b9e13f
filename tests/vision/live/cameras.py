"""A pinhole camera over the table, for tests of what the view's geometry implies."""

from __future__ import annotations

import numpy as np


def camera_view(foot, height: float, yaw_deg: float, f: float = 1200.0, size=(1920, 1080)):
    """The grid -> image homography of a pinhole camera ``height`` tiles above grid point
    ``foot``, looking at the grid's origin, turned ``yaw_deg`` about the vertical."""
    import cv2

    eye = np.array([foot[0], foot[1], -height])  # the table is z = 0, the camera above: z < 0
    forward = np.array([0.0, 0.0, 0.0]) - eye
    forward /= np.linalg.norm(forward)
    side = np.cross(forward, [0.0, 0.0, 1.0])
    side /= np.linalg.norm(side)
    down = np.cross(forward, side)
    rot = np.stack([side, down, forward])
    yaw = cv2.Rodrigues(np.array([0.0, 0.0, np.deg2rad(yaw_deg)]))[0]
    rot = yaw @ rot
    t = -rot @ eye
    k = np.array([[f, 0, (size[0] - 1) / 2], [0, f, (size[1] - 1) / 2], [0, 0, 1.0]])
    hom = k @ np.column_stack([rot[:, 0], rot[:, 1], t])
    return hom / hom[2, 2]
