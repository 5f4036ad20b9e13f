"""Where each segment of a tile lies: regions derived from the segments' ports, and label masks.

Everything is computed in the tile's canonical orientation in unit coordinates (``x`` east, ``y``
south, the tile is ``[0, 1]²``) and turned clockwise for a rotation. Cities are shaped by the sides
they touch (cap, corner, through, three-sided, whole tile), roads run from a side to another side,
to a city gate, to the cloister or to a village at the centre, and fields fill the rest: each field
pixel belongs to the field segment it is connected to through the field area (flooding from the
half-sides that the engine says each field touches).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from meeplecam.engine import Kind, TileType

# Pixel kinds of a kind mask.
FIELD, ROAD, CITY, CLOISTER, PENNANT, VILLAGE = range(6)
KIND_NAMES = ("field", "road", "city", "cloister", "pennant", "village")

CAP_DEPTH = 0.27
ROAD_WIDTH = 0.085
VILLAGE_RADIUS = 0.1
CLOISTER_HALF = 0.17
SIDE_MID = np.array([(0.5, 0.0), (1.0, 0.5), (0.5, 1.0), (0.0, 0.5)])
INWARD = np.array([(0.0, 1.0), (-1.0, 0.0), (0.0, -1.0), (1.0, 0.0)])


@dataclass(frozen=True)
class Geometry:
    """A tile's drawing plan in canonical unit coordinates."""

    cities: tuple[tuple[int, np.ndarray], ...]  # (segment, closed polygon)
    roads: tuple[tuple[int, np.ndarray], ...]  # (segment, polyline)
    cloister: int | None  # segment index of the cloister
    village: bool  # roads meet at a village in the centre
    pennants: tuple[tuple[int, tuple[float, float]], ...]  # (city segment, shield centre)


def turn_points(points: np.ndarray, quarters: int) -> np.ndarray:
    """Unit-square points turned clockwise by ``quarters`` quarter turns (y grows south)."""
    p = np.asarray(points, dtype=float).reshape(-1, 2)
    for _ in range(quarters % 4):
        p = np.stack([1.0 - p[:, 1], p[:, 0]], axis=1)
    return p


def _bezier(points, n: int = 24) -> np.ndarray:
    pts = np.asarray(points, dtype=float)
    t = np.linspace(0.0, 1.0, n)[:, None]
    if len(pts) == 3:
        return (1 - t) ** 2 * pts[0] + 2 * (1 - t) * t * pts[1] + t**2 * pts[2]
    return (
        (1 - t) ** 3 * pts[0]
        + 3 * (1 - t) ** 2 * t * pts[1]
        + 3 * (1 - t) * t**2 * pts[2]
        + t**3 * pts[3]
    )


def _city_polygon(ports: tuple[int, ...]) -> np.ndarray:
    sides = sorted(set(ports))
    if len(sides) == 4:
        return np.array([(0, 0), (1, 0), (1, 1), (0, 1)], dtype=float)
    if len(sides) == 1:  # cap at N, turned
        arc = _bezier([(1, 0), (0.5, 2 * CAP_DEPTH), (0, 0)])
        return turn_points(arc, sides[0])
    if len(sides) == 3:  # everything but a field cap on the missing side (base: S missing)
        missing = ({0, 1, 2, 3} - set(sides)).pop()
        arc = _bezier([(1, 1), (0.5, 1 - 2 * 0.3), (0, 1)])
        base = np.vstack([[(0, 0), (1, 0)], arc])
        return turn_points(base, missing - 2)
    a, b = sides
    if (b - a) % 2 == 0:  # through the tile (base: E and W)
        top = _bezier([(0, 0), (0.5, 0.5), (1, 0)])
        bottom = _bezier([(1, 1), (0.5, 0.5), (0, 1)])
        return turn_points(np.vstack([top, bottom]), 0 if a == 1 else 1)
    first = a if (b - a) % 4 == 1 else b  # corner of sides first, first+1 (base: N and E)
    arc = _bezier([(1, 1), (0.45, 0.55), (0, 0)])
    return turn_points(np.vstack([[(1, 0)], arc]), first)


def _wiggle(line: np.ndarray, seed: int, amplitude: float = 0.015) -> np.ndarray:
    """A gentle deterministic meander that keeps both ends in place."""
    if len(line) < 3:
        return line
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, len(line))
    d = np.gradient(line, axis=0)
    normal = np.stack([-d[:, 1], d[:, 0]], axis=1)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True) + 1e-9
    phase, freq = rng.uniform(0, 2 * np.pi), rng.uniform(1.5, 3.0)
    offset = amplitude * np.sin(np.pi * t) * np.sin(2 * np.pi * freq * t + phase)
    return line + normal * offset[:, None]


