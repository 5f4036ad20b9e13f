"""Turn sources: where the live game's turns come from.

A turn source watches the table (the vision tracker in ``meeplecam.vision``) or plays one
(:class:`DemoFeed`) and pushes observations into a :class:`TurnSink` (the :class:`GameSession`):
``drawn(tile)`` when it sees the tile in hand, ``commit(turn)`` for a sure reading,
``ask(options, crop, text)`` with ranked options when unsure, ``warn(text, image)`` for anything
the rules cannot explain. It also offers the latest annotated camera frame for the camera view.

The demo is an explicit state machine (STYLE.md, ScrabScrap): each state's handler does one thing
and returns the next state; ``step`` can be driven synchronously in tests.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol

from meeplecam.engine import Discard, Game, IllegalTurn, Turn
from meeplecam.engine.game import Event
from meeplecam.engine.playout import play_tile


class TurnSink(Protocol):
    def drawn(self, tile: str | None) -> None: ...

    def commit(self, event: Event) -> None: ...

    # turn: the earlier turn (0-based) asked about, in the game as read for now; the answer
    # corrects it (None: the new tile's question, the answer is the turn)
    def ask(
        self, options: Sequence[Event], crop=None, text: str = "", turn: int | None = None
    ) -> int: ...

    def warn(self, text: str, image=None) -> None: ...


class TurnSource(Protocol):
    """What ``serve`` runs: started with the session as its sink, stopped on shutdown."""

    name: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def frame(self):  # latest annotated BGR frame (numpy) or None
        ...


class DemoState(StrEnum):
    DRAW = "draw"  # take a tile from the bag and show it
    PLACE = "place"  # lay it: commit, or ask the players
    WAIT = "wait"  # a question is open: wait for the answer
    OVER = "over"  # the game has ended (a new one starts if looping)


class DemoFeed:
    """Plays a seeded random game into the session, one step every ``interval`` seconds.

    Now and then (``question_chance``) a turn is presented as a question with 2-3 ranked options
    (usually, not always, the true one first) instead of being committed.
    """

    name = "demo"

    def __init__(
        self,
        session,
        seed: int = 1,
        interval: float = 3.0,
        question_chance: float = 0.15,
        follower_chance: float = 0.5,
        loop: bool = False,
        loop_pause: float = 20.0,
    ):
        self.session = session
        self.rng = random.Random(seed)
        self.interval = interval
        self.question_chance = question_chance
        self.follower_chance = follower_chance
        self.loop = loop
        self.loop_pause = loop_pause
        self.state = DemoState.DRAW
        self.tile: str | None = None
        self.over_since: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._frame = None
        self.handlers = {
            DemoState.DRAW: self._draw,
            DemoState.PLACE: self._place,
            DemoState.WAIT: self._wait,
            DemoState.OVER: self._over,
        }

    # --- running ------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="demo-feed", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.step()
            except Exception as exc:  # a demo must not die: log and go on
                self.session.warn(f"demo: {type(exc).__name__}: {exc}")
                self.state = DemoState.DRAW

    def step(self) -> DemoState:
        self.state = self.handlers[self.state]()
        return self.state

    def frame(self):
        """The camera picture: re-rendered only when the game changed (camera rate is free)."""
        from .camera import demo_frame

        version = self.session.version
        if self._frame is None or self._frame[0] != version:
            self._frame = (version, demo_frame(self.session))
        return self._frame[1]

    # --- states -------------------------------------------------------------------------------
    def _draw(self) -> DemoState:
        with self.session.lock:
            if self.session.phase == "finished":
                return DemoState.OVER
            if self.session.pending:
                return DemoState.WAIT
            bag = [t for t, n in sorted(self.session.game.remaining.items()) for _ in range(n)]
            if not bag:
                return DemoState.OVER
            self.tile = self.rng.choice(bag)
            self.session.drawn(self.tile)
        return DemoState.PLACE

    def _place(self) -> DemoState:
        with self.session.lock:
            game = self.session.game
            if self.session.phase == "finished":
                return DemoState.OVER
            if self.tile is None or game.remaining.get(self.tile, 0) <= 0 or self.session.pending:
                return DemoState.DRAW  # the game was corrected meanwhile
            trial = _replay(game)
            play_tile(trial, self.tile, self.rng, self.follower_chance)
            event = trial.log[-1]
            if isinstance(event, Turn) and self.rng.random() < self.question_chance:
                options = self._options(game, event)
                if len(options) > 1:
                    from .camera import tile_crop

                    crop = tile_crop(game.tileset[event.tile], event.rotation)
                    self.session.ask(
                        options, crop, f"Is this {event.tile} at ({event.x},{event.y})?"
                    )
                    return DemoState.WAIT
            try:
                self.session.commit(event)
            except IllegalTurn as exc:
                self.session.warn(f"demo: {exc}")
        return DemoState.DRAW

    def _wait(self) -> DemoState:
        return DemoState.WAIT if self.session.pending else DemoState.DRAW

    def _over(self) -> DemoState:
        if self.session.phase != "finished":
            self.over_since = None
            return DemoState.DRAW
        if not self.loop:
            return DemoState.OVER
        now = time.monotonic()
        if self.over_since is None:
            self.over_since = now
        if now - self.over_since < self.loop_pause:
            return DemoState.OVER
        self.over_since = None
        with self.session.lock:
            game = self.session.game
            self.session.new_game(game.tileset.name, game.players, game.options)
        return DemoState.DRAW

    def _options(self, game: Game, truth: Turn) -> list[Event]:
        """The true turn and 1-2 legal look-alikes (another rotation or a neighbouring cell)."""
        tile = game.tileset[truth.tile]
        others = [
            (cell, r)
            for cell, r in game.board.legal_placements(tile)
            if (cell, r) != (truth.cell, tile.canonical_rotation(truth.rotation))
        ]
        others.sort(
            key=lambda o: (o[0] != truth.cell, abs(o[0][0] - truth.x) + abs(o[0][1] - truth.y))
        )
        wanted = self.rng.choice((1, 2))  # look-alikes besides the truth
        options: list[Event] = []
        for (x, y), rotation in others[:6]:
            meeple = truth.meeple if self.rng.random() < 0.5 else None
            for candidate in (
                Turn(truth.tile, x, y, rotation, meeple),
                Turn(truth.tile, x, y, rotation),
            ):
                if _legal(game, candidate):
                    options.append(candidate)
                    break
            if len(options) >= wanted:
                break
        if not options:
            return [truth]
        position = 0 if self.rng.random() < 0.7 else 1
        options.insert(position, truth)
        return options


def _replay(game: Game) -> Game:
    return Game.start(game.tileset, game.players, game.options, game.start_turn, game.log)


def _legal(game: Game, event: Event) -> bool:
    trial = _replay(game)
    try:
        trial.apply(event)
    except IllegalTurn:
        return False
    return True


__all__ = ["DemoFeed", "DemoState", "Discard", "TurnSink", "TurnSource"]
