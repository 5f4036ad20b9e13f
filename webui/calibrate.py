"""The calibration page: the wizard of ``meeplecam.calibration`` run on the live camera's frame.

The host opens ``/calibrate``; the page takes the turn source's latest frame, runs
:func:`meeplecam.calibration.wizard.run` and shows its preview (the table outline, the tile grid,
the followers with their names), its step lines and its warnings. The host may run it again on the
same picture with four tapped corners, tapped follower positions or the colours' names, take a new
picture, and save: the profile is written atomically where ``serve`` keeps it and, when the turn
source is the live tracker, used from then on.

A :class:`Desk` keeps the one calibration in progress (its picture, options and result) between
requests; everything that changes it is a POST, so the app's host-token and CSRF guard covers it.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .forms import BadInput

log = logging.getLogger(__name__)

PROFILE_NAME = "meeplecam-profile.json"
MAX_TAPS = 8
STALE_S = 600.0  # a picture older than this is taken again when the page is opened


class NoPicture(Exception):
    """The turn source has no frame to calibrate on (409 with the message)."""


class CalibrationFailed(Exception):
    """The wizard could not finish on this picture; the message says what to do (422)."""


class Busy(Exception):
    """Another calibration request is being worked on (409)."""


def profile_path(given: str | Path | None, record_path: str | Path | None) -> Path:
    """Where a calibration is saved: the ``--profile`` given to ``serve``, else
    ``meeplecam-profile.json`` beside the ``--record`` file, else in the working directory."""
    if given:
        return Path(given)
    if record_path:
        return Path(record_path).with_name(PROFILE_NAME)
    return Path.cwd() / PROFILE_NAME


@dataclass
class Run:
    """One calibration of one picture."""

    number: int
    frame: np.ndarray
    taken_at: float
    options: Any  # wizard.Options
    result: Any = None  # wizard.Result
    preview_jpeg: bytes = b""
    error: str | None = None
    saved: dict | None = None  # {"path", "at", "applied"}

    @property
    def size(self) -> tuple[int, int]:
        return self.frame.shape[1], self.frame.shape[0]


@dataclass
class Desk:
    """The calibration in progress (one per app: there is one table)."""

    source: Any
    target: Path
    current: Run | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _count: int = 0

    # --- taking a picture and running the wizard ---------------------------------------------
    def picture(self) -> np.ndarray:
        """A copy of the turn source's latest frame (BGR), or NoPicture saying why not."""
        if self.source is None:
            raise NoPicture(
                "this game has no camera: start meeplecam serve with a webcam (--camera N), a "
                "video (--video FILE), frames (--frames DIR) or the demo table (--demo)"
            )
        try:
            frame = self.source.frame()
        except Exception as exc:  # a broken source is reported, never a traceback
            log.exception("calibration: the camera source failed")
            raise NoPicture(f"the camera gave no picture: {exc}") from None
        if frame is None:
            raise NoPicture(
                "the camera has not delivered a picture yet: check that it is connected and "
                "sees the table, then try again in a moment"
            )
        frame = np.asarray(frame)
        if frame.ndim == 2:
            import cv2

            frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
        if frame.ndim != 3 or frame.shape[2] != 3 or min(frame.shape[:2]) < 32:
            raise NoPicture(f"the camera's picture is not a colour image ({frame.shape})")
        return np.ascontiguousarray(frame[:, :, :3]).copy()

    def run(self, options=None, fresh: bool = False, keep: bool = False, names=None) -> Run:
        """Run the wizard: on a new picture (``fresh``, or when there is none yet), else on the
        current one; ``keep`` starts from the current run's options (to rename its colours)."""
        from meeplecam.calibration import wizard

        if not self._lock.acquire(blocking=False):
            raise Busy("a calibration is already running: wait a moment and reload the page")
        try:
            current = self.current
            if fresh or current is None:
                frame, taken = self.picture(), time.time()
            else:
                frame, taken = current.frame, current.taken_at
            if keep and current is not None:
                options = replace(current.options)
            options = options or wizard.Options()
            if names is not None:
                options.colour_names = list(names)
            self._count += 1
            run = Run(self._count, frame, taken, options)
            from .camera import jpeg

            try:
                run.result = wizard.run(frame, options, say=lambda _line: None)
            except Exception as exc:
                run.error = _failure(exc)
                run.preview_jpeg = jpeg(frame, 85)  # the picture, to tap the corners on
            else:
                run.preview_jpeg = jpeg(run.result.preview, 85)
            self.current = run
            if run.error:
                raise CalibrationFailed(run.error)
            return run
        finally:
            self._lock.release()

    def stale(self) -> bool:
        run = self.current
        return run is None or (run.saved is None and time.time() - run.taken_at > STALE_S)

    # --- saving -------------------------------------------------------------------------------
    def save(self, number: int | None, force: bool) -> dict:
        """Write the current run's profile atomically to :attr:`target` and hand it to the live
        tracker; a run with warnings is saved only with ``force``."""
        from meeplecam.vision.profile import load

        with self._lock:
            run = self.current
            if run is None or run.result is None:
                raise CalibrationFailed("there is no calibration to save: run it first")
            if number is not None and number != run.number:
                raise Busy(
                    "the calibration changed since this page was shown (another phone ran it): "
                    "check the new preview, then save"
                )
            warnings = run.result.warnings
            if warnings and not force:
                raise CalibrationFailed(
                    f"not saved: {len(warnings)} warning(s): {' '.join(warnings)} Fix them and run "
                    "again, or tick 'save despite the warnings'"
                )
            try:
                path = run.result.profile.save(self.target)
                load(path)  # what serve, scan and replay will read
            except OSError as exc:
                raise CalibrationFailed(
                    f"cannot write the profile to {self.target}: {exc.strerror or exc}"
                ) from None
            except ValueError as exc:
                raise CalibrationFailed(f"the profile written is not readable: {exc}") from None
            applied = use_in_live_feed(self.source, path)
            run.saved = {"path": str(path), "at": time.time(), "applied": applied}
            return run.saved


