"""The vision layer as the session's turn source: frames of a table become commits and
questions in the live session, and ``serve --demo`` plays a game on the synthetic table."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest

from meeplecam.engine import Game, Turn
from meeplecam.webui.session import GameSession

live = pytest.importorskip("meeplecam.vision.live.drawn")


def _answer_all(session: GameSession) -> None:
    for question in list(session.questions.values()):
        session.answer(question.id, 0)  # the host taps the best option


def _watched(drawn, record):
    """The live feed after it watched ``drawn``'s frames into a session (its ``sink``), the
    host tapping the best option of every question; the game is saved to ``record``."""
    from meeplecam.vision.live.feed import LiveFeed
    from meeplecam.vision.live.rectify import Rectifier

    truth = drawn.game
    session = GameSession(Game.start(truth.tileset, truth.players, truth.options), record)
    feed = LiveFeed(session, None, Rectifier(drawn.grid_to_image), settle_s=None)
    for frame, _ in drawn.frames():
        feed.step(frame)
        _answer_all(session)
    return feed


def _tracked(drawn, record) -> GameSession:
    return _watched(drawn, record).sink


def test_frames_of_a_game_become_the_live_game(tmp_path):
    drawn = live.DrawnGame(seed=5, max_turns=6, config=live.DrawnConfig(frame_size=(960, 540)))
    session = _tracked(drawn, tmp_path / "tracked.json")
    laid = [e for e in drawn.game.log if isinstance(e, Turn)]
    assert len(session.game.log) >= len(laid) - 1
    assert [t.cell for t in session.game.log[:2]] == [t.cell for t in laid[:2]]
    assert session.record_path.exists()


def test_a_table_that_plays_on_without_answering_keeps_the_questions_open(tmp_path):
    """Nobody at the table answers the camera (every reading a question here): each question
    stays open on the page, about its turn, while the game goes on with its best option; the
    host answers them later, and an answer corrects its turn."""
    from meeplecam.vision.live.feed import LiveFeed
    from meeplecam.vision.live.rectify import Rectifier
    from meeplecam.vision.live.tracker import TrackerConfig

    drawn = live.DrawnGame(seed=5, max_turns=6, config=live.DrawnConfig(frame_size=(960, 540)))
    truth = drawn.game
    session = GameSession(Game.start(truth.tileset, truth.players, truth.options), None)
    config = TrackerConfig(margin=float("inf"), defer_turns=0)  # never sure, asked at once
    feed = LiveFeed(session, None, Rectifier(drawn.grid_to_image), config, settle_s=None)
    for frame, _ in drawn.frames():
        feed.step(frame)
    laid = [e for e in truth.log if isinstance(e, Turn)]
    assert [t.cell for t in session.game.log] == [t.cell for t in laid[:-1]]
    open_ = session.state()["questions"]
    assert [q["turn"] for q in open_] == [*range(1, len(laid)), None]  # the last: no tile after
    first = next(iter(session.questions.values()))
    other = next(n for n, t in enumerate(first.options) if t != session.game.log[0])
    session.answer(first.id, other)
    assert session.game.log[0] == first.options[other]
    assert len(session.game.log) == len(laid) - 1


def test_a_follower_laid_after_its_tile_reaches_the_scoreboard(tmp_path):
    """A player lays the tile, thinks, then puts a follower on it: the session's turn is
    corrected to hold the follower, and the saved game with it."""
    config = live.DrawnConfig(frame_size=(960, 540), late_followers=True)
    drawn = live.DrawnGame(seed=5, max_turns=8, config=config)
    session = _tracked(drawn, tmp_path / "tracked.json")
    laid = [e for e in drawn.game.log if isinstance(e, Turn)]
    read = [e for e in session.game.log if isinstance(e, Turn)]
    assert sum(t.meeple is not None for t in laid) >= 2
    assert [t.meeple for t in read] == [t.meeple for t in laid]
    assert "meeple" in session.record_path.read_text()


def _watched_with_a_misread(drawn, record):
    """The feed after it watched ``drawn`` (:func:`_watched`), its game as if the camera had
    read a road bend with a city cap (K) as a bare road bend (V): (feed, the log as played,
    the misread turn's index)."""
    feed = _watched(drawn, record)
    session = feed.sink
    played = list(session.game.log)
    index = next(k for k, t in enumerate(played) if t.tile == "K" and t.meeple is None)
    cell = played[index].cell
    (rotation, *_) = session.game.tileset["V"].rotations_fitting(
        session.game.board.required_sides(cell)
    )
    misread = replace(played[index], tile="V", rotation=rotation)
    session.game.replace_all({index: misread})
    feed.tracker.readings[cell] = misread
    return feed, played, index


def test_the_finished_game_is_read_over_and_the_host_takes_the_correction(tmp_path):
    """The camera read a road bend with a city cap as a bare road bend (the bag still holds
    a copy of its own type). When the host ends the game the camera reads it over with all
    the table taught, and the page offers the correction; the host's tap takes it."""
    drawn = live.DrawnGame(seed=5, max_turns=12, config=live.DrawnConfig(frame_size=(960, 540)))
    feed, played, index = _watched_with_a_misread(drawn, tmp_path / "game.json")
    session = feed.sink
    frame = next(frame for frame, _ in drawn.frames())  # any view: it is read on the last
    feed.step(frame)
    assert session.read_over is None  # the game goes on: nothing is read over yet
    session.end_game()
    feed.step(frame)
    state = session.state()["read_over"]
    assert [c["turn"] for c in state["changes"]] == [index + 1]
    assert "(was V)" in state["changes"][0]["text"]
    session.take_read_over(state["id"])
    assert session.game.log == played
    feed.step(frame)  # the log read over is not read over again
    assert session.state()["read_over"] is None


def test_a_recording_that_ends_before_the_game_is_read_over_when_the_host_ends_it(tmp_path):
    """``serve --video``: the file's last frame shows the last turn but the bag is not empty
    (a short game); the feed waits, and when the host ends the game on the page it reads the
    game over and offers the correction."""
    from meeplecam.vision.live.feed import LiveFeed
    from meeplecam.vision.live.rectify import Rectifier
    from meeplecam.vision.live.sources import ListSource

    drawn = live.DrawnGame(seed=5, max_turns=12, config=live.DrawnConfig(frame_size=(960, 540)))
    watched, _, index = _watched_with_a_misread(drawn, tmp_path / "watched.json")
    session, tracker = watched.sink, watched.tracker
    last = [frame for frame, _ in drawn.frames()][-1]
    feed = LiveFeed(session, ListSource([last]), Rectifier(drawn.grid_to_image), settle_s=None)
    feed.tracker = tracker  # the feed that watched the whole file
    feed.start()
    try:
        deadline = time.monotonic() + 30
        while feed.frames < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert feed._thread.is_alive()  # the file ended; the game did not
        session.end_game()
        while session.state()["read_over"] is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [c["turn"] for c in session.state()["read_over"]["changes"]] == [index + 1]
    finally:
        feed.stop()
    assert not feed._thread.is_alive()


def test_serve_reads_a_folder_of_frames_with_table_detection(tmp_path):
    from meeplecam.vision.live.rectify import from_detection
    from meeplecam.webui.tracking import open_tracker_feed

    session = GameSession.open(None)
    import cv2
    import numpy as np

    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "f1.png"), np.zeros((48, 64, 3), np.uint8))
    feed = open_tracker_feed(session, "frames", frames)
    # no profile: the table and grid are found on the first settled frame
    assert feed.rectifier is None and feed.locate is from_detection


