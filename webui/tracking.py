"""The vision tracker as a turn source: frames in, observations into the session.

Capture stays separate from analysis: a frame source (``meeplecam.vision.live.sources``) only
delivers frames; this thread feeds each to the tracker and hands what it reports to the session:
``Commit`` -> ``session.commit``, ``Question`` -> ``session.ask``, ``Warning`` -> ``session.warn``.
The tracker reads the session's game (under the session lock) and follows corrections and undos
on its own; a new game (setup, upload) gets a fresh tracker.
"""

from __future__ import annotations

import threading
import time

from meeplecam.engine import IllegalTurn


class TrackerFeed:
    """Runs ``meeplecam.vision.live.tracker.Tracker`` over ``frames`` (an object with ``read()``)."""

    def __init__(self, session, frames, rectifier=None, config=None, fps: float = 15.0):
        from meeplecam.vision.live.rectify import from_detection

        self.session = session
        self.frames = frames
        self.rectifier = rectifier
        self.config = config
        self.locate = from_detection
        self.fps = fps
        self.name = getattr(frames, "name", "camera")
        self.tracker = None
        self.latest = None
        self.status = "starting"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="tracker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        close = getattr(self.frames, "close", None)
        if close is not None:
            close()

    def frame(self):
        return self.latest

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                if not self.step():
                    time.sleep(0.05)
            except Exception as exc:  # the camera loop must not die: log on the page, go on
                self.session.warn(f"tracker: {type(exc).__name__}: {exc}")
                time.sleep(0.5)
            rest = 1.0 / self.fps - (time.monotonic() - started)
            if rest > 0:
                time.sleep(rest)

    def step(self) -> bool:
        """Read one frame and hand its observations to the session; False when there was none."""
        from meeplecam.vision.live.observations import Commit, Question, Warning
        from meeplecam.vision.live.tracker import Tracker

        frame = self.frames.read()
        if frame is None:
            return False
        with self.session.lock:
            game = self.session.game
            if self.tracker is None or self.tracker.game is not game:
                self.tracker = Tracker(game, self.rectifier, config=self.config, locate=self.locate)
            observations = self.tracker.feed(frame)
            self.status = self.tracker.status
        self.latest = _annotate(frame, self.status)
        for obs in observations:
            if isinstance(obs, Commit):
                try:
                    self.session.commit(obs.turn)
                except (IllegalTurn, ValueError) as exc:
                    self.session.warn(f"the engine refused {obs.turn.describe()}: {exc}", obs.crop)
            elif isinstance(obs, Question):
                self.session.ask(obs.turns, obs.crop, obs.text)
            elif isinstance(obs, Warning):
                self.session.warn(obs.text, obs.image)
        return True


def _annotate(frame, status: str):
    """The frame with the tracker's status written on it (the camera view shows it)."""
    import cv2

    image = frame.copy()
    height = max(24, image.shape[0] // 24)
    cv2.rectangle(image, (0, 0), (image.shape[1], height + 8), (20, 20, 20), -1)
    cv2.putText(image, status[:80], (8, height), cv2.FONT_HERSHEY_SIMPLEX, height / 32,
                (255, 255, 255), max(1, height // 20), cv2.LINE_AA)  # fmt: skip
    return image


def open_tracker_feed(session, kind: str, target, profile: str | None = None):
    """A TrackerFeed over a camera index, video file or folder of frames, with the table geometry
    from a profile when one is given (else found on the first settled frame). Raises ImportError
    while the vision layer is not installed."""
    import json
    from pathlib import Path

    from meeplecam.vision.live.rectify import from_truth
    from meeplecam.vision.live.sources import open_source
    from meeplecam.vision.live.tracker import TrackerConfig

    config = TrackerConfig()
    rectifier = None
    if profile:
        data = json.loads(Path(profile).read_text("utf-8"))
        rectifier = from_truth(data.get("live", data), config.cell_px)
    frames = open_source(int(target) if kind == "camera" else str(target))
    return TrackerFeed(session, frames, rectifier, config)
