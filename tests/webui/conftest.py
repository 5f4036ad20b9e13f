"""Fixtures for the web app: a session, a Flask test client signed in as host, a live server
running a fast demo game, and a headless Chromium at phone size (skipped when not installed)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from webui_support import CHROMEDRIVER, CHROMIUM, PLAYERS, TOKEN, Host, LiveServer

from meeplecam.webui.app import create_app
from meeplecam.webui.session import GameSession


@pytest.fixture
def record_path(tmp_path) -> Path:
    return tmp_path / "game.json"


@pytest.fixture
def session(record_path) -> GameSession:
    return GameSession.open(record_path, PLAYERS)


@pytest.fixture
def app(session):
    app = create_app({"session": session, "token": TOKEN, "secret_key": "s" * 32, "keepalive": 0.2})
    app.testing = True
    return app


@pytest.fixture
def host(app) -> Host:
    return Host(app)


@pytest.fixture
def live(tmp_path):
    server = LiveServer(tmp_path / "live.json", interval=0.15, question_chance=0.3).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("chromium / chromedriver not installed")
    selenium = pytest.importorskip("selenium")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert selenium
    profile = tempfile.mkdtemp(prefix="meeplecam-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=390,844",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(arg)
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    except Exception as exc:  # a broken browser install is a skip, not a failure
        shutil.rmtree(profile, ignore_errors=True)
        pytest.skip(f"cannot start chromium: {exc}")
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True},
    )
    driver.set_page_load_timeout(20)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)
