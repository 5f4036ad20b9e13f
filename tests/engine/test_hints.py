"""Hints: what the page shows beside the table, computed by the engine."""

import pytest

from meeplecam.engine import Game, Kind, Player, Turn, find_tileset, hints
from meeplecam.engine.hints import draw_chance
from meeplecam.engine.playout import random_game

WINTER = find_tileset("winter")


def new_game(*turns, players=2):
    game = Game.start(WINTER, [Player(c, c) for c in ("red", "yellow", "green")[:players]])
    for turn in turns:
        game.apply(turn)
    return game


def test_placements_list_every_legal_cell_and_rotation_of_the_drawn_tile():
    game = new_game()
    spots = {(h.x, h.y, h.rotation) for h in hints.placements(game, "U")}
    # The start tile D (city N, road W-E): a straight road continues it east and west, and
    # lies along its field side in the south; the city side takes no road tile.
    assert spots == {(1, 0, 0), (-1, 0, 0), (0, 1, 0)}


def test_a_placement_that_closes_a_city_says_what_it_scores_and_for_whom():
    game = new_game(Turn("U", 1, 0, 0, meeple="E"))  # red thief on the start road
    closing = {(h.x, h.y, h.rotation): h for h in hints.placements(game, "E")}
    hint = closing[(0, -1, 180)]
    (city,) = [c for c in hint.completes if c.kind is Kind.CITY]
    assert (city.tiles, city.points, city.owners) == (2, 4, ())
    assert hint.points == {}
    assert any(s.at == "S" and s.kind is Kind.CITY for s in hint.follower_spots)


def test_completing_a_claimed_road_credits_its_owner():
    game = new_game(Turn("U", 1, 0, 0, meeple="E"))
    by_spot = {(h.x, h.y, h.rotation): h for h in hints.placements(game, "L")}
    # L (city N, roads E S W end at a junction) at (2,0) rotated 0 ends the road in the east;
    # the west end is still open, so nothing completes yet.
    assert by_spot[(2, 0, 0)].points == {}
    game.apply(Turn("L", 2, 0, 0))
    closing = {(h.x, h.y, h.rotation): h for h in hints.placements(game, "L")}
    assert closing[(-1, 0, 0)].points == {"red": 4}


def test_follower_spots_leave_out_claimed_features():
    game = new_game(Turn("U", 1, 0, 0, meeple="E"))
    spots = {s.at: s.kind for s in hints.follower_spots(game, Turn("U", 2, 0, 0))}
    assert "E" not in spots  # the road already has red's thief
    assert spots == {"NNW": Kind.FIELD, "ESE": Kind.FIELD}
    assert hints.follower_spots(game, Turn("U", 2, 0, 0))[0].role == "farmer"


def test_last_tile_follower_spots_are_those_before_it_was_laid():
    game = new_game(Turn("U", 1, 0, 0))
    assert {s.at for s in hints.last_tile_follower_spots(game)} == {"E", "NNW", "ESE"}


def test_bag_counts_what_is_left():
    game = new_game(Turn("U", 1, 0, 0))
    bag = hints.bag(game)
    assert bag["U"] == 7 and bag["D"] == 3
    assert sum(bag.values()) == 84 - 2


def test_open_cells_say_which_tiles_fit_and_the_chance_one_is_drawn():
    game = new_game()
    by_cell = {(h.x, h.y): h for h in hints.open_cells(game)}
    north = by_cell[(0, -1)]
    assert north.required == "..C."
    assert "U" not in north.fitting and north.fitting["E"] == 5
    assert north.chance == pytest.approx(draw_chance(north.fitting_left, 83, 2))


def test_draw_chance_is_hypergeometric():
    assert draw_chance(0, 10, 2) == 0
    assert draw_chance(1, 10, 2) == pytest.approx(0.2)
    assert draw_chance(10, 10, 1) == 1.0
    assert draw_chance(2, 4, 2) == pytest.approx(1 - 1 / 6)


def test_a_hole_no_tile_can_fill_is_reported():
    # Around (1,0): city above and below, road left and right. No tile has sides C R C R.
    game = new_game(
        Turn("E", 0, -1, 180),
        Turn("E", 1, -1, 180),
        Turn("U", 0, 1, 0),
        Turn("D", 1, 1, 0),
        Turn("U", 2, 1, 0),
        Turn("D", 2, 0, 0),
    )
    by_cell = {(h.x, h.y): h for h in hints.open_cells(game)}
    assert by_cell[(1, 0)].required == "CRCR"
    assert by_cell[(1, 0)].fitting == {} and by_cell[(1, 0)].chance == 0
    assert hints.unfillable_cells(game) == [(1, 0)]


def test_projected_scores_add_final_scoring_without_changing_the_game():
    game = random_game(WINTER, 3, seed=9, max_turns=40)
    before = game.totals
    projected = hints.projected_scores(game)
    final = game.final_scoring()
    assert projected == {
        p.colour: before[i] + sum(final[i].values()) for i, p in enumerate(game.players)
    }
    assert game.totals == before
    assert hints.projected_scores(game) == projected
