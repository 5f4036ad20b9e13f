"""Helpers shared by the web app tests (imported by conftest.py and the tests)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from meeplecam.engine import Player
from meeplecam.webui.app import create_app
from meeplecam.webui.feed import DemoFeed
from meeplecam.webui.session import GameSession

TOKEN = "test-host-token"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
PLAYERS = [Player("Ann", "red"), Player("Bo", "yellow"), Player("Cleo", "blue")]


class Host:
    """A test client that opened the host link: token cookie set, CSRF token known."""

    def __init__(self, app):
        self.client = app.test_client()
        assert self.client.get(f"/host?token={TOKEN}").status_code == 200
        self.csrf = self.client.get("/api/csrf").get_json()["csrf"]

    def post(self, url, **kwargs):
        headers = {"X-CSRF-Token": self.csrf, "X-Requested-With": "fetch"}
        headers.update(kwargs.pop("headers", {}))
        return self.client.post(url, headers=headers, **kwargs)

    def get(self, url, **kwargs):
        return self.client.get(url, **kwargs)


def play(session: GameSession, turns: int, seed: int = 5) -> DemoFeed:
    """Drive a demo feed synchronously until ``turns`` events are in the log (answers questions
    with their first option)."""
    feed = DemoFeed(session, seed=seed, question_chance=0.0)
    for _ in range(turns * 3):
        if len(session.game.log) >= turns:
            break
        feed.step()
    return feed


def alternative(game, index: int):
    """A legal correction of turn ``index``: another tile type or rotation at the same cell."""
    from meeplecam.engine import Game, IllegalTurn, Turn

    old = game.log[index]
    for tile_id in [old.tile, *sorted(t for t, n in game.remaining.items() if n > 0)]:
        tile = game.tileset[tile_id]
        for rotation in tile.distinct_rotations:
            if tile_id == old.tile and rotation == tile.canonical_rotation(old.rotation):
                continue
            candidate = Turn(tile_id, old.x, old.y, rotation)
            trial = Game.start(game.tileset, game.players, game.options, game.start_turn, game.log)
            try:
                trial.replace(index, candidate)
            except IllegalTurn:
                continue
            return candidate
    pytest.skip("no legal correction found for that turn")


class LiveServer:
    def __init__(self, record: Path, interval: float, question_chance: float, seed: int = 11):
        from werkzeug.serving import make_server

        self.session = GameSession.open(record, PLAYERS)
        self.feed = DemoFeed(
            self.session, seed=seed, interval=interval, question_chance=question_chance
        )
        self.app = create_app(
            {
                "session": self.session,
                "token": TOKEN,
                "secret_key": "k" * 32,
                "source": self.feed,
                "keepalive": 1.0,
            }
        )
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self, feed: bool = True):
        self.thread.start()
        if feed:
            self.feed.start()
        return self

    def stop(self):
        self.feed.stop()
        self.session.bus.close_all()
        self.server.shutdown()
        self.server.server_close()
