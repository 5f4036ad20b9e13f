"""Fast checks of the web app through Flask's test client: security, input errors, questions,
corrections, undo, the saved record, resume after restart, SSE and the camera endpoints."""

from __future__ import annotations

import json

import pytest
from webui_support import PLAYERS, TOKEN, Host, alternative, play

from meeplecam.engine import Turn, hints, load_record, read_record_file, score_report
from meeplecam.webui.events import EventBus
from meeplecam.webui.session import GameSession


def _first_turn(session) -> Turn:
    game = session.game
    (x, y), rotation = next(game.board.legal_placements(game.tileset["U"]))
    return Turn("U", x, y, rotation)


# --- who may change the game -------------------------------------------------------------------
def test_spectator_cannot_change_the_game(app, session):
    play(session, 3)
    spectator = app.test_client()
    assert spectator.get("/").status_code == 200
    before = list(session.game.log)
    for url in ("/api/undo", "/api/end", "/api/turns/1/delete", "/api/setup", "/api/table/clear"):
        response = spectator.post(url, json={})
        assert response.status_code == 403, url
        assert "host" in response.get_json()["error"]
    assert session.game.log == before


def test_wrong_token_is_refused(app, session):
    client = app.test_client()
    assert client.get("/host?token=nope").status_code == 403
    client.set_cookie("meeplecam_host", "nope")
    assert client.post("/api/undo").status_code == 403


def test_host_without_csrf_token_is_refused(app, session):
    play(session, 2)
    host = Host(app)
    fetch = {"X-Requested-With": "fetch"}
    response = host.client.post("/api/undo", headers=fetch)
    assert response.status_code == 403
    assert "CSRF" in response.get_json()["error"]
    response = host.client.post("/api/undo", headers={"X-CSRF-Token": "forged", **fetch})
    assert response.status_code == 403
    assert len(session.game.log) == 2
    assert host.post("/api/undo").status_code == 200
    assert len(session.game.log) == 1


def test_host_link_sets_cookie_and_shows_qr(app):
    client = app.test_client()
    response = client.get(f"/host?token={TOKEN}")
    assert response.status_code == 200
    assert "meeplecam_host" in response.headers["Set-Cookie"]
    assert "HttpOnly" in response.headers["Set-Cookie"]
    assert b"<svg" in response.data and TOKEN.encode() in response.data
    page = client.get("/").data
    assert b'class="host"' in page
    assert TOKEN.encode() not in app.test_client().get("/").data  # spectators never see it


# --- malformed input ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "kwargs", "status", "words"),
    [
        ("/api/turns", {"data": "{not json", "content_type": "application/json"}, 400, "JSON"),
        ("/api/turns", {"json": [1, 2]}, 400, "object"),
        ("/api/turns", {"json": {"turn": "U"}}, 400, "object"),
        ("/api/turns", {"json": {"tile": "U", "x": "a", "y": 0}}, 400, "whole numbers"),
        ("/api/turns", {"json": {"tile": "U", "x": 1, "y": 0, "rotation": 45}}, 400, "rotation"),
        ("/api/turns", {"data": {"tile": "U", "x": "one", "y": "0"}}, 400, "whole number"),
        ("/api/turns", {"data": {"x": "1", "y": "0"}}, 400, "tile"),
        ("/api/turns", {"json": {"tile": "QQ", "x": 1, "y": 0}}, 422, "unknown tile"),
        ("/api/turns", {"json": {"tile": "U", "x": 5, "y": 5}}, 422, "turn 1"),
        ("/api/questions/99/answer", {"json": {"option": 0}}, 409, "no open question"),
        ("/api/turns/7", {"json": {"tile": "U", "x": 1, "y": 0}}, 409, "no turn 7"),
        ("/api/undo", {}, 409, "no turn"),
        ("/api/setup", {"data": {"name1": "Ann", "colour1": "red"}}, 400, "2 to 8"),
        (
            "/api/setup",
            {"data": {"name1": "A", "colour1": "red", "name2": "B", "colour2": "red"}},
            400,
            "share",
        ),
        (
            "/api/setup",
            {"json": {"players": ["red", "blue"], "farm_scoring": "c9"}},
            400,
            "each player",
        ),
        (
            "/api/setup",
            {"json": {"players": [{"colour": "red"}, {"colour": "blue"}], "farm_scoring": "c9"}},
            400,
            "farm",
        ),
        (
            "/api/setup",
            {
                "data": {
                    "name1": "A",
                    "colour1": "red",
                    "name2": "B",
                    "colour2": "blue",
                    "min_x": "x",
                }
            },
            400,
            "min_x",
        ),
        ("/api/record", {"json": {"players": "nobody"}}, 400, "players"),
        (
            "/api/record",
            {"json": {"players": ["red", "blue"], "turns": [{"tile": "U", "x": 9, "y": 9}]}},
            400,
            "turn 1",
        ),
        ("/api/drawn", {"json": {"tile": 5}}, 400, "tile"),
    ],
)
def test_bad_input_gets_4xx_with_message(host, session, url, kwargs, status, words):
    before = session.record()
    response = host.post(url, **kwargs)
    assert response.status_code == status, response.get_json()
    assert words.lower() in response.get_json()["error"].lower()
    assert session.record() == before


