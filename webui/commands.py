"""``meeplecam serve``: the live web app for the phones beside the table.

Flask, OpenCV and segno are imported inside the handler, so other commands start fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import socket
import sys
from pathlib import Path

from meeplecam.cli import command

DEFAULT_PORT = 8080


@command("serve", "serve the live scoreboard, board and hints to phones on the LAN")
def _parser(p: argparse.ArgumentParser) -> None:
    source = p.add_mutually_exclusive_group()
    source.add_argument(
        "--camera", type=int, metavar="N", help="webcam index (default: the first found)"
    )
    source.add_argument("--video", metavar="FILE", help="read a recorded video instead of a camera")
    source.add_argument(
        "--frames", metavar="DIR", help="read a folder of frames (natural name order)"
    )
    source.add_argument(
        "--demo",
        nargs="?",
        const="table",
        choices=("table", "scripted"),
        help="no camera: 'table' (the default) films a game on the synthetic table and the "
        "vision pipeline reads it; 'scripted' plays turns straight into the game, asking "
        "now and then (--demo-interval, --demo-questions)",
    )
    p.add_argument("--profile", metavar="P", help="calibration profile of this table")
    p.add_argument(
        "--drawn-spot",
        metavar="X,Y",
        help="the cell beside the board where each player puts the tile just drawn, face up "
        "(the start tile is 0,0; a negative X as --drawn-spot=-3,7): the camera reads it there "
        "and the page hints where it fits",
    )
    p.add_argument(
        "--model",
        metavar="FILE",
        help="appearance model of your tiles (meeplecam model build); default: the profile's, "
        "else learned during play",
    )
    p.add_argument(
        "--host", default="0.0.0.0", help="address to listen on (default: all, for the LAN)"
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument(
        "--record",
        metavar="GAME.json",
        help="the saved game: resumed if it exists, rewritten after every change",
    )
    p.add_argument(
        "--tiles", metavar="FILE", help="your tile file (e.g. the Gingerbread Man tiles)"
    )
    p.add_argument("--players", default="Ann:red,Bo:yellow,Cleo:blue", metavar="NAME:COLOUR,...",
                   help="players of a new game, in turn order")  # fmt: skip
    p.add_argument("--tileset", default="winter", help="tile set of a new game (default winter)")
    p.add_argument("--demo-interval", type=float, default=3.0, metavar="S",
                   help="scripted demo: seconds between steps (default 3)")  # fmt: skip
    p.add_argument("--demo-questions", type=float, default=0.15, metavar="P",
                   help="scripted demo: chance that it asks instead of committing (default 0.15)")  # fmt: skip
    p.add_argument("--demo-seed", type=int, default=1, metavar="N", help="seed of the demo game")
    p.add_argument("--token", help="host token (default: kept next to the record, else random)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from meeplecam.engine import (
        RecordError,
        TileDefinitionError,
        TileSetError,
        load_tile_file,
    )
    from meeplecam.engine.game import IllegalStart

    from .session import GameSession

    def fail(message: str) -> int:
        print(f"meeplecam serve: {message}", file=sys.stderr)
        return 1

    try:
        players = parse_players(args.players)
        extra = load_tile_file(args.tiles) if args.tiles else None
        spot = _drawn_spot(args.drawn_spot, args.profile)
    except (ValueError, TileSetError, TileDefinitionError) as exc:
        return fail(str(exc))
    if args.profile and not Path(args.profile).exists():
        return fail(f"no profile file {args.profile}")

    if args.demo == "table" and args.record and Path(args.record).exists():
        return fail(
            f"{args.record} holds a game, and the demo table plays its own: resume it with "
            "--demo scripted, or give --record a new file"
        )

    where = None  # (kind, target) of the camera, video or frames
    if not args.demo:
        from . import camera

        if args.video:
            where = ("video", args.video)
        elif args.frames:
            where = ("frames", args.frames)
        else:
            index, tried = (
                (args.camera, [f"camera {args.camera}"])
                if args.camera is not None
                else camera.find_camera()
            )
            if index is None:
                print("meeplecam serve: no camera found. Tried:", file=sys.stderr)
                for line in tried:
                    print(f"  {line}", file=sys.stderr)
                print(
                    "Plug in a webcam (or pass --camera N, --video FILE, --frames DIR), or "
                    "start the demo game:\n  meeplecam serve --demo",
                    file=sys.stderr,
                )
                return 1
            where = ("camera", index)

    try:
        session = GameSession.open(args.record, players, args.tileset, extra_types=extra)
    except (RecordError, TileSetError, IllegalStart) as exc:
        return fail(str(exc))

    if args.demo == "table":
        from .tracking import DemoTableFeed

        source = DemoTableFeed(session, seed=args.demo_seed)
    elif args.demo == "scripted":
        from .feed import DemoFeed

        source = DemoFeed(
            session,
            seed=args.demo_seed,
            interval=args.demo_interval,
            question_chance=args.demo_questions,
            loop=True,
        )
    else:
        try:
            source = open_source(session, *where, args.profile, args.model, spot)
        except (OSError, ValueError) as exc:
            print(
                f"meeplecam serve: {exc}. Start the demo with: meeplecam serve --demo",
                file=sys.stderr,
            )
            return 1
    token, secret = host_secrets(args.record, args.token)
    base = f"http://{lan_address() if args.host in ('0.0.0.0', '::') else args.host}:{args.port}/"
    from .app import create_app

    app = create_app(
        {
            "session": session,
            "token": token,
            "secret_key": secret,
            "source": source,
            "public_url": base,
            "profile": args.profile,
        }
    )
    from werkzeug.serving import make_server

    try:
        server = make_server(args.host, args.port, app, threaded=True)
    except OSError as exc:
        return fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    print_links(base, token, session)
    signal.signal(signal.SIGTERM, _interrupt)
    source.start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nmeeplecam serve: stopping", file=sys.stderr)
    finally:
        source.stop()
        session.bus.close_all()
        server.server_close()
    return 0


def _drawn_spot(text: str | None, profile: str | None) -> tuple[int, int] | None:
    """The drawn-tile spot of ``--drawn-spot`` or the profile (ValueError when malformed)."""
    if not text and not profile:
        return None
    from meeplecam.vision.errors import VisionError
    from meeplecam.vision.live.spot import spot_for

    try:
        return spot_for(text, profile)
    except VisionError as exc:
        raise ValueError(str(exc)) from None


def open_source(
    session,
    kind: str,
    target,
    profile: str | None,
    model: str | None = None,
    drawn_spot: tuple[int, int] | None = None,
):
    """The live turn source: the vision tracker over the camera, video or frames; while the
    vision layer is missing, the frames alone (turns are then entered on the page)."""
    try:
        from .tracking import open_tracker_feed
    except ImportError:
        open_tracker_feed = None
    if open_tracker_feed is not None:
        try:
            return open_tracker_feed(session, kind, target, profile, model, drawn_spot)
        except ImportError:
            pass
    from .camera import CaptureSource

    print(
        "meeplecam serve: the live tracker (meeplecam.vision) is not available: the page shows "
        "the camera, and the host enters turns on the Board tab.",
        file=sys.stderr,
    )
    return CaptureSource(kind, target)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def parse_players(text: str):
    from meeplecam.engine import Player

    players = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, _, colour = item.partition(":")
        colour = colour.strip() or name.strip()
        players.append(Player(name.strip() or colour, colour))
    if not 2 <= len(players) <= 8:
        raise ValueError(f"--players: a game has 2 to 8 players, not {len(players)}")
    return players


def host_secrets(record: str | None, given: str | None) -> tuple[str, str]:
    """The host token and cookie secret; kept in a private file next to the record so that a
    restart keeps the host's phones signed in."""
    if record is None:
        return given or secrets.token_urlsafe(16), secrets.token_hex(32)
    path = Path(record)
    keep = path.with_name(f".{path.name}.host")
    data = {}
    if keep.exists():
        try:
            data = json.loads(keep.read_text("utf-8"))
        except (OSError, ValueError):
            data = {}
    token = given or data.get("token") or secrets.token_urlsafe(16)
    secret = data.get("secret") or secrets.token_hex(32)
    if data.get("token") != token or data.get("secret") != secret:
        fd = os.open(keep, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"token": token, "secret": secret}, handle)
    return token, secret


def lan_address() -> str:
    """This machine's address on the LAN (no packet is sent), else the loopback address."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.1"


def print_links(base: str, token: str, session) -> None:
    import segno

    host_link = f"{base}host?token={token}"
    game = session.game
    names = ", ".join(f"{p.name} ({p.colour})" for p in game.players)
    where = f"saved in {session.record_path}" if session.record_path else "not saved (no --record)"
    print(f"meeplecam: {len(game.log)} turns so far, {names}; {where}")
    if session.pending:
        print(f"{session.pending} question(s) waiting")
    print(f"Spectators (reading only): {base}")
    print(
        f"HOST link (answers questions, corrects turns), scan with the host's phone:\n  {host_link}"
    )
    with contextlib.suppress(UnicodeEncodeError, OSError):
        segno.make(host_link, error="l").terminal(compact=True)
    saved = "; the game is saved after every change" if session.record_path else ""
    print(f"Stop with Ctrl-C{saved}.")
    sys.stdout.flush()
