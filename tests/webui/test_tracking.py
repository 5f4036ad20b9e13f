"""The vision tracker as the session's turn source (skipped while meeplecam.vision.live is absent):
frames of a small drawn game become commits and questions in the live session."""

from __future__ import annotations

import pytest

from meeplecam.engine import Game, Turn
from meeplecam.webui.session import GameSession

live = pytest.importorskip("meeplecam.vision.live.drawn")


def test_tracker_feed_turns_frames_into_the_live_game(tmp_path):
    from meeplecam.vision.live.rectify import Rectifier
    from meeplecam.vision.live.sources import ListSource
    from meeplecam.webui.tracking import TrackerFeed

    drawn = live.DrawnGame(seed=5, max_turns=6, config=live.DrawnConfig(frame_size=(960, 540)))
    truth = drawn.game
    session = GameSession(
        Game.start(truth.tileset, truth.players, truth.options), tmp_path / "tracked.json"
    )
    frames = ListSource([frame for frame, _ in drawn.frames()])
    feed = TrackerFeed(session, frames, Rectifier(drawn.grid_to_image))
    while feed.step():
        for question in list(session.questions.values()):
            session.answer(question.id, 0)  # the host taps the best option
    laid = [e for e in truth.log if isinstance(e, Turn)]
    assert len(session.game.log) >= len(laid) - 1
    assert [t.cell for t in session.game.log[:2]] == [t.cell for t in laid[:2]]
    assert feed.frame() is not None
    assert session.record_path.exists()