def test_bad_form_post_without_javascript_gets_an_html_message(host):
    response = host.post("/fallback-form", data={"x": "1"})
    assert response.status_code == 404
    response = host.client.post(
        "/api/turns", data={"tile": "U", "x": "?"}, headers={"Accept": "text/html"}
    )
    assert response.status_code == 403  # no CSRF field: refused before anything is read
    assert b"CSRF" in response.data and response.mimetype == "text/html"
    response = host.client.post("/api/turns", data={"tile": "U", "x": "?", "csrf_token": host.csrf})
    assert response.status_code == 400 and b"whole number" in response.data
    assert response.mimetype == "text/html"


# --- playing, questions, corrections -----------------------------------------------------------
def test_answering_a_question_applies_the_chosen_option(host, session):
    turn = _first_turn(session)
    qid = session.ask([turn], b"\xff\xd8fakejpeg", "Is this U?")
    assert host.get(f"/question/{qid}/crop.jpg").data == b"\xff\xd8fakejpeg"
    assert b"The camera is not sure" in host.get("/").data
    assert host.post(f"/api/questions/{qid}/answer", json={"option": 3}).status_code == 409
    response = host.post(f"/api/questions/{qid}/answer", data={"option": "0"})
    assert response.status_code == 200
    assert session.game.log == [turn]
    assert not session.questions


def test_answering_with_a_turn_entered_by_hand(host, session):
    right = _first_turn(session)
    wrong = Turn("U", right.x, right.y, (right.rotation + 90) % 360)
    qid = session.ask([wrong], None)
    fields = {"tile": "U", "x": str(right.x), "y": str(right.y), "rotation": str(right.rotation)}
    assert host.post(f"/api/questions/{qid}/answer", data=fields).status_code == 200
    assert session.game.log == [right]


def test_a_question_left_open_while_play_goes_on_corrects_its_turn(host, session):
    """The players laid the next tile without answering: the camera's best option stands in
    for now, the question stays on the page about that turn, and the answer corrects it."""
    right = _first_turn(session)
    wrong = Turn("U", right.x, right.y, (right.rotation + 180) % 360)
    qid = session.ask([wrong, right], None, "Not sure about the tile")
    session.play_on(wrong)
    assert session.game.log == [wrong]
    assert session.state()["questions"][0]["turn"] == 1
    assert b"Turn 1 is in the game as option 1" in host.get("/").data
    play(session, 2)  # the game goes on meanwhile
    later = session.game.log[1:]
    response = host.post(f"/api/questions/{qid}/answer", data={"option": "1"})
    assert response.status_code == 200, response.get_json()
    assert session.game.log == [right, *later]
    assert not session.questions
    assert read_record_file(session.record_path)["history"][-1]["action"] == "corrected"


def test_the_camera_asks_about_a_turn_it_read_for_now_and_the_answer_corrects_it(host, session):
    """The camera put its best reading in the game for now and, still unsure of it turns
    later, asks about that turn: the page names it, and the answer corrects it."""
    right = _first_turn(session)
    wrong = Turn("U", right.x, right.y, (right.rotation + 180) % 360)
    session.commit(wrong)
    play(session, 3)
    later = session.game.log[1:]
    qid = session.ask([wrong, right], None, "Not sure about the tile (turn 1)", turn=0)
    assert session.state()["questions"][0]["turn"] == 1
    assert b"Turn 1 is in the game as option 1" in host.get("/").data
    response = host.post(f"/api/questions/{qid}/answer", data={"option": "1"})
    assert response.status_code == 200, response.get_json()
    assert session.game.log == [right, *later]
    assert not session.questions


