"""Reading the page's input: JSON bodies and form fields into engine values, or BadInput (400)."""

from __future__ import annotations

from collections.abc import Mapping

from flask import request

from meeplecam.engine import TILESET_NAMES, Bounds, FarmScoring, Options, Player, RecordError
from meeplecam.engine.record import parse_event


class BadInput(ValueError):
    """Malformed form or JSON input: answered with 400 and the message."""


def payload() -> dict:
    """The request's fields: a JSON object, or the form."""
    if request.mimetype == "application/json":
        data = request.get_json(silent=True)
        if data is None:
            raise BadInput("the request body is not valid JSON")
        if not isinstance(data, dict):
            raise BadInput("the request body must be a JSON object")
        return data
    return {k: v for k, v in request.form.items() if k != "csrf_token"}


def whole(value, name: str) -> int:
    if isinstance(value, bool):
        raise BadInput(f"'{name}' must be a whole number")
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise BadInput(f"'{name}' must be a whole number, not {value!r}") from None


def turn_from(data: Mapping, number: int):
    """A turn from JSON (``{"turn": {record entry}}`` or the entry itself) or from form fields
    ``tile x y rotation meeple gb_x gb_y gb_at``; malformed input raises BadInput."""
    raw = data.get("turn", data)
    if not isinstance(raw, Mapping):
        raise BadInput("'turn' must be an object like a record's turn")
    if request.mimetype != "application/json":  # form fields are strings
        entry: dict = {}
        if raw.get("discard"):
            entry["discard"] = raw["discard"]
        else:
            if not raw.get("tile"):
                raise BadInput("choose a tile")
            entry = {
                "tile": str(raw["tile"]),
                "x": whole(raw.get("x"), "x"),
                "y": whole(raw.get("y"), "y"),
                "rotation": whole(raw.get("rotation", 0), "rotation"),
            }
            if raw.get("meeple"):
                entry["meeple"] = {"at": str(raw["meeple"])}
            if raw.get("gb_at"):
                entry["gingerbread"] = {
                    "x": whole(raw.get("gb_x"), "gb_x"),
                    "y": whole(raw.get("gb_y"), "gb_y"),
                    "at": str(raw["gb_at"]),
                }
        raw = entry
    try:
        return parse_event(raw, number)
    except RecordError as exc:
        raise BadInput(str(exc)) from None


def setup_from(data: Mapping) -> tuple[str, list[Player], Options]:
    tileset = data.get("tileset", "winter")
    if tileset not in TILESET_NAMES:
        raise BadInput(f"unknown tile set {tileset!r}")
    players: list[Player] = []
    raw_players = data.get("players")
    if isinstance(raw_players, list):  # JSON
        for entry in raw_players:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("colour"), str):
                raise BadInput('each player needs {"name", "colour"}')
            players.append(Player(str(entry.get("name") or entry["colour"]), entry["colour"]))
    elif raw_players is not None:
        raise BadInput("'players' must be a list")
    else:  # form: name1 colour1 order1 ...
        rows = []
        for i in range(1, 9):
            name = str(data.get(f"name{i}", "")).strip()
            colour = str(data.get(f"colour{i}", "")).strip()
            if not name and not colour:
                continue
            if not colour:
                raise BadInput(f"player {i} ({name}) needs a colour")
            order = whole(data.get(f"order{i}") or i, f"order{i}")
            rows.append((order, i, Player(name or colour, colour)))
        players = [p for _, _, p in sorted(rows)]
    if not 2 <= len(players) <= 8:
        raise BadInput(f"a game has 2 to 8 players, not {len(players)}")
    for p in players:
        if len(p.name) > 40 or len(p.colour) > 20:
            raise BadInput("names are at most 40 characters, colours 20")
    try:
        farm = FarmScoring(data.get("farm_scoring", "c3"))
    except ValueError:
        raise BadInput("farm scoring must be c3, c2 or c1") from None
    small = whole(data.get("small_city", 4), "small_city")
    if small not in (2, 4):
        raise BadInput("a small city scores 4 or 2")
    edge = data.get("table_edge_closes", False)
    edge = edge if isinstance(edge, bool) else str(edge).lower() in ("1", "on", "true", "yes")
    bounds = None
    keys = ("min_x", "max_x", "min_y", "max_y")
    table = data.get("table") if isinstance(data.get("table"), Mapping) else data
    if any(str(table.get(k, "")).strip() for k in keys):
        values = [whole(table.get(k), k) for k in keys]
        bounds = Bounds(*values)
        if bounds.min_x > 0 or bounds.max_x < 0 or bounds.min_y > 0 or bounds.max_y < 0:
            raise BadInput("the table must contain the start tile's cell (0,0)")
    return tileset, players, Options(farm, small, bounds, edge)


__all__ = ["BadInput", "payload", "setup_from", "turn_from", "whole"]
