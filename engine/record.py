"""The game record (``meeplecam-record/1``): read, check, write atomically.

``load_record`` turns a record into a :class:`Game`, checking every turn; any problem raises
:class:`RecordError` whose message starts with ``turn N:`` (or ``start:``, ``players:``, ...).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .board import Bounds
from .game import Discard, Event, Game, IllegalStart, IllegalTurn, Player, Spot, Turn
from .scoring import FarmScoring, Options
from .tiles import ROTATIONS, TileDefinitionError, TileType
from .tilesets import TileSet, TileSetError, find_tileset, parse_tile_types

FORMAT = "meeplecam-record/1"


class RecordError(ValueError):
    """A record that cannot be read or is not a legal game. ``turn`` is set for turn errors."""

    def __init__(self, message: str, turn: int | None = None):
        super().__init__(message)
        self.turn = turn


def read_record_file(path: str | Path) -> dict:
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise RecordError(f"record: cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RecordError(f"record: {path} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"record: {path} is not valid JSON ({exc.msg} at line {exc.lineno})"
        ) from None
    if not isinstance(data, dict):
        raise RecordError(f"record: {path} must hold a JSON object")
    return data


def load_record(
    record: Mapping, extra_types: Mapping[str, TileType] | None = None, stop_at_error: bool = True
) -> Game:
    """A game replayed from a record. ``extra_types``: a player's tile file, below ``tile_types``."""
    if record.get("format", FORMAT) != FORMAT:
        raise RecordError(f"record: format {record.get('format')!r} is not {FORMAT!r}")
    tileset = record_tileset(record, extra_types)
    players = _players(record.get("players"))
    options = _options(record.get("options") or {})
    start = _start(record.get("start"), tileset)
    try:
        game = Game.start(tileset, players, options, start)
    except IllegalStart as exc:
        raise RecordError(str(exc)) from None
    turns = record.get("turns", [])
    if not isinstance(turns, list):
        raise RecordError("record: 'turns' must be a list")
    for number, raw in enumerate(turns, start=1):
        event = parse_event(raw, number)
        try:
            game.apply(event)
        except IllegalTurn as exc:
            raise RecordError(str(exc), turn=number) from None
    return game


def parse_event(raw: object, number: int) -> Event:
    """One entry of ``turns``; malformed entries raise RecordError naming the turn."""

    def fail(reason: str) -> RecordError:
        return RecordError(f"turn {number}: {reason}", turn=number)

    if not isinstance(raw, Mapping):
        raise fail(f"a turn must be an object, not {type(raw).__name__}")
    if "discard" in raw:
        tile = raw["discard"]
        if not isinstance(tile, str):
            raise fail(f"'discard' must name a tile type, not {tile!r}")
        extra = sorted(set(raw) & {"tile", "x", "y", "rotation", "meeple", "gingerbread"})
        if extra:
            raise fail(f"a discard of {tile} cannot also have {', '.join(map(repr, extra))}")
        return Discard(tile)
    tile = raw.get("tile")
    if not isinstance(tile, str):
        raise fail("a turn needs 'tile' (a tile type) or 'discard'")
    x, y = raw.get("x"), raw.get("y")
    if not _is_int(x) or not _is_int(y):
        raise fail(f"{tile}: 'x' and 'y' must be whole numbers, not {x!r}, {y!r}")
    rotation = raw.get("rotation", 0)
    if rotation not in ROTATIONS or not _is_int(rotation):
        raise fail(f"{tile} at ({x},{y}): rotation must be 0, 90, 180 or 270, not {rotation!r}")
    meeple = raw.get("meeple")
    at = colour = None
    if meeple is not None:
        if not isinstance(meeple, Mapping) or not isinstance(meeple.get("at"), str):
            raise fail(f"{tile} at ({x},{y}): 'meeple' must be an object with 'at', not {meeple!r}")
        at, colour = meeple["at"], meeple.get("colour")
        if colour is not None and not isinstance(colour, str):
            raise fail(f"{tile} at ({x},{y}): the follower's 'colour' must be a name")
    gingerbread = raw.get("gingerbread")
    spot = None
    if gingerbread is not None:
        if (
            not isinstance(gingerbread, Mapping)
            or not _is_int(gingerbread.get("x"))
            or not _is_int(gingerbread.get("y"))
            or not isinstance(gingerbread.get("at"), str)
        ):
            raise fail(f'{tile} at ({x},{y}): \'gingerbread\' must be {{"x", "y", "at"}}')
        spot = Spot(gingerbread["x"], gingerbread["y"], gingerbread["at"])
    return Turn(tile, x, y, rotation, at, colour, spot)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def record_tileset(record: Mapping, extra_types: Mapping[str, TileType] | None = None) -> TileSet:
    """The tile set a record is played with: its named set, with a player's tile file and the
    record's own ``tile_types`` (e.g. the Gingerbread Man tiles of that copy) added."""
    name = record.get("tileset", "winter")
    if not isinstance(name, str):
        raise RecordError(f"record: 'tileset' must be a name, not {name!r}")
    extra = dict(extra_types or {})
    try:
        extra.update(parse_tile_types(record.get("tile_types") or {}))
        return find_tileset(name, extra)
    except (TileDefinitionError, TileSetError) as exc:
        raise RecordError(f"record: {exc}") from None