def _marked(host) -> list[int]:
    """The turns the page marks as not sure yet (1-based, newest first)."""
    import re

    page = host.get("/").data.decode()
    return [
        int(n)
        for n, body in re.findall(r'<li data-turn="(\d+)"(.*?)</li>', page, re.S)
        if "not sure yet" in body
    ]


def test_a_turn_the_camera_took_for_now_is_marked_until_it_is_sure(host, session):
    """The camera put its best reading of turn 1 in the game for now: the turn list says so
    (with why, on hover) while later turns are laid, until the camera keeps it."""
    session.commit(_first_turn(session))
    session.taken_for_now(0, ("the runner-up is close (0.004)",))
    play(session, 3)
    assert _marked(host) == [1]
    assert "the runner-up is close" in host.get("/").data.decode()
    session.kept(0)
    assert _marked(host) == []


def test_a_turn_taken_for_now_loses_its_mark_when_corrected_or_undone(host, session):
    right = _first_turn(session)
    wrong = Turn("U", right.x, right.y, (right.rotation + 180) % 360)
    session.commit(wrong)
    session.taken_for_now(0, ("the runner-up is close",))
    play(session, 3)
    session.taken_for_now(2, ("the two best differ in 3 px",))
    assert _marked(host) == [3, 1]
    session.correct(0, right)  # the players' word
    assert _marked(host) == [3]
    session.undo()
    play(session, 3)  # the turn laid again is read anew
    assert _marked(host) == []


def test_the_mark_follows_its_turn_when_an_earlier_turn_is_deleted(host, session):
    from meeplecam.engine import IllegalTurn

    play(session, 12)
    log = session.game.log

    def deletable(i: int) -> bool:
        try:
            session.game.replayed(log[:i] + log[i + 1 :])
        except IllegalTurn:
            return False
        return True

    gone = next(i for i in range(len(log) - 1) if deletable(i))
    session.taken_for_now(len(log) - 1, ("the runner-up is close",))
    session.correct(gone, None)
    assert _marked(host) == [len(session.game.log)]  # still the last turn, one earlier now


def test_answering_the_camera_about_a_turn_taken_for_now_takes_its_mark_off(host, session):
    right = _first_turn(session)
    session.commit(right)
    session.taken_for_now(0, ("the runner-up is close",))
    play(session, 1)
    qid = session.ask([right], None, "Still not sure about the tile (turn 1)", turn=0)
    host.post(f"/api/questions/{qid}/answer", data={"option": "0"})
    assert _marked(host) == []


def test_a_question_about_a_turn_taken_back_goes_with_it(session):
    right = _first_turn(session)
    session.ask([right], None)
    session.play_on(right)
    session.undo()
    assert not session.questions


def test_correct_delete_and_undo_recompute_scores_and_rewrite_the_record(host, session):
    play(session, 25)
    game = session.game
    index = next(i for i in range(len(game.log) - 1, -1, -1) if isinstance(game.log[i], Turn))
    fix = alternative(game, index)
    fields = {"tile": fix.tile, "x": fix.x, "y": fix.y, "rotation": fix.rotation}
    response = host.post(f"/api/turns/{index + 1}", json={"turn": fields})
    assert response.status_code == 200, response.get_json()
    assert session.game.log[index] == fix
    saved = read_record_file(session.record_path)
    assert score_report(load_record(saved)) == score_report(session.game)
    assert saved["history"][-1]["action"] == "corrected"

    count = len(session.game.log)
    assert host.post("/api/undo").status_code == 200
    assert len(session.game.log) == count - 1
    assert host.post("/api/turns/1/delete").status_code in (200, 422)
    saved = read_record_file(session.record_path)
    assert len(saved["turns"]) == len(session.game.log)
    state = host.get("/api/state").get_json()
    report = score_report(session.game)
    assert state["report"] == report
    for player, shown in zip(report["players"], state["players"], strict=True):
        assert shown["projected"] == player["score"]


