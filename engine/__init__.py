"""The rules engine: tile sets, board, features, scoring, the game log and hints.

Pure Python: no OpenCV, no Flask, no I/O beyond its own tile data and game records.

>>> from meeplecam.engine import find_tileset, Game, Player, Turn
>>> game = Game.start(find_tileset("winter"), [Player("Ann", "red"), Player("Bo", "yellow")])
>>> result = game.apply(Turn("U", 1, 0, 0, meeple="E"))
>>> game.supply
[6, 7]
"""

from .board import Board, Bounds, Follower, IllegalPlacement
from .corrections import Correction, corrections
from .game import Discard, Event, Game, IllegalStart, IllegalTurn, Player, Spot, Turn
from .record import (
    RecordError,
    load_record,
    read_record_file,
    record_tileset,
    save_record,
    to_record,
)
from .report import format_report, laps, score_report
from .scoring import CATEGORIES, FarmScoring, Options
from .tiles import HALVES, ROTATIONS, SIDES, Kind, TileDefinitionError, TileType
from .tilesets import TILESET_NAMES, TileSet, TileSetError, find_tileset, load_tile_file

__all__ = [
    "CATEGORIES",
    "HALVES",
    "ROTATIONS",
    "SIDES",
    "TILESET_NAMES",
    "Board",
    "Bounds",
    "Correction",
    "Discard",
    "Event",
    "FarmScoring",
    "Follower",
    "Game",
    "IllegalPlacement",
    "IllegalStart",
    "IllegalTurn",
    "Kind",
    "Options",
    "Player",
    "RecordError",
    "Spot",
    "TileDefinitionError",
    "TileSet",
    "TileSetError",
    "TileType",
    "Turn",
    "corrections",
    "find_tileset",
    "format_report",
    "laps",
    "load_record",
    "load_tile_file",
    "read_record_file",
    "record_tileset",
    "save_record",
    "score_report",
    "to_record",
]