def _players(raw: object) -> list[Player]:
    if not isinstance(raw, list):
        raise RecordError('players: \'players\' must be a list of {"name", "colour"}')
    players = []
    for entry in raw:
        if isinstance(entry, str):
            entry = {"name": entry, "colour": entry}
        if not isinstance(entry, Mapping) or not isinstance(entry.get("colour"), str):
            raise RecordError(f"players: each player needs a 'colour', not {entry!r}")
        players.append(Player(str(entry.get("name", entry["colour"])), entry["colour"]))
    return players


def _options(raw: object) -> Options:
    if not isinstance(raw, Mapping):
        raise RecordError("options: 'options' must be an object")
    farm = raw.get("farm_scoring", "c3")
    try:
        farm_scoring = FarmScoring(farm)
    except ValueError:
        raise RecordError(f"options: farm_scoring must be c3, c2 or c1, not {farm!r}") from None
    small_city = raw.get("small_city", 4)
    if small_city not in (2, 4) or not _is_int(small_city):
        raise RecordError(f"options: small_city must be 4 or 2, not {small_city!r}")
    table = raw.get("table")
    bounds = None
    if table is not None:
        keys = ("min_x", "max_x", "min_y", "max_y")
        if not isinstance(table, Mapping) or not all(_is_int(table.get(k)) for k in keys):
            raise RecordError(f"options: table must give whole numbers {', '.join(keys)}")
        bounds = Bounds(*(table[k] for k in keys))
        if bounds.min_x > bounds.max_x or bounds.min_y > bounds.max_y:
            raise RecordError("options: table bounds are empty (min greater than max)")
    edge = raw.get("table_edge_closes", False)
    if not isinstance(edge, bool):
        raise RecordError(f"options: table_edge_closes must be true or false, not {edge!r}")
    return Options(farm_scoring, small_city, bounds, edge)


def _start(raw: object, tileset: TileSet) -> Turn:
    if raw is None:
        return Turn(tileset.start, 0, 0, 0)
    if (
        not isinstance(raw, Mapping)
        or not isinstance(raw.get("tile"), str)
        or not _is_int(raw.get("x", 0))
        or not _is_int(raw.get("y", 0))
    ):
        raise RecordError('start: \'start\' must be {"tile", "x", "y", "rotation"}')
    return Turn(raw["tile"], raw.get("x", 0), raw.get("y", 0), raw.get("rotation", 0))


def to_record(game: Game) -> dict:
    """The record of a game (output uses canonical rotations and first position names)."""
    options: dict = {
        "farm_scoring": str(game.options.farm_scoring),
        "small_city": game.options.small_city,
        "table": game.options.table.to_dict() if game.options.table else None,  # type: ignore[attr-defined]
        "table_edge_closes": game.options.table_edge_closes,
    }
    start = game.start_turn
    record = {
        "format": FORMAT,
        "tileset": game.tileset.name,
        "options": options,
        "players": [{"name": p.name, "colour": p.colour} for p in game.players],
        "start": {"tile": start.tile, "x": start.x, "y": start.y, "rotation": start.rotation},
        "turns": [event_to_dict(game, e) for e in game.log],
    }
    project = find_tileset(game.tileset.name.split("+")[0]).types
    custom = {
        tile_id: t.to_definition()
        for tile_id, t in game.tileset.types.items()
        if tile_id not in project or project[tile_id] != t
    }
    if custom:
        record["tile_types"] = custom
    return record


def event_to_dict(game: Game, event: Event) -> dict:
    if isinstance(event, Discard):
        return {"discard": event.tile}
    tile = game.tileset[event.tile]
    rotation = tile.canonical_rotation(event.rotation)
    out: dict = {"tile": event.tile, "x": event.x, "y": event.y, "rotation": rotation}
    if event.meeple is not None:
        orientation = tile.oriented(event.rotation)
        out["meeple"] = {"at": orientation.position_name(orientation.segment_at(event.meeple))}
    if event.gingerbread is not None:
        spot = event.gingerbread
        # the target may be the tile this very event lays (before or after it is applied)
        on_new = spot.cell == (event.x, event.y)
        placed = (
            tile.oriented(event.rotation) if on_new else game.board.tiles[spot.cell].orientation
        )
        at = placed.position_name(placed.segment_at(spot.at))
        out["gingerbread"] = {"x": spot.x, "y": spot.y, "at": at}
    return out


def save_record(record: Mapping, path: str | Path) -> None:
    """Write a record atomically: a temporary file in the same folder, flushed, then renamed."""
    path = Path(path)
    text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
