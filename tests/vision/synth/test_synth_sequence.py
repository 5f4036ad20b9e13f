"""Sequences: legal records, truth per frame, hands and held tiles, determinism, the demo source."""

import json

import numpy as np

from meeplecam.engine import find_tileset, load_record, load_tile_file, score_report
from meeplecam.engine.playout import random_game
from meeplecam.vision.synth.demo import SyntheticTable
from meeplecam.vision.synth.render import render
from meeplecam.vision.synth.scene import Scene
from meeplecam.vision.synth.sequence import table_states, views, write_game


def _game(seed=4, turns=12, tileset="winter"):
    if tileset == "winter+gingerbread":
        ts = find_tileset(tileset, load_tile_file("engine/data/gingerbread-template.toml"))
    else:
        ts = find_tileset(tileset)
    return random_game(ts, 2, seed=seed, max_turns=turns, follower_chance=0.9)


def test_written_game_is_legal_and_truth_is_complete(tmp_path):
    game = _game()
    n = write_game(tmp_path, game, seed=4, size=(240, 160))
    record = json.loads((tmp_path / "record.json").read_text())
    replayed = load_record(record)
    assert score_report(replayed) == score_report(game)
    frames = sorted((tmp_path / "frames").iterdir())
    truths = sorted((tmp_path / "truth").iterdir())
    assert len(frames) == len(truths) == n > len(record["turns"])
    phases = [json.loads(t.read_text())["phase"] for t in truths]
    assert {"settled", "holding", "laying"} <= set(phases)
    last = json.loads(truths[-1].read_text())
    assert last["event"] == len(record["turns"])
    assert len(last["tiles"]) == 1 + sum(1 for t in record["turns"] if "tile" in t)
    assert {f["pose"] for f in last["followers"]} <= {"standing", "lying"}
    for f in last["followers"]:
        assert f["at"] and f["colour"] in ("red", "yellow")
    held = [json.loads(t.read_text()) for t in truths]
    assert any(h["held_tile"] for h in held)


def test_followers_leave_after_scoring_and_settled_states_match_the_engine():
    game = random_game(find_tileset("winter"), 2, seed=9, follower_chance=1.0)
    states = list(table_states(game))
    assert any(before != after for _, before, after in states)
    final = states[-1][2]
    assert len(final.followers) == sum(1 for _ in game.board.followers())
    assert final.scores == tuple(game.totals)


def test_gingerbread_man_is_placed():
    game = _game(seed=2, turns=40, tileset="winter+gingerbread")
    states = [after for _, _, after in table_states(game)]
    if game.gingerbread is not None:
        assert states[-1].gingerbread is not None


def test_rendering_is_deterministic_by_seed():
    game = _game(turns=6)
    a = Scene(game, 7, "summer", (200, 120))
    b = Scene(game, 7, "summer", (200, 120))
    va, vb = list(views(a, 7)), list(views(b, 7))
    assert [v[1].phase for v in va] == [v[1].phase for v in vb]
    fa = render(a, *va[-1])
    fb = render(b, *vb[-1])
    assert np.array_equal(fa, fb)
    c = Scene(game, 8, "summer", (200, 120))
    assert not np.array_equal(fa, render(c, *list(views(c, 8))[-1]))


def test_demo_source_repeats_frames_while_nothing_moves():
    source = SyntheticTable(seed=1, size=(160, 96), realtime=False)
    first = source.read()
    assert first.shape == (96, 160, 3) and first.dtype == np.uint8
    assert np.array_equal(source.read(), first)  # settled: the same frame again
    assert source.renders == 1
    seen_turns = set()
    for _ in range(400):
        source.read()
        seen_turns.add(source.turn)
    assert max(seen_turns) >= 2
    assert source.renders < source.frames / 3  # only views that change are rendered
    assert source.events == source.record["turns"][: source.turn]
    assert source.truth["event"] == source.turn
    assert len(source.truth["tiles"]) >= 1


def test_layout_fits_the_table_for_many_seeds():
    game = random_game(find_tileset("winter"), 2, seed=1)
    for seed in range(40):
        scene = Scene(game, seed, "winter", (160, 90))
        corners = np.vstack([scene.tile_corners_mm(c) for c in game.board.tiles])
        assert corners.min() > 0
        assert corners[:, 0].max() < scene.table_w and corners[:, 1].max() < scene.table_d
        x, y, w, d = scene.track
        assert x > 0 and x + w < scene.table_w and y > 0 and y + d < scene.table_d


def test_each_drawn_tile_lies_on_the_spot_beside_the_board_before_it_is_laid():
    game = _game(seed=6, turns=10)
    scene = Scene(game, 6, "winter", (320, 180))
    spot = scene.drawn_spot()
    assert spot is not None
    assert all(max(abs(spot[0] - x), abs(spot[1] - y)) >= 3 for x, y in game.board.tiles)
    planned = list(views(scene, 6, spot))
    on_spot = [(state.event, extras.held) for state, extras in planned if extras.phase == "drawn"]
    laid = [e for e in game.log if hasattr(e, "cell")]
    # each turn's tile, face up (not yet given a cell), while the table settles
    assert {held.turn for _, held in on_spot} == set(range(1, len(laid) + 1))
    assert all(held.cell is None and held.height_mm < 2 for _, held in on_spot)
    assert all(held.tile == laid[held.turn - 1].tile for _, held in on_spot)
    assert all(event == held.turn - 1 for event, held in on_spot)  # before it is laid
