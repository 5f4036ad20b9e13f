"""The calibration page (/calibrate): host only, the wizard on the camera's frame, tapped corners,
colour names, saving the profile atomically where serve keeps it, and clear 4xx answers."""

from __future__ import annotations

import json
import os

import cv2
import numpy as np
import pytest
from webui_support import TOKEN, Host

from meeplecam.vision import profile as profile_module
from meeplecam.webui.app import create_app
from meeplecam.webui.tracking import TrackerFeed


class Still:
    """A turn source that shows one picture (what the app's camera view reads)."""

    name = "test camera"

    def __init__(self, frame):
        self.image = frame

    def frame(self):
        return self.image


@pytest.fixture(scope="module")
def demo():
    """The synthetic calibration table (start tile, five followers) and its truth."""
    from meeplecam.calibration.demo import demo_view

    return demo_view(1)


def make_app(session, source, **config):
    app = create_app(
        {"session": session, "token": TOKEN, "secret_key": "s" * 32, "source": source, **config}
    )
    app.testing = True
    return app


@pytest.fixture
def cal(session, demo):
    return Host(make_app(session, Still(demo[0])))


def test_spectator_cannot_calibrate_or_save(session, demo, record_path):
    app = make_app(session, Still(demo[0]))
    spectator = app.test_client()
    page = spectator.get("/calibrate")
    assert page.status_code == 403
    assert "host" in page.get_data(as_text=True)
    assert spectator.get("/calibrate/preview.jpg").status_code == 403
    for url in ("/api/calibrate", "/api/calibrate/save"):
        response = spectator.post(url, json={"force": True})
        assert response.status_code == 403, url
        assert "host" in response.get_json()["error"]
    # the host needs the CSRF token as for every change
    host = Host(app)
    response = host.client.post("/api/calibrate/save", headers={"X-Requested-With": "fetch"})
    assert response.status_code == 403 and "CSRF" in response.get_json()["error"]
    assert app.extensions["meeplecam"]["calibration"].current is None  # nothing was run
    assert not (record_path.parent / "meeplecam-profile.json").exists()
    # the spectator's Setup tab has no link to it, the host's has
    assert 'href="/calibrate"' in host.get("/").get_data(as_text=True)


