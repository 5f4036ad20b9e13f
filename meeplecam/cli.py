"""The ``meeplecam`` command: wires the layers together.

Subcommands register themselves with :func:`command` from a ``commands`` module in each layer
(``meeplecam.vision.commands``, ``meeplecam.calibration.commands``, ``meeplecam.webui.commands``)
and import their heavy dependencies inside the handler, so ``meeplecam score`` starts without
loading OpenCV or Flask.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

LAYER_COMMANDS = (
    "meeplecam.vision.synth.commands",
    "meeplecam.vision.commands",
    "meeplecam.vision.live.commands",
    "meeplecam.calibration.commands",
    "meeplecam.webui.commands",
)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {}


def command(name: str, help_text: str):
    """Register a subcommand: the decorated function adds its options to the parser and sets
    ``handler`` (a function of the parsed args returning the exit code)."""

    def register(configure: Callable[[argparse.ArgumentParser], None]):
        COMMANDS[name] = (help_text, configure)
        return configure

    return register


@command("score", "score a game record (meeplecam-record/1)")
def _score_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("record", help="game record JSON file")
    p.add_argument("--json", action="store_true", help="print the score report as JSON")
    p.add_argument(
        "--tiles",
        metavar="FILE",
        help="your tile file (TOML or JSON) for tiles the set leaves to you, e.g. Gingerbread Man",
    )
    p.set_defaults(handler=run_score)


def run_score(args: argparse.Namespace) -> int:
    from meeplecam.engine import (
        RecordError,
        TileDefinitionError,
        TileSetError,
        format_report,
        load_record,
        load_tile_file,
        read_record_file,
        score_report,
    )

    try:
        extra = load_tile_file(args.tiles) if args.tiles else None
        game = load_record(read_record_file(args.record), extra)
    except (RecordError, TileSetError, TileDefinitionError) as exc:
        print(f"meeplecam score: {exc}", file=sys.stderr)
        return 1
    report = score_report(game)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(format_report(report))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from meeplecam import __version__

    parser = argparse.ArgumentParser(
        prog="meeplecam",
        description="A webcam keeps the score of the Carcassonne game on your table.",
    )
    parser.add_argument("--version", action="version", version=f"meeplecam {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, configure) in COMMANDS.items():
        # no abbreviations: --tiles FILE must never be taken for --tileset where it is missing
        configure(sub.add_parser(name, help=help_text, description=help_text, allow_abbrev=False))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _load_plugins()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130


def _load_plugins() -> None:
    """Import the modules that register the other subcommands (each keeps its imports lazy)."""
    import importlib

    for module in LAYER_COMMANDS:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


if __name__ == "__main__":
    # Run as ``python -m meeplecam.cli``: the layers register with the imported module
    # ``meeplecam.cli``, not with this ``__main__`` copy, so hand over to it.
    from meeplecam.cli import main as package_main

    sys.exit(package_main())
