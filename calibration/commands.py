"""``meeplecam markers`` (printable sheets) and ``meeplecam calibrate`` (the guided calibration).

OpenCV is imported inside the handlers, so other commands start fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from meeplecam.cli import command

DEFAULT_PROFILE = "meeplecam-profile.json"


@command("markers", "write printable calibration sheets (table-corner markers or a ChArUco board)")
def _markers_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="output file, .pdf or .png (printed at true scale)")
    p.add_argument("--charuco", action="store_true", help="a ChArUco board for camera intrinsics")
    p.add_argument("--paper", default="A4", help="A4 (default), A3 or letter")
    p.add_argument("--dpi", type=float, default=300.0, help="resolution (default 300)")
    p.add_argument("--size-mm", type=float, help="side of a corner marker in mm (default 60)")
    p.set_defaults(handler=run_markers)


def run_markers(args: argparse.Namespace) -> int:
    from . import markers

    try:
        if args.charuco:
            sheet = markers.charuco_sheet(args.paper, args.dpi)
        else:
            sheet = markers.corner_sheet(args.paper, args.dpi, args.size_mm)
        path = markers.write(sheet, args.out)
    except (ValueError, OSError) as exc:
        print(f"meeplecam markers: {exc}", file=sys.stderr)
        return 2
    w_mm, h_mm = sheet.size_mm
    print(
        f"{path}: {sheet.title}, {args.paper} {w_mm:.0f} x {h_mm:.0f} mm at {args.dpi:g} dpi. "
        "Print at 100 % (no fit to page) and check the 100 mm bar with a ruler."
    )
    return 0


@command("calibrate", "calibrate this table: outline, scale, follower colours (writes a profile)")
def _calibrate_parser(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--camera", type=int, metavar="N", help="webcam number (default 0)")
    src.add_argument("--video", metavar="FILE", help="a video of the table (its first frame)")
    src.add_argument("--frames", metavar="DIR", help="a folder of frames (the first)")
    src.add_argument("--image", metavar="FILE", help="a photo of the table")
    src.add_argument("--demo", action="store_true", help="a synthetic table (try it out)")
    p.add_argument("--seed", type=int, default=1, help="the --demo table (default 1)")
    p.add_argument(
        "-o",
        "--profile",
        default=DEFAULT_PROFILE,
        help=f"profile file to write or check (default {DEFAULT_PROFILE})",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="only report whether the current view still matches the profile",
    )
    p.add_argument(
        "--corners",
        metavar="'x,y x,y x,y x,y'",
        help="the four table corners (pixels, or fractions of the frame) instead of detecting them",
    )
    p.add_argument("--click", action="store_true", help="click the four corners in a window")
    p.add_argument(
        "--markers",
        action="store_true",
        help="find the table from the printed corner markers (meeplecam markers)",
    )
    p.add_argument(
        "--colours",
        metavar="NAMES",
        help="follower colour names left to right, e.g. red,yellow,green,blue,black",
    )
    p.add_argument(
        "--followers",
        metavar="'x,y x,y ...'",
        help="follower positions (pixels) instead of finding them",
    )
    p.add_argument("--no-followers", action="store_true", help="skip the follower colours")
    p.add_argument(
        "--charuco",
        metavar="SOURCE",
        help="folder or video of ChArUco board views (camera intrinsics, optional)",
    )
    p.add_argument(
        "--scans",
        metavar="DIR",
        help="folder of labelled tile scans (labels.csv) for this copy's appearance",
    )
    p.add_argument(
        "--tiles-photo",
        metavar="IMAGE",
        action="append",
        help="a photo of tiles laid north up in rows, a finger's width apart (with --tiles-order); "
        "repeat it for several photos, or give scanner sheets of tiles on white paper",
    )
    p.add_argument(
        "--tiles-order",
        metavar="LETTERS",
        help="the tiles' letters in the photos, rows left to right, far row first: D,A,B,... ; or "
        "'whole-set': the photos hold the whole tile set, each tile once, in any order and any "
        "rotation (letters and rotations are then read from the tiles' shapes and the set's "
        "counts; give --tileset, e.g. base)",
    )
    p.add_argument("--tileset", default="winter", help="tile set of the tiles (default winter)")
    p.add_argument(
        "--preview",
        metavar="PNG",
        help="where to draw what was found (default: beside the profile)",
    )
    p.add_argument(
        "--drawn-spot",
        metavar="X,Y",
        help="mark the cell beside the board where the players put the tile just drawn (the "
        "start tile is 0,0; a negative X as --drawn-spot=-3,7): serve and replay with this "
        "profile read the drawn tile there",
    )
    p.add_argument("--force", action="store_true", help="save even when a step warned")
    p.set_defaults(handler=run_calibrate)


def run_calibrate(args: argparse.Namespace) -> int:
    from meeplecam.vision.errors import VisionError

    from .errors import CalibrationError

    try:
        frame, described = grab(args)
        print(f"meeplecam calibrate: frame from {described}")
        if args.check:
            return _check(args, frame)
        return _calibrate(args, frame)
    except (CalibrationError, VisionError, OSError) as exc:
        print(f"meeplecam calibrate: {exc}", file=sys.stderr)
        return 1


def grab(args: argparse.Namespace):
    """One frame from the chosen source, and a description of it."""

    from meeplecam.vision.live.sources import CameraSource, FolderSource, VideoSource

    from .errors import NoFrame

    if args.demo:
        from .demo import demo_view

        with_markers = ", corner markers laid" if args.markers else ""
        frame = demo_view(args.seed, markers=args.markers)[0]
        return frame, f"the synthetic demo table (seed {args.seed}{with_markers})"
    if args.image:
        return _photo(args.image), args.image
    if args.video or args.frames:
        source = VideoSource(args.video) if args.video else FolderSource(args.frames)
        try:
            frame = source.read()
        finally:
            source.close()
        if frame is None:
            raise NoFrame(f"{args.video or args.frames}: no frame in it")
        return frame, args.video or args.frames
    index = args.camera or 0
    source = CameraSource(index)
    try:
        frame = _settled_camera_frame(source)
    finally:
        source.close()
    if frame is None:
        raise NoFrame(
            f"camera {index} gave no picture ({source.status}); try --camera N, or "
            "--demo to try calibration on a synthetic table"
        )
    return frame, f"camera {index}"


def _photo(path: str):
    """A photo for calibration, or NoFrame saying why there is none."""
    from meeplecam.vision.errors import ImageUnreadable
    from meeplecam.vision.scan import read_image

    from .errors import NoFrame

    try:
        return read_image(path)
    except ImageUnreadable as exc:
        raise NoFrame(str(exc)) from None


def _settled_camera_frame(source, warmup_s: float = 2.0, timeout_s: float = 8.0):
    """The newest frame after the camera's exposure has settled for a moment."""
    import time

    start = time.monotonic()
    frame = None
    while time.monotonic() - start < timeout_s:
        got = source.read()
        if got is not None:
            frame = got
            if time.monotonic() - start >= warmup_s:
                break
        time.sleep(0.05)
    return frame


