"""Simple procedural tile art from the engine's tile definitions, in unit coordinates.

A tile occupies the unit square, (0, 0) its north-west corner, y growing south. ``shapes`` lists
what to draw for a placed orientation (used by the SVG board and the cv2 placeholder camera);
``segment_point`` is where a follower on a segment is drawn. Nothing here knows a particular tile.
"""

from __future__ import annotations

from meeplecam.engine import Kind

FIELD = "#8bc34a"
CITY = "#d7b377"
CITY_EDGE = "#6d4c41"
ROAD = "#fafafa"
ROAD_EDGE = "#616161"
CLOISTER = "#b23a2e"
PENNANT = "#1e5bb8"

_STARTS = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))  # side start corners, clockwise
_NORMALS = ((0.0, 1.0), (-1.0, 0.0), (0.0, -1.0), (1.0, 0.0))  # inward normal of each side

Point = tuple[float, float]


def side_point(side: int, t: float, inset: float) -> Point:
    """A point ``t`` of the way (clockwise) along a side, ``inset`` towards the centre."""
    (x0, y0), (x1, y1) = _STARTS[side], _STARTS[(side + 1) % 4]
    nx, ny = _NORMALS[side]
    return (x0 + t * (x1 - x0) + inset * nx, y0 + t * (y1 - y0) + inset * ny)


CITY_DONE = "#b98b4e"
ROAD_DONE = "#ffe082"


def shapes(orientation, done: frozenset[int] = frozenset()) -> list[tuple]:
    """Drawing commands: ("poly", points, fill, edge), ("road", points, fill), ("cloister", rect),
    ("pennant", point). Segments in ``done`` belong to completed features (drawn deeper)."""
    tile = orientation.tile
    out: list[tuple] = []
    for index, seg in enumerate(tile.segments):
        ports = orientation.segment_ports[index]
        if seg.kind is Kind.CITY:
            fill = CITY_DONE if index in done else CITY
            if len(ports) == 1:
                s = ports[0]
                cap = [
                    side_point(s, 0, 0),
                    side_point(s, 1, 0),
                    side_point(s, 0.8, 0.3),
                    side_point(s, 0.5, 0.36),
                    side_point(s, 0.2, 0.3),
                ]
                out.append(("poly", cap, fill, CITY_EDGE))
            else:
                for s in ports:
                    tri = [side_point(s, 0, 0), side_point(s, 1, 0), (0.5, 0.5)]
                    out.append(("poly", tri, fill, None))
                if any((a + 2) % 4 in ports for a in ports):
                    out.append(("poly", _square(0.3), fill, None))
            if seg.pennant:
                out.append(("pennant", segment_point(orientation, index, pennant=True)))
    for index, seg in enumerate(tile.segments):
        ports = orientation.segment_ports[index]
        if seg.kind is Kind.ROAD:
            fill = ROAD_DONE if index in done else ROAD
            if len(ports) == 2:
                a, b = ports
                out.append(
                    ("road", [side_point(a, 0.5, 0), (0.5, 0.5), side_point(b, 0.5, 0)], fill)
                )
            else:
                for s in ports:
                    out.append(("road", [side_point(s, 0.5, 0), side_point(s, 0.5, 0.42)], fill))
                if not tile.has_cloister:
                    out.append(("poly", _square(0.1), "#5d4037", None))
        elif seg.kind is Kind.CLOISTER:
            out.append(("cloister", _square(0.2)))
    return out


def _square(half: float) -> list[Point]:
    lo, hi = 0.5 - half, 0.5 + half
    return [(lo, lo), (hi, lo), (hi, hi), (lo, hi)]


def segment_point(orientation, segment: int, pennant: bool = False) -> Point:
    """Where a follower (or a pennant) on a segment of a placed tile is drawn."""
    seg = orientation.tile.segments[segment]
    ports = orientation.segment_ports[segment]
    if seg.kind is Kind.CLOISTER:
        return (0.5, 0.5)
    if seg.kind is Kind.CITY:
        if len(ports) == 1:
            return side_point(ports[0], 0.5 if not pennant else 0.75, 0.15)
        points = [side_point(s, 0.5, 0.22 if not pennant else 0.3) for s in ports]
        x = sum(p[0] for p in points) / len(points)
        y = sum(p[1] for p in points) / len(points)
        if pennant:
            return (x + 0.12, y - 0.05)
        return (x, y)
    if seg.kind is Kind.ROAD:
        return side_point(ports[0], 0.5, 0.28)
    half = ports[0]
    return side_point(half // 2, 0.2 if half % 2 == 0 else 0.8, 0.14)
