import threading
import time

import cv2
import numpy as np
import pytest

from meeplecam.vision.errors import ImageUnreadable
from meeplecam.vision.live.sources import (
    CameraConfig,
    CameraSource,
    FolderSource,
    ListSource,
    SourceError,
    VideoSource,
    natural_key,
    open_source,
)


def test_natural_order():
    names = ["f10.png", "f9.png", "f1.png", "F2.png"]
    assert sorted(names, key=natural_key) == ["f1.png", "F2.png", "f9.png", "f10.png"]


def test_folder_in_natural_order(tmp_path):
    for i in (10, 9, 1):
        cv2.imwrite(str(tmp_path / f"f{i}.png"), np.full((8, 8, 3), i, np.uint8))
    (tmp_path / "notes.txt").write_text("not a frame")
    source = open_source(str(tmp_path))
    assert isinstance(source, FolderSource)
    assert [int(f[0, 0, 0]) for f in source] == [1, 9, 10]


def test_unreadable_image_names_the_file(tmp_path):
    (tmp_path / "f1.png").write_bytes(b"this is no png")
    source = FolderSource(tmp_path)
    with pytest.raises(ImageUnreadable, match=r"f1\.png: not an image"):
        source.read()


def test_bad_sources(tmp_path):
    with pytest.raises(SourceError, match="no such file or folder"):
        open_source(str(tmp_path / "missing.mp4"))
    with pytest.raises(SourceError, match="no images"):
        open_source(str(tmp_path))
    bad = tmp_path / "game.mp4"
    bad.write_bytes(b"\x00" * 100)
    with pytest.raises(SourceError, match="not a video"):
        VideoSource(bad)
    image = tmp_path / "one.png"
    cv2.imwrite(str(image), np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(SourceError, match="single image"):
        open_source(str(image))


def test_video_file(tmp_path):
    path = tmp_path / "game.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for i in range(5):
        writer.write(np.full((48, 64, 3), 40 * i, np.uint8))
    writer.release()
    frames = list(VideoSource(path))
    assert len(frames) == 5
    assert frames[0].shape == (48, 64, 3)


class FakeCapture:
    """A camera that delivers ``frames`` frames, then stops (read fails) for good."""

    def __init__(self, frames: int, opened: bool = True):
        self.left = frames
        self.opened = opened

    def isOpened(self):
        return self.opened

    def read(self):
        if self.left <= 0:
            return False, None
        self.left -= 1
        return True, np.full((4, 4, 3), self.left, np.uint8)

    def release(self):
        self.opened = False

    def set(self, *args):
        return True


def test_camera_that_stops_is_reopened_with_backoff_and_reported():
    opens = []
    statuses = []

    def opener(device):
        opens.append(device)
        if len(opens) == 2:
            return FakeCapture(0, opened=False)  # the reopen fails once
        return FakeCapture(3)

    config = CameraConfig(stall_s=0.05, backoff_s=0.01, backoff_max_s=0.04)
    camera = CameraSource("/dev/video7", config, opener=opener, on_status=statuses.append)
    try:
        deadline = time.monotonic() + 5
        while len(opens) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(opens) >= 4
        assert camera.reopens >= 2
        assert camera.frames >= 6
        assert any("stopped delivering" in s for s in statuses)
        assert any("not available" in s for s in statuses)
        assert "ok" in statuses
        assert camera.latest() is not None
    finally:
        camera.close()
    assert not any(t.name.startswith("camera-/dev/video7") for t in threading.enumerate())


def test_camera_keeps_only_the_newest_frame():
    class Counter(FakeCapture):
        def read(self):
            self.left += 1
            time.sleep(0.001)
            return True, np.full((2, 2, 3), self.left % 256, np.uint8)

    camera = CameraSource(0, opener=lambda d: Counter(0))
    try:
        time.sleep(0.05)
        a = camera.read()
        b = camera.read()
        assert a is not None
        assert b is None or b is not a  # a frame is returned once
    finally:
        camera.close()


def test_opener_errors_never_crash_the_camera():
    def opener(device):
        raise RuntimeError("driver fell over")

    statuses = []
    camera = CameraSource(1, CameraConfig(backoff_s=0.01), opener=opener, on_status=statuses.append)
    try:
        time.sleep(0.05)
        assert camera.read() is None
        assert any("cannot open" in s or "not available" in s for s in statuses)
    finally:
        camera.close()


def test_list_source_iterates():
    assert len(list(ListSource([np.zeros((2, 2, 3), np.uint8)] * 3))) == 3
