"""``meeplecam replay`` end to end, the web app's live feed, and bad inputs."""

from __future__ import annotations

import itertools
import json

import cv2
import numpy as np
import pytest

from meeplecam.cli import main
from meeplecam.engine import Game, Turn
from meeplecam.vision.live.feed import LiveFeed
from meeplecam.vision.live.observations import Question
from meeplecam.vision.live.rectify import Rectifier
from meeplecam.vision.live.replay import compare
from meeplecam.vision.live.sources import ListSource


@pytest.fixture(scope="module")
def fixture_folder(tmp_path_factory, drawn_game):
    return drawn_game.write(tmp_path_factory.mktemp("drawn") / "game")


def test_replay_command_prints_the_record(fixture_folder, capsys):
    code = main(["replay", str(fixture_folder), "--json", "--players", "red,yellow"])
    out = capsys.readouterr().out
    assert code == 0
    record = json.loads(out)
    assert record["format"] == "meeplecam-record/1"
    assert {"scores", "questions", "warnings"} <= set(record)
    assert isinstance(record["questions"], int) and isinstance(record["warnings"], list)
    assert all("discard" not in t for t in record["turns"])
    expected = json.loads((fixture_folder / "expected.json").read_text())
    right, total, diffs = compare(expected, record)
    assert right >= total - 1, diffs
    assert record["scores"]["players"][0]["colour"] == "red"


def _e_and_i_read_over(log):
    """``(cells of E and I in log, a Tracker.review that reads them as each other's types)``
    (a legal swap in the drawn game)."""
    e, i = (next(k for k, t in enumerate(log) if t.tile == tile) for tile in ("E", "I"))

    def swapped(tracker):
        board = tracker.game.board
        fits = [
            tracker.game.tileset[other].rotations_fitting(board.required_sides(log[k].cell))[0]
            for k, other in ((e, "I"), (i, "E"))
        ]
        read_over = list(tracker.game.log)
        read_over[e] = Turn("I", *log[e].cell, fits[0], log[e].meeple)
        read_over[i] = Turn("E", *log[i].cell, fits[1], log[i].meeple)
        return read_over

    return (e, i), swapped


def test_replay_names_the_turns_it_corrected_when_it_read_the_game_over(
    fixture_folder, drawn_game, monkeypatch, capsys
):
    """After the last frame replay reads the game over (Tracker.review) and applies what it
    corrects, naming each turn; ``--no-review`` keeps the turns as read during play."""
    from meeplecam.vision.live.tracker import Tracker

    (e, i), swapped = _e_and_i_read_over(drawn_game.game.log)
    monkeypatch.setattr(Tracker, "review", swapped)
    assert main(["replay", str(fixture_folder), "--players", "red,yellow"]) == 0
    out = capsys.readouterr().out
    assert "2 corrected at the end" in out
    assert f"turn {e + 1} read over: I at " in out and "(was E)" in out
    assert f"turn {i + 1} read over: E at " in out and "(was I)" in out
    assert main(["replay", str(fixture_folder), "--players", "red,yellow", "--no-review"]) == 0
    assert "corrected" not in capsys.readouterr().out


def test_replay_keeps_each_turn_as_the_camera_first_read_it(drawn_game, drawn_frames, monkeypatch):
    """What the page showed during play stays in the result beside the record read over at
    the end: each turn as first read, and whether the players were asked about it (the
    benchmark tells a question's proposed answer from the turn at the end this way)."""
    from meeplecam.vision.live.replay import replay
    from meeplecam.vision.live.tracker import Tracker

    (e, i), swapped = _e_and_i_read_over(drawn_game.game.log)
    monkeypatch.setattr(Tracker, "review", swapped)
    game = Game.start(drawn_game.game.tileset, drawn_game.game.players, drawn_game.game.options)
    result = replay(drawn_frames, game, Rectifier(drawn_game.grid_to_image))
    first = [turn for turn, _ in result.first_read]
    final = [turn for turn in result.game.log if isinstance(turn, Turn)]
    assert [k for k, (a, b) in enumerate(zip(first, final, strict=True)) if a != b] == sorted(
        (e, i)
    )
    assert (first[e].tile, final[e].tile) == ("E", "I")
    assert len(result.asked) == result.questions
    # and why each was asked
    assert result.asked, "the drawn game has turns asked about"
    assert sorted(result.doubts) == result.asked
    assert all(result.doubts[k] for k in result.asked)