def test_the_demo_table_plays_its_game_into_the_session():
    from meeplecam.webui.tracking import DemoTableFeed

    session = GameSession.open(None)
    # the demo's own size: the drawn-tile spot lies at the table's edge, far from the camera
    feed = DemoTableFeed(session, seed=3, size=(1920, 1080), realtime=False)
    table = feed.source.inner
    assert [p.colour for p in session.game.players] == [p.colour for p in table.game.players]
    in_hand = []  # the tile the page hinted for, before each turn: read on the drawn-tile spot
    for _ in range(560):
        feed.step(feed.source.read())
        _answer_all(session)
        if session.drawn_tile is not None:
            in_hand.append((len(session.game.log), session.drawn_tile))
    on_table = [t for t in table.events if "discard" not in t]
    assert len(on_table) >= 4
    read = [t.cell for t in session.game.log if isinstance(t, Turn)]
    assert len(read) >= len(on_table) - 1  # the last turn may still be settling
    assert read == [(t["x"], t["y"]) for t in on_table][: len(read)]
    assert [n.text for n in session.notices if n.kind == "warning"] == []
    hinted = dict(in_hand)  # turns played -> the tile in hand last shown
    laid = [t["tile"] for t in on_table]
    assert len(hinted) >= len(read) - 1
    assert sum(laid[n] == tile for n, tile in hinted.items() if n < len(laid)) >= len(hinted) - 1


