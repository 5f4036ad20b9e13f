"""Frame sources behind one interface: ``read() -> frame or None``, ``close()``, iteration.

Capture is separate from analysis (STYLE.md): a source only delivers BGR frames.

- :class:`CameraSource`: a webcam (index or device path), MJPG at a chosen resolution; a reader
  thread keeps only the newest frame (a one-frame buffer), so analysis never works on stale
  frames. A camera that stops delivering is reopened with exponential backoff; ``status`` says
  what is going on (for the page), and nothing raises.
- :class:`VideoSource`: a video file, frame by frame.
- :class:`FolderSource`: a folder of images in natural name order (``f9`` before ``f10``).
- :class:`SyntheticSource`: the synthetic demo game of ``meeplecam.vision.synth`` (imported lazily).

``open_source(spec)`` picks one from a string: a number or ``/dev/video*`` is a camera, a folder
is a folder, ``synth`` / ``synth:SEED`` the demo, anything else a video file.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from meeplecam.vision.errors import ImageUnreadable

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}


class SourceError(ImageUnreadable):
    """A source that cannot be opened at all (missing file, not a video, empty folder)."""


def natural_key(name: str) -> list:
    """Sort key that orders ``f9`` before ``f10``."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)]


class FrameSource:
    """Base class: ``read()`` returns the next BGR frame or None (none now / the end)."""

    name = "source"
    live = False  # a live source may return None now and a frame later

    def read(self) -> np.ndarray | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:
        pass

    @property
    def status(self) -> str:
        return "ok"

    def __iter__(self) -> Iterator[np.ndarray]:
        while True:
            frame = self.read()
            if frame is None:
                if self.live and not getattr(self, "closed", False):
                    time.sleep(0.005)
                    continue
                return
            yield frame

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class FolderSource(FrameSource):
    """Images of a folder in natural name order; an unreadable image raises ImageUnreadable."""

    def __init__(self, folder: str | Path):
        import cv2

        self.folder = Path(folder)
        self.name = f"folder {self.folder}"
        if not self.folder.is_dir():
            raise SourceError(f"{self.folder}: no such folder")
        self.paths = sorted(
            (p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES),
            key=lambda p: natural_key(p.name),
        )
        if not self.paths:
            raise SourceError(f"{self.folder}: no images (.png, .jpg, ...) in this folder")
        self._imread = cv2.imread
        self.index = 0
        self.current: Path | None = None

    def read(self) -> np.ndarray | None:
        if self.index >= len(self.paths):
            return None
        path = self.paths[self.index]
        self.index += 1
        self.current = path
        frame = self._imread(str(path), 1)
        if frame is None:
            raise ImageUnreadable(f"{path}: not an image OpenCV can read (broken or wrong format)")
        return frame

    def __len__(self) -> int:
        return len(self.paths)


class VideoSource(FrameSource):
    """A video file, read frame by frame."""

    def __init__(self, path: str | Path):
        import cv2

        self.path = Path(path)
        self.name = f"video {self.path}"
        if not self.path.is_file():
            raise SourceError(f"{self.path}: no such file")
        self.capture = cv2.VideoCapture(str(self.path))
        ok, first = self.capture.read() if self.capture.isOpened() else (False, None)
        if not ok or first is None:
            self.capture.release()
            raise SourceError(f"{self.path}: not a video OpenCV can read (no frame decoded)")
        self._first: np.ndarray | None = first
        self.fps = self.capture.get(cv2.CAP_PROP_FPS) or 0.0

    def read(self) -> np.ndarray | None:
        if self._first is not None:
            frame, self._first = self._first, None
            return frame
        ok, frame = self.capture.read()
        return frame if ok else None

    def close(self) -> None:
        self.capture.release()


@dataclass
class CameraConfig:
    # asked of the camera, which gives what it can: at 1280x720 a whole table puts a tile at
    # about 27 px, where pennants are a smudge; at 1920x1080 (about 40 px) the same 20 synthetic
    # games read 82 % of turns right instead of 71 % (docs/numbers.md)
    width: int = 1920
    height: int = 1080
    fps: int = 30
    mjpg: bool = True
    stall_s: float = 2.0  # no frame for this long: the camera is reopened
    backoff_s: float = 0.5  # first wait before reopening; doubles up to backoff_max_s
    backoff_max_s: float = 30.0


