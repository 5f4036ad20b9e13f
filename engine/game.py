"""A game: players, supply, turn order, scores and the Gingerbread Man over the board.

The game is its event log. ``apply`` checks an event completely and either applies it or raises
:class:`IllegalTurn` and leaves the game as it was; ``undo`` and ``replace`` replay an edited log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from .board import Board, Cell, Feature, Follower, Placement
from .scoring import CATEGORIES, Options, category, end_of_game, feature_points, majority
from .tiles import ROTATIONS, Kind, Orientation
from .tilesets import TileSet

SUPPLY = 7


@dataclass(frozen=True)
class Player:
    name: str
    colour: str


@dataclass(frozen=True)
class Spot:
    """A named segment of a placed tile: ``at`` is a follower position name (``FORMATS.md``)."""

    x: int
    y: int
    at: str

    @property
    def cell(self) -> Cell:
        return (self.x, self.y)


@dataclass(frozen=True)
class Turn:
    """One tile laid, with the follower and Gingerbread Man move that came with it."""

    tile: str
    x: int
    y: int
    rotation: int = 0
    meeple: str | None = None  # follower position name on this tile
    meeple_colour: str | None = None
    gingerbread: Spot | None = None

    @property
    def cell(self) -> Cell:
        return (self.x, self.y)

    def describe(self) -> str:
        return f"{self.tile} at ({self.x},{self.y}) rotation {self.rotation}"


@dataclass(frozen=True)
class Discard:
    """A drawn tile with no legal placement, removed from the game; the same player draws again."""

    tile: str

    def describe(self) -> str:
        return f"discard of {self.tile}"


Event = Turn | Discard


class IllegalTurn(ValueError):
    """An event the rules do not allow. ``turn`` is its 1-based index in the log."""

    def __init__(self, turn: int, event: Event | None, reason: str):
        self.turn = turn
        self.event = event
        self.reason = reason
        what = f"{event.describe()}: " if event is not None else ""
        super().__init__(f"turn {turn}: {what}{reason}")


@dataclass(frozen=True)
class Score:
    """Points one player gained in one turn (or at the end), and for what."""

    player: int
    category: str
    points: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class TurnResult:
    player: int
    placement: Placement | None
    scores: tuple[Score, ...] = ()
    returned: tuple[Follower, ...] = ()
    gingerbread: int | None = None  # node the Gingerbread Man stands on afterwards


@dataclass(eq=False)
class Game:
    """A game in progress: build with :meth:`start`, then :meth:`apply` each event."""

    tileset: TileSet
    players: tuple[Player, ...]
    options: Options
    start_turn: Turn
    board: Board = field(init=False)
    remaining: dict[str, int] = field(init=False)
    supply: list[int] = field(init=False)
    scores: list[dict[str, int]] = field(init=False)
    current: int = field(init=False, default=0)
    log: list[Event] = field(init=False, default_factory=list)
    results: list[TurnResult] = field(init=False, default_factory=list)
    history: list[tuple[int, ...]] = field(init=False, default_factory=list)
    gingerbread: int | None = field(init=False, default=None)

    @classmethod
    def start(
        cls,
        tileset: TileSet,
        players: Sequence[Player],
        options: Options | None = None,
        start: Turn | None = None,
        events: Iterable[Event] = (),
    ) -> Game:
        """A new game with the start tile laid, then ``events`` applied in order."""
        _check_players(players)
        game = cls(
            tileset, tuple(players), options or Options(), start or Turn(tileset.start, 0, 0)
        )
        game._lay_start_tile()
        for event in events:
            game.apply(event)
        return game

    def __post_init__(self) -> None:
        self.board = Board(self.options.table, self.options.table_edge_closes)  # type: ignore[arg-type]
        self.remaining = self.tileset.counts()
        self.supply = [SUPPLY] * len(self.players)
        self.scores = [dict.fromkeys(CATEGORIES, 0) for _ in self.players]

    # --- state ------------------------------------------------------------------------------
    @property
    def gingerbread_in_play(self) -> bool:
        return self.tileset.name == "winter+gingerbread"

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(sum(s.values()) for s in self.scores)

    @property
    def tiles_left(self) -> int:
        return sum(self.remaining.values())

    @property
    def is_over(self) -> bool:
        return self.tiles_left == 0

    @property
    def last_placed(self) -> Cell | None:
        for event in reversed(self.log):
            if isinstance(event, Turn):
                return event.cell
        return None

    def player_by_colour(self, colour: str) -> int:
        for index, player in enumerate(self.players):
            if player.colour == colour:
                return index
        raise KeyError(colour)

    def final_scoring(self) -> list[dict[str, int]]:
        """What final scoring would add if the game ended now, per player and category."""
        return end_of_game(self.board, self.options, len(self.players))

    def unfinished_cities(self) -> list[Feature]:
        return [f for f in self.board.features() if f.kind is Kind.CITY and not f.is_complete]

    # --- the log ----------------------------------------------------------------------------
    def apply(self, event: Event) -> TurnResult:
        """Apply one event or raise IllegalTurn, leaving the game unchanged."""
        number = len(self.log) + 1
        try:
            if isinstance(event, Discard):
                result = self._discard(number, event)
            else:
                result = self._turn(number, event)
        except _Rollback as rollback:
            self._restore(self.log)
            raise rollback.error from None
        self.log.append(event)
        self.results.append(result)
        self.history.append(self.totals)
        return result

    def undo(self) -> Event:
        """Take back the last event; returns it."""
        if not self.log:
            raise IndexError("there is no turn to undo")
        event = self.log[-1]
        self._restore(self.log[:-1])
        return event

    def replace(self, index: int, event: Event | None) -> None:
        """Correct (or, with None, delete) event ``index`` (0-based) and replay the rest.

        Raises IllegalTurn, leaving the game unchanged, if the edited log is not legal.
        """
        if not 0 <= index < len(self.log):
            raise IndexError(f"there is no turn {index + 1}")
        if event is not None:
            self.replace_all({index: event})
            return
        events = list(self.log)
        del events[index]
        self._restore(events)

    def replace_all(self, corrections: Mapping[int, Event]) -> None:
        """Correct several events at once (by 0-based index) and replay the rest: two tiles
        that swap types are legal only together (alone, each would take a copy the bag no longer
        holds). Raises IllegalTurn, leaving the game unchanged, if the edited log is not legal.
        """
        events = list(self.log)
        for index, event in corrections.items():
            if not 0 <= index < len(events):
                raise IndexError(f"there is no turn {index + 1}")
            events[index] = event
        self._restore(events)

    def rewrite(self, events: Iterable[Event]) -> None:
        """Replace the whole log with ``events`` (turns corrected, a turn that was missed put
        in where it was played) and replay it. Raises IllegalTurn, leaving the game unchanged,
        if the new log is not legal."""
        self._restore(list(events))

    def set_table(self, table) -> None:
        """The play area (a :class:`~.board.Bounds`, or None: unbounded) changed, as when the
        camera found the table's edge: the log is replayed within it. Raises IllegalTurn,
        leaving the game unchanged, if a tile already laid lies outside."""
        options = replace(self.options, table=table)
        game = Game.start(self.tileset, self.players, options, self.start_turn, self.log)
        self.__dict__.update(game.__dict__)

    def replayed(self, events: Iterable[Event]) -> Game:
        """A new game from this one's start (tile set, players, options, start tile) with
        ``events`` applied in order instead of its log; raises IllegalTurn if one is illegal."""
        return Game.start(self.tileset, self.players, self.options, self.start_turn, events)

    def _restore(self, events: list[Event]) -> None:
        self.__dict__.update(self.replayed(events).__dict__)

    # --- rules ------------------------------------------------------------------------------
    def _lay_start_tile(self) -> None:
        turn = self.start_turn
        tile = self.tileset.types.get(turn.tile)
        if tile is None:
            raise IllegalStart(f"start: unknown tile type {turn.tile!r}")
        if turn.rotation not in ROTATIONS:
            raise IllegalStart(f"start: rotation must be 0, 90, 180 or 270, not {turn.rotation!r}")
        reason = self.board.mismatch(turn.cell, tile.oriented(turn.rotation))
        if reason:
            raise IllegalStart(f"start: {turn.describe()}: {reason}")
        self.board.place(turn.cell, tile.oriented(turn.rotation))
        self.remaining[tile.id] -= 1
        if self.gingerbread_in_play:
            placed = self.board.tiles[turn.cell]
            cities = [i for i, s in enumerate(tile.segments) if s.kind is Kind.CITY]
            self.gingerbread = placed.node + cities[0] if cities else None

    def _take_tile(self, number: int, event: Event) -> None:
        tile_id = event.tile
        if tile_id not in self.tileset:
            raise IllegalTurn(
                number, event, f"unknown tile type {tile_id!r} in set {self.tileset.name}"
            )
        if self.remaining[tile_id] <= 0:
            copies = self.tileset[tile_id].count
            raise IllegalTurn(
                number,
                event,
                f"all {copies} copies of {tile_id} in set {self.tileset.name} are used",
            )

    def _discard(self, number: int, event: Discard) -> TurnResult:
        self._take_tile(number, event)
        tile = self.tileset[event.tile]
        spot = next(self.board.legal_placements(tile), None)
        if spot is not None:
            (x, y), rotation = spot
            raise IllegalTurn(
                number,
                event,
                f"{tile.id} fits at ({x},{y}) rotation {rotation}, so it may not be discarded",
            )
        self.remaining[tile.id] -= 1
        return TurnResult(self.current, None)

    def _turn(self, number: int, turn: Turn) -> TurnResult:
        self._take_tile(number, turn)
        if turn.rotation not in ROTATIONS:
            raise IllegalTurn(number, turn, "rotation must be 0, 90, 180 or 270")
        orientation = self.tileset[turn.tile].oriented(turn.rotation)
        reason = self.board.mismatch(turn.cell, orientation)
        if reason:
            raise IllegalTurn(number, turn, reason)
        player = self.current
        segment = self._check_meeple(number, turn, orientation) if turn.meeple else None

        # From here on the board changes; a later error rolls the game back by replaying the log.
        placement = self.board.place(turn.cell, orientation)
        self.remaining[turn.tile] -= 1
        if segment is not None:
            self.board.add_follower(Follower(player, turn.cell, segment))
            self.supply[player] -= 1

        scores: list[Score] = []
        returned: list[Follower] = []
        completed = placement.completed + placement.cloisters
        gingerbread_city = self._gingerbread_city()
        if gingerbread_city is not None and gingerbread_city in placement.completed:
            scores += self._gingerbread_knights(gingerbread_city)
        for feature in completed:
            scores += self._score_feature(feature, complete=True)
            for follower in self.board.remove_followers(feature):
                self.supply[follower.player] += 1
                returned.append(follower)
        try:
            scores += self._move_gingerbread(number, turn, gingerbread_city, placement)
        except IllegalTurn as error:
            raise _Rollback(error) from None
        for score in scores:
            self.scores[score.player][score.category] += score.points
        self.current = (self.current + 1) % len(self.players)
        return TurnResult(player, placement, tuple(scores), tuple(returned), self.gingerbread)

    def _check_meeple(self, number: int, turn: Turn, orientation: Orientation) -> int:
        player = self.current
        colour = self.players[player].colour
        if turn.meeple_colour is not None and turn.meeple_colour != colour:
            raise IllegalTurn(
                number, turn, f"the follower is {turn.meeple_colour}, but it is {colour}'s turn"
            )
        if self.supply[player] <= 0:
            raise IllegalTurn(number, turn, f"{colour} has no follower left in supply")
        try:
            segment = orientation.segment_at(turn.meeple)  # type: ignore[arg-type]
        except KeyError:
            raise IllegalTurn(
                number, turn, f"{turn.tile} has no road, city, field or cloister at {turn.meeple!r}"
            ) from None
        for preview in self.board.preview(turn.cell, orientation):
            if segment in preview.segments and preview.followers:
                owner = self.players[preview.followers[0].player].colour
                kind = "farm" if preview.kind is Kind.FIELD else str(preview.kind)
                raise IllegalTurn(
                    number, turn, f"the {kind} at {turn.meeple} is already occupied by {owner}"
                )
        return segment

    def _score_feature(self, feature: Feature, complete: bool) -> list[Score]:
        if feature.kind is Kind.CLOISTER:
            (cell,) = feature.tiles
            points = self.board.cloister_filled(cell)
        else:
            points = feature_points(
                feature.kind, feature.size, feature.pennants, complete, self.options
            )
        cells = tuple(sorted(feature.tiles))
        return [
            Score(p, category(feature.kind), points, cells) for p in majority(feature.followers)
        ]

    # --- the Gingerbread Man ----------------------------------------------------------------
    def _gingerbread_city(self) -> Feature | None:
        if self.gingerbread is None:
            return None
        return self.board.feature_of_node(self.gingerbread)

    def _gingerbread_knights(self, city: Feature) -> list[Score]:
        """Each knight in the Gingerbread Man's city scores 1 point per tile for its owner."""
        cells = tuple(sorted(city.tiles))
        return [Score(k.player, "gingerbread", city.size, cells) for k in city.followers]

    def _move_gingerbread(
        self, number: int, turn: Turn, city: Feature | None, placement: Placement
    ) -> list[Score]:
        city_completed = city is not None and city in placement.completed
        due = self.gingerbread_in_play and (placement.tile.tile.is_gingerbread or city_completed)
        if not due:
            if turn.gingerbread is not None:
                raise IllegalTurn(number, turn, "the Gingerbread Man does not move this turn")
            return []
        leaving = None if city_completed else city
        targets = [c for c in self.unfinished_cities() if c is not leaving]
        if not targets:
            if turn.gingerbread is not None:
                raise IllegalTurn(
                    number, turn, "the Gingerbread Man has no other unfinished city to move to"
                )
            if city_completed:
                self.gingerbread = None
            return []
        if turn.gingerbread is None:
            raise IllegalTurn(
                number, turn, 'the Gingerbread Man must move to an unfinished city ("gingerbread")'
            )
        node = self._gingerbread_target(number, turn, targets)
        scores = self._gingerbread_knights(leaving) if leaving is not None else []
        self.gingerbread = node
        return scores

    def _gingerbread_target(self, number: int, turn: Turn, targets: list[Feature]) -> int:
        spot = turn.gingerbread
        assert spot is not None
        where = f"the Gingerbread Man's target ({spot.x},{spot.y}) {spot.at}"
        placed = self.board.tiles.get(spot.cell)
        if placed is None:
            raise IllegalTurn(number, turn, f"{where} is an empty cell")
        try:
            segment = placed.orientation.segment_at(spot.at)
        except KeyError:
            raise IllegalTurn(
                number, turn, f"{where} names no segment of {placed.tile.id}"
            ) from None
        if placed.tile.segments[segment].kind is not Kind.CITY:
            raise IllegalTurn(number, turn, f"{where} is not a city")
        feature = self.board.feature(spot.cell, segment)
        if not any(feature is t for t in targets):
            why = "completed" if feature.is_complete else "the city it is leaving"
            raise IllegalTurn(number, turn, f"{where} is {why}")
        return placed.node + segment


class IllegalStart(ValueError):
    """The start tile or the players cannot begin a game; the message starts with ``start:``."""


class _Rollback(Exception):
    def __init__(self, error: IllegalTurn):
        self.error = error


def _check_players(players: Sequence[Player]) -> None:
    if not 2 <= len(players) <= 8:
        raise IllegalStart(f"players: a game has 2 to 8 players, not {len(players)}")
    colours = [p.colour for p in players]
    for colour in colours:
        if colours.count(colour) > 1:
            raise IllegalStart(f"players: two players share the colour {colour}")


__all__ = [
    "SUPPLY",
    "Discard",
    "Event",
    "Game",
    "IllegalStart",
    "IllegalTurn",
    "Player",
    "Score",
    "Spot",
    "Turn",
    "TurnResult",
]
