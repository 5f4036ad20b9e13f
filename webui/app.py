"""The Flask app: ``create_app(config)`` builds one app around one :class:`GameSession`.

Reading is open to the LAN. Every POST changes the game and needs (1) the host token, from the
cookie set by the host link or an ``X-Host-Token`` header, and (2) the per-session CSRF token, in
the ``X-CSRF-Token`` header or a ``csrf_token`` form field. Bad input gets a 4xx with a message.
"""

from __future__ import annotations

import hmac
import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

from flask import (
    Flask,
    Response,
    abort,
    jsonify,
    make_response,
    redirect,
    render_template,
    request,
    stream_with_context,
    url_for,
)
from flask import (
    session as cookie_session,
)
from werkzeug.exceptions import HTTPException

from meeplecam.engine import (
    CATEGORIES,
    TILESET_NAMES,
    FarmScoring,
    IllegalTurn,
    RecordError,
    TileSetError,
    hints,
)
from meeplecam.engine.game import IllegalStart
from meeplecam.engine.tiles import HALVES, SIDES

from . import calibrate
from .boardsvg import render_board
from .colours import COLOUR_CHOICES, css_colour, ink_for, letter
from .forms import BadInput, payload, setup_from, turn_from, whole
from .pictures import history_chart, qr_svg
from .session import GameSession, SessionError

HOST_COOKIE = "meeplecam_host"
POSITIONS = ("C", *SIDES, *HALVES)


