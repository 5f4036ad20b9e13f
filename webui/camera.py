"""Camera view: frame sources for ``serve`` and the JPEG/MJPEG encoding of annotated frames.

Capture is separate from analysis (STYLE.md): a :class:`CaptureSource` thread only keeps the
latest frame of a webcam, video file or folder of frames. Until the vision tracker lands, nothing
analyses those frames here; the page shows them and turns are entered by hand.

The demo's camera picture is one function, :func:`demo_frame`: a placeholder drawn with cv2 from the
engine state, to be replaced by the synthetic renderer of ``meeplecam.vision.synth``.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import cv2
import numpy as np

from . import tileart
from .colours import css_colour

TILE_PX = 72
_BGR_CACHE: dict[str, tuple[int, int, int]] = {}


def _bgr(hex_colour: str) -> tuple[int, int, int]:
    cached = _BGR_CACHE.get(hex_colour)
    if cached is None:
        h = hex_colour.lstrip("#")[:6]
        cached = _BGR_CACHE[hex_colour] = (int(h[4:6], 16), int(h[2:4], 16), int(h[0:2], 16))
    return cached


def draw_tile(image: np.ndarray, orientation, x0: int, y0: int, size: int) -> None:
    """Draw one tile's procedural art into ``image`` with its north-west corner at (x0, y0)."""
    cv2.rectangle(image, (x0, y0), (x0 + size - 1, y0 + size - 1), _bgr(tileart.FIELD), -1)

    def px(points):
        return np.array([[x0 + p[0] * size, y0 + p[1] * size] for p in points], np.int32)

    for shape in tileart.shapes(orientation):
        if shape[0] == "poly":
            cv2.fillPoly(image, [px(shape[1])], _bgr(shape[2]), cv2.LINE_AA)
        elif shape[0] == "road":
            pts = px(shape[1])
            cv2.polylines(image, [pts], False, _bgr(tileart.ROAD_EDGE), max(2, size // 8))
            cv2.polylines(image, [pts], False, _bgr(shape[2]), max(1, size // 12))
        elif shape[0] == "cloister":
            cv2.fillPoly(image, [px(shape[1])], _bgr(tileart.CLOISTER))
    cv2.rectangle(image, (x0, y0), (x0 + size - 1, y0 + size - 1), (40, 40, 40), 1)


def tile_crop(tile, rotation: int, size: int = 160) -> np.ndarray:
    """What the camera saw of one tile (the demo's stand-in: a slightly noisy drawing)."""
    image = np.full((size, size, 3), 60, np.uint8)
    draw_tile(image, tile.oriented(rotation), 8, 8, size - 16)
    noise = np.random.default_rng(size).normal(0, 6, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8)


def demo_frame(session, width: int = 640, height: int = 480) -> np.ndarray:
    """The demo's camera picture: the board seen from above, annotated with the last reading.

    The seam for ``meeplecam.vision.synth``: when its demo source exists, return its ``read()``
    (a rendered, annotated BGR frame) from here instead.
    """
    image = np.full((height, width, 3), (52, 70, 92), np.uint8)  # a wooden table
    with session.lock:
        game = session.game
        tiles = list(game.board.tiles.items())
        followers = [
            (f.cell, game.board.tiles[f.cell].orientation, f.segment, game.players[f.player].colour)
            for f in game.board.followers()
        ]
        last = game.last_placed
        drawn = session.drawn_tile
        notices = [n.text for n in list(session.notices)[-2:]]
    if tiles:
        xs = [c[0] for c, _ in tiles]
        ys = [c[1] for c, _ in tiles]
        span = max(max(xs) - min(xs) + 1, max(ys) - min(ys) + 1, 5)
        size = max(8, min(TILE_PX, (min(width, height) - 60) // span))
        ox = width // 2 - (min(xs) + max(xs) + 1) * size // 2
        oy = height // 2 - (min(ys) + max(ys) + 1) * size // 2 + 10
        for (x, y), placed in tiles:
            draw_tile(image, placed.orientation, ox + x * size, oy + y * size, size)
        for (x, y), orientation, segment, colour in followers:
            px, py = tileart.segment_point(orientation, segment)
            centre = (int(ox + (x + px) * size), int(oy + (y + py) * size))
            cv2.circle(image, centre, max(3, size // 7), _bgr(css_colour(colour)), -1, cv2.LINE_AA)
            cv2.circle(image, centre, max(3, size // 7), (0, 0, 0), 1, cv2.LINE_AA)
        if last is not None:
            p0 = (ox + last[0] * size, oy + last[1] * size)
            cv2.rectangle(image, p0, (p0[0] + size, p0[1] + size), (0, 235, 255), 3)
    cv2.rectangle(image, (0, 0), (width, 30), (20, 20, 20), -1)
    cv2.putText(image, "DEMO camera (placeholder)", (8, 21), cv2.FONT_HERSHEY_SIMPLEX, 0.6,
                (255, 255, 255), 1, cv2.LINE_AA)  # fmt: skip
    lines = ([f"in hand: {drawn}"] if drawn else []) + notices
    for i, text in enumerate(lines[-3:]):
        y = height - 12 - 22 * i
        cv2.putText(image, text[:70], (8, y), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1,
                    cv2.LINE_AA)  # fmt: skip
    return image


def jpeg(image: np.ndarray, quality: int = 80) -> bytes:
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("cannot encode the frame as JPEG")
    return buffer.tobytes()


def no_signal(width: int = 640, height: int = 480) -> np.ndarray:
    image = np.full((height, width, 3), 30, np.uint8)
    cv2.putText(image, "no camera frame yet", (20, height // 2), cv2.FONT_HERSHEY_SIMPLEX, 1.0,
                (200, 200, 200), 2, cv2.LINE_AA)  # fmt: skip
    return image


class CaptureSource:
    """Keeps the latest frame of a webcam index, a video file or a folder of frames (a thread)."""

    def __init__(self, kind: str, target, fps: float = 10.0):
        self.name = f"{kind} {target}"
        self.kind = kind
        self.target = target
        self.fps = fps
        self.latest: np.ndarray | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._capture = None
        self._files: list[Path] = []
        if kind == "frames":
            folder = Path(target)
            self._files = sorted(
                (p for p in folder.iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png")),
                key=_natural,
            )
            if not self._files:
                raise OSError(f"no .jpg or .png frames in {folder}")
        else:
            _quiet_opencv()
            self._capture = cv2.VideoCapture(target)
            if not self._capture.isOpened():
                raise OSError(f"cannot open {kind} {target}")

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="capture", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._capture is not None:
            self._capture.release()

    def frame(self) -> np.ndarray | None:
        return self.latest

    def _run(self) -> None:
        index = 0
        while not self._stop.is_set():
            if self._files:
                self.latest = cv2.imread(str(self._files[index % len(self._files)]))
                index += 1
            else:
                ok, image = self._capture.read()
                if not ok and self.kind == "video":
                    self._capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
                    continue
                if ok:
                    self.latest = image
            time.sleep(1.0 / self.fps)


def _natural(path: Path):
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", path.name)]


def find_camera(max_index: int = 3) -> tuple[int | None, list[str]]:
    """The first webcam index that gives a frame, and what was tried (quietly: OpenCV's own
    warnings about missing devices are silenced)."""
    import os

    _quiet_opencv()
    tried = []
    for index in range(max_index):
        device = f"/dev/video{index}"
        if os.name == "posix" and Path("/dev").is_dir() and not Path(device).exists():
            tried.append(f"camera {index} ({device}): no such device")
            continue
        capture = cv2.VideoCapture(index)
        ok = capture.isOpened() and capture.read()[0]
        capture.release()
        tried.append(f"camera {index} ({device}): {'ok' if ok else 'no picture'}")
        if ok:
            return index, tried
    return None, tried


def _quiet_opencv() -> None:
    logging = getattr(getattr(cv2, "utils", None), "logging", None)
    if logging is not None:  # some OpenCV builds lack the logging utilities
        logging.setLogLevel(logging.LOG_LEVEL_SILENT)
