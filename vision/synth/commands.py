"""``meeplecam synth OUT --games N --seed S``: write a data set of rendered games with exact truth."""

from __future__ import annotations

import argparse
import sys
import time

from meeplecam.cli import command

PALETTES = ("winter", "summer", "scans", "copy")


@command("synth", "render synthetic games with exact ground truth")
def _parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="output folder (one subfolder per game)")
    p.add_argument("--games", type=int, default=1, help="number of games (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first game (default 0)")
    p.add_argument(
        "--palette",
        choices=PALETTES,
        default="winter",
        help="tile art: winter or summer drawings, scans (the Winter scans in "
        "../shared/data/winter-tiles), copy (the scans of one copy of the newest base-game art in "
        "../shared/data/real/scans, with --tileset base) (default winter)",
    )
    p.add_argument("--players", type=int, default=2, help="players per game (default 2)")
    p.add_argument("--size", default="1280x720", help="frame size WxH (default 1280x720)")
    p.add_argument("--tileset", default="winter", help="tile set (default winter)")
    p.add_argument(
        "--tiles", metavar="FILE", help="tile file for tiles the set leaves to you (GB1..GB6)"
    )
    p.add_argument("--turns", type=int, help="stop each game after this many turns (default: all)")
    p.add_argument(
        "--table",
        choices=("wood", "cloth", "white"),
        help="the table's surface (default: wood or cloth at random)",
    )
    p.add_argument("--video", action="store_true", help="also write video.mp4 per game")
    p.add_argument(
        "--drawn-spot",
        action="store_true",
        help="each drawn tile is put face up on a spot beside the board before it is laid (the "
        "spot's cell is in each frame's truth; replay it with --drawn-spot X,Y)",
    )
    p.set_defaults(handler=run)


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size must look like 1280x720, not {text!r}") from None
    if w < 64 or h < 64:
        raise ValueError("--size must be at least 64x64")
    return w, h


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from meeplecam.engine import TileDefinitionError, TileSetError, find_tileset, load_tile_file
    from meeplecam.engine.playout import random_game

    from .art import copy_scans_available, scans_available
    from .sequence import write_game

    try:
        size = parse_size(args.size)
        extra = load_tile_file(args.tiles) if args.tiles else None
        tileset = find_tileset(args.tileset, extra) if extra else find_tileset(args.tileset)
    except (ValueError, TileSetError, TileDefinitionError, OSError) as exc:
        print(f"meeplecam synth: {exc}", file=sys.stderr)
        return 2
    if not 2 <= args.players <= 5:
        print("meeplecam synth: --players must be 2 to 5", file=sys.stderr)
        return 2
    if args.palette == "scans" and not scans_available():
        print(
            "meeplecam synth: no tile scans in ../shared/data/winter-tiles; drawing winter art",
            file=sys.stderr,
        )
    if args.palette == "copy" and not copy_scans_available():
        print(
            "meeplecam synth: no tile scans in ../shared/data/real/scans; drawing winter art",
            file=sys.stderr,
        )
    out = Path(args.out)
    started = time.monotonic()
    total = 0
    for n in range(args.games):
        seed = args.seed + n
        game = random_game(tileset, args.players, seed=seed, max_turns=args.turns)
        label = f"game {n + 1}/{args.games}"

        def progress(count: int, planned: int, label: str = label) -> None:
            _bar(label, count, planned, time.monotonic() - started)

        try:
            total += write_game(
                out / f"game-{seed:05d}",
                game,
                seed,
                args.palette,
                size,
                args.video,
                progress,
                args.table,
                args.drawn_spot,
            )
        except ValueError as exc:
            print(f"\nmeeplecam synth: game {seed}: {exc}", file=sys.stderr)
            return 1
    if sys.stderr.isatty():
        print(file=sys.stderr)  # end the redrawn bar's line
    print(
        f"{total} frames of {args.games} game(s) in {out} ({time.monotonic() - started:.1f} s)",
        file=sys.stderr,
    )
    return 0


def _bar(label: str, frames: int, planned: int, elapsed: float) -> None:
    if not sys.stderr.isatty() and frames < planned:
        return  # a log file gets one line per game, not a redrawn bar per frame
    done = int(30 * frames / max(planned, 1))
    bar = "#" * done + "." * (30 - done)
    end = "\n" if not sys.stderr.isatty() else ""
    sys.stderr.write(f"\r{label} [{bar}] {frames}/{planned} frames, {elapsed:.0f} s{end}")
    sys.stderr.flush()
