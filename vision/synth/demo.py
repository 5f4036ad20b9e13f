"""The synthetic table as a live frame source for ``meeplecam serve --demo``.

A random legal game is played on a synthetic table at camera frame rate: a hand brings each tile,
lays it, the table rests, scored followers are taken back. Only views that change are rendered;
while nothing moves the last frame is delivered again (with fresh sensor noise only if asked).
When a game is over the next one starts with the next seed.

>>> source = SyntheticTable(seed=3, size=(320, 180), realtime=False)
>>> source.read().shape
(180, 320, 3)
"""

from __future__ import annotations

import time

import numpy as np

from meeplecam.engine import find_tileset, to_record
from meeplecam.engine.playout import random_game

from .config import config
from .render import render, truth
from .scene import Scene
from .sequence import views


class SyntheticTable:
    """``read() -> BGR ndarray`` at ``fps``; ``events``: the record turns now on the table."""

    def __init__(
        self,
        seed: int = 0,
        palette: str = "winter",
        size=(1280, 720),
        players: int = 2,
        tileset: str = "winter",
        fps: float | None = None,
        realtime: bool = True,
        drawn_spot: bool = False,
    ):
        cfg = config()["sequence"]["demo"]
        self.fps = float(fps or cfg["fps"])
        self.palette, self.size, self.players, self.tileset = palette, size, players, tileset
        self.realtime = realtime
        self.drawn_spot = drawn_spot  # each drawn tile lies on a spot beside the board first
        self.spot: tuple[int, int] | None = None  # that spot's cell in this game
        self.seed = seed
        self.paused = False  # players waiting (e.g. for an answer on the page): the view holds
        self._frame: np.ndarray | None = None
        self._next_time = 0.0
        self._start_game(seed)

    def _start_game(self, seed: int) -> None:
        cfg = config()["sequence"]["demo"]
        self.game = random_game(find_tileset(self.tileset), self.players, seed=seed)
        self.record = to_record(self.game)
        self.scene = Scene(self.game, seed, self.palette, self.size)
        self.spot = self.scene.drawn_spot() if self.drawn_spot else None
        self._views = views(self.scene, seed, self.spot)
        self._view = None
        self._repeat = 0
        self._settled = max(1, round(cfg["settled_s"] * self.fps))
        self._hand = max(1, round(cfg["hand_s"] * self.fps))
        self.turn = 0  # record turns now lying on the table
        self.frames = 0  # frames delivered
        self.renders = 0  # frames actually rendered

    @property
    def events(self) -> list[dict]:
        """The record's turns (``meeplecam-record/1``) that are on the table now, in order."""
        return self.record["turns"][: self.turn]

    @property
    def phase(self) -> str:
        return self._view[1].phase if self._view else "settled"

    def read(self) -> np.ndarray:
        if self.realtime:
            now = time.monotonic()
            if self._next_time > now:
                time.sleep(self._next_time - now)
            self._next_time = max(now, self._next_time) + 1.0 / self.fps
        if self._frame is None or (self._repeat <= 0 and not self.paused):
            self._advance()
        self._repeat -= 1
        self.frames += 1
        assert self._frame is not None
        return self._frame.copy()  # callers may draw on it; the stored view stays clean

    def _advance(self) -> None:
        view = next(self._views, None)
        if view is None:
            self.seed += 1
            self._start_game(self.seed)
            view = next(self._views)
        state, extras = view
        same = (
            self._view is not None
            and self._view[0] == state
            and not extras.hands
            and not self._view[1].hands
            and extras.held == self._view[1].held
        )
        self._view = view
        self.turn = state.event
        # the table rests with the drawn tile on its spot as after a tile is laid
        self._repeat = self._settled if extras.phase in ("settled", "drawn") else self._hand
        if same and self._frame is not None:
            return  # nothing moved: keep the last frame
        self._frame = render(self.scene, state, extras)
        self.renders += 1

    @property
    def truth(self) -> dict | None:
        """Ground truth (``render.truth``) of the frame last returned."""
        if self._view is None:
            return None
        return truth(self.scene, self._view[0], self._view[1], self.frames - 1)

    def release(self) -> None:
        """Nothing to free; present so the source looks like a camera."""

    close = release


DemoSource = SyntheticTable  # the name ``vision.live.sources.SyntheticSource`` looks for