def test_place_a_turn_from_the_hints(host, session):
    page = host.get("/board?tile=U").data.decode()
    placements = hints.placements(session.game, "U")
    assert page.count("Place it here") == len(placements)
    p = placements[0]
    fields = {"tile": "U", "x": p.x, "y": p.y, "rotation": p.rotation}
    assert host.post("/api/turns", data=fields).status_code == 200
    assert session.game.log == [Turn("U", p.x, p.y, p.rotation)]
    assert session.history[-1]["action"] == "entered"


def test_setup_starts_a_new_game_with_options(host, session):
    fields = {
        "name1": "Zed", "colour1": "green", "order1": "2",
        "name2": "Amy", "colour2": "black", "order2": "1",
        "tileset": "base", "farm_scoring": "c1", "small_city": "2",
        "min_x": "-3", "max_x": "3", "min_y": "-2", "max_y": "2", "table_edge_closes": "1",
    }  # fmt: skip
    assert host.post("/api/setup", data=fields).status_code == 200
    record = read_record_file(session.record_path)
    assert record["players"] == [
        {"name": "Amy", "colour": "black"},
        {"name": "Zed", "colour": "green"},
    ]
    assert record["tileset"] == "base"
    assert record["options"] == {
        "farm_scoring": "c1",
        "small_city": 2,
        "table": {"min_x": -3, "max_x": 3, "min_y": -2, "max_y": 2},
        "table_edge_closes": True,
    }
    assert b"table-edge" in host.get("/board.svg").data


def test_end_game_and_final_screen(host, session):
    play(session, 10)
    assert host.post("/api/end").status_code == 200
    page = host.get("/").data.decode()
    assert "Final scores" in page
    assert read_record_file(session.record_path)["finished"] is True
    with pytest.raises(Exception, match="ended"):
        session.commit(_first_turn(session))
    assert host.post("/api/reopen").status_code == 200


def _read_over_at_the_end(session) -> tuple[list, int]:
    """A finished game of 20 turns that the camera read over as its 20th turn corrected: the
    log it proposes, and the turn's index."""
    play(session, 20)
    session.end_game()
    game = session.game
    index = next(i for i in range(len(game.log) - 1, -1, -1) if isinstance(game.log[i], Turn))
    proposed = list(game.log)
    proposed[index] = alternative(game, index)
    return proposed, index


def test_the_game_read_over_at_its_end_is_the_hosts_to_take(host, session):
    """When the game ends the camera reads it over: the page lists each turn that would
    change and what it was, with the final scores now and read over; the host's tap corrects
    the game and the saved record keeps what each turn was."""
    proposed, index = _read_over_at_the_end(session)
    was = session.game.log[index]
    rid = session.propose_read_over(session.game.log, proposed)
    page = host.get("/").data.decode()
    assert "The camera read the game over" in page
    assert f"Turn {index + 1}: {proposed[index].describe()}" in page
    state = host.get("/api/state").get_json()
    after = score_report(session.game.replayed(proposed))
    assert [t["after"] for t in state["read_over"]["totals"]] == [
        p["score"] for p in after["players"]
    ]
    assert host.post(f"/api/read-over/{rid}/take").status_code == 200
    assert session.game.log == proposed
    assert session.phase == "finished" and host.get("/api/state").get_json()["read_over"] is None
    saved = read_record_file(session.record_path)
    assert saved["history"][-1]["action"] == "read over"
    assert saved["history"][-1]["was"]["tile"] == was.tile
    assert host.post(f"/api/read-over/{rid}/take").status_code == 409  # taken already


def test_the_game_kept_as_played_and_a_reading_over_overtaken_by_a_correction(host, session):
    """The host may keep the game as played; and a correction made on the page after the
    camera read the game over is the players' word: the stale reading is no longer offered."""
    proposed, _ = _read_over_at_the_end(session)
    played = list(session.game.log)
    rid = session.propose_read_over(played, proposed)
    assert host.post(f"/api/read-over/{rid}/keep").status_code == 200
    assert session.game.log == played
    assert "The camera read the game over" not in host.get("/").data.decode()

    rid = session.propose_read_over(played, proposed)
    assert host.post("/api/undo").status_code == 200  # the host corrects the game meanwhile
    assert "The camera read the game over" not in host.get("/").data.decode()
    response = host.post(f"/api/read-over/{rid}/take")
    assert response.status_code == 409 and "changed since" in response.get_json()["error"]
    # a reading over of a log the game no longer has is not offered at all
    assert session.propose_read_over(played, proposed) is None