class CameraSource(FrameSource):
    """A webcam read by a thread that keeps the newest frame only.

    ``read()`` returns the newest frame not yet returned, or None when there is none (yet).
    ``opener`` (for tests) replaces ``cv2.VideoCapture``: it takes the device and returns an
    object with ``isOpened() read() release() set()``.
    """

    live = True

    def __init__(
        self,
        device: int | str = 0,
        config: CameraConfig | None = None,
        opener: Callable | None = None,
        on_status: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] | None = None,
    ):
        self.device = int(device) if isinstance(device, str) and device.isdigit() else device
        self.name = f"camera {self.device}"
        self.config = config or CameraConfig()
        self.opener = opener
        self.on_status = on_status
        self.clock = clock
        self._stop = threading.Event()
        self._sleep = sleep or self._stop.wait
        self._lock = threading.Lock()
        self._frame: np.ndarray | None = None
        self._fresh = False
        self._status = "starting"
        self.reopens = 0
        self.frames = 0
        self.closed = False
        self._capture = None
        self._thread = threading.Thread(target=self._run, name=f"camera-{device}", daemon=True)
        self._thread.start()

    # --- the reader thread ----------------------------------------------------------------
    def _open(self):
        if self.opener is not None:
            return self.opener(self.device)
        import cv2

        capture = cv2.VideoCapture(self.device)
        if capture.isOpened():
            cfg = self.config
            if cfg.mjpg:
                capture.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*"MJPG"))
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, cfg.width)
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, cfg.height)
            capture.set(cv2.CAP_PROP_FPS, cfg.fps)
            capture.set(cv2.CAP_PROP_BUFFERSIZE, 1)
        return capture

    def _set_status(self, text: str) -> None:
        if text != self._status:
            self._status = text
            (log.info if text == "ok" else log.warning)("%s: %s", self.name, text)
            if self.on_status is not None:
                try:
                    self.on_status(text)
                except Exception:  # the UI's callback must not stop the camera
                    log.exception("camera status callback failed")

    def _run(self) -> None:
        cfg = self.config
        backoff = cfg.backoff_s
        while not self._stop.is_set():
            try:
                capture = self._open()
            except Exception as exc:  # a driver error is reported, then retried
                capture = None
                self._set_status(f"cannot open: {exc}")
            if capture is None or not capture.isOpened():
                if capture is not None:
                    capture.release()
                self._set_status(f"not available; retrying in {backoff:.1f} s")
                self._sleep(backoff)
                backoff = min(backoff * 2, cfg.backoff_max_s)
                self.reopens += 1
                continue
            self._capture = capture
            last_frame = self.clock()
            while not self._stop.is_set():
                try:
                    ok, frame = capture.read()
                except Exception:
                    ok, frame = False, None
                if ok and frame is not None:
                    with self._lock:
                        self._frame, self._fresh = frame, True
                    self.frames += 1
                    last_frame = self.clock()
                    backoff = cfg.backoff_s
                    self._set_status("ok")
                elif self.clock() - last_frame > cfg.stall_s:
                    self._set_status(f"stopped delivering frames; reopening in {backoff:.1f} s")
                    break
                else:
                    self._sleep(0.01)
            capture.release()
            self._capture = None
            if self._stop.is_set():
                break
            self._sleep(backoff)
            backoff = min(backoff * 2, cfg.backoff_max_s)
            self.reopens += 1

    # --- the consumer's side -----------------------------------------------------------------
    def read(self) -> np.ndarray | None:
        with self._lock:
            if not self._fresh:
                return None
            self._fresh = False
            return self._frame

    def latest(self) -> np.ndarray | None:
        """The newest frame, even if it was returned before (for the camera view)."""
        with self._lock:
            return self._frame

    @property
    def status(self) -> str:
        return self._status

    def close(self) -> None:
        self.closed = True
        self._stop.set()
        self._thread.join(timeout=5)


class SyntheticSource(FrameSource):
    """Adapter for the synthetic demo table (``meeplecam.vision.synth.demo.SyntheticTable``),
    imported lazily. ``rectifier()`` gives the exact table geometry of the game now shown (the
    demo's stand-in for a calibration profile)."""

    def __init__(self, seed: int = 1, **kwargs):
        try:
            from meeplecam.vision.synth import demo
        except ImportError as exc:
            raise SourceError(
                "the synthetic demo source (meeplecam.vision.synth.demo) is not available"
            ) from exc
        factory = getattr(demo, "SyntheticTable", None)
        if factory is None:
            raise SourceError("meeplecam.vision.synth.demo offers no SyntheticTable")
        self.name = f"synthetic table {seed}"
        self.inner = factory(seed=seed, **kwargs)

    def read(self) -> np.ndarray | None:
        return self.inner.read()

    def rectifier(self, cell_px: int = 48):
        from .rectify import CameraRectifier, fit_grid_to_mm

        scene = self.inner.scene
        tiles = [
            {"x": c[0], "y": c[1], "corners_mm": np.asarray(scene.tile_corners_mm(c)).tolist()}
            for c in scene.poses
        ]
        rectifier = CameraRectifier(
            fit_grid_to_mm(tiles), scene.camera.to_dict(), cell_px, tuple(scene.size)
        )
        # the calibration this stands in for knows the table's edge too
        rectifier.table_edge = scene.camera.project(scene.table_corners_mm())
        return rectifier

    def close(self) -> None:
        release = getattr(self.inner, "release", None)
        if release is not None:
            release()


class ListSource(FrameSource):
    """Frames from a list (tests, benchmarks)."""

    def __init__(self, frames, name: str = "frames"):
        self.frames = list(frames)
        self.name = name
        self.index = 0

    def read(self) -> np.ndarray | None:
        if self.index >= len(self.frames):
            return None
        self.index += 1
        return self.frames[self.index - 1]


def open_source(spec: str | int, **kwargs) -> FrameSource:
    """A source from a command-line string (see the module docstring)."""
    if isinstance(spec, int) or (isinstance(spec, str) and spec.isdigit()):
        return CameraSource(int(spec), **kwargs)
    text = str(spec)
    if text.startswith("/dev/video"):
        return CameraSource(text, **kwargs)
    if text == "synth" or text.startswith("synth:"):
        seed = int(text.split(":", 1)[1]) if ":" in text else 1
        return SyntheticSource(seed, **kwargs)
    path = Path(text)
    if path.is_dir():
        return FolderSource(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    if path.suffix.lower() in IMAGE_SUFFIXES:
        raise SourceError(f"{path}: a single image is not a game; give the folder of frames")
    return VideoSource(path)


__all__ = [
    "CameraConfig",
    "CameraSource",
    "FolderSource",
    "FrameSource",
    "ListSource",
    "SourceError",
    "SyntheticSource",
    "VideoSource",
    "natural_key",
    "open_source",
]
