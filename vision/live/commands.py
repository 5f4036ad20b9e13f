"""``meeplecam replay``: the live pipeline over a recorded game (FORMATS.md "Replay").

The table geometry comes from ``--profile`` (a JSON file with ``grid_to_image``, or a profile
whose ``"live"`` object holds it), else from a ground-truth file beside the frames (``table.json``,
``truth.json`` or any ``*.json`` with ``grid_to_image``, ``tiles[].corners`` or ``homography`` +
``pitch_mm``: the synthetic renderer's output), else from the still-image table and grid detection
on the first settled frame.
"""

from __future__ import annotations

import argparse
import json
import sys

from meeplecam.cli import command


@command("replay", "run the live camera pipeline over a recorded game (video or folder of frames)")
def _parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="video file or folder of frames (natural name order)")
    p.add_argument("--json", action="store_true", help="print the recognised record as JSON")
    p.add_argument(
        "--players", required=True, help="follower colours in turn order, e.g. red,yellow"
    )
    p.add_argument("--tileset", default="winter", help="base, winter or winter+gingerbread")
    p.add_argument(
        "--tiles",
        metavar="FILE",
        help="your tile file for tiles the set leaves to you (the Gingerbread Man tiles)",
    )
    p.add_argument(
        "--profile",
        metavar="FILE",
        help="calibration profile (table geometry, follower colours, tile appearance)",
    )
    p.add_argument(
        "--model",
        metavar="FILE",
        help="appearance model of the tiles (meeplecam model build); default: the profile's, "
        "else learned during play",
    )
    p.add_argument("--debug", metavar="DIR", help="write every observation's picture here")
    p.add_argument(
        "--drawn-spot",
        metavar="X,Y",
        help="the cell beside the board where each drawn tile is put before it is laid (the "
        "start tile is 0,0; a negative X as --drawn-spot=-3,7): its type is read there (listed "
        "without --json)",
    )
    p.add_argument("--config", metavar="FILE", help="tracker settings (JSON) to override")
    p.add_argument(
        "--no-review",
        dest="review",
        action="store_false",
        help="keep every turn as it was read during play (by default the game is read over at "
        "its end, and two tiles read as each other's types are swapped back)",
    )
    p.set_defaults(handler=run)


def _progress(result, stage: str) -> None:
    """One line on the terminal, rewritten as the replay goes on (a long recording takes
    minutes)."""
    from meeplecam.engine import Turn

    done = "\n" if stage == "done" else ""
    turns = sum(isinstance(event, Turn) for event in result.game.log)
    print(
        f"\rreplay: {stage}, frame {result.frames}, {turns} turns, "
        f"{result.questions} questions   {done}",
        end="",
        file=sys.stderr,
        flush=True,
    )


def run(args: argparse.Namespace) -> int:
    from meeplecam.engine import IllegalStart, TileDefinitionError, TileSetError, load_tile_file
    from meeplecam.vision.errors import VisionError

    from .replay import run_replay
    from .spot import spot_for
    from .tracker import TrackerConfig

    players = [c.strip() for c in args.players.split(",") if c.strip()]
    try:
        config = None
        if args.config:
            with open(args.config, encoding="utf-8") as f:
                config = TrackerConfig.from_dict(json.load(f))
        spot = spot_for(args.drawn_spot, args.profile)
        if spot is not None:
            config = config or TrackerConfig()
            config.drawn_spot = spot
        own = load_tile_file(args.tiles) if args.tiles else None
        result = run_replay(
            args.source,
            players,
            args.tileset,
            args.profile,
            args.debug,
            config,
            args.model,
            own,
            args.review,
            _progress if sys.stderr.isatty() else None,
        )
    except (
        VisionError,
        IllegalStart,
        TileSetError,
        TileDefinitionError,
        OSError,
        KeyError,
        ValueError,
    ) as exc:
        print(f"meeplecam replay: {exc}", file=sys.stderr)
        return 1
    record = result.record()
    if args.json:
        print(json.dumps(record, indent=2))
    else:
        from meeplecam.engine import format_report

        reviewed = f", {len(result.reviewed)} corrected at the end" if result.reviewed else ""
        print(f"{len(record['turns'])} turns read, {result.questions} questions{reviewed}")
        if result.drawn:
            read = ", ".join(f"{tile} (turn {turns + 1})" for turns, tile in result.drawn)
            print(f"drawn tiles read on the spot: {read}")
        for warning in result.warnings:  # during play: before what reading over put right
            print(f"warning: {warning}")
        for correction in result.reviewed:
            print(f"turn {correction.index + 1} read over: {correction.describe()}")
        print(format_report(record["scores"]))
    return 0