@cache
def geometry(tile: TileType) -> Geometry:
    cities = []
    roads = []
    pennants = []
    city_polys = []
    cloister = None
    for index, seg in enumerate(tile.segments):
        if seg.kind is Kind.CITY:
            poly = _city_polygon(seg.ports)
            cities.append((index, poly))
            city_polys.append(poly)
            if seg.pennant:
                pennants.append((index, _pennant_spot(seg.ports)))
        elif seg.kind is Kind.CLOISTER:
            cloister = index
    dead_ends = [s for s in tile.segments if s.kind is Kind.ROAD and len(s.ports) == 1]
    village = cloister is None and bool(dead_ends) and (not city_polys or len(dead_ends) >= 3)
    seed = sum(ord(c) * 31**i for i, c in enumerate(tile.id)) % 10_000
    for index, seg in enumerate(tile.segments):
        if seg.kind is not Kind.ROAD:
            continue
        if len(seg.ports) >= 2:
            a, b = seg.ports[:2]
            reach = 0.3 if (a - b) % 2 == 0 else 0.28
            line = _bezier(
                [
                    SIDE_MID[a],
                    SIDE_MID[a] + INWARD[a] * reach,
                    SIDE_MID[b] + INWARD[b] * reach,
                    SIDE_MID[b],
                ]
            )
        else:
            side = seg.ports[0]
            end = (0.5, 0.5) if (cloister is not None or village) else _gate(city_polys)
            line = _bezier([SIDE_MID[side], SIDE_MID[side] + INWARD[side] * 0.3, end])
        roads.append((index, _wiggle(line, seed + index)))
    return Geometry(tuple(cities), tuple(roads), cloister, village, tuple(pennants))


def _gate(polys: list[np.ndarray]) -> tuple[float, float]:
    """Where a road meets the city: the city's point nearest to the tile centre, a little inside."""
    best, best_d = (0.5, 0.5), 9.0
    for poly in polys:
        dense = np.vstack([_densify(poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly))])
        d = np.linalg.norm(dense - 0.5, axis=1)
        i = int(np.argmin(d))
        if d[i] < best_d:
            best_d, best = d[i], tuple(dense[i])
    inward = np.subtract(best, 0.5)
    inward = inward / (np.linalg.norm(inward) + 1e-9)
    return (best[0] + inward[0] * 0.03, best[1] + inward[1] * 0.03)


def _densify(a, b, n: int = 12) -> np.ndarray:
    t = np.linspace(0, 1, n, endpoint=False)[:, None]
    return np.asarray(a) * (1 - t) + np.asarray(b) * t


def _pennant_spot(ports: tuple[int, ...]) -> tuple[float, float]:
    """A shield near the city's outer corner: towards its sides, away from the field."""
    centre = np.mean([SIDE_MID[p] for p in ports], axis=0) if len(ports) < 4 else (0.2, 0.2)
    c = np.asarray(centre, dtype=float)
    if len(ports) == 2 and (ports[0] - ports[1]) % 2 == 0:  # through: near one wall end
        c = SIDE_MID[ports[0]] + INWARD[ports[0]] * 0.16 + np.array([0.0, 0.0])
    pull = 0.6 if len(ports) == 1 else 0.75
    spot = c * pull + (1 - pull) * np.array([0.5, 0.5])
    if len(ports) == 1:
        spot = SIDE_MID[ports[0]] + INWARD[ports[0]] * 0.11 + np.roll(INWARD[ports[0]], 1) * 0.22
    return (float(np.clip(spot[0], 0.12, 0.88)), float(np.clip(spot[1], 0.12, 0.88)))


