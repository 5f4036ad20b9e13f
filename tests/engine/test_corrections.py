"""Correcting turns already played: the rest of the game is replayed on the corrected log."""

import pytest

from meeplecam.engine import (
    Bounds,
    Correction,
    Game,
    IllegalTurn,
    Player,
    Turn,
    corrections,
    find_tileset,
)


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


def test_a_game_read_over_lists_each_turn_that_changed_and_what_it_was():
    """Two tiles read as each other's types, read over: each is listed with what it was read
    as, in words the players know; the turns that stayed are not listed."""
    game = _two_twins_laid()
    game.apply(Turn("E", 0, 1, 180))
    read_over = [Turn("R", 0, -1, 90), Turn("Q", 0, -2, 90), game.log[2]]
    changed = corrections(game.log, read_over)
    assert changed == [
        Correction(0, read_over[0], game.log[0]),
        Correction(1, read_over[1], game.log[1]),
    ]
    assert changed[0].describe() == "R at (0,-1) rotation 90 (was Q)"


def test_a_turn_put_in_is_named_as_new_and_the_turns_after_it_are_not_listed():
    game = _two_twins_laid()
    played = [game.log[0], Turn("E", 0, 1, 180), game.log[1]]
    (put_in,) = corrections(game.log, played)
    assert put_in == Correction(1, played[1], None)
    assert put_in.describe().endswith("put in (the tile was seen but not read)")


def test_a_follower_read_over_says_where_it_stands_or_that_it_went():
    game = _two_twins_laid()
    with_follower = Turn("R", 0, -2, 90, meeple="C")
    (added,) = corrections(game.log, [game.log[0], with_follower])
    assert added.describe() == "R at (0,-2) rotation 90, follower on C (was none)"
    (gone,) = corrections([game.log[0], with_follower], game.log)
    assert gone.describe() == "R at (0,-2) rotation 90, no follower (was one on C)"


def test_the_table_s_edge_found_later_bounds_the_game_played_so_far():
    game = _two_twins_laid()
    below_the_start = Turn("E", 0, 1, 90)  # legal on an endless table
    game.replayed([*game.log, below_the_start])
    game.set_table(Bounds(-2, 2, -3, 0))  # the table's edge runs along the start tile
    assert game.options.table == Bounds(-2, 2, -3, 0)
    assert [e.tile for e in game.log] == ["Q", "R"]  # the log replayed within it
    assert (0, 1) not in game.board.frontier
    with pytest.raises(IllegalTurn):
        game.apply(below_the_start)


def test_a_table_s_edge_that_leaves_a_tile_off_the_table_is_refused():
    game = _two_twins_laid()
    with pytest.raises(IllegalTurn):
        game.set_table(Bounds(-2, 2, -1, 1))  # the R lies at (0, -2)
    assert game.options.table is None and [e.tile for e in game.log] == ["Q", "R"]
