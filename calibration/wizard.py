"""The guided calibration: one frame of the table in, a profile out, with a line for every step.

Each step is a function of the frame (and what earlier steps found) that returns its part of the
profile and the lines to show; :func:`run` chains them and the CLI (``meeplecam calibrate``) and the
web page both call it. Steps:

1. table outline: detected, four clicks, or the printed corner markers (drawn on a preview image
   for the user to confirm), stored as fractions of the frame;
2. scale: the tiles on the table (the start tile, or any tiles) fix the top-down homography;
3. camera (optional): intrinsics from ChArUco views;
4. follower colours: one follower of each colour in play on the table (found, or tapped);
5. tile appearance (optional): a folder of labelled scans, or a photo of tiles in rows in a given
   order (:mod:`tiles`), made into the vision layer's appearance model;

and :func:`check` compares a new view with a saved profile (``calibrate --check``).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import cv2
import numpy as np

from meeplecam.vision import lens
from meeplecam.vision.edges import refine_outline
from meeplecam.vision.profile import FrameInfo, Profile, Scale, TableOutline, lab_to_bgr
from meeplecam.vision.table import (
    MIN_CONTRAST,
    MIN_EDGE_SUPPORT,
    apply_homography,
    edge_image,
    order_corners,
    side_lengths,
    side_sharpness,
)

from . import colours as ccolours
from .config import settings
from .errors import CalibrationError
from .scale import (
    ScaleFit,
    fit_scale,
    fit_squares,
    fit_table_tiles,
    gauge_on_tile,
    square_up,
)
from .surface import Surface, segment
from .table import find_corner_markers, to_fractions


@dataclass
class Options:
    corners: np.ndarray | None = None  # four clicked corners (pixels), else detected
    markers: bool = False  # use the printed corner markers
    colour_names: list[str] | None = None  # names of the followers, left to right
    taps: list[tuple[float, float]] | None = None  # follower positions (pixels), else found
    followers: bool = True
    charuco_frames: list[np.ndarray] | None = None
    scans: str | None = None  # folder of labelled tile scans (labels.csv)
    tiles_photo: np.ndarray | None = None  # a photo of tiles laid in rows, north up
    tiles_order: list[str] | None = None  # their letters in reading order
    tileset: str = "winter"


@dataclass
class Result:
    profile: Profile
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    preview: np.ndarray | None = None
    surface: Surface | None = None
    followers_px: list[tuple[float, float, float]] = field(default_factory=list)
    quads: list[np.ndarray] = field(default_factory=list)  # the tiles' refined corners (pixels)
    sheets: list[np.ndarray] = field(default_factory=list)  # the corner markers' paper (pixels)

    @property
    def ok(self) -> bool:
        return not self.warnings


def run(frame: np.ndarray, options: Options | None = None, say=print) -> Result:
    """All steps on one frame; ``say`` receives each line as it is decided."""
    options = options or Options()
    h, w = frame.shape[:2]
    result = Result(
        Profile(FrameInfo(w, h), created=datetime.now(UTC).isoformat(timespec="seconds"))
    )

    def note(line: str) -> None:
        result.lines.append(line)
        say(line)

    def warn(line: str) -> None:
        result.warnings.append(line)
        note(f"WARNING: {line}")

    note(f"frame: {w}x{h}")
    # 1. Table outline.
    surface = segment(frame) if options.corners is None and not options.markers else None
    if options.markers:
        found = find_corner_markers(frame)
        corners, source = found.corners, "markers"
        result.sheets = [_sheet(square) for square in found.squares]
        note(f"step 1/5 table: the four corner markers {found.ids} were found")
    elif options.corners is not None:
        corners, source = np.asarray(options.corners, float), "clicks"
        note("step 1/5 table: the four corners you gave")
    else:
        corners, source = surface.corners, "detected"
        how = (
            " by the table's hue (its colour's outline was less straight)" if surface.by_hue else ""
        )
        note(
            f"step 1/5 table: outline detected{how} (weakest side straight along "
            f"{100 * min(surface.support):.0f} % of it); check it on the preview"
        )
        if not surface.trusted:
            # Measured on synthetic tables: below this the colour clusters of the table and the
            # floor merge and the outline is often off by 10 % of the table or more (unless its
            # hue alone outlines it, on straight sides).
            warn(
                f"the table's colour is close to the floor's (contrast {surface.contrast:.0f}, "
                f"needs {MIN_CONTRAST:.0f}), so its outline cannot be trusted: give the "
                "corners (--corners / --click) or use the corner markers (--markers)"
            )
        elif min(surface.support) < MIN_EDGE_SUPPORT:
            # A side that follows no straight edge was cut through the table (a lamp's glare
            # split its colour).
            side = ("top", "right", "bottom", "left")[int(np.argmin(surface.support))]
            where = (
                "no side of the detected outline follows a straight table edge"
                if max(surface.support) == 0
                else f"the detected outline's {side} side follows no straight table edge"
            )
            warn(
                f"{where}: confirm it on the preview, or give the corners (--corners / --click) "
                "or use the corner markers (--markers)"
            )
    if surface is None:
        surface = _surface_for(frame, corners)
    result.surface = surface
    result.profile.table = TableOutline(to_fractions(corners, w, h), source)
    note(
        "  corners (fractions of the frame): "
        + "  ".join(f"({u:.4f}, {v:.4f})" for u, v in result.profile.table.corners)
    )
    if surface.lens_k == 0.0 and min(surface.support) < MIN_EDGE_SUPPORT:
        note("  lens: not measured (the table's edges are not clear straight lines); k = 0")
    else:
        note(f"  lens: k = {surface.lens_k:+.4f} (division model, from the straight table edges)")
    # 2. Scale.
    fit = _marker_scale(frame, found, surface) if options.markers else fit_scale(frame, surface)
    result.quads = fit.quads
    hom = fit.homography @ np.diag([w, h, 1.0])
    result.profile.scale = Scale(
        (hom / hom[2, 2]).tolist(),
        float(settings("scale")["tile_mm"]),
        fit.tile_px,
        fit.tiles,
        fit.lens_k,
    )
    table_mm = result.profile.scale.to_table_points(corners, w, h)
    size_mm = (
        np.linalg.norm(table_mm[1] - table_mm[0]) + np.linalg.norm(table_mm[2] - table_mm[3])
    ) / 2
    depth_mm = (
        np.linalg.norm(table_mm[3] - table_mm[0]) + np.linalg.norm(table_mm[2] - table_mm[1])
    ) / 2
    what = (
        f"the four markers (lens k = {fit.lens_k:+.4f}, under which they are most square)"
        if options.markers
        else f"{fit.tiles} tile(s)"
    )
    note(
        f"step 2/5 scale: from {what}, a tile is {fit.tile_px:.1f} px "
        f"({fit.tile_px / 45.0:.2f} px/mm); the table measures {size_mm:.0f} x {depth_mm:.0f} mm"
    )
    lo, hi = settings("scale")["table_mm"]
    if not (lo <= min(size_mm, depth_mm) and max(size_mm, depth_mm) <= hi):
        warn(
            f"a {size_mm:.0f} x {depth_mm:.0f} mm table is implausible: the scale is wrong (was "
            "something else taken for the start tile?); lay the start tile alone on the table"
        )
    if fit.tiles > 1 and fit.rms_mm > settings("scale")["max_misfit_mm"]:
        warn(
            f"the {fit.tiles} tiles are not 45 mm squares under one perspective (misfit "
            f"{fit.rms_mm:.1f} mm): calibrate with the start tile alone on the table"
        )
    if options.markers and fit.tiles == 0:
        warn(
            "no start tile found beside the markers: the live grid starts at the start tile, so "
            "lay it on the table (alone) and calibrate again"
        )
    if options.markers:
        side = min(float(side_lengths(q).min()) for q in found.squares)
        if side < MARKER_MIN_PX:
            note(
                f"  note: the markers are small in the picture (the smallest side {side:.0f} px): "
                "on synthetic tables 1280x720 gave a median error of 0.95 mm where 1920x1080 "
                "gave 0.26 mm; a higher camera resolution makes it better"
            )
    elif fit.tile_px < 30:
        note(
            f"  note: tiles are small in the picture ({fit.tile_px:.0f} px): the scale is only about "
            f"{100 * 0.5 / fit.tile_px:.0f} % certain; a higher camera resolution, more tiles or "
            "the corner markers make it better"
        )
    # 3. Camera.
    if options.charuco_frames:
        from .camera import calibrate

        intr = calibrate(options.charuco_frames)
        result.profile.camera = intr.to_profile()
        note(f"step 3/5 {intr.summary()}")
        if intr.rms_px > 1.0:
            warn(
                f"the ChArUco reprojection error is {intr.rms_px:.2f} px (above 1 px): "
                "take sharper views with the board flat"
            )
    else:
        note("step 3/5 camera: skipped (optional: --charuco FRAMES with views of the board)")
    # 4. Follower colours.
    if options.followers:
        _followers(frame, surface, fit.tile_px, options, result, note, warn)
    else:
        note("step 4/5 followers: skipped")
    # 5. Tile appearance.
    if options.scans or options.tiles_photo is not None:
        from meeplecam.engine import find_tileset

        tileset = find_tileset(options.tileset)
        if options.scans:
            from meeplecam.vision.model import build_from_folder

            model = build_from_folder(options.scans, tileset)
            where = options.scans
        else:
            from .tiles import appearance_from_rows

            model = appearance_from_rows(options.tiles_photo, options.tiles_order or [], tileset)
            where = "the photo of tiles in rows"
        result.profile.appearance = model.to_json()
        note(f"step 5/5 tiles: appearance of {len(model.templates)} tile types from {where}")
    else:
        note(
            "step 5/5 tiles: learned during play (optional: --scans FOLDER with labels.csv, or "
            "--tiles-photo PHOTO --tiles-order LETTERS)"
        )
    result.profile.reference = reference(frame)
    result.preview = preview(frame, result)
    return result


MARKER_LENS_STEP = 0.01  # the lens k tried for the markers: the table edges' k +- 0.3
MARKER_LENS_STEPS = 30
MARKER_TILE_SLACK_MM = 2.0  # a tile's opposite sides further off 45 mm apart are squared up
MARKER_TILE_TOLERANCE = 0.1  # then each side under the markers' homography: 45 mm +- 10 %
MARKER_MIN_PX = 40.0  # a marker side shorter than this in the picture: too small to be precise


def _marker_scale(frame: np.ndarray, found, surface: Surface) -> ScaleFit:
    """The homography from the four printed markers: squares of known size far apart fix both
    the perspective and the scale. The lens is the k near the table edges' (``surface``'s)
    under which the four squares are most nearly squares: the markers lie where the lens bends
    most, in the frame's corners, and there the one-parameter lens that straightens the table's
    edges can be a pixel out (``bench/calibration.py --markers --scenes 20``: with that lens
    the median error was 0.34 mm and the worst 3.0; chosen so, 0.21 and 2.6). The origin and
    the axes are the start tile's, as without markers (the live grid starts there); without a
    tile, the first marker's."""
    size = (frame.shape[1], frame.shape[0])

    def fit(k: float):
        squares = [lens.undistort(order_corners(q), k, size) for q in found.squares]
        table = lens.undistort(found.corners, k, size)
        init, _ = fit_table_tiles(table, squares, found.side_mm)
        return fit_squares(squares, found.side_mm, iterations=30, init=init)

    from scipy.optimize import minimize_scalar

    step = MARKER_LENS_STEP
    ks = surface.lens_k + step * np.arange(-MARKER_LENS_STEPS, MARKER_LENS_STEPS + 1)
    best = float(ks[int(np.argmin([fit(k)[1] for k in ks]))])
    nearest = minimize_scalar(
        lambda k: fit(k)[1], bounds=(best - step, best + step), method="bounded"
    )
    k = float(nearest.x)
    hom, rms = fit(k)
    tile_mm = float(settings("scale")["tile_mm"])
    side_px = float(np.mean([side_lengths(q).mean() for q in found.squares]))
    tile = _tile_among_markers(frame, found, surface, hom, k, tile_mm)
    if tile is None:
        return ScaleFit(hom, k, side_px * tile_mm / found.side_mm, 0, rms, list(found.squares))
    hom, _ = gauge_on_tile(hom, [tile], tile_mm)
    tile = lens.distort(tile, k, size)
    side_px = float(side_lengths(tile).mean())
    return ScaleFit(hom, k, side_px, 1, rms, [tile])


