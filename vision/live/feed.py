"""The live turn source for the web app: camera frames -> tracker -> the session (the sink).

:class:`LiveFeed` has the shape ``webui.feed.TurnSource`` expects (``name``, ``start()``,
``stop()``, ``frame()``) and pushes into a sink with ``commit(event)``, ``ask(options, crop,
text)``, ``warn(text, image)``, ``correct(index, turn)``, ``drawn(tile)`` and ``play_on(turn)``
(the open question's best option, taken while the players played on), and tells it
where the drawn-tile spot is (``watch_spot(cell)``) and which turns are only taken for now
(``taken_for_now(index, doubts)``, until ``kept(index)`` or a correction), when it has those
(``webui.session.GameSession``). Capture stays separate from analysis: the source's own
thread only captures; this feed's thread analyses the newest frame.

At camera rate the table counts as settled after ``settle_s`` seconds of stillness
(``motion.SETTLE_S``, 0.8 s: a hand may hold a tile still above the board for a moment; replay
settles a filmed recording the same way, and a series of views after ``MotionConfig``'s frame
count).

The session owns the game: the tracker reads ``sink.game`` and follows its log, so an answer given
on the page (or a correction, an undo) is seen on the next frame. A new game on the page (a new
game object) restarts the tracker with the same table geometry and what it has learned.
"""

from __future__ import annotations

import logging
import threading
import time

import numpy as np

from meeplecam.engine import IllegalTurn

from .heap import release_freed_memory, steady_heap
from .motion import SETTLE_S
from .observations import Amend, Commit, Drawn, Kept, PlayArea, PlayedOn, Question, Warning
from .tracker import Tracker, TrackerConfig

log = logging.getLogger(__name__)

TRIM_INTERVAL_S = 60.0  # how often freed memory is handed back to the system
END_POLL_S = 0.25  # after a recording's last frame, how often to look whether the game ended