def test_the_demo_table_waits_while_a_question_is_open():
    from meeplecam.webui.tracking import DemoTableFeed

    session = GameSession.open(None)
    feed = DemoTableFeed(session, seed=3, size=(960, 540), realtime=False)
    table = feed.source.inner
    session.ask([Turn("A", 5, 5, rotation=0)], None, "which tile?")  # any open question
    feed.step(feed.source.read())
    shown = table.turn
    for _ in range(120):
        feed.step(feed.source.read())
    assert table.turn == shown


def test_the_tile_read_on_the_drawn_tile_spot_is_the_one_the_page_hints_for(tmp_path):
    from meeplecam.engine import Player, find_tileset
    from meeplecam.vision.live.feed import LiveFeed
    from meeplecam.vision.live.observations import Drawn
    from meeplecam.vision.live.rectify import Rectifier

    game = Game.start(find_tileset("winter"), [Player("Ann", "red"), Player("Bo", "yellow")])
    session = GameSession(game, tmp_path / "game.json")
    feed = LiveFeed(session, None, Rectifier(np.eye(3)), settle_s=None)
    feed._push(Drawn("V", [("V", -2.1), ("W", -2.4)]))
    assert session.drawn_tile == "V"
    feed._push(Drawn(None))  # the player picked it up
    assert session.drawn_tile is None


def test_the_live_feed_tells_the_page_where_the_drawn_tile_spot_is(tmp_path):
    from meeplecam.engine import Player, find_tileset
    from meeplecam.vision.live.feed import LiveFeed
    from meeplecam.vision.live.rectify import Rectifier
    from meeplecam.vision.live.tracker import TrackerConfig

    game = Game.start(find_tileset("winter"), [Player("Ann", "red"), Player("Bo", "yellow")])
    session = GameSession(game, tmp_path / "game.json")
    config = TrackerConfig(drawn_spot=(0, 8))
    feed = LiveFeed(session, None, Rectifier(np.eye(3)), config, settle_s=None)
    feed.step(np.zeros((540, 960, 3), np.uint8))
    assert session.state()["drawn_spot"] == [0, 8]


def test_the_table_s_edge_the_camera_finds_is_the_saved_game_s_play_area(tmp_path):
    import json

    from meeplecam.vision.live.feed import LiveFeed
    from meeplecam.vision.live.rectify import Rectifier

    drawn = live.DrawnGame(seed=5, max_turns=4, config=live.DrawnConfig(frame_size=(960, 540)))

    def locate(frame):  # the grid, and a table whose edge runs 4 cells around the start tile
        rectifier = Rectifier(drawn.grid_to_image)
        rectifier.table_edge = rectifier.to_image([(-4, -4), (5, -4), (5, 5), (-4, 5)])
        return rectifier

    truth = drawn.game
    record = tmp_path / "game.json"
    session = GameSession(Game.start(truth.tileset, truth.players, truth.options), record)
    feed = LiveFeed(session, None, None, locate=locate, settle_s=None)
    for frame, _ in drawn.frames():
        feed.step(frame)
        _answer_all(session)
    table = {"min_x": -4, "max_x": 4, "min_y": -4, "max_y": 4}
    assert json.loads(record.read_text())["options"]["table"] == table
    assert any("play area" in n.text for n in session.notices)
    assert session.game.log  # the game went on within it