def _charuco_frames(spec: str) -> list:
    from meeplecam.vision.live.sources import open_source

    source = open_source(spec)
    try:
        return [f for f in source][:60]
    finally:
        source.close()


def _calibrate(args: argparse.Namespace, frame) -> int:
    import cv2

    from meeplecam.vision.live.spot import parse_spot

    from . import wizard
    from .errors import CalibrationError
    from .table import click_corners, parse_points

    try:
        spot = parse_spot(args.drawn_spot) if args.drawn_spot else None
    except ValueError as exc:
        raise CalibrationError(str(exc)) from None
    h, w = frame.shape[:2]
    options = wizard.Options(
        markers=args.markers,
        followers=not args.no_followers,
        scans=args.scans,
        tileset=args.tileset,
    )
    if args.corners:
        options.corners = parse_points(args.corners, w, h)
    elif args.click:
        options.corners = click_corners(frame)
    if args.colours:
        options.colour_names = [c.strip() for c in args.colours.split(",") if c.strip()]
    if args.followers:
        nums = [float(v) for v in args.followers.replace(";", " ").replace(",", " ").split()]
        options.taps = list(zip(nums[::2], nums[1::2], strict=False))
    if args.charuco:
        options.charuco_frames = _charuco_frames(args.charuco)
    if args.tiles_photo:
        photos = [_photo(name) for name in args.tiles_photo]
        options.tiles_photo = photos[0] if len(photos) == 1 else photos
        order = (args.tiles_order or "").replace(" ", ",").split(",")
        options.tiles_order = [t.strip() for t in order if t.strip()]
    result = wizard.run(frame, options, say=print)
    out = Path(args.profile)
    preview = Path(args.preview) if args.preview else out.with_suffix(".preview.png")
    cv2.imwrite(str(preview), result.preview)
    print(f"preview: {preview} (check the red table outline and the cyan tile grid)")
    if result.warnings and not args.force:
        print(
            f"not saved: {len(result.warnings)} warning(s) above; fix them, or --force to save "
            "anyway",
            file=sys.stderr,
        )
        return 1
    if spot is not None:
        result.profile.drawn_spot = list(spot)
    result.profile.save(out)
    print(f"profile saved: {out} (use it with --profile {out})")
    return 0


def _check(args: argparse.Namespace, frame) -> int:
    from meeplecam.vision.profile import load

    from . import wizard

    profile = load(args.profile)
    result = wizard.check(profile, frame)
    for line in result.lines:
        print(line)
    return 0 if result.ok else 1