def test_host_sees_the_preview_of_the_demo_frame(cal, demo):
    page = cal.get("/calibrate")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'id="calib-img"' in html and "step 1/5 table: outline detected" in html
    assert "test camera" in html and "1280×720" in html
    assert "No warnings" in html and 'id="calib-save"' in html
    for name in ("red", "yellow", "green", "blue", "black"):
        assert f'value="{name}"' in html  # the guessed names, ready to change
    assert "--colours" not in html  # the CLI's hints are put in the page's words
    preview = cal.get("/calibrate/preview.jpg?run=1")
    assert preview.status_code == 200 and preview.mimetype == "image/jpeg"
    image = cv2.imdecode(np.frombuffer(preview.data, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == demo[0].shape
    assert not np.array_equal(image, demo[0])  # the outline and grid are drawn on it
    # the outline found is the table's (≤ 1 % of the diagonal)
    state = cal.post("/api/calibrate", json={}).get_json()
    truth = np.asarray(demo[1]["table"], float)
    assert np.abs(np.asarray(state["corners"]) - truth).max() < 0.01 * np.hypot(1280, 720)
    assert state["run"] == 2 and state["outline"] == "detected"


def test_four_tapped_corners_are_used(cal, demo):
    truth = np.asarray(demo[1]["table"], float)
    given = truth[[2, 0, 3, 1]] + [[3, -2], [-2, 2], [2, 3], [-3, -1]]  # any order, a bit off
    early = cal.post("/api/calibrate", json={"corners": given.round(1).tolist()})
    assert early.status_code == 409 and "no picture yet" in early.get_json()["error"]
    cal.get("/calibrate")  # the page takes the picture the corners are tapped on
    answer = cal.post("/api/calibrate", json={"corners": given.round(1).tolist()})
    assert answer.status_code == 200, answer.get_json()
    state = answer.get_json()
    assert state["outline"] == "clicks"
    ordered = given[[1, 3, 0, 2]]  # clockwise from the top-left
    assert np.abs(np.asarray(state["corners"]) - ordered).max() <= 1
    assert any("the four corners you gave" in line for line in state["lines"])
    # the same from the page's form without JavaScript: a redirect back to the page
    text = " ".join(f"{x:.0f},{y:.0f}" for x, y in given)
    form = cal.client.post(
        "/api/calibrate", data={"csrf_token": cal.csrf, "corners": text, "taps": ""}
    )
    assert form.status_code == 302 and form.headers["Location"].endswith("/calibrate")
    html = cal.get("/calibrate").get_data(as_text=True)
    shown = " ".join(f"{x:.0f},{y:.0f}" for x, y in ordered)  # in order, for the next run
    assert "as you gave them" in html and f'name="corners" value="{shown}"' in html


def test_the_corner_markers_are_used_when_ticked(session):
    from meeplecam.calibration.demo import demo_view

    frame, truth = demo_view(1, markers=True)
    cal = Host(make_app(session, Still(frame)))
    cal.get("/calibrate")
    answer = cal.post("/api/calibrate", json={"markers": True})
    assert answer.status_code == 200, answer.get_json()
    state = answer.get_json()
    assert state["outline"] == "markers" and state["markers"]
    assert np.abs(np.asarray(state["corners"]) - np.asarray(truth["table"])).max() <= 2
    html = cal.get("/calibrate").get_data(as_text=True)
    assert "from the markers" in html and 'name="markers" value="1" checked' in html


def test_follower_taps_and_colour_names(cal, demo):
    cal.get("/calibrate")
    bases = [f["base"] for f in demo[1]["followers"]][:3]
    state = cal.post("/api/calibrate", json={"taps": bases}).get_json()
    assert len(state["followers"]) == 3
    names = ["crimson", "sun", "moss"]
    state = cal.post("/api/calibrate", json={"keep": True, "colours": names}).get_json()
    assert [f["name"] for f in state["followers"]] == names
    assert state["given_taps"] == [[round(x), round(y)] for x, y in bases]
    wrong = cal.post("/api/calibrate", json={"keep": True, "colours": ["red", "blue"]})
    assert wrong.status_code == 400 and "3 colour names" in wrong.get_json()["error"]
    twice = cal.post("/api/calibrate", json={"keep": True, "colours": "red, Red, blue"})
    assert twice.status_code == 400 and "different" in twice.get_json()["error"]


def test_saving_writes_a_loadable_profile_atomically(cal, demo, record_path, monkeypatch):
    cal.get("/calibrate")
    target = record_path.parent / "meeplecam-profile.json"  # beside the --record file
    target.write_text("old\n")
    renames = []
    real_replace = os.replace
    monkeypatch.setattr(
        os, "replace", lambda a, b: (renames.append((str(a), str(b))), real_replace(a, b))[1]
    )
    answer = cal.post("/api/calibrate/save", json={"run": 1})
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["saved"]["path"] == str(target)
    assert renames and renames[-1][1] == str(target) and renames[-1][0] != str(target)
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []
    profile = profile_module.load(target)
    truth = np.asarray(demo[1]["table"], float)
    assert np.abs(profile.table.pixels(1280, 720) - truth).max() < 15
    assert profile.followers.names == ["red", "yellow", "green", "blue", "black"]
    html = cal.get("/calibrate").get_data(as_text=True)
    assert f'Saved to <span class="mono break">{target}' in html
    # a save of a run that is no longer the one shown is refused
    stale = cal.post("/api/calibrate/save", json={"run": 99})
    assert stale.status_code == 409 and "changed" in stale.get_json()["error"]


def test_warnings_are_saved_only_when_the_host_insists(session, demo, tmp_path):
    target = tmp_path / "given" / "table.json"
    host = Host(make_app(session, Still(demo[0]), profile=str(target)))
    host.get("/calibrate")
    desk = host.client.application.extensions["meeplecam"]["calibration"]
    desk.current.result.warnings.append("the detected outline fits the table loosely")
    refused = host.post("/api/calibrate/save", json={})
    assert refused.status_code == 422
    assert "not saved: 1 warning" in refused.get_json()["error"]
    assert not target.exists()
    form = host.client.post("/api/calibrate/save", data={"csrf_token": host.csrf})
    assert form.status_code == 422 and "Back to the calibration" in form.get_data(as_text=True)
    saved = host.post("/api/calibrate/save", json={"force": True})
    assert saved.status_code == 200 and saved.get_json()["saved"]["path"] == str(target)
    assert profile_module.load(target).table is not None


@pytest.mark.parametrize(
    "corners, message",
    [
        ("1,2 3,4 5", "odd count"),
        ([[10, 10], [200, 10], [200, 200]], "exactly four"),
        ("a,b c,d e,f g,h", "not a number"),
        ([[10, 10], [5000, 10], [1200, 700], [10, 700]], "outside the 1280x720 picture"),
        ([[10, 10], [-1, 10], [1200, 700], [10, 700]], "outside"),
        ([[10, 10], [20, 10], [20, 20], [10, 20]], "do not outline a table"),
        ({"x": 1}, "pairs"),
        ([[10, 10], [True, 10], [1200, 700], [10, 700]], "not a number"),
    ],
)
def test_bad_corners_are_refused_with_a_message(cal, corners, message):
    if cal.client.application.extensions["meeplecam"]["calibration"].current is None:
        cal.get("/calibrate")
    answer = cal.post("/api/calibrate", json={"corners": corners})
    assert answer.status_code == 400
    assert message in answer.get_json()["error"]


def test_bad_form_input_gets_an_error_page(cal):
    cal.get("/calibrate")
    answer = cal.client.post(
        "/api/calibrate", data={"csrf_token": cal.csrf, "corners": "10,10 9999,10 5,5 1,1"}
    )
    assert answer.status_code == 400
    html = answer.get_data(as_text=True)
    assert "outside the 1280x720 picture" in html and "Traceback" not in html
    assert 'href="/calibrate"' in html
    assert cal.post("/api/calibrate", data="{", content_type="application/json").status_code == 400


def test_no_picture_is_said_clearly(session):
    class Dark:
        name = "camera 0"

        def frame(self):
            return None

    host = Host(make_app(session, Dark()))
    page = host.get("/calibrate")
    assert page.status_code == 200
    assert "has not delivered a picture yet" in page.get_data(as_text=True)
    answer = host.post("/api/calibrate", json={"fresh": True})
    assert answer.status_code == 409 and "picture" in answer.get_json()["error"]
    nothing = host.post("/api/calibrate/save", json={})
    assert nothing.status_code == 422 and "run it first" in nothing.get_json()["error"]
    no_camera = Host(make_app(session, None))
    assert "this game has no camera" in no_camera.get("/calibrate").get_data(as_text=True)


def test_a_picture_the_wizard_cannot_read_shows_the_picture_to_tap(session):
    host = Host(make_app(session, Still(np.full((240, 320, 3), 90, np.uint8))))
    html = host.get("/calibrate").get_data(as_text=True)
    assert "calibration failed" in html and 'id="calib-img"' in html
    assert host.get("/calibrate/preview.jpg").status_code == 200


def test_the_live_tracker_uses_the_saved_profile(session, demo, tmp_path):
    from meeplecam.vision.live.rectify import ProfileRectifier
    from meeplecam.vision.live.tracker import State, Tracker

    class Frames:
        live = True

        def read(self):
            return demo[0]

        def close(self):
            pass

    class Feed(TrackerFeed):
        def frame(self):
            return demo[0]

    feed = Feed(session, Frames())
    busy = feed.tracker = Tracker(session.game, feed.rectifier, config=feed.config)
    busy.state = State.SETTLING  # a hand is laying a tile
    target = tmp_path / "profile.json"
    host = Host(make_app(session, feed, profile=str(target)))
    host.get("/calibrate")
    answer = host.post("/api/calibrate/save", json={}).get_json()
    assert "the live tracker switches to it" in answer["message"]
    assert feed.next_profile is not None
    feed._switch(demo[0])
    assert feed.tracker is busy and feed.profile_path is None  # not while a turn is being read
    busy.state = State.WATCHING
    feed.step(demo[0])
    assert feed.profile_path == str(target) and feed.next_profile is None
    assert feed.tracker is not busy and isinstance(feed.tracker.rectifier, ProfileRectifier)
    assert feed.tracker.scorer is busy.scorer  # what was learned is kept
    assert {"red", "yellow", "green", "blue", "black"} <= set(feed.colours)
    origin = feed.tracker.rectifier.to_image([[0, 0]])[0]
    assert 0 < origin[0] < 1280 and 0 < origin[1] < 720
    # a profile that marks a drawn-tile spot (meeplecam calibrate --drawn-spot): watched from
    # the switch on
    marked = json.loads(target.read_text()) | {"drawn_spot": [0, 8]}
    target.write_text(json.dumps(marked))
    feed.use_profile(target)
    feed.step(demo[0])
    assert feed.tracker.spot is not None and feed.tracker.spot.cell == (0, 8)


def test_phone_taps_the_corners_on_the_picture(browser, session, demo):
    """In the browser: the Setup tab's link, four taps on the picture fill the corners field,
    and running again uses them."""
    import threading

    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, make_app(session, Still(demo[0])), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        browser.get(f"{url}/host?token={TOKEN}")
        browser.get(f"{url}/#setup")
        browser.find_element(By.ID, "calibrate-link").click()
        img = browser.find_element(By.ID, "calib-img")
        browser.find_element(By.CSS_SELECTOR, '[data-tap="corners"]').click()
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", img)
        box = img.rect
        for x, y in demo[1]["table"]:
            dx = round(x / 1280 * box["width"] - box["width"] / 2)
            dy = round(y / 720 * box["height"] - box["height"] / 2)
            ActionChains(browser).move_to_element_with_offset(img, dx, dy).click().perform()
        value = browser.find_element(By.NAME, "corners").get_attribute("value")
        tapped = np.asarray([float(v) for v in value.replace(",", " ").split()]).reshape(4, 2)
        scale = 1280 / box["width"]
        assert np.abs(tapped - np.asarray(demo[1]["table"])).max() <= 2 * scale + 1
        assert len(browser.find_elements(By.CSS_SELECTOR, ".mark.corners")) == 4
        browser.find_element(By.CSS_SELECTOR, "#calib-fix button:not([type=button])").click()
        WebDriverWait(browser, 15).until(
            # read in one script: the form's answer replaces the page while it is read
            lambda b: "as you gave them" in b.execute_script("return document.body.innerText")
        )
    finally:
        server.shutdown()
        server.server_close()