def create_app(config: Mapping[str, Any]) -> Flask:
    """``config``: ``session`` (GameSession, required), ``token`` (host token), ``secret_key``,
    ``source`` (turn source with ``frame()``, optional), ``public_url`` (for the QR codes),
    ``keepalive`` (seconds between SSE comments), ``mjpeg_fps``, ``profile`` (the calibration
    profile given to ``serve``: where the calibration page saves; default beside the record)."""
    app = Flask(__name__)
    game_session: GameSession = config["session"]
    token: str = config.get("token") or secrets.token_urlsafe(16)
    app.config.update(
        SECRET_KEY=config.get("secret_key") or secrets.token_hex(32),
        SESSION_COOKIE_SAMESITE="Lax",
        MAX_CONTENT_LENGTH=2 * 1024 * 1024,
        MEEPLECAM_TOKEN=token,
    )
    source = config.get("source")
    keepalive = float(config.get("keepalive", 15.0))
    mjpeg_fps = float(config.get("mjpeg_fps", 5.0))
    public_url = config.get("public_url")
    desk = calibrate.Desk(
        source, calibrate.profile_path(config.get("profile"), game_session.record_path)
    )
    app.extensions["meeplecam"] = {
        "session": game_session,
        "token": token,
        "source": source,
        "calibration": desk,
    }

    def fragments(state: dict) -> dict:
        with app.app_context():
            return {
                "scoreboard": render_template("_scoreboard.html", s=state, **_helpers()),
                "questions": render_template("_questions.html", s=state, **_helpers()),
                "turns": render_template("_turns.html", s=state, **_helpers()),
                "notices": render_template("_notices.html", s=state, **_helpers()),
            }

    game_session.fragments = fragments

    # --- security ---------------------------------------------------------------------------
    def is_host() -> bool:
        given = request.cookies.get(HOST_COOKIE) or request.headers.get("X-Host-Token") or ""
        return hmac.compare_digest(given.encode(), token.encode())

    def csrf_token() -> str:
        if "csrf" not in cookie_session:
            cookie_session["csrf"] = secrets.token_urlsafe(24)
        return cookie_session["csrf"]

    @app.before_request
    def guard():
        if request.method != "POST":
            return None
        if not is_host():
            return error(403, "changing the game needs the host's link (with its token)")
        given = request.headers.get("X-CSRF-Token") or request.form.get("csrf_token") or ""
        expected = cookie_session.get("csrf", "")
        if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
            return error(403, "missing or wrong CSRF token: reload the page")
        return None

    def wants_json() -> bool:
        """Scripts and the page's fetch() get JSON; a plain form post (no JavaScript) gets HTML."""
        return (
            request.is_json
            or request.headers.get("X-Requested-With") == "fetch"
            or ("Accept" in request.headers and request.accept_mimetypes.best == "application/json")
        )

    def error(status: int, message: str):
        if wants_json() or (request.method == "GET" and request.path.startswith("/api")):
            return make_response(jsonify(error=message), status)
        back = "/calibrate" if "calibrate" in request.path and is_host() else "/"
        page = render_template("error.html", message=message, status=status, back=back)
        return make_response(page, status)

    @app.errorhandler(BadInput)
    def bad_input(exc):
        return error(400, str(exc))

    @app.errorhandler(RecordError)
    def bad_record(exc):
        return error(400, str(exc))

    @app.errorhandler(IllegalTurn)
    def illegal(exc):
        return error(422, str(exc))

    @app.errorhandler(SessionError)
    def conflict(exc):
        return error(409, str(exc))

    @app.errorhandler(calibrate.NoPicture)
    @app.errorhandler(calibrate.Busy)
    def calibration_conflict(exc):
        return error(409, str(exc))

    @app.errorhandler(calibrate.CalibrationFailed)
    def calibration_failed(exc):
        return error(422, str(exc))

    @app.errorhandler(HTTPException)
    def http_error(exc):
        if exc.code is not None and exc.code < 400:  # redirects are not errors
            return exc
        return error(exc.code or 500, exc.description or exc.name)

    def done(message: str = "ok"):
        if wants_json():
            return jsonify(ok=True, message=message, version=game_session.version)
        return redirect(url_for("index"))

    def _helpers() -> dict:
        return {
            "css_colour": css_colour,
            "ink_for": ink_for,
            "letter": letter,
            "categories": CATEGORIES,
            "positions": POSITIONS,
            "chart": history_chart,
            "public_url": public_url,
        }

    # --- pages ------------------------------------------------------------------------------
    @app.get("/")
    def index():
        state = game_session.state()
        return render_template(
            "index.html",
            s=state,
            host=is_host(),
            csrf=csrf_token(),
            colours=COLOUR_CHOICES,
            tilesets=[t for t in TILESET_NAMES if t != "winter+gingerbread" or _has_gb()],
            farm_methods=[m.value for m in FarmScoring],
            camera=source is not None,
            spectator_qr=qr_svg(public_url or request.host_url),
            **_helpers(),
        )

    def _has_gb() -> bool:
        try:
            from meeplecam.engine import find_tileset

            find_tileset("winter+gingerbread", game_session.extra_types)
            return True
        except TileSetError:
            return False

    @app.get("/host")
    def host():
        given = request.args.get("token", "")
        if given and hmac.compare_digest(given.encode(), token.encode()):
            base = public_url or request.host_url
            link = f"{base.rstrip('/')}/host?token={token}"
            response = make_response(
                render_template(
                    "host.html", link=link, qr=qr_svg(link), spectator=base, csrf=csrf_token()
                )
            )
            response.set_cookie(
                HOST_COOKIE, token, max_age=30 * 86400, httponly=True, samesite="Lax"
            )
            return response
        if is_host():
            return redirect(url_for("index"))
        return error(403, "this is the host's page: open the host link shown on the host screen")

    @app.get("/api/state")
    def api_state():
        state = game_session.state()
        state["host"] = is_host()
        return jsonify(state)

    @app.get("/api/csrf")
    def api_csrf():
        return jsonify(csrf=csrf_token(), host=is_host())

    @app.get("/events")
    def events():
        stream = game_session.bus.stream(game_session.event_text(), keepalive)
        response = Response(stream_with_context(stream), mimetype="text/event-stream")
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Accel-Buffering"] = "no"
        return response

    @app.get("/board")
    def board_fragment():
        tile = request.args.get("tile") or None
        with game_session.lock:
            game = game_session.game
            if tile is None:
                tile = game_session.drawn_tile
            if tile is not None and (tile not in game.tileset or game.remaining.get(tile, 0) <= 0):
                tile = None
            placements = hints.placements(game, tile) if tile else []
            spot = game_session.spot_in_use
            view = {
                "svg": render_board(game, tile, drawn_spot=spot),
                "spot": spot,
                "tile": tile,
                "bag": hints.bag(game),
                "tiles_left": game.tiles_left,
                "placements": [
                    {
                        "x": p.x,
                        "y": p.y,
                        "rotation": p.rotation,
                        "completes": [
                            {
                                "kind": str(c.kind),
                                "tiles": c.tiles,
                                "points": c.points,
                                "owners": c.owners,
                            }
                            for c in p.completes
                        ],
                        "points": p.points,
                        "best": max(p.points.values(), default=0),
                        "spots": [f"{s.at} ({s.role})" for s in p.follower_spots],
                    }
                    for p in placements
                ],
                "last_spots": [
                    {"at": s.at, "role": s.role} for s in hints.last_tile_follower_spots(game)
                ],
                "last": game.last_placed,
                "unfillable": hints.unfillable_cells(game),
                "open": sorted(hints.open_cells(game), key=lambda c: -c.chance),
                "players": len(game.players),
                "version": game_session.version,
            }
        return render_template("_board.html", v=view, host=is_host(), **_helpers())

    @app.get("/board.svg")
    def board_svg():
        tile = request.args.get("tile") or None
        with game_session.lock:
            if tile is not None and tile not in game_session.game.tileset:
                raise BadInput(f"unknown tile type {tile!r}")
            svg = render_board(game_session.game, tile, drawn_spot=game_session.spot_in_use)
        return Response(svg, mimetype="image/svg+xml")

    @app.get("/record.json")
    def record_json():
        record = game_session.record()
        body = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
        stamp = time.strftime("%Y%m%d-%H%M")
        return Response(
            body,
            mimetype="application/json",
            headers={"Content-Disposition": f'attachment; filename="meeplecam-{stamp}.json"'},
        )

    @app.get("/qr.svg")
    def qr():
        return Response(qr_svg(public_url or request.host_url), mimetype="image/svg+xml")

    # --- camera -----------------------------------------------------------------------------
    jpeg_cache: list = [None, b""]  # the last frame encoded, shared by all viewers

    def current_frame():
        from . import camera

        image = source.frame() if source is not None else None
        if image is None:
            image = camera.no_signal()
        if jpeg_cache[0] is not image:
            jpeg_cache[1] = camera.jpeg(image)
            jpeg_cache[0] = image
        return jpeg_cache[1]

    @app.get("/camera.jpg")
    def camera_jpg():
        return Response(
            current_frame(), mimetype="image/jpeg", headers={"Cache-Control": "no-store"}
        )

    @app.get("/camera.mjpg")
    def camera_mjpg():
        limit = float(request.args.get("seconds", 600))

        def frames():
            end = time.monotonic() + limit
            while time.monotonic() < end:
                data = current_frame()
                yield (
                    b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                    + str(len(data)).encode()
                    + b"\r\n\r\n"
                    + data
                    + b"\r\n"
                )
                time.sleep(1.0 / mjpeg_fps)

        return Response(frames(), mimetype="multipart/x-mixed-replace; boundary=frame")

    @app.get("/question/<int:qid>/crop.jpg")
    def question_crop(qid: int):
        with game_session.lock:
            question = game_session.questions.get(qid)
            crop = question.crop if question else None
        if crop is None:
            abort(404, "no picture for this question")
        return Response(crop, mimetype="image/jpeg")

    @app.get("/notice/<int:nid>.jpg")
    def notice_image(nid: int):
        with game_session.lock:
            image = next((n.image for n in game_session.notices if n.id == nid), None)
        if image is None:
            abort(404, "no picture for this notice")
        return Response(image, mimetype="image/jpeg")

    # --- changes (host only, CSRF-checked in guard) -----------------------------------------
    @app.post("/api/questions/<int:qid>/answer")
    def answer(qid: int):
        data = payload()
        if "option" in data and data["option"] not in (None, ""):
            option = whole(data["option"], "option")
            game_session.answer(qid, option - 1 if data.get("one_based") else option)
        else:
            game_session.answer(qid, turn_from(data, len(game_session.game.log) + 1))
        return done("answered")

    @app.post("/api/questions/<int:qid>/dismiss")
    def dismiss(qid: int):
        game_session.dismiss(qid)
        return done("dismissed")

    @app.post("/api/read-over/<int:rid>/take")
    def take_read_over(rid: int):
        game_session.take_read_over(rid)
        return done("corrected as read over")

    @app.post("/api/read-over/<int:rid>/keep")
    def keep_as_played(rid: int):
        game_session.keep_as_played(rid)
        return done("kept as played")

    @app.post("/api/turns")
    def add_turn():
        data = payload()
        game_session.commit(turn_from(data, len(game_session.game.log) + 1), source="page")
        return done("turn added")

    @app.post("/api/turns/<int:number>")
    def correct(number: int):
        data = payload()
        game_session.correct(number - 1, turn_from(data, number))
        return done(f"turn {number} corrected")

    @app.post("/api/turns/<int:number>/delete")
    def delete(number: int):
        game_session.correct(number - 1, None)
        return done(f"turn {number} deleted")

    @app.post("/api/undo")
    def undo():
        game_session.undo()
        return done("undone")

    @app.post("/api/drawn")
    def drawn():
        tile = payload().get("tile") or None
        if tile is not None and not isinstance(tile, str):
            raise BadInput("'tile' must name a tile type")
        game_session.drawn(tile)
        return done("drawn")

    @app.post("/api/setup")
    def setup():
        data = payload()
        tileset, players, options = setup_from(data)
        try:
            game_session.new_game(tileset, players, options)
        except (IllegalStart, TileSetError) as exc:
            raise BadInput(str(exc)) from None
        return done("new game")

    @app.post("/api/table/clear")
    def clear_table():
        game_session.clear_play_area()
        return done("play area removed")

    @app.post("/api/end")
    def end():
        game_session.end_game()
        return done("game ended")

    @app.post("/api/reopen")
    def reopen():
        game_session.reopen()
        return done("game reopened")

    @app.post("/api/record")
    def upload_record():
        if "record" in request.files:
            raw = request.files["record"].read()
            try:
                record = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise BadInput(f"the record is not JSON: {exc}") from None
        else:
            record = payload()
        if not isinstance(record, dict):
            raise BadInput("a record must be a JSON object")
        game_session.load(record)
        return done("game loaded")

    # --- calibration (host only: the page and its picture by is_host, changes by the guard) -----
    def calibration_done(message: str):
        if wants_json():
            return jsonify(ok=True, message=message, **calibrate.describe(desk.current))
        return redirect(url_for("calibrate_page"))

    @app.get("/calibrate")
    def calibrate_page():
        if not is_host():
            return error(403, "calibrating the camera needs the host's link (with its token)")
        problem = None
        if desk.stale():
            try:
                desk.run(fresh=True)
            except (calibrate.NoPicture, calibrate.Busy) as exc:
                problem = str(exc)
            except calibrate.CalibrationFailed:
                pass  # shown with the run
        run = desk.current
        return render_template(
            "calibrate.html",
            csrf=csrf_token(),
            r=calibrate.describe(run),
            problem=problem,
            target=str(desk.target),
            source_name=getattr(source, "name", "camera") if source is not None else None,
            colour_choices=COLOUR_CHOICES,
            pairs_text=calibrate.pairs_text,
        )

    @app.get("/calibrate/preview.jpg")
    def calibrate_preview():
        if not is_host():
            return error(403, "the calibration picture is the host's")
        run = desk.current
        if run is None or not run.preview_jpeg:
            abort(404, "no calibration picture: open the calibration page")
        return Response(
            run.preview_jpeg, mimetype="image/jpeg", headers={"Cache-Control": "no-store"}
        )

    @app.post("/api/calibrate")
    def calibrate_run():
        data = payload()
        fresh = calibrate.flag(data.get("fresh"))
        keep = calibrate.flag(data.get("keep"))
        names = calibrate.colour_names(
            data.get("colours")
            if request.mimetype == "application/json" or "colour" not in request.form
            else request.form.getlist("colour")
        )
        given = any(str(data.get(k) or "").strip() for k in ("corners", "taps"))
        current = desk.current
        options = None
        if fresh and (given or keep):
            raise BadInput("corners and taps belong to the picture shown: not to a new picture")
        if not fresh and not keep:
            if current is None:
                if given:
                    raise calibrate.NoPicture("there is no picture yet: open the calibration page")
            else:
                options = calibrate.options_from(data, current.size)
        if keep:
            found = current.result if current is not None else None
            if found is None:
                raise calibrate.NoPicture("there is no calibration to change: run it first")
            count = len(found.followers_px) if found.profile.followers is not None else 0
            if names is not None and len(names) != count:
                raise BadInput(
                    f"give {count} colour names, one per follower found, not {len(names)}"
                )
        run = desk.run(options, fresh=fresh, keep=keep, names=names)
        problems = len(run.result.warnings)
        return calibration_done(
            f"calibrated: {problems} warning(s)" if problems else "calibrated: check the preview"
        )

    @app.post("/api/calibrate/save")
    def calibrate_save():
        data = payload()
        number = data.get("run")
        number = whole(number, "run") if number not in (None, "") else None
        saved = desk.save(number, calibrate.flag(data.get("force")))
        return calibration_done(f"profile saved to {saved['path']}; {saved['applied']}")

    app.extensions["meeplecam"]["create_time"] = time.time()
    return app


__all__ = ["BadInput", "create_app"]