@lru_cache(maxsize=256)  # sizes follow each scene's scale: an unbounded cache grows every game
def _canonical_masks(tile: TileType, size: int) -> tuple[np.ndarray, np.ndarray]:
    import cv2
    from skimage.segmentation import watershed

    geo = geometry(tile)
    labels = np.full((size, size), -1, np.int16)
    kinds = np.full((size, size), FIELD, np.uint8)
    scale = size

    def px(points) -> np.ndarray:
        return np.round(np.asarray(points) * scale - 0.5).astype(np.int32)

    for index, line in geo.roads:
        m = np.zeros((size, size), np.uint8)
        cv2.polylines(m, [px(line)], False, 1, max(2, round(ROAD_WIDTH * size)))
        labels[m > 0], kinds[m > 0] = index, ROAD
    owner = np.full((size, size), -1, np.int16)
    best = np.full((size, size), np.inf)
    yy, xx = (np.mgrid[0:size, 0:size] + 0.5) / size
    for index, poly in geo.cities:
        m = np.zeros((size, size), np.uint8)
        cv2.fillPoly(m, [px(poly)], 1)
        ports = tile.segments[index].ports
        d = np.min([np.abs(_side_distance(xx, yy, p)) for p in ports], axis=0)
        take = (m > 0) & (d < best)
        owner[take], best[take] = index, d[take]
    labels[owner >= 0], kinds[owner >= 0] = owner[owner >= 0], CITY
    if geo.village:
        m = np.zeros((size, size), np.uint8)
        cv2.circle(m, (size // 2, size // 2), round(VILLAGE_RADIUS * size), 1, -1)
        labels[m > 0], kinds[m > 0] = -1, VILLAGE
    if geo.cloister is not None:
        lo, hi = round((0.5 - CLOISTER_HALF) * size), round((0.5 + CLOISTER_HALF) * size)
        labels[lo:hi, lo:hi], kinds[lo:hi, lo:hi] = geo.cloister, CLOISTER
    for index, (cx, cy) in geo.pennants:
        r = 0.075 * size
        shield = _shield(cx * size, cy * size, r)
        m = np.zeros((size, size), np.uint8)
        cv2.fillPoly(m, [shield], 1)
        m &= labels == index
        kinds[m > 0] = PENNANT
    # Fields: flood the free area from the half-sides each field touches.
    free = (labels == -1) & (kinds == FIELD)
    markers = np.zeros((size, size), np.int32)
    half = size // 2
    for index, seg in enumerate(tile.segments):
        if seg.kind is not Kind.FIELD:
            continue
        for port in seg.ports:
            side, second = divmod(port, 2)
            strip = np.zeros((size, size), bool)
            lo, hi = (0, half) if second == 0 else (half, size)
            if side in (1, 2):  # E halves go N->S, S halves go E->W
                lo, hi = (size - hi, size - lo) if side == 2 else (lo, hi)
            if side == 0:
                strip[0:2, lo:hi] = True
            elif side == 1:
                strip[lo:hi, size - 2 :] = True
            elif side == 2:
                strip[size - 2 :, lo:hi] = True
            else:
                strip[size - hi : size - lo, 0:2] = True
            markers[strip & free] = index + 1
    flooded = watershed(np.zeros((size, size), np.uint8), markers, mask=free)
    labels[free & (flooded > 0)] = (flooded[free & (flooded > 0)] - 1).astype(np.int16)
    labels.setflags(write=False)
    kinds.setflags(write=False)
    return labels, kinds


def _side_distance(xx, yy, side: int):
    return (yy, 1 - xx, 1 - yy, xx)[side]


def _shield(cx: float, cy: float, r: float) -> np.ndarray:
    pts = [(-1, -1), (1, -1), (1, 0.2), (0.5, 0.8), (0, 1.15), (-0.5, 0.8), (-1, 0.2)]
    return np.array([(cx + x * r, cy + y * r) for x, y in pts], np.int32)


def label_mask(tile: TileType, rotation: int = 0, size: int = 96) -> tuple[np.ndarray, np.ndarray]:
    """Per-pixel segment index (``-1`` = none: village) and kind (``FIELD`` ... ``VILLAGE``) of a
    tile at ``rotation`` (clockwise degrees), ``size`` × ``size`` pixels, north up."""
    labels, kinds = _canonical_masks(tile, size)
    q = (rotation // 90) % 4
    return np.ascontiguousarray(np.rot90(labels, -q)), np.ascontiguousarray(np.rot90(kinds, -q))


@cache
def anchors(tile: TileType, rotation: int = 0) -> dict[int, tuple[float, float]]:
    """Where a follower stands on each segment, in unit coordinates of the placed (turned) tile:
    the point of the segment farthest from its outline."""
    import cv2

    labels, _ = _canonical_masks(tile, 96)
    out = {}
    for index in range(len(tile.segments)):
        m = (labels == index).astype(np.uint8)
        if not m.any():
            continue
        padded = cv2.copyMakeBorder(m, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
        dist = cv2.distanceTransform(padded, cv2.DIST_L2, 5)[1:-1, 1:-1]
        if tile.segments[index].kind is Kind.ROAD:  # along the road, away from the tile edge
            yy, xx = (np.mgrid[0:96, 0:96] + 0.5) / 96
            dist = dist * (1.0 - 0.8 * np.hypot(xx - 0.5, yy - 0.5)) * (dist > 0)
        v, u = np.unravel_index(int(np.argmax(dist)), dist.shape)
        point = turn_points([((u + 0.5) / 96, (v + 0.5) / 96)], rotation // 90)[0]
        out[index] = (float(point[0]), float(point[1]))
    return out