def use_in_live_feed(source, path: Path) -> str:
    """Give a saved profile's geometry and follower colours to the live tracker, when the turn
    source is one; a sentence for the page says what happened."""
    from .tracking import use_profile

    try:
        return use_profile(source, path)
    except Exception as exc:
        log.exception("calibration: the live feed refused the profile")
        return f"the live tracker could not use it ({exc}): restart serve with --profile {path}"


def _failure(exc: Exception) -> str:
    """A message for the page (never a traceback) from an exception of the wizard."""
    import cv2

    if isinstance(exc, ValueError):  # CalibrationError, VisionError, ProfileError
        return f"calibration failed: {exc}"
    if isinstance(exc, cv2.error):
        log.warning("calibration: OpenCV failed: %s", exc)
        return (
            "calibration failed: OpenCV could not process this picture; check that the whole table "
            "is in view and try again, or give the four corners"
        )
    log.exception("calibration: the wizard failed")
    return f"calibration failed unexpectedly ({type(exc).__name__}): try a new picture"


# --- reading the page's input --------------------------------------------------------------------
def _numbers(value, name: str) -> list[float]:
    if isinstance(value, str):
        tokens = [t for t in re.split(r"[\s,;()\[\]]+", value) if t]
        nums = []
        for t in tokens:
            try:
                nums.append(float(t))
            except ValueError:
                raise BadInput(f"'{name}': {t!r} is not a number (give 'x,y x,y ...')") from None
        return nums
    if isinstance(value, Sequence):
        nums = []
        for item in value:
            pair = item if isinstance(item, Sequence) and not isinstance(item, str) else None
            if pair is None or len(pair) != 2:
                raise BadInput(f"'{name}' must be a list of [x, y] pairs")
            for v in pair:
                if isinstance(v, bool) or not isinstance(v, int | float):
                    raise BadInput(f"'{name}': {v!r} is not a number")
                nums.append(float(v))
        return nums
    raise BadInput(f"'{name}' must be 'x,y x,y ...' or a list of [x, y] pairs")


def points(value, name: str, size: tuple[int, int]) -> list[tuple[float, float]] | None:
    """Positions in image pixels from ``"x,y x,y ..."`` or ``[[x, y], ...]``; None when empty.
    Each must be a finite number inside the picture."""
    if value is None or (isinstance(value, str) and not value.strip()) or value == []:
        return None
    nums = _numbers(value, name)
    if len(nums) % 2:
        raise BadInput(f"'{name}' needs x,y pairs: {len(nums)} numbers is an odd count")
    w, h = size
    pts = list(zip(nums[::2], nums[1::2], strict=True))
    for i, (x, y) in enumerate(pts, start=1):
        if not (math.isfinite(x) and math.isfinite(y)):
            raise BadInput(f"'{name}': point {i} is not a finite number")
        if not (0 <= x <= w and 0 <= y <= h):
            raise BadInput(
                f"'{name}': point {i} ({x:g}, {y:g}) lies outside the {w}x{h} picture "
                "(positions are in the picture's pixels)"
            )
    return pts


def corners(value, size: tuple[int, int]) -> np.ndarray | None:
    """Four table corners (pixels), ordered clockwise from the top-left; BadInput unless they are
    four points inside the picture that enclose a real area."""
    import cv2

    from meeplecam.vision.table import order_corners

    pts = points(value, "corners", size)
    if pts is None:
        return None
    if len(pts) != 4:
        raise BadInput(f"give exactly four table corners (x,y pairs), not {len(pts)}")
    quad = order_corners(np.asarray(pts, float))
    w, h = size
    area = abs(cv2.contourArea(quad.astype(np.float32)))
    if area < 0.01 * w * h or not cv2.isContourConvex(np.round(quad).astype(np.int32)):
        raise BadInput(
            "the four corners do not outline a table: tap them in order around the table's edge"
        )
    return quad