def test_replay_reports_its_progress(drawn_game, drawn_frames):
    """A long recording takes minutes: replay says how far it got as it goes, then that it
    reads the game over, then that it is done."""
    from meeplecam.vision.live.replay import replay

    seen = []
    clock = itertools.count(step=2)  # every look at the clock two seconds after the last
    game = Game.start(drawn_game.game.tileset, drawn_game.game.players, drawn_game.game.options)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("meeplecam.vision.live.replay.time.monotonic", lambda: next(clock))
        replay(
            drawn_frames,
            game,
            Rectifier(drawn_game.grid_to_image),
            progress=lambda result, stage: seen.append((stage, result.frames)),
        )
    stages = [stage for stage, _ in seen]
    assert stages[-2:] == ["reading over", "done"]
    assert set(stages[:-2]) == {"reading"} and len(stages) > 10
    frames = [n for _, n in seen]
    assert frames == sorted(frames) and frames[-1] == len(drawn_frames)


def test_replay_of_one_photo_per_turn(drawn_game, tmp_path, capsys):
    """A folder with one settled photo per turn (no hands, no repeats) is read as stills."""
    stills = tmp_path / "stills"
    stills.mkdir()
    groups: dict[int, list] = {}
    for frame, truth in drawn_game.frames():
        groups.setdefault(truth["event"], []).append(frame)
    for i, event in enumerate(sorted(groups)):
        photo = groups[event][0 if event < 0 else 1]  # the first settled view of each turn
        cv2.imwrite(str(stills / f"turn{i}.jpg"), photo)
    (stills / "table.json").write_text(
        json.dumps({"grid_to_image": drawn_game.grid_to_image.tolist()})
    )
    assert main(["replay", str(stills), "--json", "--players", "red,yellow"]) == 0
    record = json.loads(capsys.readouterr().out)
    right, total, diffs = compare(drawn_game.expected(), record)
    assert right >= total - 1, diffs


