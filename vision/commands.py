"""``meeplecam scan`` and ``meeplecam model build``: registered with the CLI (imports stay lazy)."""

from __future__ import annotations

import argparse
import json
import sys

from meeplecam.cli import command


@command("scan", "read a photo of a table: outline, grid, every tile and follower")
def _scan_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("image", help="photo of the table (JPEG, PNG, …)")
    p.add_argument("--json", action="store_true", help="print the scan result as JSON")
    p.add_argument("--profile", metavar="FILE", help="table profile from calibration")
    p.add_argument(
        "--tileset",
        default="winter",
        help="tile set: base, winter (default, as replay), winter+gingerbread",
    )
    p.add_argument("--tiles", metavar="FILE", help="your tile file for tiles the set leaves to you")
    p.add_argument(
        "--model",
        metavar="FILE",
        help="appearance model (meeplecam model build), or a calibration profile that holds one "
        "(e.g. from meeplecam calibrate --tiles-photo SHEET ... --tiles-order whole-set)",
    )
    p.add_argument("--scans", metavar="DIR", help="build the appearance model from labelled scans")
    p.add_argument("--debug", metavar="DIR", help="write annotated images of every stage here")
    p.set_defaults(handler=run_scan)


@command("model", "build an appearance model from labelled tile images or known art")
def _model_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["build"], help="build: read the images, write the model")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--scans",
        metavar="DIR",
        help="folder with labels.csv (for unlabelled photos or scans of a whole set, see "
        "meeplecam calibrate --tiles-order whole-set)",
    )
    source.add_argument(
        "--art",
        choices=["winter", "scans"],
        help="the synthetic table's art: winter (the engine's drawings) or scans (the Winter "
        "scans in ../shared/data/winter-tiles)",
    )
    p.add_argument("--out", metavar="FILE", required=True, help="model JSON to write")
    p.add_argument(
        "--tileset", help="tile set of the model (default: winter with --art, else base)"
    )
    p.add_argument("--tiles", metavar="FILE", help="your tile file for tiles the set leaves to you")
    p.set_defaults(handler=run_model)


def _tileset(args):
    from meeplecam.engine import find_tileset, load_tile_file

    extra = load_tile_file(args.tiles) if getattr(args, "tiles", None) else None
    return find_tileset(args.tileset, extra)


def run_model(args: argparse.Namespace) -> int:
    from meeplecam.engine import TileDefinitionError, TileSetError

    from .errors import ModelError, VisionError
    from .model import build_from_art, build_from_folder, save_json
    from .synth import art

    try:
        if args.art == "scans" and not art.scans_available():
            raise ModelError(f"no tile scans in {art.SCANS_DIR}")
        args.tileset = args.tileset or ("winter" if args.art else "base")
        if args.art:
            model = build_from_art(_tileset(args), args.art)
        else:
            model = build_from_folder(args.scans, _tileset(args))
        save_json(model.to_json(), args.out)
    except (VisionError, TileSetError, TileDefinitionError, OSError) as exc:
        print(f"meeplecam model: {exc}", file=sys.stderr)
        return 1
    n = sum(len(v) for v in model.templates.values())
    print(f"wrote {args.out}: {n} images of {len(model.templates)} tile types")
    return 0


def run_scan(args: argparse.Namespace) -> int:
    from meeplecam.engine import TileDefinitionError, TileSetError

    from .errors import CameraCovered, NoTiles, VisionError
    from .model import build_from_folder, load_model, model_from_profile
    from .scan import Scanner, read_image

    try:
        tileset = _tileset(args)
        model = None
        if args.profile:
            model = model_from_profile(args.profile)
        if args.model:
            model = load_model(args.model)
        if args.scans:
            model = build_from_folder(args.scans, tileset)
        image = read_image(args.image)
        result = Scanner(tileset, model).scan(image, args.debug)
    except NoTiles as exc:
        print(f"meeplecam scan: {args.image}: empty table: {exc}", file=sys.stderr)
        return 1
    except CameraCovered as exc:
        print(f"meeplecam scan: {args.image}: {exc}", file=sys.stderr)
        return 1
    except (VisionError, TileSetError, TileDefinitionError) as exc:
        print(f"meeplecam scan: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result))
    else:
        print(f"table: {result['table']}")
        print(f"{len(result['tiles'])} tiles, {len(result['meeples'])} followers")
        for t in result["tiles"]:
            print(
                f"  ({t['x']:+d},{t['y']:+d}) {t['tile']} {t['rotation']:3d}  {t['confidence']:.2f}"
            )
    return 0
