"""Random legal games: for the synthetic table, property tests and benchmarks.

A shuffled bag is drawn one tile at a time; each tile goes to a random legal place (or is discarded
when it fits nowhere), a follower is put on a random free segment with some probability, and the
Gingerbread Man moves to a random allowed city. Everything follows from the seed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .game import Discard, Game, IllegalTurn, Player, Spot, Turn
from .hints import follower_spots
from .scoring import Options
from .tiles import Kind
from .tilesets import TileSet

DEFAULT_COLOURS = ("red", "yellow", "green", "blue", "black")


def shuffled_bag(game: Game, rng: random.Random) -> list[str]:
    bag = [tile_id for tile_id, n in sorted(game.remaining.items()) for _ in range(n)]
    rng.shuffle(bag)
    return bag


def random_game(
    tileset: TileSet,
    players: Sequence[Player] | int = 2,
    seed: int = 0,
    options: Options | None = None,
    follower_chance: float = 0.5,
    max_turns: int | None = None,
) -> Game:
    """Play a whole legal game (or ``max_turns`` events) at random."""
    rng = random.Random(seed)
    if isinstance(players, int):
        players = [Player(c.title(), c) for c in DEFAULT_COLOURS[:players]]
    game = Game.start(tileset, players, options)
    for tile_id in shuffled_bag(game, rng):
        if max_turns is not None and len(game.log) >= max_turns:
            break
        play_tile(game, tile_id, rng, follower_chance)
    return game


def play_tile(game: Game, tile_id: str, rng: random.Random, follower_chance: float = 0.5) -> None:
    """Lay one drawn tile at random (or discard it), with a random follower and Gingerbread move."""
    tile = game.tileset[tile_id]
    options = list(game.board.legal_placements(tile))
    if not options:
        game.apply(Discard(tile_id))
        return
    (x, y), rotation = rng.choice(options)
    turn = Turn(tile_id, x, y, rotation)
    if game.supply[game.current] > 0 and rng.random() < follower_chance:
        spots = follower_spots(game, turn)
        if spots:
            turn = Turn(tile_id, x, y, rotation, meeple=rng.choice(spots).at)
    try:
        game.apply(turn)
    except IllegalTurn:
        # Only a Gingerbread Man move can be missing: try the cities it may go to.
        for spot in _city_spots(game, turn, rng):
            try:
                game.apply(Turn(turn.tile, x, y, rotation, turn.meeple, None, spot))
                return
            except IllegalTurn:
                continue
        raise


def _city_spots(game: Game, turn: Turn, rng: random.Random) -> list[Spot]:
    """One named segment of every city on the board or on the new tile, in random order."""
    spots = []
    seen = set()
    for cell, placed in game.board.tiles.items():
        for index, seg in enumerate(placed.tile.segments):
            if seg.kind is Kind.CITY:
                root = id(game.board.feature(cell, index))
                if root not in seen:
                    seen.add(root)
                    spots.append(Spot(cell[0], cell[1], placed.orientation.position_name(index)))
    orientation = game.tileset[turn.tile].oriented(turn.rotation)
    for index, seg in enumerate(orientation.tile.segments):
        if seg.kind is Kind.CITY:
            spots.append(Spot(turn.x, turn.y, orientation.position_name(index)))
    rng.shuffle(spots)
    return spots
