"""Points: features during play and at the end, farms by each edition's method (rules/README.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from .board import Board, Feature, Follower
from .tiles import Kind

CATEGORIES = ("road", "city", "cloister", "farm", "gingerbread")


class FarmScoring(StrEnum):
    C3 = "c3"  # current rules: each farm on its own, 3 per bordering completed city
    C2 = "c2"  # second edition: 3 per city per player, however many of their farms it borders
    C1 = "c1"  # first edition: per city, the players with most farmers around it score 4


@dataclass(frozen=True)
class Options:
    """Rule options of one game (``FORMATS.md`` record ``options``)."""

    farm_scoring: FarmScoring = FarmScoring.C3
    small_city: int = 4
    table: object = None  # Bounds or None
    table_edge_closes: bool = False


def majority(followers: Iterable[Follower]) -> list[int]:
    """The players with the most followers (all of them on a tie); empty without followers."""
    counts = Counter(f.player for f in followers)
    if not counts:
        return []
    most = max(counts.values())
    return sorted(p for p, n in counts.items() if n == most)


def feature_points(kind: Kind, tiles: int, pennants: int, complete: bool, options: Options) -> int:
    """What a road or city is worth: complete during play, or incomplete at the end."""
    if kind is Kind.ROAD:
        return tiles
    if not complete:
        return tiles + pennants
    if tiles == 2 and options.small_city == 2:
        return 2 + pennants
    return 2 * tiles + 2 * pennants


def category(kind: Kind) -> str:
    return {Kind.ROAD: "road", Kind.CITY: "city", Kind.CLOISTER: "cloister", Kind.FIELD: "farm"}[
        kind
    ]


def end_of_game(board: Board, options: Options, players: int) -> list[dict[str, int]]:
    """Points that final scoring adds, per player and category; the board is not changed."""
    gained = [dict.fromkeys(CATEGORIES, 0) for _ in range(players)]
    for feature in board.features():
        if not feature.followers or feature.kind is Kind.FIELD:
            continue
        if feature.kind is Kind.CLOISTER:
            (cell,) = feature.tiles
            points = board.cloister_filled(cell)
        else:
            points = feature_points(feature.kind, feature.size, feature.pennants, False, options)
        for player in majority(feature.followers):
            gained[player][category(feature.kind)] += points
    for player, points in farm_points(board, options.farm_scoring, players).items():
        gained[player]["farm"] += points
    return gained


def farm_points(board: Board, method: FarmScoring, players: int) -> dict[int, int]:
    """Final farm scoring by ``method``: points per player."""
    farms = [f for f in board.features() if f.kind is Kind.FIELD and f.followers]
    points: Counter[int] = Counter()
    cities_of = {id(farm): _completed_cities(board, farm) for farm in farms}
    if method is FarmScoring.C3:
        for farm in farms:
            for player in majority(farm.followers):
                points[player] += 3 * len(cities_of[id(farm)])
    elif method is FarmScoring.C2:
        owned: dict[int, set[int]] = {}
        for farm in farms:
            for player in majority(farm.followers):
                owned.setdefault(player, set()).update(cities_of[id(farm)])
        for player, cities in owned.items():
            points[player] += 3 * len(cities)
    elif method is FarmScoring.C1:
        farmers_by_city: dict[int, list[Follower]] = {}
        for farm in farms:
            for city in cities_of[id(farm)]:
                farmers_by_city.setdefault(city, []).extend(farm.followers)
        for farmers in farmers_by_city.values():
            for player in majority(farmers):
                points[player] += 4
    else:  # pragma: no cover - FarmScoring is closed
        raise ValueError(method)
    return {p: n for p, n in points.items() if n}


def _completed_cities(board: Board, farm: Feature) -> set[int]:
    """Roots of the completed cities that border a farm."""
    cities = (board.feature_of_node(node) for node in farm.borders)
    return {city.root for city in cities if city.is_complete}