def test_a_game_read_over_with_nothing_to_correct_says_so(host, session):
    play(session, 6)
    session.end_game()
    assert session.propose_read_over(session.game.log, list(session.game.log)) is None
    assert "read the game over: nothing to correct" in host.get("/").data.decode()


def test_export_and_upload_a_record(host, session, tmp_path):
    play(session, 12)
    response = host.get("/record.json")
    assert "attachment" in response.headers["Content-Disposition"]
    record = json.loads(response.data)
    assert score_report(load_record(record)) == score_report(session.game)
    host.post("/api/undo")
    upload = {"record": (tmp_path.joinpath("r.json").open("wb+"), "r.json")}
    upload["record"][0].write(json.dumps(record).encode())
    upload["record"][0].seek(0)
    response = host.post("/api/record", data=upload, content_type="multipart/form-data")
    assert response.status_code == 200, response.get_json()
    assert len(session.game.log) == 12
    bad = {"record": (tmp_path.joinpath("b.json").open("wb+"), "b.json")}
    bad["record"][0].write(b"not json")
    bad["record"][0].seek(0)
    response = host.post("/api/record", data=bad, content_type="multipart/form-data")
    assert response.status_code == 400 and "JSON" in response.get_json()["error"]


# --- restart -----------------------------------------------------------------------------------
def test_restart_resumes_from_the_record_and_drops_the_pending_question(session, record_path):
    play(session, 20)
    session.undo()
    session.ask([_first_turn(session)], None)
    before = score_report(session.game)
    log = list(session.game.log)
    history = list(session.history)

    resumed = GameSession.open(record_path, PLAYERS)  # a new process would do exactly this
    assert resumed.game.log == log
    assert score_report(resumed.game) == before
    assert resumed.history == history
    assert not resumed.questions
    assert resumed.state()["players"] == session.state()["players"]


def test_record_is_rewritten_atomically(session, record_path):
    play(session, 5)
    assert not list(record_path.parent.glob(".game.json.*.tmp"))
    assert read_record_file(record_path) == json.loads(json.dumps(session.record()))


# --- live updates ------------------------------------------------------------------------------
def test_sse_stream_sends_state_with_commit_time_and_keepalives(app, session):
    client = app.test_client()
    response = client.get("/events", buffered=False)
    try:
        assert response.mimetype == "text/event-stream"
        chunks = iter(response.response)
        assert next(chunks).startswith(b"retry:")
        first = next(chunks).decode()
        assert first.startswith("event: state\ndata: ")
        data = json.loads(first.split("data: ", 1)[1])
        assert {"version", "committed", "totals", "projected", "html"} <= set(data)
        assert "scoreboard" in data["html"]
        play(session, 1)
        event = json.loads(next(chunks).decode().split("data: ", 1)[1])
        assert event["version"] > data["version"] and event["committed"] >= data["committed"]
        rest = [next(chunks) for _ in range(3)]  # the commit's event, then keep-alives (0.2 s)
        assert any(chunk.startswith(b": keep-alive") for chunk in rest)
    finally:
        response.close()
    assert session.bus.clients == 0


def test_bus_drops_clients_that_stop_reading():
    bus = EventBus(queue_size=4)
    slow = bus.subscribe()
    for n in range(10):
        bus.publish("state", {"n": n})
    assert slow.dropped and bus.clients == 0


# --- pictures ----------------------------------------------------------------------------------
def test_camera_snapshot_and_mjpeg(app, session):
    from meeplecam.webui.app import create_app
    from meeplecam.webui.feed import DemoFeed

    source = DemoFeed(session)

    app = create_app({"session": session, "token": TOKEN, "source": source, "mjpeg_fps": 20})
    client = app.test_client()
    snap = client.get("/camera.jpg")
    assert snap.mimetype == "image/jpeg" and snap.data[:2] == b"\xff\xd8"
    stream = client.get("/camera.mjpg?seconds=0.2")
    assert stream.mimetype == "multipart/x-mixed-replace"
    assert stream.data.count(b"--frame") >= 2


def test_board_svg_shows_tiles_followers_and_open_cells(host, session):
    play(session, 40)
    svg = host.get("/board.svg").data.decode()
    assert svg.count('class="tile"') == len(session.game.board.tiles)
    assert svg.count('class="follower"') == len(list(session.game.board.followers()))
    assert svg.count("data-fitting=") == len(session.game.board.frontier)
    page = host.get("/board").data.decode()
    assert "In the bag" in page and "Best chances" in page
    assert host.get("/board.svg?tile=nope").status_code == 400
    for tile in hints.bag(session.game):  # every tile's hints render (completions, followers)
        page = host.get(f"/board?tile={tile}").data.decode()
        assert page.count("Place it here") == len(hints.placements(session.game, tile)), tile


