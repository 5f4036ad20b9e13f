"""Correcting turns already played: the rest of the game is replayed on the corrected log."""

import pytest

from meeplecam.engine import Game, IllegalTurn, Player, Turn, find_tileset


def _two_twins_laid() -> Game:
    """The base game's only Q (a three-sided city with a pennant), then an R (the same city
    without one)."""
    tiles = find_tileset("base")
    game = Game.start(tiles, [Player("Ann", "red"), Player("Bob", "blue")])
    game.apply(Turn("Q", 0, -1, 90))  # on the start tile's city
    game.apply(Turn("R", 0, -2, 90))
    return game


def test_a_corrected_turn_replays_the_rest_of_the_game():
    game = _two_twins_laid()
    game.replace(1, Turn("R", 0, -2, 180))
    assert [e.rotation for e in game.log] == [90, 180]
    assert game.remaining["R"] == 2


def test_two_tiles_read_as_each_others_types_swap_only_together():
    game = _two_twins_laid()
    # the second tile alone as the Q: the bag has no second Q
    with pytest.raises(IllegalTurn):
        game.replace(1, Turn("Q", 0, -2, 90))
    assert [e.tile for e in game.log] == ["Q", "R"]  # unchanged
    game.replace_all({0: Turn("R", 0, -1, 90), 1: Turn("Q", 0, -2, 90)})
    assert [e.tile for e in game.log] == ["R", "Q"]
    assert game.remaining["Q"] == 0 and game.remaining["R"] == 2


def test_corrections_the_rules_refuse_leave_the_game_as_it_was():
    game = _two_twins_laid()
    with pytest.raises(IllegalTurn):
        game.replace_all({0: Turn("R", 0, -1, 90), 1: Turn("R", 0, -2, 0)})  # city on a field
    assert [(e.tile, e.rotation) for e in game.log] == [("Q", 90), ("R", 90)]
    with pytest.raises(IndexError, match="no turn 3"):
        game.replace_all({2: Turn("R", 1, 0, 0)})


def test_a_missed_turn_is_put_in_where_it_was_played():
    """A turn nobody recorded goes back in its place: the turns after it pass to the next
    player, and a tile the bag no longer holds is refused with the game left as it was."""
    game = _two_twins_laid()
    game.rewrite([game.log[0], Turn("E", 0, 1, 180), game.log[1]])
    assert [e.tile for e in game.log] == ["Q", "E", "R"]
    assert [r.player for r in game.results] == [0, 1, 0]
    with pytest.raises(IllegalTurn):
        game.rewrite([*game.log, Turn("Q", 0, -3, 0)])  # the only Q is on the table
    assert [e.tile for e in game.log] == ["Q", "E", "R"]
