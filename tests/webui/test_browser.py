"""Acceptance in a real headless browser at phone size: live scores, a question card, a
correction, an undo, and the numbers on screen equal the engine's score report.

Screenshots of the main screens go to $MEEPLECAM_SCREENSHOTS when it is set (the README's are
made with MEEPLECAM_SCREENSHOTS=docs/screenshots), otherwise to a temporary folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from webui_support import TOKEN, alternative

from meeplecam.engine import Turn, score_report

SHOTS = Path(
    os.environ.get("MEEPLECAM_SCREENSHOTS") or Path(tempfile.gettempdir()) / "meeplecam-screenshots"
)


def _wait(driver, condition, timeout=15, message=""):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition, message)


def _shot(driver, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.execute_script("var t = document.getElementById('toast'); if (t) t.className = '';")
    driver.save_screenshot(str(SHOTS / f"{name}.png"))


def _open_as_host(driver, server) -> None:
    """The host's phone: the host link opened, then the page, following the live stream."""
    from selenium.webdriver.common.by import By

    driver.get(f"{server.url}/host?token={TOKEN}")
    driver.get(f"{server.url}/")
    _wait(driver, lambda d: d.find_element(By.ID, "live").text == "live")


def _page_version(driver) -> int:
    return int(driver.execute_script("return +document.body.dataset.version"))


def _shown_scores(driver) -> dict:
    """Totals, projections and follower counts as the scoreboard shows them, by colour."""
    return driver.execute_script(
        """
        var out = {};
        document.querySelectorAll('#scoreboard li.player').forEach(function (li) {
          var proj = li.querySelector('[data-projected]');
          out[li.dataset.colour] = {
            total: +li.querySelector('.total').textContent.trim(),
            projected: proj ? +proj.textContent.trim() : null,
          };
        });
        return out;
        """
    )


def _assert_scores_match(driver, live) -> None:
    with live.session.lock:
        version = live.session.version
        report = score_report(live.session.game)
    _wait(driver, lambda d: _page_version(d) >= version, message="page did not catch up")
    shown = _shown_scores(driver)
    current = report["turns"][-1]["scores"] if report["turns"] else {}
    for player in report["players"]:
        colour = player["colour"]
        assert shown[colour]["total"] == current.get(colour, 0), (colour, shown, report)
        assert shown[colour]["projected"] == player["score"], (colour, shown, report)