def _tile_among_markers(frame, found, surface: Surface, hom, lens_k: float, tile_mm: float):
    """The start tile's corners (undistorted pixels) on a table with the corner markers, or
    None: a tile as calibration finds one without markers, the printed sheets left out, its
    size checked against the markers' homography (a side missed against a city of the table's
    colour put back a tile's side from the opposite one)."""
    size = (frame.shape[1], frame.shape[0])
    objects = surface.objects_mask.copy()
    for square in found.squares:
        cv2.fillPoly(objects, [np.round(_sheet(square)).astype(np.int32)], 0)
    try:
        quads = fit_scale(frame, replace(surface, objects_mask=objects, lens_k=lens_k)).quads
    except CalibrationError:
        return None
    if not quads:
        return None
    sharpness = side_sharpness(edge_image(frame), quads[0])
    mm = apply_homography(hom, lens.undistort(quads[0], lens_k, size))
    mm = square_up(mm, sharpness, tile_mm, MARKER_TILE_SLACK_MM)
    sides = side_lengths(mm)
    if np.abs(sides / tile_mm - 1).max() > MARKER_TILE_TOLERANCE:
        return None
    return apply_homography(np.linalg.inv(hom), mm)


def _sheet(square: np.ndarray) -> np.ndarray:
    """A corner marker's paper around its black square (pixels): the printed sheet is 1.17
    times the square, and a little more is left for its shadow and blur."""
    centre = square.mean(axis=0)
    return centre + (square - centre) * 1.5


