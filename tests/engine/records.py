"""Tiny builder for ``meeplecam-record/1`` game records, so rule tests read like the rule book.

>>> report = (
...     game(players=["red", "yellow"])
...     .tile("U", 1, 0, 0, meeple="E")  # red: a thief on the road
...     .tile("E", 0, -1, 180)  # yellow closes the start tile's city
...     .report()
... )

Rotations are clockwise, ``y`` grows to the south and ``meeple``/``gingerbread`` positions are
follower position names, all exactly as in ``FORMATS.md``. ``turn(n)`` numbers turns from 1 like
the record's error messages (discards counted).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping

import pytest

from meeplecam.engine import RecordError, load_record, score_report

CATEGORIES = ("road", "city", "cloister", "farm", "gingerbread")

# Six Gingerbread Man tiles with INVENTED shapes (DECISIONS.md: the real ones are unknown), entered
# through the record's "tile_types" exactly as a player would. GB1 is the one of FORMATS.md.
GB_TILES: dict[str, dict] = {
    "GB1": {
        "count": 1,
        "sides": "CFCR",
        "cities": [{"sides": "N", "pennant": True}, {"sides": "S"}],
        "roads": ["W"],
        "cloister": False,
        "fields": [{"halves": ["ENE", "ESE", "WSW", "WNW"], "borders": ["N", "S"]}],
        "icons": ["gingerbread"],
    },
    # a city cap N, like E
    "GB2": {
        "count": 1,
        "sides": "CFFF",
        "cities": [{"sides": "N"}],
        "roads": [],
        "cloister": False,
        "fields": [{"halves": ["ENE", "ESE", "SSE", "SSW", "WSW", "WNW"], "borders": ["N"]}],
        "icons": ["gingerbread"],
    },
    # a diagonal city N+W, like N
    "GB3": {
        "count": 1,
        "sides": "CFFC",
        "cities": [{"sides": "NW"}],
        "roads": [],
        "cloister": False,
        "fields": [{"halves": ["ENE", "ESE", "SSE", "SSW"], "borders": ["N"]}],
        "icons": ["gingerbread"],
    },
    # a city cap N and a road curve E-S, like J
    "GB4": {
        "count": 1,
        "sides": "CRRF",
        "cities": [{"sides": "N"}],
        "roads": ["ES"],
        "cloister": False,
        "fields": [
            {"halves": ["ENE", "SSW", "WSW", "WNW"], "borders": ["N"]},
            {"halves": ["ESE", "SSE"], "borders": []},
        ],
        "icons": ["gingerbread"],
    },
    # a city N-S through the tile with a pennant
    "GB5": {
        "count": 1,
        "sides": "CFCF",
        "cities": [{"sides": "NS", "pennant": True}],
        "roads": [],
        "cloister": False,
        "fields": [
            {"halves": ["ENE", "ESE"], "borders": ["N"]},
            {"halves": ["WSW", "WNW"], "borders": ["N"]},
        ],
        "icons": ["gingerbread"],
    },
    # a city cap N and a straight road W-E, like D
    "GB6": {
        "count": 1,
        "sides": "CRFR",
        "cities": [{"sides": "N"}],
        "roads": ["EW"],
        "cloister": False,
        "fields": [
            {"halves": ["ENE", "WNW"], "borders": ["N"]},
            {"halves": ["ESE", "SSE", "SSW", "WSW"], "borders": []},
        ],
        "icons": ["gingerbread"],
    },
}


class GameRecord:
    """A record under construction; every method returns ``self`` so turns chain."""

    def __init__(
        self,
        players: Iterable[str] = ("red", "yellow"),
        tileset: str = "winter",
        options: Mapping | None = None,
        tile_types: Mapping | None = None,
        start: tuple[str, int, int, int] = ("D", 0, 0, 0),
    ):
        tile, x, y, rotation = start
        self.data: dict = {
            "format": "meeplecam-record/1",
            "tileset": tileset,
            "options": dict(options or {}),
            "players": [{"name": c.capitalize(), "colour": c} for c in players],
            "start": {"tile": tile, "x": x, "y": y, "rotation": rotation},
            "turns": [],
        }
        if tile_types:
            self.data["tile_types"] = copy.deepcopy(dict(tile_types))

    def tile(
        self,
        tile: str,
        x: int,
        y: int,
        rotation: int = 0,
        meeple: str | None = None,
        gingerbread: tuple[int, int, str] | None = None,
        colour: str | None = None,
    ) -> GameRecord:
        """One turn: ``tile`` at ``(x, y)``; ``meeple`` is where the follower stands."""
        turn: dict = {"tile": tile, "x": x, "y": y, "rotation": rotation}
        if meeple is not None:
            turn["meeple"] = {"at": meeple}
            if colour is not None:
                turn["meeple"]["colour"] = colour
        if gingerbread is not None:
            gx, gy, at = gingerbread
            turn["gingerbread"] = {"x": gx, "y": gy, "at": at}
        self.data["turns"].append(turn)
        return self

    def discard(self, tile: str) -> GameRecord:
        self.data["turns"].append({"discard": tile})
        return self

    def record(self) -> dict:
        return copy.deepcopy(self.data)

    def game(self):
        return load_record(self.record())

    def report(self) -> dict:
        return score_report(self.game())

    def error(self, turn: int | str) -> str:
        """Assert the record is illegal at ``turn`` (a number or ``"start"``); the message."""
        with pytest.raises(RecordError) as info:
            load_record(self.record())
        message = str(info.value)
        assert message.startswith(f"turn {turn}:" if isinstance(turn, int) else f"{turn}:"), message
        return message


def game(**kwargs) -> GameRecord:
    return GameRecord(**kwargs)


def gingerbread_game(**kwargs) -> GameRecord:
    """A game of set ``winter+gingerbread`` with the invented GB tiles in ``tile_types``."""
    kwargs.setdefault("tileset", "winter+gingerbread")
    kwargs.setdefault("tile_types", GB_TILES)
    return GameRecord(**kwargs)


def totals(report: dict) -> dict[str, int]:
    """Each colour's total score."""
    return {p["colour"]: p["score"] for p in report["players"]}


def breakdown(report: dict, colour: str) -> dict[str, int]:
    for p in report["players"]:
        if p["colour"] == colour:
            return p["breakdown"]
    raise KeyError(colour)


def points(**by_category: int) -> dict[str, int]:
    """A full breakdown: ``points(road=4)`` is 4 road points and 0 in every other category."""
    unknown = set(by_category) - set(CATEGORIES)
    assert not unknown, unknown
    return {c: by_category.get(c, 0) for c in CATEGORIES}


def turn_scores(report: dict) -> list[dict[str, int]]:
    """Cumulative scores after each turn (before final scoring)."""
    return [t["scores"] for t in report["turns"]]


def supply(record: GameRecord) -> dict[str, int]:
    """Followers each colour has in supply after the last turn."""
    g = record.game()
    return {p.colour: n for p, n in zip(g.players, g.supply, strict=True)}
