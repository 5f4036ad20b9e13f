"""Hints: the questions the web page and the recogniser ask the engine about a game.

All functions read the game and change nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from math import comb

from .board import Board, Cell, FeaturePreview
from .game import Game, Turn
from .scoring import feature_points, majority
from .tiles import Kind, Orientation


@dataclass(frozen=True)
class Completion:
    """A feature a placement would complete, what it is worth and who would score it."""

    kind: Kind
    tiles: int
    points: int
    owners: tuple[str, ...]  # colours of the followers' majority; empty if nobody is on it


@dataclass(frozen=True)
class FollowerSpot:
    """Where a follower may stand on a tile: position name, what it becomes, and the segment."""

    at: str
    kind: Kind
    segment: int

    @property
    def role(self) -> str:
        return {
            Kind.ROAD: "thief",
            Kind.CITY: "knight",
            Kind.CLOISTER: "monk",
            Kind.FIELD: "farmer",
        }[self.kind]


@dataclass(frozen=True)
class PlacementHint:
    x: int
    y: int
    rotation: int
    completes: tuple[Completion, ...]
    follower_spots: tuple[FollowerSpot, ...]

    @property
    def points(self) -> dict[str, int]:
        """Points each colour would score at once from this placement (without a new follower)."""
        gained: dict[str, int] = {}
        for c in self.completes:
            for colour in c.owners:
                gained[colour] = gained.get(colour, 0) + c.points
        return gained


@dataclass(frozen=True)
class CellHint:
    """An open cell: the sides a tile there must have, and which tiles left in the bag fit."""

    x: int
    y: int
    required: str  # N E S W, each C/R/F or "." where no neighbour constrains it
    fitting: dict[str, int]  # tile type -> copies left that fit
    chance: float  # that at least one fitting tile is drawn before the current player's next turn

    @property
    def fitting_left(self) -> int:
        return sum(self.fitting.values())


def placements(game: Game, tile_id: str) -> list[PlacementHint]:
    """Every legal placement of a tile type, with what it completes and where a follower may go."""
    tile = game.tileset[tile_id]
    board = game.board
    hints = []
    for (x, y), rotation in board.legal_placements(tile):
        orientation = tile.oriented(rotation)
        previews = board.preview((x, y), orientation)
        completes = [
            _completion(game, p) for p in previews if p.is_complete and p.kind is not Kind.FIELD
        ]
        for cloister in board.cloisters_completed_by((x, y)):
            feature = board.cloister_feature(cloister)
            completes.append(Completion(Kind.CLOISTER, 9, 9, _colours(game, feature.followers)))
        spots = _spots(orientation, previews) if game.supply[game.current] > 0 else ()
        hints.append(PlacementHint(x, y, rotation, tuple(completes), tuple(spots)))
    return hints


def follower_spots(game: Game, turn: Turn) -> list[FollowerSpot]:
    """Where the current player may put a follower if ``turn``'s tile is laid (before it is)."""
    orientation = game.tileset[turn.tile].oriented(turn.rotation)
    return _spots(orientation, game.board.preview(turn.cell, orientation))


def gingerbread_at(game: Game) -> tuple[Cell, int] | None:
    """Where the Gingerbread Man stands: (cell, segment of the tile there), or None off the board."""
    if game.gingerbread is None:
        return None
    for cell, placed in game.board.tiles.items():
        if placed.node <= game.gingerbread < placed.node + len(placed.tile.segments):
            return cell, game.gingerbread - placed.node
    return None


def gingerbread_moves(game: Game, turn: Turn) -> bool:
    """Whether laying ``turn``'s tile (before it is laid) is a turn on which the Gingerbread Man
    must move: the tile shows the icon, or it completes the city the figure stands in. (Not
    whether a city is left for it to go to: :meth:`Game.apply` decides that.)"""
    if not game.gingerbread_in_play:
        return False
    tile = game.tileset[turn.tile]
    if tile.is_gingerbread:
        return True
    if game.gingerbread is None:
        return False
    city = game.board.feature_of_node(game.gingerbread)
    previews = game.board.preview(turn.cell, tile.oriented(turn.rotation))
    return any(p.is_complete and any(f is city for f in p.joins) for p in previews)


def last_tile_follower_spots(game: Game) -> list[FollowerSpot]:
    """Where the player who laid the last tile may still put a follower on it (a correction)."""
    if not game.log or not isinstance(game.log[-1], Turn):
        return []
    before = game.replayed(game.log[:-1])
    if before.supply[before.current] <= 0:
        return []
    return follower_spots(before, game.log[-1])


def _spots(orientation: Orientation, previews: list[FeaturePreview]) -> list[FollowerSpot]:
    spots = []
    for preview in previews:
        if preview.followers:
            continue
        for segment in preview.segments:
            kind = orientation.tile.segments[segment].kind
            spots.append(FollowerSpot(orientation.position_name(segment), kind, segment))
    order = {name: i for i, name in enumerate(("C", "N", "E", "S", "W"))}
    return sorted(spots, key=lambda s: (order.get(s.at, 5), s.at))


def _completion(game: Game, preview: FeaturePreview) -> Completion:
    if preview.kind is Kind.CLOISTER:
        points = 9
    else:
        points = feature_points(preview.kind, preview.tiles, preview.pennants, True, game.options)
    return Completion(preview.kind, preview.tiles, points, _colours(game, preview.followers))


def _colours(game: Game, followers) -> tuple[str, ...]:
    return tuple(game.players[p].colour for p in majority(followers))


def bag(game: Game) -> dict[str, int]:
    """Tiles left to draw, by type (types with none left are omitted)."""
    return {tile_id: n for tile_id, n in sorted(game.remaining.items()) if n > 0}


def draw_chance(fitting: int, left: int, draws: int) -> float:
    """Chance that at least one of ``fitting`` tiles is among the next ``draws`` of ``left``."""
    if fitting <= 0 or left <= 0:
        return 0.0
    draws = min(draws, left)
    return 1.0 - comb(left - fitting, draws) / comb(left, draws)


def open_cells(game: Game) -> list[CellHint]:
    """Every open cell with the tiles left that fit it; a cell with none can never be filled."""
    board = game.board
    left = game.tiles_left
    candidates = [(game.tileset[t], n) for t, n in game.remaining.items() if n > 0]
    hints = []
    for cell in sorted(board.frontier):
        required = board.required_sides(cell)
        fitting = {tile.id: n for tile, n in candidates if tile.rotations_fitting(required)}
        hints.append(
            CellHint(
                cell[0],
                cell[1],
                required,
                fitting,
                draw_chance(sum(fitting.values()), left, len(game.players)),
            )
        )
    return hints


def projected_scores(game: Game) -> dict[str, int]:
    """Each colour's total if the game ended now (current score plus final scoring)."""
    final = game.final_scoring()
    return {p.colour: game.totals[i] + sum(final[i].values()) for i, p in enumerate(game.players)}


def unfillable_cells(game: Game) -> list[Cell]:
    """Open cells that no tile left in the bag can fill."""
    return [(h.x, h.y) for h in open_cells(game) if not h.fitting]


def free_features(board: Board) -> Iterator[tuple[Kind, int]]:
    """Unclaimed unfinished roads, cities and cloisters: (kind, tiles) per feature."""
    for feature in board.features():
        if feature.followers or feature.kind is Kind.FIELD:
            continue
        if feature.kind is Kind.CLOISTER or not feature.is_complete:
            yield feature.kind, feature.size