def test_phone_plays_answers_corrects_and_undoes(browser, live):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver = browser
    driver.get(f"{live.url}/host?token={TOKEN}")
    driver.get(f"{live.url}/")
    driver.execute_script("window.__noReload = 'still here'")
    start = _page_version(driver)

    # the demo plays: live updates arrive, and now and then a question card (the demo waits for
    # the answer); answer it on the page
    def cards(d):
        return d.find_elements(By.CSS_SELECTOR, "#questions .question")

    _wait(driver, lambda d: _page_version(d) >= start + 3 or cards(d), message="no live updates")
    card = _wait(driver, cards, timeout=30, message="no question card")[0]
    qid = int(card.get_attribute("data-question"))
    _wait(
        driver,
        lambda d: d.execute_script(
            "var i = document.querySelector('#questions img.crop'); return !i || i.complete;"
        ),
    )
    turns_before = len(live.session.game.log)
    with live.session.lock:
        chosen = live.session.questions[qid].options[0]
    card.find_element(By.CSS_SELECTOR, "button.option").click()
    _wait(driver, lambda d: qid not in live.session.questions, message="answer not applied")
    assert chosen in live.session.game.log[turns_before:]
    live.feed.question_chance = 0.0  # from here on the demo only commits
    for q in list(live.session.questions):
        live.session.answer(q, 0)
    answered = _page_version(driver)
    _wait(driver, lambda d: _page_version(d) >= answered + 5, message="no live updates arrived")
    assert _wait(driver, lambda d: d.find_element(By.ID, "live").text == "live")

    # stop the demo, then the numbers on screen must be the engine's
    _wait(driver, lambda d: len(live.session.game.log) >= turns_before + 6, timeout=30)
    live.feed.stop()
    _assert_scores_match(driver, live)
    assert driver.execute_script("return window.__noReload") == "still here"
    driver.execute_script("window.scrollTo(0, 0)")

    # the board with hints for a tile in hand
    driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="board"]').click()
    _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#board-view svg g.tile"))
    bag = list(live.session.game.remaining)
    tile = next(t for t in ("U", "E", "D", *bag) if live.session.game.remaining.get(t, 0) > 0)
    Select(driver.find_element(By.ID, "hint-tile")).select_by_value(tile)
    _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#placements li"))
    assert driver.find_elements(By.CSS_SELECTOR, "#board-view g.open.fits")
    driver.find_element(By.CSS_SELECTOR, 'button[data-zoom="in"]').click()
    driver.find_element(By.CSS_SELECTOR, 'button[data-zoom="home"]').click()
    driver.execute_script("window.scrollTo(0, 0)")

    # correct the last turn's tile on the Turns tab
    driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="turns"]').click()
    game = live.session.game
    index = len(game.log) - 1
    while not isinstance(game.log[index], Turn):
        index -= 1
    fix = alternative(game, index)
    item = driver.find_element(By.CSS_SELECTOR, f'#turns li[data-turn="{index + 1}"]')
    item.find_element(By.TAG_NAME, "summary").click()
    form = _wait(driver, lambda d: item.find_elements(By.CSS_SELECTOR, "form.correct-form"))[0]
    Select(form.find_element(By.NAME, "tile")).select_by_visible_text(fix.tile)
    Select(form.find_element(By.NAME, "rotation")).select_by_value(str(fix.rotation))
    Select(form.find_element(By.NAME, "meeple")).select_by_value("")
    form.find_element(By.TAG_NAME, "button").click()
    _wait(driver, lambda d: live.session.game.log[index] == fix, message="correction not applied")
    driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="scores"]').click()
    _assert_scores_match(driver, live)

    # undo the last turn
    driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="turns"]').click()
    count = len(live.session.game.log)
    _wait(driver, lambda d: d.find_element(By.ID, "undo").is_enabled())
    driver.find_element(By.ID, "undo").click()
    _wait(driver, lambda d: len(live.session.game.log) == count - 1, message="undo not applied")
    _wait(
        driver,
        lambda d: (
            d.find_elements(By.CSS_SELECTOR, f'#turns li[data-turn="{count - 1}"]')
            and not d.find_elements(By.CSS_SELECTOR, f'#turns li[data-turn="{count}"]')
        ),
    )
    driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="scores"]').click()
    _assert_scores_match(driver, live)

    # the saved record is the corrected game
    import json

    saved = json.loads(live.session.record_path.read_text())
    assert len(saved["turns"]) == count - 1
    assert [h["action"] for h in saved["history"]][-2:] == ["corrected", "undone"]

    # setup and camera screens
    driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="setup"]').click()
    _wait(driver, lambda d: d.find_element(By.ID, "setup-form").is_displayed())
    driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="camera"]').click()
    _wait(
        driver,
        lambda d: d.execute_script(
            "var i = document.getElementById('camera-img'); return i.complete && i.naturalWidth > 0;"
        ),
    )
    driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="scores"]').click()
    assert driver.execute_script("return window.__noReload") == "still here"


def test_spectator_sees_no_controls_and_end_screen(browser, live):
    from selenium.webdriver.common.by import By

    driver = browser
    live.feed.question_chance = 0.0
    for q in list(live.session.questions):
        live.session.answer(q, 0)
    driver.delete_all_cookies()
    driver.get(f"{live.url}/")
    assert "spectator" in driver.find_element(By.TAG_NAME, "body").get_attribute("class")
    _wait(driver, lambda d: len(live.session.game.log) >= 3, timeout=20)
    live.feed.stop()
    live.session.end_game()
    _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#scoreboard .final"))
    _assert_scores_match_final(driver, live)
    driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="turns"]').click()
    assert not driver.find_element(By.ID, "undo").is_displayed()


def _assert_scores_match_final(driver, live):
    report = score_report(live.session.game)
    shown = driver.execute_script(
        "var o = {}; document.querySelectorAll('#scoreboard li.player').forEach(function (li) {"
        " o[li.dataset.colour] = +li.querySelector('.total').textContent.trim(); }); return o;"
    )
    assert shown == {p["colour"]: p["score"] for p in report["players"]}


