"""Tile types as data: sides, segments, rotations and their names.

A tile type is loaded from a tile definition (``FORMATS.md``) and validated; nothing here knows any
particular tile. Sides are numbered N=0 E=1 S=2 W=3 and half-sides NNW=0 ... WNW=7, both clockwise,
so a clockwise quarter turn adds 1 to a side and 2 to a half-side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

SIDES = ("N", "E", "S", "W")
HALVES = ("NNW", "NNE", "ENE", "ESE", "SSE", "SSW", "WSW", "WNW")
ROTATIONS = (0, 90, 180, 270)
SIDE_KINDS = {"C": "city", "R": "road", "F": "field"}
# Output order of follower position names (FORMATS.md "Where a follower stands").
POSITION_ORDER = ("C", *SIDES, *HALVES)
# Cell offsets (dx, dy) of the neighbour across each side; y grows to the south.
NEIGHBOUR_OFFSETS = ((0, -1), (1, 0), (0, 1), (-1, 0))


class TileDefinitionError(ValueError):
    """A tile definition that contradicts itself; the message names the tile and the problem."""


class Kind(StrEnum):
    CITY = "city"
    ROAD = "road"
    FIELD = "field"
    CLOISTER = "cloister"


def opposite_side(side: int) -> int:
    return (side + 2) % 4


def opposite_half(half: int) -> int:
    """The half-side of the neighbouring tile that touches ``half`` (NNW meets SSW, ENE meets WNW)."""
    side, second = divmod(half, 2)
    return 2 * opposite_side(side) + (1 - second)


def half_sides(side: int) -> tuple[int, int]:
    return 2 * side, 2 * side + 1


@dataclass(frozen=True)
class Segment:
    """One city, road, field or cloister area of a tile in canonical orientation.

    ``ports`` are side indices for cities and roads, half-side indices for fields and empty for a
    cloister. ``borders`` (fields only) are indices into the tile's segments of the cities it borders.
    """

    kind: Kind
    ports: tuple[int, ...] = ()
    pennant: bool = False
    borders: tuple[int, ...] = ()


@dataclass(frozen=True)
class Orientation:
    """A tile type turned by one rotation: what each side and half-side of the placed tile is."""

    tile: TileType
    rotation: int
    sides: str
    side_segment: tuple[int, ...]  # segment index touching each side, -1 for a field side
    half_segment: tuple[int, ...]  # field segment index touching each half-side, -1 on a city side
    segment_ports: tuple[tuple[int, ...], ...]  # rotated ports of every segment
    signature: frozenset = field(compare=False, repr=False)  # equal for equivalent rotations

    def position_names(self, segment: int) -> list[str]:
        """Every valid follower position name of a segment, in output order."""
        seg = self.tile.segments[segment]
        if seg.kind is Kind.CLOISTER:
            return ["C"]
        names = HALVES if seg.kind is Kind.FIELD else SIDES
        return [names[p] for p in sorted(self.segment_ports[segment])]

    def position_name(self, segment: int) -> str:
        return self.position_names(segment)[0]

    def segment_at(self, name: str) -> int:
        """The segment a follower position name refers to; ``KeyError`` if it names none."""
        if name == "C":
            for index, seg in enumerate(self.tile.segments):
                if seg.kind is Kind.CLOISTER:
                    return index
        elif name in SIDES:
            index = self.side_segment[SIDES.index(name)]
            if index >= 0:
                return index
        elif name in HALVES:
            index = self.half_segment[HALVES.index(name)]
            if index >= 0:
                return index
        raise KeyError(name)


@dataclass(frozen=True)
class TileType:
    """One tile type in canonical orientation (``TILES.md``)."""

    id: str
    sides: str
    segments: tuple[Segment, ...]
    count: int = 1
    icons: frozenset[str] = frozenset()
    description: str = field(default="", compare=False)
    _orientations: dict = field(default_factory=dict, compare=False, repr=False, hash=False)
    _fits: dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    @property
    def has_cloister(self) -> bool:
        return any(s.kind is Kind.CLOISTER for s in self.segments)

    @property
    def is_gingerbread(self) -> bool:
        return "gingerbread" in self.icons

    def oriented(self, rotation: int) -> Orientation:
        cached = self._orientations.get(rotation)
        if cached is None:
            cached = self._orientations[rotation] = _orient(self, rotation)
        return cached

    @cached_property
    def distinct_rotations(self) -> tuple[int, ...]:
        """Rotations that give different placed tiles; a symmetric tile keeps the smallest."""
        seen: dict[object, int] = {}
        for rotation in ROTATIONS:
            seen.setdefault(self.oriented(rotation).signature, rotation)
        return tuple(sorted(seen.values()))

    def rotations_fitting(self, pattern: str) -> tuple[int, ...]:
        """Distinct rotations whose sides match ``pattern`` (N E S W, "." matches anything)."""
        cached = self._fits.get(pattern)
        if cached is None:
            cached = self._fits[pattern] = tuple(
                r
                for r in self.distinct_rotations
                if all(p in (".", s) for p, s in zip(pattern, self.oriented(r).sides, strict=True))
            )
        return cached

    def canonical_rotation(self, rotation: int) -> int:
        """The smallest rotation that places this tile exactly like ``rotation``."""
        signature = self.oriented(rotation).signature
        return next(r for r in ROTATIONS if self.oriented(r).signature == signature)

    @classmethod
    def from_definition(cls, tile_id: str, definition: dict) -> TileType:
        return _parse_definition(tile_id, definition)

    def to_definition(self) -> dict:
        """This tile in the tile-definition layout of ``FORMATS.md``."""
        side_names = {
            i: SIDES[seg.ports[0]] for i, seg in enumerate(self.segments) if seg.kind is Kind.CITY
        }
        cities = []
        for seg in self.segments:
            if seg.kind is Kind.CITY:
                city = {"sides": "".join(SIDES[p] for p in seg.ports)}
                if seg.pennant:
                    city["pennant"] = True
                cities.append(city)
        return {
            "count": self.count,
            "sides": self.sides,
            "cities": cities,
            "roads": [
                "".join(SIDES[p] for p in s.ports) for s in self.segments if s.kind is Kind.ROAD
            ],
            "cloister": self.has_cloister,
            "fields": [
                {
                    "halves": [HALVES[p] for p in s.ports],
                    "borders": [side_names[b] for b in s.borders],
                }
                for s in self.segments
                if s.kind is Kind.FIELD
            ],
            "icons": sorted(self.icons),
        }


def _orient(tile: TileType, rotation: int) -> Orientation:
    if rotation not in ROTATIONS:
        raise ValueError(f"rotation must be one of 0, 90, 180, 270, not {rotation!r}")
    quarter = rotation // 90
    ports = []
    side_segment = [-1] * 4
    half_segment = [-1] * 8
    for index, seg in enumerate(tile.segments):
        if seg.kind is Kind.FIELD:
            turned = tuple((p + 2 * quarter) % 8 for p in seg.ports)
            for p in turned:
                half_segment[p] = index
        else:
            turned = tuple((p + quarter) % 4 for p in seg.ports)
            for p in turned:
                side_segment[p] = index
        ports.append(turned)
    sides = "".join(tile.sides[(s - quarter) % 4] for s in range(4))
    return Orientation(
        tile,
        rotation,
        sides,
        tuple(side_segment),
        tuple(half_segment),
        tuple(ports),
        _signature(tile, ports),
    )


def _signature(tile: TileType, ports: list[tuple[int, ...]]) -> frozenset:
    """What a placed tile looks like to the rules, independent of segment numbering."""
    keyed = [frozenset(p) for p in ports]
    return frozenset(
        (
            seg.kind,
            keyed[i],
            seg.pennant,
            frozenset(keyed[b] for b in seg.borders),
        )
        for i, seg in enumerate(tile.segments)
    )


def _parse_definition(tile_id: str, d: dict) -> TileType:
    def fail(reason: str) -> TileDefinitionError:
        return TileDefinitionError(f"tile {tile_id}: {reason}")

    if not isinstance(d, dict):
        raise fail("a tile definition must be an object/table")
    sides = d.get("sides")
    if not isinstance(sides, str) or len(sides) != 4 or set(sides) - set("CRF"):
        raise fail(f"'sides' must be four letters of C, R, F (N E S W), not {sides!r}")
    count = d.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise fail(f"'count' must be a whole number >= 0, not {count!r}")

    segments: list[Segment] = []
    side_owner: dict[int, int] = {}

    def side_list(text: object, what: str) -> tuple[int, ...]:
        if (
            not isinstance(text, str)
            or not text
            or set(text) - set(SIDES)
            or len(set(text)) != len(text)
        ):
            raise fail(f"{what} must name sides as letters of N E S W, not {text!r}")
        return tuple(SIDES.index(c) for c in text)

    for city in d.get("cities", []):
        if isinstance(city, str):
            city = {"sides": city}
        if not isinstance(city, dict):
            raise fail(f"a city must be an object with 'sides', not {city!r}")
        segments.append(
            Segment(
                Kind.CITY,
                side_list(city.get("sides"), "a city's 'sides'"),
                pennant=bool(city.get("pennant", False)),
            )
        )
    for road in d.get("roads", []):
        segments.append(Segment(Kind.ROAD, side_list(road, "a road")))
    for index, seg in enumerate(segments):
        for p in seg.ports:
            if p in side_owner:
                raise fail(f"side {SIDES[p]} belongs to two segments")
            side_owner[p] = index
            expected = "C" if seg.kind is Kind.CITY else "R"
            if sides[p] != expected:
                raise fail(
                    f"side {SIDES[p]} is {SIDE_KINDS[sides[p]]} in 'sides' but a {seg.kind} "
                    "segment touches it"
                )
    for p, letter in enumerate(sides):
        if letter in "CR" and p not in side_owner:
            raise fail(f"side {SIDES[p]} is {SIDE_KINDS[letter]} but no segment touches it")

    city_by_side = {
        SIDES[p]: i for i, s in enumerate(segments) if s.kind is Kind.CITY for p in s.ports
    }
    half_owner: dict[int, int] = {}
    for entry in d.get("fields", []):
        if not isinstance(entry, dict):
            raise fail(f"a field must be an object with 'halves' and 'borders', not {entry!r}")
        halves = entry.get("halves")
        if not isinstance(halves, list) or not halves or any(h not in HALVES for h in halves):
            raise fail(f"a field's 'halves' must be half-side names such as NNW, not {halves!r}")
        ports = tuple(HALVES.index(h) for h in halves)
        borders = []
        for name in entry.get("borders", []):
            if not isinstance(name, str) or name[:1] not in city_by_side:
                raise fail(f"a field borders {name!r}, which is no city side of this tile")
            borders.append(city_by_side[name[:1]])
        for p in ports:
            if p in half_owner:
                raise fail(f"half-side {HALVES[p]} belongs to two fields")
            if sides[p // 2] == "C":
                raise fail(f"half-side {HALVES[p]} lies on a city side, so no field can touch it")
            half_owner[p] = len(segments)
        segments.append(Segment(Kind.FIELD, ports, borders=tuple(dict.fromkeys(borders))))
    for p in range(8):
        if sides[p // 2] != "C" and p not in half_owner:
            raise fail(
                f"half-side {HALVES[p]} of a {SIDE_KINDS[sides[p // 2]]} side is in no field"
            )

    if d.get("cloister", False):
        segments.append(Segment(Kind.CLOISTER))
    icons = d.get("icons", [])
    if not isinstance(icons, list) or not all(isinstance(i, str) for i in icons):
        raise fail(f"'icons' must be a list of names, not {icons!r}")
    return TileType(
        id=tile_id,
        sides=sides,
        segments=tuple(segments),
        count=count,
        icons=frozenset(icons),
        description=str(d.get("description", "")),
    )
