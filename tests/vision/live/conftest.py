"""Fixtures of the live-loop tests: a small drawn game (cheap, deterministic)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def drawn_game():
    from meeplecam.vision.live.drawn import DrawnConfig, DrawnGame

    return DrawnGame(seed=5, max_turns=12, config=DrawnConfig(frame_size=(960, 540)))


@pytest.fixture(scope="session")
def drawn_frames(drawn_game):
    return [frame for frame, _ in drawn_game.frames()]
