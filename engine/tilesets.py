"""Tile sets: named collections of tile types with their counts, loaded from data files.

``find_tileset("winter")`` reads ``data/winter.toml`` (which extends ``base``). A player's own tile
file or a record's ``tile_types`` can add types or replace the project's definitions.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from .tiles import TileDefinitionError, TileType

TILESET_NAMES = ("base", "winter", "winter+gingerbread")


class TileSetError(ValueError):
    """An unknown tile set, an unreadable tile file, or a set that lacks tiles it needs."""


@dataclass(frozen=True)
class TileSet:
    name: str
    types: Mapping[str, TileType]
    start: str

    def __getitem__(self, tile_id: str) -> TileType:
        return self.types[tile_id]

    def __contains__(self, tile_id: object) -> bool:
        return tile_id in self.types

    @property
    def total(self) -> int:
        return sum(t.count for t in self.types.values())

    def counts(self) -> dict[str, int]:
        return {tile_id: t.count for tile_id, t in self.types.items()}

    def with_types(self, extra: Mapping[str, TileType]) -> TileSet:
        """This set with types added or replaced (a player's tile file, a record's tile_types)."""
        return TileSet(self.name, {**self.types, **extra}, self.start)


@cache
def _read_data(name: str) -> dict:
    try:
        text = resources.files(__package__).joinpath("data", f"{name}.toml").read_text("utf-8")
    except FileNotFoundError:
        known = ", ".join(TILESET_NAMES)
        raise TileSetError(f"unknown tile set {name!r} (known: {known})") from None
    return tomllib.loads(text)


def parse_tile_types(definitions: Mapping[str, object]) -> dict[str, TileType]:
    """Tile types from definitions keyed by id (a record's ``tile_types`` or a tile file's ``tiles``)."""
    if not isinstance(definitions, Mapping):
        raise TileDefinitionError("tile types must be an object keyed by tile id")
    return {
        str(tile_id): TileType.from_definition(str(tile_id), d)
        for tile_id, d in definitions.items()
    }


def load_tile_file(path: str | Path) -> dict[str, TileType]:
    """A player's tile file: TOML with ``[tiles.ID]`` tables, or JSON keyed by tile id."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise TileSetError(f"cannot read tile file {path}: {exc.strerror}") from None
    try:
        if path.suffix.lower() == ".json":
            import json

            data = json.loads(text)
            data = data.get("tiles", data) if isinstance(data, dict) else data
        else:
            data = tomllib.loads(text).get("tiles", {})
    except ValueError as exc:
        raise TileSetError(f"tile file {path} is not valid: {exc}") from None
    return parse_tile_types(data)


def find_tileset(name: str, extra: Mapping[str, TileType] | None = None) -> TileSet:
    """The tile set called ``name`` (``base``, ``winter``, ``winter+gingerbread``) plus ``extra``."""
    data = _read_data(name)
    types = dict(_project_types(name))
    if extra:
        types.update(extra)
    missing = [t for t in data.get("requires", []) if t not in types]
    if missing:
        raise TileSetError(
            f"tile set {name!r} needs the tile types {', '.join(missing)}, which are defined by "
            "the player: give them in a tile file (see engine/data/gingerbread-template.toml) "
            'or in the record\'s "tile_types"'
        )
    return TileSet(name, types, data.get("start", "D"))


@cache
def _project_types(name: str) -> dict[str, TileType]:
    """The project's own types of a set (read once; tile types are immutable)."""
    data = _read_data(name)
    types = dict(_project_types(data["extends"])) if "extends" in data else {}
    types.update(parse_tile_types(data.get("tiles", {})))
    for tile_id, count in data.get("counts", {}).items():
        types[tile_id] = _with_count(types[tile_id], count)
    return types


def _with_count(tile: TileType, count: int) -> TileType:
    return TileType(tile.id, tile.sides, tile.segments, count, tile.icons, tile.description)