def test_screenshots_of_a_game_in_progress(browser, tmp_path):
    """The main screens of a game well under way, for docs/screenshots (and a look by eye)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    from webui_support import LiveServer, play

    server = LiveServer(tmp_path / "shots.json", interval=60, question_chance=0.0, seed=4)
    play(server.session, 46, seed=21)
    server.start(feed=False)
    driver = browser
    try:
        _open_as_host(driver, server)
        _assert_scores_match(driver, server)
        _shot(driver, "scoreboard")
        driver.execute_script("document.querySelector('.chart-box').scrollIntoView()")
        _shot(driver, "score-history")

        game = server.session.game
        tile = next(t for t in ("D", "E", "U", *sorted(game.remaining)) if game.remaining.get(t))
        server.session.drawn(tile)
        driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="board"]').click()
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#placements li"))
        assert (
            Select(driver.find_element(By.ID, "hint-tile")).first_selected_option.get_attribute(
                "value"
            )
            == tile
        )
        _shot(driver, "board-hints")
        driver.execute_script("document.getElementById('where').scrollIntoView()")
        _shot(driver, "board-placements")

        truth = next(iter(server.session.game.board.legal_placements(game.tileset[tile])))
        from meeplecam.engine import Turn
        from meeplecam.webui.camera import tile_crop

        options = [Turn(tile, truth[0][0], truth[0][1], truth[1])]
        for (x, y), r in server.session.game.board.legal_placements(game.tileset[tile]):
            if (x, y) != truth[0] and len(options) < 3:
                options.append(Turn(tile, x, y, r))
        server.session.ask(options, tile_crop(game.tileset[tile], truth[1]), f"Is this {tile}?")
        driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="scores"]').click()
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#questions img.crop"))
        _wait(
            driver,
            lambda d: d.execute_script(
                "return document.querySelector('#questions img.crop').complete"
            ),
        )
        driver.execute_script("window.scrollTo(0, 0)")
        _shot(driver, "question-card")
        driver.find_element(By.CSS_SELECTOR, "#questions button.option").click()
        _wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "#questions .question"))

        driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="turns"]').click()
        item = driver.find_element(By.CSS_SELECTOR, "#turns li[data-turn]")
        item.find_element(By.TAG_NAME, "summary").click()
        _wait(driver, lambda d: item.find_elements(By.CSS_SELECTOR, "form.correct-form"))
        _shot(driver, "correction")
        driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="setup"]').click()
        _shot(driver, "setup")
        driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="camera"]').click()
        _wait(
            driver,
            lambda d: d.execute_script(
                "var i = document.getElementById('camera-img'); return i.complete && i.naturalWidth > 0;"
            ),
        )
        _shot(driver, "camera")
        server.session.end_game()
        driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="scores"]').click()
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#scoreboard .final"))
        _assert_scores_match_final(driver, server)
        driver.execute_script("window.scrollTo(0, 0)")
        _shot(driver, "final-scores")
        driver.get(f"{server.url}/host?token={TOKEN}")
        _shot(driver, "host-link")
    finally:
        server.stop()


def test_the_host_takes_the_game_read_over_with_a_tap(browser, tmp_path):
    """At the end the camera reads the game over: the card lists the turn it would correct
    and the final scores both ways; a tap corrects the game and the scoreboard follows."""
    from selenium.webdriver.common.by import By
    from webui_support import LiveServer, play

    server = LiveServer(tmp_path / "read-over.json", interval=60, question_chance=0.0, seed=4)
    session = server.session
    play(session, 40, seed=21)
    session.end_game()
    game = session.game
    index = max(i for i, event in enumerate(game.log) if isinstance(event, Turn))
    proposed = list(game.log)
    proposed[index] = alternative(game, index)
    server.start(feed=False)
    driver = browser
    try:
        _open_as_host(driver, server)
        session.propose_read_over(game.log, proposed)  # reaches the phone by the live stream
        card = _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#questions .read-over"))
        assert f"Turn {index + 1}: {proposed[index].describe()}" in card[0].text
        driver.execute_script("window.scrollTo(0, 0)")
        _shot(driver, "read-over")
        driver.find_element(By.CSS_SELECTOR, "#questions [data-take]").click()
        _wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "#questions .read-over"))
        assert session.game.log == proposed
        _wait(driver, lambda d: _page_version(d) >= session.version)
        _assert_scores_match_final(driver, server)
    finally:
        server.stop()


def test_a_turn_taken_for_now_is_marked_on_the_phone_until_the_camera_keeps_it(browser, tmp_path):
    """The camera takes a reading for now: the phone's turn list marks it, live, and takes
    the mark off once the camera is sure of it."""
    from selenium.webdriver.common.by import By
    from webui_support import LiveServer, play

    server = LiveServer(tmp_path / "for-now.json", interval=60, question_chance=0.0, seed=4)
    session = server.session
    play(session, 6, seed=21)
    server.start(feed=False)
    driver = browser

    def marks(d):
        return d.find_elements(By.CSS_SELECTOR, "#turns .for-now")

    try:
        _open_as_host(driver, server)
        driver.find_element(By.CSS_SELECTOR, 'nav a[data-tab="turns"]').click()
        assert not marks(driver)
        session.taken_for_now(4, ("the runner-up is close (0.004)",))  # by the live stream
        mark = _wait(driver, marks, message="no mark")[0]
        assert mark.text == "not sure yet"
        assert "the runner-up is close" in mark.get_attribute("title")
        row = mark.find_element(By.XPATH, "ancestor::li")
        assert row.get_attribute("data-turn") == "5"
        _shot(driver, "taken-for-now")
        session.kept(4)
        _wait(driver, lambda d: not marks(d), message="the mark stayed")
    finally:
        server.stop()