def test_the_board_shows_where_to_put_the_drawn_tile_until_the_board_reaches_it(host, session):
    """The camera reads the drawn tile on a spot beside the board (serve --drawn-spot 0,3):
    the board shows the spot, and says so, until a tile may be laid next to it."""
    session.watch_spot((0, 3))
    assert session.state()["drawn_spot"] == [0, 3]
    assert 'class="drawn-spot" data-cell="0,3"' in host.get("/board.svg").data.decode()
    assert "put the tile you draw there" in host.get("/board").data.decode()
    session.commit(Turn("B", 0, 1, 0))  # a cloister south of the start tile: (0, 2) is open
    assert session.state()["drawn_spot"] is None
    assert "drawn-spot" not in host.get("/board.svg").data.decode()
    assert "put the tile you draw there" not in host.get("/board").data.decode()


def test_demo_feed_asks_with_two_or_three_ranked_legal_options(session):
    from meeplecam.engine import Game, IllegalTurn
    from meeplecam.webui.feed import DemoFeed, DemoState

    feed = DemoFeed(session, seed=2, question_chance=1.0)
    asked = 0
    for _ in range(60):
        state = feed.step()
        if state is DemoState.WAIT:
            question = next(iter(session.questions.values()))
            assert 2 <= len(question.options) <= 3
            assert question.crop and question.crop[:2] == b"\xff\xd8"
            for option in question.options:  # every option is a legal turn now
                game = session.game
                trial = Game.start(
                    game.tileset, game.players, game.options, game.start_turn, game.log
                )
                try:
                    trial.apply(option)
                except IllegalTurn as exc:
                    raise AssertionError(option) from exc
            session.answer(question.id, len(question.options) - 1)
            asked += 1
    assert asked >= 5
    assert session.game.log and not session.questions


def test_pages_load_nothing_from_outside(host):
    import re

    for url in ("/", "/host?token=" + TOKEN):
        page = host.get(url).data.decode()
        outside = re.findall(r'(?:src|href|action)="((?:https?:)?//[^"]*)"', page)
        assert outside == [], url
    assert host.get("/static/app.js").status_code == 200
    assert host.get("/static/app.css").status_code == 200


def test_gingerbread_games_play_and_offer_the_gingerbread_correction(tmp_path):
    from pathlib import Path

    from meeplecam.engine import load_tile_file
    from meeplecam.webui.app import create_app

    root = Path(__file__).resolve().parents[2]
    extra = load_tile_file(root / "engine" / "data" / "gingerbread-template.toml")
    session = GameSession.open(
        tmp_path / "gb.json", PLAYERS, "winter+gingerbread", extra_types=extra
    )
    play(session, 60, seed=3)
    assert any(getattr(t, "gingerbread", None) for t in session.game.log)
    app = create_app({"session": session, "token": TOKEN})
    host = Host(app)
    page = host.get("/").data.decode()
    assert 'name="gb_at"' in page and "winter+gingerbread" in page
    assert host.get("/board.svg").data.count(b'class="gingerbread"') == (
        session.game.gingerbread is not None
    )
    resumed = GameSession.open(tmp_path / "gb.json", extra_types=extra)
    assert score_report(resumed.game) == score_report(session.game)


def test_a_form_posted_without_javascript_carries_the_csrf_token(host, session):
    import re

    page = host.get("/").data.decode()
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    assert token == host.csrf
    response = host.client.post("/api/end", data={"csrf_token": token})
    assert response.status_code == 302  # back to the page
    assert session.phase == "finished"


def test_the_host_removes_a_play_area_that_refuses_a_tile_on_the_table(host, session):
    from meeplecam.engine import Bounds

    session.play_area(Bounds(-1, 1, -1, 1))  # the camera's edge, too tight
    assert b"clear-table" in host.get("/").data
    assert host.post("/api/table/clear").status_code == 200
    assert session.game.options.table is None
    assert read_record_file(session.record_path)["options"]["table"] is None
    assert b"clear-table" not in host.get("/").data
