"""The board: placed tiles, legality, and features kept incrementally.

Features are kept by union-find over tile segments: every segment of every placed tile is a node,
and placing a tile unions each of its segments with the segment across each touching side. A
feature's totals (tiles, pennants, open sides, followers, bordering cities) live on its root, so a
placement costs amortised O(1) and never floods the board. The board knows tiles and followers;
players, turns and scores belong to :mod:`game`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from .tiles import NEIGHBOUR_OFFSETS, SIDE_KINDS, Kind, Orientation, TileType

Cell = tuple[int, int]


@dataclass(frozen=True)
class Bounds:
    """Inclusive cell bounds of the play area (the table edge)."""

    min_x: int
    max_x: int
    min_y: int
    max_y: int

    def __contains__(self, cell: object) -> bool:
        x, y = cell  # type: ignore[misc]
        return self.min_x <= x <= self.max_x and self.min_y <= y <= self.max_y

    def to_dict(self) -> dict:
        return {"min_x": self.min_x, "max_x": self.max_x, "min_y": self.min_y, "max_y": self.max_y}


@dataclass(frozen=True)
class Follower:
    """A follower on the board: whose, on which tile, on which segment of it."""

    player: int
    cell: Cell
    segment: int


@dataclass(frozen=True)
class PlacedTile:
    cell: Cell
    orientation: Orientation
    node: int  # node id of segment 0; segment i is node + i

    @property
    def tile(self) -> TileType:
        return self.orientation.tile

    @property
    def rotation(self) -> int:
        return self.orientation.rotation


class Feature:
    """Totals of one connected road, city, field or cloister, held at its union-find root."""

    __slots__ = ("borders", "followers", "kind", "open", "pennants", "root", "tiles")

    def __init__(self, kind: Kind, root: int, cell: Cell, open_ports: int, pennants: int):
        self.kind = kind
        self.root = root
        self.tiles: set[Cell] = {cell}
        self.open = open_ports
        self.pennants = pennants
        self.followers: list[Follower] = []
        self.borders: set[int] = set()  # fields: nodes of the city segments they border

    @property
    def size(self) -> int:
        return len(self.tiles)

    @property
    def is_complete(self) -> bool:
        return self.open == 0 and self.kind in (Kind.CITY, Kind.ROAD)


class IllegalPlacement(ValueError):
    """A tile that may not go where it was put; the message says why."""


class Board:
    """Placed tiles and their features. ``bounds`` limits the play area when the table is known."""

    def __init__(self, bounds: Bounds | None = None, edge_closes: bool = False):
        self.bounds = bounds
        self.edge_closes = edge_closes and bounds is not None
        self.tiles: dict[Cell, PlacedTile] = {}
        # Empty cells in bounds that touch a tile, with the sides a tile there must have.
        self.frontier: dict[Cell, str] = {}
        self._parent: list[int] = []
        self._features: dict[int, Feature] = {}
        self._cloisters: dict[Cell, int] = {}  # cell -> cloister node

    # --- union-find -------------------------------------------------------------------------
    def _find(self, node: int) -> int:
        parent = self._parent
        root = node
        while parent[root] != root:
            root = parent[root]
        while parent[node] != root:
            parent[node], node = root, parent[node]
        return root

    def _union(self, a: int, b: int) -> Feature:
        ra, rb = self._find(a), self._find(b)
        fa = self._features[ra]
        if ra == rb:
            return fa
        fb = self._features[rb]
        if len(fa.tiles) < len(fb.tiles):
            ra, rb, fa, fb = rb, ra, fb, fa
        self._parent[rb] = ra
        del self._features[rb]
        fa.tiles |= fb.tiles
        fa.open += fb.open
        fa.pennants += fb.pennants
        fa.followers += fb.followers
        fa.borders |= fb.borders
        return fa

    def feature(self, cell: Cell, segment: int) -> Feature:
        """The feature that segment ``segment`` of the tile at ``cell`` belongs to."""
        return self._features[self._find(self.tiles[cell].node + segment)]

    def feature_of_node(self, node: int) -> Feature:
        return self._features[self._find(node)]

    def features(self) -> Iterator[Feature]:
        return iter(self._features.values())

    # --- legality ---------------------------------------------------------------------------
    def in_bounds(self, cell: Cell) -> bool:
        return self.bounds is None or cell in self.bounds

    def mismatch(self, cell: Cell, orientation: Orientation) -> str | None:
        """Why ``orientation`` may not be placed at ``cell``, or None if it may."""
        if cell in self.tiles:
            return f"the cell is already taken by {self.tiles[cell].tile.id}"
        if not self.in_bounds(cell):
            return "the cell is beyond the table edge"
        if not self.tiles:
            return None
        if cell not in self.frontier:
            return "it touches no placed tile along a side"
        x, y = cell
        for side, (dx, dy) in enumerate(NEIGHBOUR_OFFSETS):
            other = self.tiles.get((x + dx, y + dy))
            if other is None:
                continue
            theirs = other.orientation.sides[(side + 2) % 4]
            ours = orientation.sides[side]
            if theirs != ours:
                return (
                    f"its {_SIDE_WORDS[side]} side ({SIDE_KINDS[ours]}) does not match the "
                    f"{SIDE_KINDS[theirs]} of {other.tile.id} at ({x + dx},{y + dy})"
                )
        return None

    def required_sides(self, cell: Cell) -> str:
        """What each side of a tile at ``cell`` must be: N E S W as C/R/F, "." where no
        neighbour constrains it."""
        pattern = self.frontier.get(cell)
        return pattern if pattern is not None else self._pattern(cell)

    def _pattern(self, cell: Cell) -> str:
        x, y = cell
        letters = []
        for side, (dx, dy) in enumerate(NEIGHBOUR_OFFSETS):
            other = self.tiles.get((x + dx, y + dy))
            letters.append("." if other is None else other.orientation.sides[(side + 2) % 4])
        return "".join(letters)

    def legal_placements(self, tile: TileType) -> Iterator[tuple[Cell, int]]:
        """Every legal (cell, rotation) of ``tile``; symmetric rotations are given once."""
        if not self.tiles:
            if self.in_bounds((0, 0)):
                for rotation in tile.distinct_rotations:
                    yield (0, 0), rotation
            return
        fitting = tile.rotations_fitting
        for cell, pattern in self.frontier.items():
            for rotation in fitting(pattern):
                yield cell, rotation

    def has_legal_placement(self, tile: TileType) -> bool:
        return next(self.legal_placements(tile), None) is not None

    # --- placing ----------------------------------------------------------------------------
    def _port_is_open(self, cell: Cell, side: int) -> bool:
        """Whether a side facing an empty cell stays open (the table edge may close it)."""
        if not self.edge_closes:
            return True
        dx, dy = NEIGHBOUR_OFFSETS[side]
        return (cell[0] + dx, cell[1] + dy) in self.bounds  # type: ignore[operator]

    def place(self, cell: Cell, orientation: Orientation) -> Placement:
        """Put a tile down (raises IllegalPlacement) and report what it completed."""
        reason = self.mismatch(cell, orientation)
        if reason:
            raise IllegalPlacement(reason)
        tile = orientation.tile
        base = len(self._parent)
        placed = PlacedTile(cell, orientation, base)
        self.tiles[cell] = placed
        self.frontier.pop(cell, None)
        x, y = cell
        for index, seg in enumerate(tile.segments):
            node = base + index
            self._parent.append(node)
            ports = orientation.segment_ports[index]
            open_ports = 0
            if seg.kind in (Kind.CITY, Kind.ROAD):
                open_ports = sum(1 for side in ports if self._port_is_open(cell, side))
            feature = Feature(seg.kind, node, cell, open_ports, int(seg.pennant))
            feature.borders = {base + b for b in seg.borders}
            self._features[node] = feature
            if seg.kind is Kind.CLOISTER:
                self._cloisters[cell] = node

        for dx, dy in NEIGHBOUR_OFFSETS:
            neighbour_cell = (x + dx, y + dy)
            if neighbour_cell not in self.tiles and self.in_bounds(neighbour_cell):
                self.frontier[neighbour_cell] = self._pattern(neighbour_cell)
        for ours, theirs, closes_port in self._connections(cell, orientation):
            feature = self._union(base + ours, theirs)
            if closes_port:
                feature.open -= 2

        completed = []
        for index, seg in enumerate(tile.segments):
            if seg.kind in (Kind.CITY, Kind.ROAD):
                feature = self._features[self._find(base + index)]
                if feature.open == 0 and feature not in completed:
                    completed.append(feature)
        cloisters = [
            self._features[self._cloisters[c]]
            for c in _around(cell)
            if c in self._cloisters and self.cloister_filled(c) == 9
        ]
        return Placement(placed, tuple(completed), tuple(cloisters))

    def _connections(self, cell: Cell, orientation: Orientation) -> Iterator[tuple[int, int, bool]]:
        """(our segment, their node, whether a road/city side is closed) for every segment of a
        tile at ``cell`` that meets a segment of a neighbour."""
        x, y = cell
        for side, (dx, dy) in enumerate(NEIGHBOUR_OFFSETS):
            other = self.tiles.get((x + dx, y + dy))
            if other is None:
                continue
            theirs = other.orientation
            opposite = (side + 2) % 4
            ours = orientation.side_segment[side]
            if ours >= 0:
                yield ours, other.node + theirs.side_segment[opposite], True
            if orientation.sides[side] == "C":
                continue
            for half in (2 * side, 2 * side + 1):
                other_half = 2 * opposite + (1 - half % 2)
                yield (
                    orientation.half_segment[half],
                    other.node + theirs.half_segment[other_half],
                    False,
                )

    def preview(self, cell: Cell, orientation: Orientation) -> list[FeaturePreview]:
        """The features each segment of a tile at ``cell`` would belong to, without placing it.

        Segments of the new tile that would join through the same feature are reported once.
        """
        tile = orientation.tile
        group = list(range(len(tile.segments)))

        def top(i: int) -> int:
            while group[i] != i:
                i = group[i]
            return i

        joined: dict[int, int] = {}  # existing root -> first segment of ours that meets it
        closed: list[int] = [0] * len(tile.segments)
        for ours, theirs, closes_port in self._connections(cell, orientation):
            root = self._find(theirs)
            if root in joined:
                a, b = top(joined[root]), top(ours)
                group[max(a, b)] = min(a, b)
            else:
                joined[root] = ours
            if closes_port:
                closed[ours] += 1
        roots_of: dict[int, set[int]] = {}
        for root, ours in joined.items():
            roots_of.setdefault(top(ours), set()).add(root)
        previews = []
        for index, seg in enumerate(tile.segments):
            if top(index) != index:
                continue
            members = [i for i in range(len(tile.segments)) if top(i) == index]
            existing = [self._features[r] for r in roots_of.get(index, ())]
            tiles = {cell}.union(*(f.tiles for f in existing))
            open_ports = sum(f.open for f in existing)
            if seg.kind in (Kind.CITY, Kind.ROAD):
                for i in members:
                    ports = orientation.segment_ports[i]
                    open_ports += sum(1 for side in ports if self._port_is_open(cell, side))
                    open_ports -= 2 * closed[i]
            previews.append(
                FeaturePreview(
                    kind=seg.kind,
                    segments=tuple(members),
                    tiles=len(tiles),
                    pennants=sum(f.pennants for f in existing)
                    + sum(tile.segments[i].pennant for i in members),
                    open=open_ports,
                    followers=tuple(f for e in existing for f in e.followers),
                    cloister_cells=_cloister_filled_after(self, cell, cell)
                    if seg.kind is Kind.CLOISTER
                    else 0,
                    joins=tuple(existing),
                )
            )
        return previews

    def cloisters_completed_by(self, cell: Cell) -> list[Cell]:
        """Existing cloisters that a tile at ``cell`` would complete."""
        return [
            c
            for c in _around(cell)
            if c in self._cloisters and c != cell and _cloister_filled_after(self, c, cell) == 9
        ]

    def cloister_filled(self, cell: Cell) -> int:
        """Cells of the 3x3 block around a cloister that count as filled (tiles, or off the table
        when the table edge closes)."""
        return sum(
            1
            for c in _around(cell)
            if c in self.tiles or (self.edge_closes and not self.in_bounds(c))
        )

    # --- followers --------------------------------------------------------------------------
    def add_follower(self, follower: Follower) -> Feature:
        feature = self.feature(follower.cell, follower.segment)
        feature.followers.append(follower)
        return feature

    def remove_followers(self, feature: Feature) -> list[Follower]:
        removed, feature.followers = feature.followers, []
        return removed

    def followers(self) -> Iterator[Follower]:
        for feature in self._features.values():
            yield from feature.followers

    def cloister_feature(self, cell: Cell) -> Feature:
        return self._features[self._find(self._cloisters[cell])]


@dataclass(frozen=True)
class FeaturePreview:
    """A feature as it would be after a trial placement (see :meth:`Board.preview`)."""

    kind: Kind
    segments: tuple[int, ...]  # the new tile's segments that belong to it
    tiles: int
    pennants: int
    open: int
    followers: tuple[Follower, ...]
    cloister_cells: int  # a cloister: filled cells of its 3x3 block
    joins: tuple[Feature, ...] = field(
        default=(), compare=False
    )  # the board's features it takes in

    @property
    def is_complete(self) -> bool:
        if self.kind is Kind.CLOISTER:
            return self.cloister_cells == 9
        return self.open == 0 and self.kind in (Kind.CITY, Kind.ROAD)


@dataclass(frozen=True)
class Placement:
    """What placing one tile did: the tile, and the roads/cities and cloisters it completed."""

    tile: PlacedTile
    completed: tuple[Feature, ...]
    cloisters: tuple[Feature, ...]


_SIDE_WORDS = ("north", "east", "south", "west")


def _around(cell: Cell) -> Iterator[Cell]:
    x, y = cell
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            yield x + dx, y + dy


def _cloister_filled_after(board: Board, cloister: Cell, new: Cell) -> int:
    return board.cloister_filled(cloister) + (new not in board.tiles)