def test_replay_bad_inputs(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nothing"), "--players", "red,yellow"]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "f1.png").write_bytes(b"garbage")
    assert main(["replay", str(tmp_path), "--players", "red,yellow"]) == 1
    assert "f1.png: not an image" in capsys.readouterr().err
    assert main(["replay", str(tmp_path), "--players", "red,red"]) == 1
    assert "share the colour" in capsys.readouterr().err


def test_replay_says_why_it_read_nothing(tmp_path, capsys):
    """A view without a start tile never gives the tracker its geometry: replay must not end
    silently with an empty record, but say why (with and without --json)."""
    rng = np.random.default_rng(3)
    frame = np.full((240, 320, 3), (90, 120, 150), np.uint8)
    frame = cv2.add(frame, rng.integers(0, 6, frame.shape, dtype=np.uint8))
    for i in range(12):
        cv2.imwrite(str(tmp_path / f"f{i}.png"), frame)
    assert main(["replay", str(tmp_path), "--players", "red,yellow"]) == 0
    out = capsys.readouterr().out
    assert "0 turns read" in out
    assert "warning: the table or the start tile was never located" in out
    assert main(["replay", str(tmp_path), "--json", "--players", "red,yellow"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["turns"] == []
    assert any("never located" in w and "show the start tile" in w for w in record["warnings"])


class FakeSession:
    """The sink side of the web app: applies commits, queues questions, keeps warnings."""

    def __init__(self, game):
        self.game = game
        self.questions = []
        self.warnings = []

    def commit(self, event):
        self.game.apply(event)

    def ask(self, options, crop=None, text="", turn=None):
        self.questions.append(options)
        return len(self.questions)

    def warn(self, text, image=None):
        self.warnings.append(text)


def test_live_feed_pushes_into_the_session(drawn_game, drawn_frames):
    g = drawn_game.game
    session = FakeSession(Game.start(g.tileset, g.players, g.options))
    feed = LiveFeed(session, ListSource([]), Rectifier(drawn_game.grid_to_image), settle_s=None)
    for frame in drawn_frames:
        observations = feed.step(frame)
        for obs in observations:
            if isinstance(obs, Question) and obs.turn is None:  # a person answers on the page
                session.game.apply(obs.best)
    turns = [e for e in g.log if isinstance(e, Turn)]
    assert len(session.game.log) == len(turns)
    assert session.warnings == []
    assert feed.frame() is None  # nothing captured by the thread in this test
    feed._latest = drawn_frames[-1]
    assert feed.frame().shape == drawn_frames[-1].shape


def test_a_new_game_keeps_what_was_learned_of_the_tiles_only_in_the_same_set(
    drawn_game, drawn_frames
):
    """The host starts the next game on the page: the camera keeps the table's geometry, and
    what it learned of this copy's look while the set is the same; a game of another set
    (the base game after the Winter Edition) is learned afresh."""
    from meeplecam.engine import find_tileset

    g = drawn_game.game
    session = FakeSession(Game.start(g.tileset, g.players, g.options))
    feed = LiveFeed(session, ListSource([]), Rectifier(drawn_game.grid_to_image), settle_s=None)
    for frame in drawn_frames[:3]:
        feed.step(frame)
    first = feed.tracker
    session.game = Game.start(g.tileset, g.players, g.options)  # the next game, same set
    feed.step(drawn_frames[0])
    assert feed.tracker is not first and feed.tracker.scorer is first.scorer
    assert feed.tracker.rectifier is first.rectifier
    session.game = Game.start(find_tileset("base"), g.players)
    feed.step(drawn_frames[0])
    assert feed.tracker.scorer is not first.scorer
    assert feed.tracker.rectifier is first.rectifier


def test_live_feed_thread_runs_a_source_to_its_end(drawn_game, drawn_frames):
    g = drawn_game.game
    session = FakeSession(Game.start(g.tileset, g.players, g.options))
    feed = LiveFeed(
        session, ListSource(drawn_frames[:30]), Rectifier(drawn_game.grid_to_image), settle_s=None
    )
    feed.start()
    feed._thread.join(timeout=30)
    assert feed.frames == 30
    feed.stop()


def test_synthetic_game_end_to_end(tmp_path):
    """A short game from the synthetic renderer (hands, light, lens), when it is there."""
    sequence = pytest.importorskip("meeplecam.vision.synth.sequence")
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.live.replay import run_replay

    game = random_game(find_tileset("winter"), 2, seed=31, max_turns=4)
    folder = tmp_path / "game"
    sequence.write_game(folder, game, 31, "winter", (960, 540))
    record = json.loads((folder / "record.json").read_text())
    result = run_replay(str(folder), [p["colour"] for p in record["players"]])
    right, total, diffs = compare(record, result.record())
    assert total >= 3
    assert right >= total - 1, diffs
    assert result.warnings == []


def test_rectifier_from_truth_fits_the_tile_corners():
    from meeplecam.vision.live.rectify import from_truth

    h = np.array([[40.0, 2, 300], [1, 38, 200], [0, 0.0005, 1]])
    rect = Rectifier(h)
    tiles = []
    for x, y in ((0, 0), (1, 0), (0, 1)):
        corners = rect.cell_corners(x, y)
        tiles.append({"x": x, "y": y, "corners": corners.tolist()})
    fitted = from_truth({"tiles": tiles})
    assert np.allclose(fitted.cell_corners(3, -2), rect.cell_corners(3, -2), atol=1e-3)
    with pytest.raises(KeyError):
        from_truth({"nothing": 1})


def test_live_feed_on_the_synthetic_demo_table():
    """The demo table at camera rate (hands held still for a moment) read through the feed."""
    pytest.importorskip("meeplecam.vision.synth.demo")
    from meeplecam.vision.live.sources import SyntheticSource

    source = SyntheticSource(seed=3, realtime=False, size=(960, 540))
    inner = source.inner
    session = FakeSession(Game.start(inner.game.tileset, inner.game.players, inner.game.options))
    feed = LiveFeed(session, source, source.rectifier())
    assert feed.config.motion.settle_frames >= 10
    for _ in range(420):
        for obs in feed.step(source.read()):
            if isinstance(obs, Question):
                session.game.apply(obs.best)
    on_table = [t for t in inner.events if "discard" not in t]
    assert len(on_table) >= 4
    assert len(session.game.log) >= len(on_table) - 1
    assert session.warnings == []


def test_replay_with_an_appearance_model_of_the_art(tmp_path, capsys):
    """``model build --art`` then ``replay --model``: the tiles' own art helps read the game."""
    sequence = pytest.importorskip("meeplecam.vision.synth.sequence")
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game

    game = random_game(find_tileset("winter"), 2, seed=32, max_turns=4)
    folder = tmp_path / "game"
    sequence.write_game(folder, game, 32, "winter", (960, 540))
    model = tmp_path / "model.json"
    assert (
        main(["model", "build", "--art", "winter", "--tileset", "winter", "--out", str(model)]) == 0
    )
    assert "32 tile types" in capsys.readouterr().out
    args = ["replay", str(folder), "--json", "--players", "red,yellow", "--model", str(model)]
    assert main(args) == 0
    record = json.loads((folder / "record.json").read_text())
    right, total, diffs = compare(record, json.loads(capsys.readouterr().out))
    assert total >= 3
    assert right >= total - 1, diffs


@pytest.fixture(scope="module")
def gingerbread_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "model.json"
    build = ["model", "build", "--art", "winter", "--tileset", "winter+gingerbread"]
    assert main([*build, "--tiles", GINGERBREAD_TILES, "--out", str(path)]) == 0
    return path


GINGERBREAD_TILES = "engine/data/gingerbread-template.toml"


@pytest.mark.parametrize(
    "seed, moved_by",
    [
        (28, ["GB1", "J"]),  # both moves made as the tile is laid
        (25, ["GB3", "GB1"]),  # both made after the table settled with the tile
    ],
)
def test_the_gingerbread_man_is_followed_from_city_to_city(
    seed, moved_by, tmp_path, capsys, gingerbread_model
):
    """Winter with the Gingerbread Man (the invented icon tiles of the template): an icon tile
    sends the figure into another city, and so does a tile completing its city (J). The figure
    is seen where it now stands, and the move goes to the city under it; the icon tile is told
    from the plain tile drawn like it by the figure's move as much as by its few pixels of
    icon. A move made after the table settled reads the turn again (an amendment)."""
    sequence = pytest.importorskip("meeplecam.vision.synth.sequence")
    from meeplecam.engine import find_tileset, load_tile_file
    from meeplecam.engine.playout import random_game

    tileset = find_tileset("winter+gingerbread", load_tile_file(GINGERBREAD_TILES))
    game = random_game(tileset, 2, seed=seed, max_turns=5)
    folder = tmp_path / "game"
    sequence.write_game(folder, game, seed, "winter", (1280, 720))
    capsys.readouterr()
    args = ["replay", str(folder), "--json", "--players", "red,yellow"]
    args += ["--tileset", "winter+gingerbread", "--tiles", GINGERBREAD_TILES]
    assert main([*args, "--model", str(gingerbread_model)]) == 0
    got = json.loads(capsys.readouterr().out)
    record = json.loads((folder / "record.json").read_text())
    moves = [(t["tile"], t["gingerbread"]) for t in record["turns"] if "gingerbread" in t]
    assert [tile for tile, _ in moves] == moved_by  # the game this seed draws
    assert [(t["tile"], t["gingerbread"]) for t in got["turns"] if "gingerbread" in t] == moves
    right, total, diffs = compare(record, got)
    assert right == total, diffs


def test_the_model_comes_from_the_flag_or_the_profile(tmp_path):
    from meeplecam.engine import find_tileset
    from meeplecam.vision.live.replay import load_reference
    from meeplecam.vision.model import build_from_art, save_json

    model = build_from_art(find_tileset("winter"), "winter")
    path = tmp_path / "model.json"
    save_json(model.to_json(), path)
    assert set(load_reference(None, str(path)).templates) == set(model.templates)
    assert load_reference(None) is None
    truth_geometry = tmp_path / "table.json"  # a geometry file, not a profile: no model in it
    truth_geometry.write_text(json.dumps({"grid_to_image": np.eye(3).tolist()}))
    assert load_reference(str(truth_geometry)) is None


def test_replay_with_a_bad_model_says_so(fixture_folder, tmp_path, capsys):
    broken = tmp_path / "model.json"
    broken.write_text("{not json")
    args = ["replay", str(fixture_folder), "--players", "red,yellow", "--model", str(broken)]
    assert main(args) == 1
    assert "cannot read appearance model" in capsys.readouterr().err
    assert main([*args[:-1], str(tmp_path / "missing.json")]) == 1
    assert "missing.json" in capsys.readouterr().err


def test_a_calibration_profile_brings_its_appearance_model(tmp_path):
    from meeplecam.engine import find_tileset
    from meeplecam.vision import profile as pf
    from meeplecam.vision.live.replay import load_reference
    from meeplecam.vision.model import build_from_art

    model = build_from_art(find_tileset("winter"), "winter")
    profile = pf.Profile(frame=pf.FrameInfo(1280, 720), appearance=model.to_json())
    path = profile.save(tmp_path / "table.json")
    assert set(load_reference(str(path)).templates) == set(model.templates)
    assert (
        load_reference(str(pf.Profile(frame=pf.FrameInfo(1280, 720)).save(tmp_path / "b.json")))
        is None
    )


def test_a_filmed_game_is_read_like_its_views(drawn_game, drawn_frames, tmp_path):
    """A webcam's recording at 30 frames a second holds each moment for many frames: a hand
    stops over the board for a third of a second. Film settles after 0.8 s of stillness, as
    live (after two still frames the hands were read as tiles)."""
    from meeplecam.vision.live.replay import replay
    from meeplecam.vision.live.sources import VideoSource

    path = tmp_path / "game.mp4"
    h, w = drawn_frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 30, (w, h))
    for frame in drawn_frames:
        for _ in range(10):  # a third of a second each
            writer.write(frame)
    writer.release()
    source = VideoSource(path)
    game = Game.start(drawn_game.tileset, drawn_game.game.players, drawn_game.game.options)
    result = replay(source, game, Rectifier(drawn_game.grid_to_image))
    source.close()
    right, total, diffs = compare(drawn_game.expected(), result.record())
    assert right >= total - 1, diffs


def test_replay_debug_writes_every_kind_of_observation(fixture_folder, tmp_path, capsys):
    """``--debug DIR``: a line per observation (commits, questions, and a follower laid late,
    read again as an amend) and the picture of each that has one."""
    from meeplecam.vision.live.observations import Amend, Drawn, PlayedOn, Warning
    from meeplecam.vision.live.replay import _debug_writer

    turn = Turn("U", 0, 1, 90)
    write = _debug_writer(tmp_path / "debug")
    crop = np.zeros((8, 8, 3), np.uint8)
    for obs in (
        Amend(3, turn, crop),
        Drawn("U"),
        PlayedOn(turn),
        Warning("two tiles at once", crop),
        Question([(turn, -1.0)], crop),
    ):
        write(obs, None)
    lines = (tmp_path / "debug" / "observations.txt").read_text().splitlines()
    assert [line.split()[1] for line in lines] == [
        "amend",
        "drawn",
        "playedon",
        "warning",
        "question",
    ]
    assert "turn 4" in lines[0]
    assert len(list((tmp_path / "debug").glob("*.png"))) == 3
    run = tmp_path / "run"
    code = main(["replay", str(fixture_folder), "--players", "red,yellow", "--debug", str(run)])
    assert code == 0
    assert (run / "observations.txt").read_text().count("commit") >= 3


def _locating_on(drawn_game, edge_cells):
    """A ``locate`` that finds the drawn game's grid and a table whose edge runs through the
    corners of cells ``edge_cells``, as the camera finds them with the start tile."""

    def locate(frame):
        rectifier = Rectifier(drawn_game.grid_to_image)
        rectifier.table_edge = rectifier.to_image(edge_cells)
        return rectifier

    return locate


def test_the_table_s_edge_found_with_the_start_tile_bounds_the_game(drawn_game, drawn_frames):
    from meeplecam.vision.live.replay import replay

    g = drawn_game.game
    game = Game.start(g.tileset, g.players, g.options)
    locate = _locating_on(drawn_game, [(-4, -5), (4, -5), (4, 6), (-4, 6)])
    result = replay(drawn_frames, game, None, locate=locate)
    record = result.record()
    # the cells whose middle lies on that table
    assert record["options"]["table"] == {"min_x": -4, "max_x": 3, "min_y": -5, "max_y": 5}
    right, total, diffs = compare(drawn_game.expected(), record)
    assert right >= total - 1, diffs


def test_a_play_area_the_players_set_is_theirs(drawn_game, drawn_frames):
    from dataclasses import replace

    from meeplecam.engine import Bounds
    from meeplecam.vision.live.replay import replay

    g = drawn_game.game
    theirs = Bounds(-9, 9, -9, 9)
    game = Game.start(g.tileset, g.players, replace(g.options, table=theirs))
    locate = _locating_on(drawn_game, [(-4, -5), (4, -5), (4, 6), (-4, 6)])
    replay(drawn_frames[:40], game, None, locate=locate)
    assert game.options.table == theirs


def test_a_tile_laid_beyond_the_table_s_edge_is_a_warning_naming_the_edge(drawn_game, drawn_frames):
    from meeplecam.vision.live.replay import replay

    g = drawn_game.game
    assert g.log[1].cell == (0, 1)  # the second tile, south of the start tile
    game = Game.start(g.tileset, g.players, g.options)
    locate = _locating_on(drawn_game, [(-3, -5), (4, -5), (4, 1), (-3, 1)])  # rows -5 to 0
    result = replay(drawn_frames[:80], game, None, locate=locate)
    assert game.options.table.max_y == 0
    assert any("(0,1), beyond the table's edge" in w for w in result.warnings), result.warnings
