"""Stage 5: followers on the board (colour, standing or lying, the segment under the base point).

A first, conservative detector: a follower is a compact blob of strongly saturated colour in one of
the player colours that stands out from the tile it sits on (tiles are green, ochre and brick red;
figures are painted in flat, saturated colours). Blobs are looked for in each occupied cell; the
segment under the blob's lowest point is read from the tile's segment map at its rotation. It is
deliberately strict (no follower rather than a false one); thresholds live in ``scan.json``.
"""

from __future__ import annotations

import cv2
import numpy as np

from . import geometry
from .config import settings
from .terrain import CITY, ROAD, balance


def _segment_name(tile, rotation: int, u: float, v: float, size: int = 24) -> str:
    """Follower position name (FORMATS ``at``) for a point of a placed tile."""
    cls, _ = geometry.expected(tile, rotation, size)
    k = cls[min(size - 1, int(v * size)), min(size - 1, int(u * size))]
    orient = tile.oriented(rotation)
    if tile.has_cloister and abs(u - 0.5) < 0.2 and abs(v - 0.5) < 0.2:
        return "C"
    if k in (CITY, ROAD):
        side = int(np.argmin([v, 1 - u, 1 - v, u]))
        if orient.sides[side] in "CR":
            return "NESW"[side]
    # nearest half-side of a field
    halves = [
        (0.25, 0),
        (0.75, 0),
        (1, 0.25),
        (1, 0.75),
        (0.75, 1),
        (0.25, 1),
        (0, 0.75),
        (0, 0.25),
    ]
    order = np.argsort([np.hypot(u - a, v - b) for a, b in halves])
    for i in order:
        seg = orient.half_segment[i]
        if seg >= 0:
            return orient.position_name(seg)
    return "C"


def detect(image: np.ndarray, grid, placed: dict, tileset, gains=None) -> list[dict]:
    """Followers as FORMATS ``meeples`` entries; ``placed`` maps (col, row) -> (tile, rotation, x, y)."""
    return [entry for entry, _ in locate(image, grid, placed, tileset, gains)]


def locate(image: np.ndarray, grid, placed: dict, tileset, gains=None) -> list[tuple[dict, tuple]]:
    """Like :func:`detect`, each with the image pixel of the follower's base point."""
    cfg = settings("followers")
    if not cfg.get("enabled", True):
        return []
    out = []
    size = 64
    for (c, r), (tile_id, rot, x, y) in placed.items():
        crop = grid.crop(image, c, r, size)
        if gains is not None:
            crop = balance(crop, gains)
        hsv = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV)
        for colour, ranges in cfg["colours"].items():
            if not ranges:
                continue
            m = np.zeros(hsv.shape[:2], bool)
            for lo, hi in ranges:
                m |= (hsv[..., 0] >= lo) & (hsv[..., 0] <= hi)
            m &= (hsv[..., 1] >= cfg["sat_min"]) & (hsv[..., 2] >= cfg["val_min"])
            m = cv2.morphologyEx(m.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
            n, _, st, cen = cv2.connectedComponentsWithStats(m)
            for i in range(1, n):
                area = st[i, cv2.CC_STAT_AREA] / size**2
                w, h = st[i, cv2.CC_STAT_WIDTH], st[i, cv2.CC_STAT_HEIGHT]
                solid = st[i, cv2.CC_STAT_AREA] / max(1, w * h)
                if not (cfg["min_area"] <= area <= cfg["max_area"]) or solid < cfg["min_solidity"]:
                    continue
                pose = "lying" if max(w, h) > 1.6 * min(w, h) and w > h else "standing"
                u = cen[i][0] / size
                v = (st[i, cv2.CC_STAT_TOP] + h) / size
                at = _segment_name(tileset[tile_id], rot, u, min(v, 0.99))
                base = grid.to_image([[c + u, r + min(v, 0.99)]])[0]
                entry = {"x": x, "y": y, "colour": colour, "at": at, "pose": pose}
                out.append((entry, (float(base[0]), float(base[1]))))
    return out