def taps(value, size: tuple[int, int]) -> list[tuple[float, float]] | None:
    pts = points(value, "taps", size)
    if pts is not None and len(pts) > MAX_TAPS:
        raise BadInput(f"tap at most {MAX_TAPS} followers, one of each colour")
    return pts


def colour_names(value) -> list[str] | None:
    """Names of the follower colours, left to right (lower case, distinct)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise BadInput("'colours' must be names separated by commas, or a list of names")
    names = [v.strip().lower() for v in value]
    if not any(names):
        return None
    for n in names:
        if not re.fullmatch(r"[a-z][a-z0-9 _-]{0,19}", n):
            raise BadInput(
                f"colour name {n!r}: give a word of at most 20 letters (red, yellow, green, blue, "
                "black, or your own)"
            )
    if len(set(names)) != len(names):
        raise BadInput("give every follower colour a different name")
    return names


def flag(value) -> bool:
    if isinstance(value, bool):
        return value
    return str(value or "").strip().lower() in ("1", "on", "true", "yes")


def options_from(data: Mapping, size: tuple[int, int]):
    """wizard.Options from the page's fields ``corners``, ``taps``, ``skip_followers`` and
    ``markers`` (the printed corner markers lie in the table's corners)."""
    from meeplecam.calibration import wizard

    options = wizard.Options()
    options.markers = flag(data.get("markers"))
    options.corners = corners(data.get("corners"), size)
    options.taps = taps(data.get("taps"), size)
    options.followers = not flag(data.get("skip_followers"))
    return options


def describe(run: Run | None) -> dict:
    """What the page and the JSON answers show of a run."""
    if run is None:
        return {}
    out: dict = {
        "run": run.number,
        "width": run.size[0],
        "height": run.size[1],
        "taken_at": time.strftime("%H:%M:%S", time.localtime(run.taken_at)),
        "error": run.error,
        "saved": run.saved,
        "given_corners": _pairs(run.options.corners),
        "given_taps": _pairs(run.options.taps),
        "skip_followers": not run.options.followers,
        "markers": run.options.markers,
    }
    result = run.result
    if result is None:
        return out
    profile = result.profile
    w, h = run.size
    followers = []
    if profile.followers is not None:
        for (x, y, _r), colour in zip(result.followers_px, profile.followers.colours, strict=False):
            followers.append(
                {
                    "name": colour.name,
                    "x": round(float(x)),
                    "y": round(float(y)),
                    "seen": _hex(colour.lab),
                }
            )
    out.update(
        {
            "clean": result.ok,
            "lines": [_for_page(line) for line in result.lines if not line.startswith("WARNING: ")],
            "warnings": [_for_page(line) for line in result.warnings],
            "corners": _pairs(profile.table.pixels(w, h)) if profile.table else None,
            "outline": profile.table.source if profile.table else None,
            "tile_px": round(profile.scale.tile_px, 1) if profile.scale else None,
            "followers": followers,
            "names_given": bool(run.options.colour_names),
        }
    )
    return out


# The wizard's lines name the CLI's options; on the page the same is done by tapping.
_PAGE_WORDS = (
    ("(names guessed: set them with --colours)", "(names guessed: set them below)"),
    (
        "give the corners (--corners / --click) or use the corner markers (--markers)",
        "tap the four corners on the picture, or lay the corner markers and tick them below",
    ),
    ("give their positions with --followers 'x,y x,y ...'", "tap them on the picture"),
    ("(optional: --charuco", "(optional, with meeplecam calibrate --charuco"),
    ("(optional: --scans", "(optional, with meeplecam calibrate --scans"),
)


def _for_page(line: str) -> str:
    for cli, page in _PAGE_WORDS:
        line = line.replace(cli, page)
    return line


def _hex(lab) -> str:
    """The CSS colour of a follower as the camera saw it (its mean Lab)."""
    import cv2

    pixel = np.uint8([[np.clip(np.asarray(lab, float)[:3], 0, 255)]])
    b, g, r = (int(v) for v in cv2.cvtColor(pixel, cv2.COLOR_Lab2BGR)[0, 0])
    return f"#{r:02x}{g:02x}{b:02x}"


def _pairs(pts) -> list[list[int]] | None:
    if pts is None:
        return None
    return [[round(float(x)), round(float(y))] for x, y in np.asarray(pts, float).reshape(-1, 2)]


def pairs_text(pts) -> str:
    return " ".join(f"{x},{y}" for x, y in pts or [])


__all__ = [
    "Busy",
    "CalibrationFailed",
    "Desk",
    "NoPicture",
    "describe",
    "options_from",
    "profile_path",
]
