"""Invariants that hold in every legal game, checked over random games (hypothesis)."""

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from meeplecam.engine import (
    Game,
    Kind,
    Player,
    find_tileset,
    load_record,
    load_tile_file,
    score_report,
    to_record,
)
from meeplecam.engine.board import Bounds
from meeplecam.engine.game import SUPPLY
from meeplecam.engine.playout import play_tile, shuffled_bag
from meeplecam.engine.playout import random_game as play_random_game
from meeplecam.engine.record import save_record
from meeplecam.engine.scoring import FarmScoring, Options

GINGERBREAD = load_tile_file("engine/data/gingerbread-template.toml")
TILESETS = {
    "base": find_tileset("base"),
    "winter": find_tileset("winter"),
    "winter+gingerbread": find_tileset("winter+gingerbread", GINGERBREAD),
}

games = st.builds(
    dict,
    tileset=st.sampled_from(sorted(TILESETS)),
    players=st.integers(2, 5),
    seed=st.integers(0, 2**32),
    farm=st.sampled_from(list(FarmScoring)),
    small_city=st.sampled_from([4, 2]),
    table=st.sampled_from([None, Bounds(-4, 4, -3, 3), Bounds(-6, 7, -4, 4)]),
    edge_closes=st.booleans(),
)


def play(spec, check=None):
    """Play a random game turn by turn, calling ``check(game, before)`` after every event."""
    options = Options(spec["farm"], spec["small_city"], spec["table"], spec["edge_closes"])
    rng = random.Random(spec["seed"])
    colours = ["red", "yellow", "green", "blue", "black"][: spec["players"]]
    game = Game.start(TILESETS[spec["tileset"]], [Player(c, c) for c in colours], options)
    for tile_id in shuffled_bag(game, rng):
        before = (game.totals, len(game.log))
        play_tile(game, tile_id, rng, follower_chance=0.6)
        if check:
            check(game, before)
    return game


@settings(max_examples=25, deadline=None)
@given(games)
def test_scores_never_fall_and_followers_are_conserved(spec):
    def check(game, before):
        totals, _ = before
        assert all(now >= then for now, then in zip(game.totals, totals, strict=True))
        on_board = [0] * len(game.players)
        for follower in game.board.followers():
            on_board[follower.player] += 1
        for player, supply in enumerate(game.supply):
            assert supply + on_board[player] == SUPPLY
        for feature in game.board.features():
            if feature.kind in (Kind.ROAD, Kind.CITY) and feature.is_complete:
                assert not feature.followers, "a completed feature keeps no follower"

    play(spec, check)


@settings(max_examples=25, deadline=None)
@given(games)
def test_farmers_never_return(spec):
    def check(game, before):
        result = game.results[-1]
        assert all(
            game.board.tiles[f.cell].tile.segments[f.segment].kind is not Kind.FIELD
            for f in result.returned
        )

    play(spec, check)


@settings(max_examples=20, deadline=None)
@given(games)
def test_replaying_the_log_gives_the_same_game(spec):
    game = play(spec)
    again = Game.start(game.tileset, game.players, game.options, game.start_turn, game.log)
    assert score_report(again) == score_report(game)
    assert again.supply == game.supply
    assert {c: (p.tile.id, p.rotation) for c, p in again.board.tiles.items()} == {
        c: (p.tile.id, p.rotation) for c, p in game.board.tiles.items()
    }


@settings(max_examples=20, deadline=None)
@given(games, st.data())
def test_undo_then_redo_is_the_identity(spec, data):
    game = play(spec)
    if not game.log:
        return
    steps = data.draw(st.integers(1, min(5, len(game.log))))
    report = score_report(game)
    undone = [game.undo() for _ in range(steps)]
    for event in reversed(undone):
        game.apply(event)
    assert score_report(game) == report


@settings(max_examples=15, deadline=None)
@given(games, st.data())
def test_a_game_replayed_from_its_log_is_the_same_game(spec, data):
    game = play(spec)
    assert score_report(game.replayed(game.log)) == score_report(game)
    cut = data.draw(st.integers(0, len(game.log)))
    before = game.replayed(game.log[:cut])  # the game as it stood before turn cut + 1
    for event in game.log[cut:]:
        before.apply(event)
    assert score_report(before) == score_report(game)


@settings(max_examples=15, deadline=None)
@given(spec=games)
def test_save_then_load_round_trips(tmp_path_factory, spec):
    game = play(spec)
    path = tmp_path_factory.mktemp("records") / "game.json"
    save_record(to_record(game), path)
    extra = GINGERBREAD if spec["tileset"] == "winter+gingerbread" else None
    loaded = load_record(json.loads(path.read_text()), extra)
    assert score_report(loaded) == score_report(game)
    assert to_record(loaded) == to_record(game)


def test_a_full_winter_game_uses_every_tile():
    game = play_random_game(TILESETS["winter"], players=3, seed=11)
    assert game.is_over
    placed_or_discarded = len(game.board.tiles) + sum(1 for e in game.log if not hasattr(e, "x"))
    assert placed_or_discarded == 84
