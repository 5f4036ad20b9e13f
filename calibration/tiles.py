"""This copy's tile appearance from one photo of tiles laid in rows, in a given order.

The user lays tiles north up (the tile's top towards the far side of the table), a finger's width
apart, in rows read like text (left to right, rows from the far side to the near side), and lists
their letters in that order (``--tiles-order D,A,B,...``). Each tile is found, its corners refined,
cut out north up and handed to the vision layer's appearance model, the same way
``vision.model.build_from_folder`` treats a scan (so both make the same kind of template).
"""

from __future__ import annotations

import cv2
import numpy as np

from .errors import CalibrationError
from .scale import find_tiles
from .surface import segment
from .table import refine_quad


def rows_order(quads: list[np.ndarray]) -> list[np.ndarray]:
    """Quads in reading order: grouped into rows by their centres' y, each row left to right."""
    centres = np.array([q.mean(axis=0) for q in quads])
    side = float(np.median([np.linalg.norm(q[1] - q[0]) for q in quads]))
    order = np.argsort(centres[:, 1])
    rows: list[list[int]] = []
    for i in order:
        if rows and abs(centres[i, 1] - np.mean([centres[j, 1] for j in rows[-1]])) < 0.5 * side:
            rows[-1].append(int(i))
        else:
            rows.append([int(i)])
    return [quads[i] for row in rows for i in sorted(row, key=lambda j: centres[j, 0])]


def crops(frame: np.ndarray, size: int = 96) -> list[np.ndarray]:
    """Every tile lying on the table, cut out north up at ``size`` pixels, in reading order."""
    surface = segment(frame)
    quads = []
    for q in find_tiles(frame, surface):
        side = float(np.mean(np.linalg.norm(q - np.roll(q, 1, axis=0), axis=1)))
        quads.append(refine_quad(frame, q, band=max(3.0, 0.11 * side), lens_k=surface.lens_k))
    out = []
    dst = np.float32([[0, 0], [size, 0], [size, size], [0, size]])
    for q in rows_order(quads):
        m = cv2.getPerspectiveTransform(np.float32(q), dst)
        out.append(cv2.warpPerspective(frame, m, (size, size), flags=cv2.INTER_AREA))
    return out


def appearance_from_rows(frame: np.ndarray, order: list[str], tileset, inset: float = 0.04):
    """The vision layer's appearance model from a photo of tiles in rows (letters in ``order``)."""
    from meeplecam.vision.model import AppearanceModel, features
    from meeplecam.vision.terrain import balance, white_gains

    pieces = crops(frame)
    if len(pieces) != len(order):
        raise CalibrationError(
            f"{len(pieces)} tiles found in the photo but {len(order)} letters given: lay the tiles "
            "a finger's width apart, in rows, all in view"
        )
    model = AppearanceModel(tileset.name)
    for img, tile_id in zip(pieces, order, strict=True):
        if tile_id not in tileset:
            raise CalibrationError(f"tile {tile_id!r} is not in tile set {tileset.name}")
        h, w = img.shape[:2]
        a, b = int(inset * h), int(inset * w)
        img = img[a : h - a, b : w - b]
        img = balance(img, white_gains(img))
        model.templates.setdefault(tile_id, []).append(features(img, model.size))
    return model