def _surface_for(frame: np.ndarray, corners: np.ndarray) -> Surface:
    """A surface for given corners (clicked, or the markers' paper corners, which stay as
    given): the detected one where the outline detection finds this table (its lens from the
    table's edges, which in a strongly distorted view bow away from the lines between the
    corners too far for a search from them, and the things on it told from the table around
    them); else the table colour from inside the corners, the objects unlike it, and the lens
    from the edges near the lines between the corners."""
    corners = np.asarray(corners, float)
    limit = 0.01 * float(np.linalg.norm(corners[2] - corners[0]))
    try:
        found = segment(frame)
    except CalibrationError:
        found = None
    if found is not None and np.linalg.norm(found.corners - corners, axis=1).max() <= limit:
        return replace(found, corners=corners)
    h, w = frame.shape[:2]
    mask = np.zeros((h, w), np.uint8)
    cv2.fillPoly(mask, [np.round(corners).astype(np.int32)], 1)
    lab = cv2.cvtColor(cv2.GaussianBlur(frame, (5, 5), 0), cv2.COLOR_BGR2Lab).astype(np.float32)
    colour = np.median(lab[mask > 0], axis=0)
    dist = np.linalg.norm(lab - colour, axis=2)
    tol = max(12.0, 2.5 * float(np.median(dist[mask > 0])))
    objects = ((dist > tol) & (mask > 0)).astype(np.uint8)
    inner = cv2.erode(mask, np.ones((9, 9), np.uint8))
    objects = cv2.morphologyEx(objects & inner, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    _, lens_k, support = refine_outline(frame, corners)
    if min(support) < MIN_EDGE_SUPPORT:
        lens_k = 0.0
    return Surface(corners, mask, objects, colour, lens_k, support=support)


def _followers(frame, surface, tile_px, options, result, note, warn) -> None:
    h, w = frame.shape[:2]
    radius = max(2.0, 0.12 * tile_px)
    table_light = ccolours.local_background(frame, 2 * tile_px)
    if options.taps:
        taps = np.asarray(options.taps, float).reshape(-1, 2)
        spots = [(float(x), float(y), radius) for x, y in taps]
        # The figure nearest each tap (a standing follower is about a third of a tile tall),
        # looked for no further than halfway to the next tap: a neighbour is never taken, nor,
        # with a wrong tile size, a wide patch of table.
        gaps = np.linalg.norm(taps[:, None] - taps[None], axis=2)
        reach = np.minimum(
            0.35 * tile_px, 0.5 * (gaps + np.diag(np.full(len(taps), np.inf))).min(1)
        )
        samples = [
            ccolours.tapped_follower_pixels(frame, (x, y), max(2.0, r), table_light)
            for (x, y), r in zip(taps, reach, strict=True)
        ]
        how = "tapped"
    else:
        tiles = np.zeros((h, w), np.uint8)
        for q in result.quads:
            cv2.fillPoly(tiles, [np.round(q).astype(np.int32)], 1)
        # A tile's shadow and its anti-aliased rim lie just outside its corners.
        grow = 2 * max(2, round(0.08 * tile_px)) + 1
        tiles = cv2.dilate(tiles, np.ones((grow, grow), np.uint8))
        # The table inside its outline (found to a pixel, where the region's mask is a few
        # pixels coarse and can hold the table's darker front edge, which joined followers laid
        # near it into one long thing), less a band along the edge.
        table = np.zeros((h, w), np.uint8)
        cv2.fillPoly(table, [np.round(surface.corners).astype(np.int32)], 1)
        band = 2 * max(6, round(0.4 * tile_px)) + 1
        inside = cv2.erode(table & surface.table_mask, np.ones((band, band), np.uint8))
        exclude = (1 - inside) | tiles
        # A table's rounded corners leave floor inside the outline's sharp corners.
        for x, y in surface.corners:
            cv2.circle(exclude, (round(x), round(y)), round(1.5 * tile_px), 1, -1)
        for sheet in result.sheets:  # the corner markers' paper is no follower
            cv2.fillPoly(exclude, [np.round(sheet).astype(np.int32)], 1)
        area = tile_px**2
        # A standing follower covers about a tenth of a tile's area in the picture; a yellow
        # one on tan wood differs from it on a fifth of that (but a blob of a few pixels is noise).
        blobs = ccolours.find_follower_blobs(
            frame,
            surface.colour_lab,
            max(0.02 * area, 36.0),
            0.4 * area,
            exclude,
            background=2 * tile_px,
        )
        big = _big_objects(frame, surface.corners, inside, tile_px)
        blobs = [b for b in blobs if not _marked(big, b)]
        # most salient first; a piece of a figure already taken (hysteresis can cut a standing
        # figure's head from its body) is no second follower
        kept = []
        for b in blobs:
            if all(np.hypot(b[0] - k[0], b[1] - k[1]) > 0.4 * tile_px for k in kept):
                kept.append(b)
        blobs = kept[:8]
        blobs.sort(key=lambda b: b[0])  # left to right, so that names can be given in that order
        spots = [b[:3] for b in blobs]
        samples = [b[3] for b in blobs]
        how = "found"
    if not spots:
        warn(
            "no followers found: lay one follower of each colour in play on the table, away from "
            "the tiles, or give their positions with --followers 'x,y x,y ...'"
        )
        return
    typical = lab_to_bgr(surface.colour_lab)
    # The table's light (a glare's white) and the chroma the small figure took from the table
    # around it are taken away: what is left is the follower's own colour.
    local = [table_light[_pixel(frame, x, y)] for x, y, _ in spots]
    samples = [
        ccolours.without_table_chroma(ccolours.under_table_light(lab, t, typical), t)
        for lab, t in zip(samples, local, strict=True)
    ]
    model = ccolours.learn(samples)
    if options.colour_names:
        model = ccolours.rename(model, options.colour_names)
    result.profile.followers = model
    result.followers_px = spots
    note(
        f"step 4/5 followers: {len(spots)} {how}, left to right: {', '.join(model.names)}"
        + ("" if options.colour_names else " (names guessed: set them with --colours)")
    )
    report = ccolours.separability(model)
    for line in report.lines():
        note(f"  {line}")
    if not report.ok:
        warn(
            f"follower colours {report.worst.a} and {report.worst.b} are too similar under this "
            "light to be told apart"
        )


def _pixel(frame: np.ndarray, x: float, y: float) -> tuple[int, int]:
    """The (row, column) of the frame's pixel nearest ``(x, y)``, kept inside the frame."""
    h, w = frame.shape[:2]
    return min(max(round(y), 0), h - 1), min(max(round(x), 0), w - 1)


def _big_objects(frame: np.ndarray, corners, inside: np.ndarray, tile_px: float) -> np.ndarray:
    """uint8 0/1: the large things on the table (the score track, a box), each filled within its
    outline: the pictures inside a score track's ring of squares are not followers either. Only
    what lies ``inside`` the table (not its sharp edge) near a sharp colour step counts: a
    lamp's soft glare beside a black figure had joined it into a large thing, and the figure
    was not taken."""
    from meeplecam.vision.table import objects_on_table, sharp_reach

    if not inside.any():
        return np.zeros_like(inside)
    diagonal = float(np.linalg.norm(corners[2] - corners[0]))
    reach = sharp_reach(diagonal)
    things = objects_on_table(frame, inside, reach=reach)
    # closed over a few pixels: the score track's ring of squares is one thing
    things = cv2.morphologyEx(things, cv2.MORPH_CLOSE, np.ones((2 * reach + 1,) * 2, np.uint8))
    contours, _ = cv2.findContours(things, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    big = np.zeros_like(things)
    # wider than a tile every way (a row of followers with their shadows is not)
    wide = [c for c in contours if min(cv2.minAreaRect(c)[1]) > tile_px]
    cv2.drawContours(big, wide, -1, 1, -1)
    return big


def _marked(mask: np.ndarray, spot) -> bool:
    """Whether a spot (x, y, ...) lies on ``mask`` or outside the frame."""
    yi, xi = round(spot[1]), round(spot[0])
    if not (0 <= yi < mask.shape[0] and 0 <= xi < mask.shape[1]):
        return True
    return bool(mask[yi, xi])


def reference(frame: np.ndarray) -> dict:
    """A small grey thumbnail of the calibration view (PNG, base64) for ``--check``."""
    tw = int(settings("check")["thumb_width"])
    h, w = frame.shape[:2]
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    thumb = cv2.resize(grey, (tw, round(tw * h / w)), interpolation=cv2.INTER_AREA)
    _, buf = cv2.imencode(".png", thumb)
    return {
        "png": base64.b64encode(buf.tobytes()).decode("ascii"),
        "width": tw,
        "height": thumb.shape[0],
    }


def preview(frame: np.ndarray, result: Result) -> np.ndarray:
    """The frame with the outline, the tiles' squares and the followers drawn, for confirming."""
    img = frame.copy()
    h, w = frame.shape[:2]
    p = result.profile
    if p.table is not None:
        pts = np.round(p.table.pixels(w, h)).astype(np.int32)
        cv2.polylines(img, [pts], True, (0, 0, 255), 2, cv2.LINE_AA)
        for i, (x, y) in enumerate(pts):
            cv2.putText(
                img,
                str(i + 1),
                (int(x) + 6, int(y) + 18),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.6,
                (0, 0, 255),
                2,
                cv2.LINE_AA,
            )
    if p.scale is not None:
        sc = p.scale
        for gx in range(-3, 5):  # the grid of cells around the start tile
            a = sc.to_image_points([[gx * 45.0, -3 * 45.0], [gx * 45.0, 4 * 45.0]], w, h)
            b = sc.to_image_points([[-3 * 45.0, gx * 45.0], [4 * 45.0, gx * 45.0]], w, h)
            for seg in (a, b):
                cv2.line(
                    img,
                    tuple(np.round(seg[0]).astype(int)),
                    tuple(np.round(seg[1]).astype(int)),
                    (255, 255, 0),
                    1,
                    cv2.LINE_AA,
                )
    if p.followers is not None:
        for (x, y, r), name in zip(result.followers_px, p.followers.names, strict=False):
            cv2.circle(img, (round(x), round(y)), round(r) + 4, (255, 0, 255), 1, cv2.LINE_AA)
            cv2.putText(
                img,
                name,
                (round(x) - 10, round(y) - 10),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.45,
                (255, 0, 255),
                1,
                cv2.LINE_AA,
            )
    return img


@dataclass
class CheckResult:
    ok: bool
    shift_fraction: float  # largest move of a table corner over the table diagonal
    lines: list[str]


def check(profile: Profile, frame: np.ndarray) -> CheckResult:
    """Does this view still match the profile? The saved thumbnail is aligned with the new view
    (ECC, a homography), the table corners are moved with it, and their largest move over the
    table diagonal is compared with ``check.max_shift_fraction``."""
    cfg = settings("check")
    h, w = frame.shape[:2]
    lines = []
    if profile.table is None or profile.reference is None:
        return CheckResult(
            False,
            1.0,
            ["the profile has no table outline or reference view: run meeplecam calibrate again"],
        )
    if abs(w / h - profile.frame.aspect) > 0.01:
        return CheckResult(
            False,
            1.0,
            [
                f"the camera now gives {w}x{h}, the profile was made at "
                f"{profile.frame.width}x{profile.frame.height} (another "
                "aspect ratio): run meeplecam calibrate again"
            ],
        )
    ref = cv2.imdecode(
        np.frombuffer(base64.b64decode(profile.reference["png"]), np.uint8), cv2.IMREAD_GRAYSCALE
    )
    if ref is None:
        return CheckResult(False, 1.0, ["the profile's reference view cannot be read"])
    rh, rw = ref.shape
    cur = cv2.resize(
        cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), (rw, rh), interpolation=cv2.INTER_AREA
    )
    warp = np.eye(3, dtype=np.float32)
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 100, 1e-5)
    try:
        cc, warp = cv2.findTransformECC(
            ref.astype(np.float32),
            cur.astype(np.float32),
            warp,
            cv2.MOTION_HOMOGRAPHY,
            crit,
            None,
            5,
        )
    except cv2.error:
        return CheckResult(
            False,
            1.0,
            [
                "the view has changed too much to be compared with the "
                "calibration: run meeplecam calibrate again"
            ],
        )
    corners = np.asarray(profile.table.corners) * [rw, rh]
    q = np.c_[corners, np.ones(4)] @ np.asarray(warp, float).T
    moved = q[:, :2] / q[:, 2:3]
    shift = np.linalg.norm(moved - corners, axis=1).max() / np.linalg.norm(corners[2] - corners[0])
    ok = bool(shift <= cfg["max_shift_fraction"] and cc > cfg["min_correlation"])
    lines.append(
        f"view correlation {cc:.2f}; table corners moved by up to {100 * shift:.2f} % of "
        f"the table diagonal (allowed {100 * cfg['max_shift_fraction']:.1f} %)"
    )
    lines.append(
        "the camera view still matches the profile"
        if ok
        else "the camera or the table has moved: run meeplecam calibrate again"
    )
    return CheckResult(ok, float(shift), lines)
