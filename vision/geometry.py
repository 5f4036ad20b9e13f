"""What a tile type should look like at a rotation, drawn from the engine's definition alone.

``expected(tile, rotation, size)`` rasterises the tile's segments (city areas, road lines, the
cloister) into a class map in :data:`terrain.CLASSES` order, with a weight map that trusts the
middle of each area more than its boundaries. No art is involved, so it works for any printing.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .terrain import BUILDING, CITY, FIELD, ROAD

# side index -> (unit normal pointing into the tile, side midpoint) in (u, v), v down
_MID = {0: (0.5, 0.0), 1: (1.0, 0.5), 2: (0.5, 1.0), 3: (0.0, 0.5)}
_CORNER = {(0, 1): (1.0, 0.0), (1, 2): (1.0, 1.0), (2, 3): (0.0, 1.0), (0, 3): (0.0, 0.0)}


def _side_dist(u, v, side):
    return (v, 1 - u, 1 - v, u)[side]


def _seg_dist(u, v, a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    t = np.clip(((u - a[0]) * d[0] + (v - a[1]) * d[1]) / (d @ d), 0, 1)
    return np.hypot(u - a[0] - t * d[0], v - a[1] - t * d[1])


@cache
def _canonical(tile, size: int) -> tuple[np.ndarray, np.ndarray]:
    from meeplecam.engine import Kind

    c = (np.arange(size) + 0.5) / size
    u, v = np.meshgrid(c, c)
    cls = np.full((size, size), FIELD, np.int8)
    for seg in tile.segments:
        if seg.kind != Kind.CITY:
            continue
        ports = sorted(seg.ports)
        d = [_side_dist(u, v, s) for s in ports]
        if len(ports) == 1:
            along = u if ports[0] in (0, 2) else v
            area = d[0] < 0.24 - 0.12 * (2 * along - 1) ** 2
        elif len(ports) == 2 and (ports[1] - ports[0]) % 2 == 0:
            others = [_side_dist(u, v, s) for s in range(4) if s not in ports]
            area = np.minimum(*others) > 0.17
        elif len(ports) == 2:
            area = d[0] + d[1] < 0.95
        elif len(ports) == 3:
            (missing,) = [s for s in range(4) if s not in ports]
            area = _side_dist(u, v, missing) > 0.28
        else:
            area = np.ones_like(u, bool)
        cls[area] = CITY
    half = 0.055
    for seg in tile.segments:
        if seg.kind != Kind.ROAD:
            continue
        ports = sorted(seg.ports)
        if len(ports) == 1:
            dist = _seg_dist(u, v, _MID[ports[0]], (0.5, 0.5))
        elif (ports[1] - ports[0]) % 2 == 0:
            dist = _seg_dist(u, v, _MID[ports[0]], _MID[ports[1]])
        else:
            cu, cv_ = _CORNER[tuple(ports)]
            dist = np.abs(np.hypot(u - cu, v - cv_) - 0.5)
        cls[dist < half] = ROAD
    road_ends = sum(1 for seg in tile.segments if seg.kind == Kind.ROAD and len(seg.ports) == 1)
    centre = (np.abs(u - 0.5) < 0.1) & (np.abs(v - 0.5) < 0.1)
    if road_ends >= 1 and not any(s.kind == Kind.CITY for s in tile.segments):
        cls[centre] = BUILDING  # a village, junction or cloister where roads end
    if tile.has_cloister:
        cls[(np.abs(u - 0.5) < 0.17) & (np.abs(v - 0.5) < 0.17)] = BUILDING
    same = np.ones_like(cls, bool)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            same &= np.roll(np.roll(cls, dy, 0), dx, 1) == cls
    weight = np.where(same, 1.0, 0.35)
    weight[cls == ROAD] = 2.0  # roads are thin: each road pixel counts more
    border = max(1, size // 16)
    weight[:border] *= 0.3
    weight[-border:] *= 0.3
    weight[:, :border] *= 0.3
    weight[:, -border:] *= 0.3
    return cls, weight


def expected(tile, rotation: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Class map and weights of ``tile`` turned clockwise by ``rotation`` degrees."""
    cls, weight = _canonical(tile, size)
    k = -(rotation // 90)  # np.rot90 turns counter-clockwise
    return np.rot90(cls, k), np.rot90(weight, k)