class LiveFeed:
    name = "camera"

    def __init__(
        self,
        sink,
        source,
        rectifier=None,
        config: TrackerConfig | None = None,
        locate=None,
        colours: dict | None = None,
        settle_s: float | None = SETTLE_S,
        reference=None,
    ):
        steady_heap()  # a feed runs for hours
        self.sink = sink
        self.source = source
        self.rectifier = rectifier
        self.config = config or TrackerConfig()
        if settle_s is not None:
            # at camera rate "settled" is a time: a hand can hold a tile still for a moment
            inner = getattr(source, "inner", None)
            fps = float(getattr(source, "fps", 0) or getattr(inner, "fps", 0) or 15)
            self.config.motion.settle_frames = max(2, round(settle_s * fps))
        self.locate = locate
        self.colours = colours
        self.reference = reference  # how this copy's tiles look (vision.model), when known
        self.tracker: Tracker | None = None
        self._latest: np.ndarray | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.frames = 0
        self._spot_told: tuple[int, int] | None = None  # the drawn-tile spot the sink knows
        self._trimmed_at = time.monotonic()
        # the game log last read over and the log it was read over as (taken, it needs no
        # second reading)
        self.read_over: tuple[list, list] = ([], [])

    # --- TurnSource --------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="live-feed", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.source.close()

    def frame(self) -> np.ndarray | None:
        """The newest frame with the tracker's state written on it (for the camera view)."""
        import cv2

        frame = self._latest
        if frame is None:
            return None
        out = frame.copy()
        cv2.putText(out, self.status, (12, 28), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (0, 0, 0), 4)
        cv2.putText(out, self.status, (12, 28), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (255, 255, 255), 1)
        return out

    @property
    def status(self) -> str:
        camera = getattr(self.source, "status", "ok")
        tracker = self.tracker.status if self.tracker else "starting"
        return tracker if camera == "ok" else f"camera: {camera}"

    # --- the loop ------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                frame = self.source.read()
            except Exception as exc:  # an unreadable frame is reported, never fatal
                log.warning("live feed: %s", exc)
                frame = None
            if frame is None:
                if not getattr(self.source, "live", False):
                    self._after_the_recording()  # a file or folder has ended
                    break
                self._stop.wait(0.01)
                continue
            self._latest = frame
            try:
                self.step(frame)
            except Exception:  # one frame's analysis is never worth the rest of the game
                log.exception("live feed: a frame could not be read; going on")

    def _after_the_recording(self) -> None:
        """A recording ends before its game does on the page (the host ends it there): the
        tracker still holds all it saw, so the game is read over when it ends, until the feed
        is stopped. A sink that takes no reading over has nothing to wait for."""
        if getattr(self.sink, "propose_read_over", None) is None:
            return
        while not self._stop.wait(END_POLL_S):
            try:
                self._read_over_if_ended()
            except Exception:
                log.exception("live feed: the game could not be read over")
                return

    def step(self, frame: np.ndarray) -> list:
        """Analyse one frame and push what it shows (callable directly in tests)."""
        lock = getattr(self.sink, "lock", None) or _NoLock()
        with lock:
            game = self.sink.game
            if self.tracker is None or self.tracker.game is not game:
                self.tracker = self._new_tracker(game)
            observations = self.tracker.feed(frame)
            self.frames += 1
            spot = self.config.drawn_spot  # a profile switched to or the demo's next game
            if spot != self._spot_told and hasattr(self.sink, "watch_spot"):
                self.sink.watch_spot(spot)  # the page shows the players where it is
                self._spot_told = spot
        for obs in observations:
            self._push(obs)
        self._read_over_if_ended()
        if time.monotonic() - self._trimmed_at > TRIM_INTERVAL_S:
            self._trimmed_at = time.monotonic()
            release_freed_memory()
        return observations

    def _read_over_if_ended(self) -> None:
        """Once the game has ended (the bag empty, or the host ended it) and the tracker has
        seen its last turn, read it over (:meth:`Tracker.review`, seconds) and put what that
        would correct to the players (``propose_read_over``); once per log. It reads a copy,
        so the page stays live meanwhile; a correction made meanwhile wins."""
        propose = getattr(self.sink, "propose_read_over", None)
        if propose is None or getattr(self.sink, "phase", None) != "finished":
            return  # every frame of a game in play: nothing to lock for
        lock = getattr(self.sink, "lock", None) or _NoLock()
        with lock:
            game, tracker = self.sink.game, self.tracker
            if (
                self.sink.phase != "finished"  # reopened meanwhile
                or tracker is None
                or tracker.game is not game
                or tracker.game_view is None
                or tracker.known_log != len(game.log)
                or game.log in self.read_over
            ):
                return
            # the readings still taken for now are asked about first (vision.live.doubts)
            doubts = tracker.settle_doubts()
            based_on = list(game.log)
            copy = game.replayed(based_on)
            self.read_over = (based_on, based_on)  # once, even if reading it over fails
        for obs in doubts:
            self._push(obs)
        started = time.perf_counter()
        read_over = tracker.review(copy)
        self.read_over = (based_on, read_over)
        log.info("live feed: game read over in %.1f s", time.perf_counter() - started)
        try:
            propose(based_on, read_over)
        except IllegalTurn as exc:
            log.warning("live feed: the game read over is not legal: %s", exc)

    def _new_tracker(self, game) -> Tracker:
        """A tracker for the session's new game (or a record loaded): the table's geometry and
        what was learned of the tiles' look carry over, the latter only to a game of the same
        tile set (another set's art would be read as this one's)."""
        old = self.tracker
        same_tiles = old is not None and old.game.tileset.name == game.tileset.name
        tracker = Tracker(
            game,
            old.rectifier if old and old.rectifier is not None else self.rectifier,
            scorer=old.scorer if same_tiles else None,
            config=self.config,
            locate=self.locate,
            colours=self.colours,
            reference=self.reference,
        )
        return tracker

    def _push(self, obs) -> None:
        started = time.perf_counter()
        try:
            if isinstance(obs, Commit):
                self.sink.commit(obs.turn)
                for_now = getattr(self.sink, "taken_for_now", None)
                if obs.doubts and for_now is not None:  # the page marks it until it is sure
                    for_now(len(self.sink.game.log) - 1, obs.doubts)
            elif isinstance(obs, Question):
                self.sink.ask(obs.turns, obs.crop, obs.text, turn=obs.turn)
            elif isinstance(obs, Warning):
                self.sink.warn(obs.text, obs.image)
            elif isinstance(obs, Amend):  # a follower or figure moved after the tile was read
                self.sink.correct(obs.index, obs.turn)
            elif isinstance(obs, Drawn):  # the tile on the drawn-tile spot, for the hints
                self.sink.drawn(obs.tile)
            elif isinstance(obs, PlayedOn):  # the question stays open, about that turn now
                self.sink.play_on(obs.turn)
            elif isinstance(obs, Kept) and getattr(self.sink, "kept", None) is not None:
                self.sink.kept(obs.index)
            elif isinstance(obs, PlayArea) and getattr(self.sink, "play_area", None) is not None:
                self.sink.play_area(obs.bounds)
        except IllegalTurn as exc:  # the engine decides: a refused reading becomes a warning
            self.sink.warn(
                f"the rules refuse what the camera read: {exc}", getattr(obs, "crop", None)
            )
        except Exception:
            log.exception("live feed: the session refused an observation")
        log.debug(
            "pushed %s in %.1f ms", type(obs).__name__, 1000 * (time.perf_counter() - started)
        )


class _NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


__all__ = ["LiveFeed"]
