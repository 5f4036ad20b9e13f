"""Motion gate: is anything moving over the table, and has it been still long enough to read?

Each frame is shrunk to a small grey image (``width`` pixels wide, area averaging) and compared with
the previous one; a frame is *moving* when more than ``moving_fraction`` of its pixels changed by
more than ``pixel_threshold`` grey levels. The table is *settled* after ``settle_frames`` still
frames in a row. A frame that is almost uniform (a hand or a cap over the lens, a black frame) is
*covered*: it never counts as still.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ..blank import COVERED_MEAN, COVERED_SD, shows_nothing

SETTLE_S = 0.8  # at camera rate, still this long makes the table settled: a hand may hold a
# tile still above the board for a moment
CAMERA_RATE_FPS = 15.0  # from this frame rate on a recording is film; below, a series of views


def settle_frames_at(fps: float, at_least: int = 2) -> int:
    """Still frames in a row that make the table settled at ``fps`` frames a second: ``SETTLE_S``
    of film, or ``at_least`` frames of a recording slower than camera rate (a time lapse or a
    folder of views, where each frame is a moment of its own)."""
    if fps < CAMERA_RATE_FPS:
        return at_least
    return max(at_least, round(SETTLE_S * fps))


class Motion(StrEnum):
    MOVING = "moving"
    STILL = "still"
    COVERED = "covered"


@dataclass
class MotionConfig:
    width: int = 160  # grey thumbnail width in pixels
    pixel_threshold: int = 18  # grey levels a pixel must change by to count
    moving_fraction: float = 0.001  # part of the thumbnail that must change to call it motion
    settle_frames: int = 2  # still frames in a row that make the table settled (live: ~0.3 s)
    covered_std: float = COVERED_SD  # a thumbnail flatter than this (grey level sd) is covered
    covered_dark: float = COVERED_MEAN  # ... or darker than this on average


class MotionGate:
    """Feed frames in order; ``update`` says what this frame shows, ``settled`` whether to read."""

    def __init__(self, config: MotionConfig | None = None):
        self.config = config or MotionConfig()
        self.previous: np.ndarray | None = None
        self.still_run = 0
        self.last = Motion.MOVING
        self.changed_fraction = 0.0

    def reset(self) -> None:
        self.previous = None
        self.still_run = 0

    def thumbnail(self, frame: np.ndarray) -> np.ndarray:
        import cv2

        h, w = frame.shape[:2]
        width = min(self.config.width, w)
        height = max(1, round(h * width / w))
        small = cv2.resize(frame, (width, height), interpolation=cv2.INTER_AREA)
        if small.ndim == 3:
            small = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
        return small

    def update(self, frame: np.ndarray | None) -> Motion:
        """Classify one frame (None = no frame: counts as covered)."""
        import cv2

        cfg = self.config
        if frame is None or frame.size == 0:
            self.reset()
            self.last = Motion.COVERED
            return self.last
        grey = self.thumbnail(frame)
        if shows_nothing(grey, cfg.covered_std, cfg.covered_dark):
            self.reset()
            self.last = Motion.COVERED
            return self.last
        if self.previous is None or self.previous.shape != grey.shape:
            self.previous = grey
            self.still_run = 0
            self.last = Motion.MOVING
            return self.last
        diff = cv2.absdiff(grey, self.previous)
        self.previous = grey
        _, changed = cv2.threshold(diff, cfg.pixel_threshold, 1, cv2.THRESH_BINARY)
        self.changed_fraction = cv2.countNonZero(changed) / changed.size
        if self.changed_fraction > cfg.moving_fraction:
            self.still_run = 0
            self.last = Motion.MOVING
        else:
            self.still_run += 1
            self.last = Motion.STILL
        return self.last

    @property
    def settled(self) -> bool:
        return self.still_run >= self.config.settle_frames


__all__ = ["Motion", "MotionConfig", "MotionGate"]
