"""``meeplecam serve`` as a user runs it: the no-camera message, and a real server process
stopped in the middle of a demo game and started again, resuming from the saved record."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from meeplecam.cli import main


def test_serve_without_camera_says_what_it_tried_and_offers_the_demo(monkeypatch, capsys):
    from meeplecam.webui import camera

    monkeypatch.setattr(
        camera, "find_camera", lambda: (None, ["camera 0 (/dev/video0): no picture"])
    )
    monkeypatch.setattr("sys.stdin", None)  # it must not prompt
    assert main(["serve"]) == 1
    err = capsys.readouterr().err
    assert "no camera found" in err and "/dev/video0" in err and "meeplecam serve --demo" in err


@pytest.mark.parametrize("text", ['{"format": "meeplecam-profile/1", "frame":', "[1, 2]"])
def test_a_corrupt_profile_is_named_and_nothing_starts(tmp_path, capsys, text):
    import cv2
    import numpy as np

    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "f1.png"), np.zeros((48, 64, 3), np.uint8))
    profile = tmp_path / "table.json"
    profile.write_text(text)
    assert main(["serve", "--frames", str(frames), "--profile", str(profile)]) == 1
    err = capsys.readouterr().err
    assert "table.json" in err and "profile" in err and "Traceback" not in err


def test_the_demo_table_will_not_overwrite_a_saved_game(tmp_path, capsys):
    record = tmp_path / "game.json"
    record.write_text("{}")
    assert main(["serve", "--demo", "--record", str(record)]) == 1
    assert "--demo scripted" in capsys.readouterr().err
    assert record.read_text() == "{}"


def test_serve_is_registered_with_its_options(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    for option in ("--camera", "--video", "--frames", "--demo", "--profile", "--record", "--tiles"):
        assert option in out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(record: Path, port: int) -> subprocess.Popen:
    # not ``-m meeplecam.cli``: run that way, the layers register with another copy of the module
    command = [sys.executable, "-c", "import sys; from meeplecam.cli import main; sys.exit(main())", "serve", "--demo", "scripted", "--record", str(record),
               "--host", "127.0.0.1", "--port", str(port), "--demo-interval", "0.05", "--demo-questions", "0"]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True
    )


def _state(port: int, deadline: float) -> dict:
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=2) as r:
                return json.load(r)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _stop(process: subprocess.Popen) -> str:
    process.send_signal(signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out


def test_restart_in_the_middle_of_a_game_loses_nothing(tmp_path):
    record = tmp_path / "game.json"
    port = _free_port()
    process = _start(record, port)
    try:
        deadline = time.monotonic() + 20
        while len(_state(port, deadline)["turns"]) < 8:
            assert time.monotonic() < deadline, "the demo did not play"
            time.sleep(0.05)
    finally:
        out = _stop(process)
    assert "host?token=" in out and f":{port}/" in out
    saved = json.loads(record.read_text())
    assert len(saved["turns"]) >= 8

    process = _start(record, port)
    try:
        state = _state(port, time.monotonic() + 20)
        resumed = [t["record"] for t in state["turns"]]
        assert resumed[: len(saved["turns"])] == saved["turns"]
    finally:
        out = _stop(process)
    token = (tmp_path / ".game.json.host").read_text()
    assert json.loads(token)["token"] in out  # the same host link after a restart
