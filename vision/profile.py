"""The calibration profile of one table: what ``serve``, ``scan`` and ``replay`` load (``--profile``).

One JSON file (``"format": "meeplecam-profile/1"``), written atomically. Every image position is
stored as a fraction of the frame (``u = x / width``, ``v = y / height``), so a profile made at
1280×720 keeps working at 1920×1080 (same aspect ratio). Sections, all optional except ``frame``:

- ``table``: the table outline, four corners clockwise from the one nearest the frame's top-left,
  and how it was found (``detected``, ``clicks``, ``markers``).
- ``scale``: the top-down homography from (undistorted) frame fractions to table millimetres (the
  start tile's top-left corner is the origin, x east, y south, its edges along the axes), the
  lens distortion ``lens_k`` found from the table's straight edges (division model), the tile side
  in mm and the tile size in pixels of the calibration frame. Use
  :meth:`Scale.to_table_points` / :meth:`Scale.top_down_maps`, which undo the lens.
- ``camera``: intrinsics and distortion from a ChArUco board (pixels of ``image_size``).
- ``followers``: each colour's name and robust Lab statistics (mean, covariance), learned under
  this light; :meth:`FollowerColours.classify` is the nearest colour by Mahalanobis distance.
- ``appearance``: the tile appearance model, as the vision layer serialises it (opaque here).
- ``reference``: a small grey thumbnail of the calibration view for ``calibrate --check``.

Loading never crashes on a bad file: it raises :class:`ProfileError` naming the file and the
problem. Older formats are migrated by :data:`MIGRATIONS` or refused with a clear message.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .errors import ModelError

FORMAT = "meeplecam-profile/1"
FORMAT_PREFIX = "meeplecam-profile/"
VERSION = 1
TABLE_SOURCES = ("detected", "clicks", "markers")


class ProfileError(ModelError):
    """A profile file is missing, unreadable, malformed or of an unsupported version."""


# Older versions -> a function turning that version's dict into the next version's dict.
MIGRATIONS: dict[int, Callable[[dict], dict]] = {}


@dataclass
class FrameInfo:
    width: int
    height: int

    @property
    def aspect(self) -> float:
        return self.width / self.height


@dataclass
class TableOutline:
    corners: list[list[float]]  # 4 x (u, v) frame fractions, clockwise from top-left
    source: str = "detected"

    def pixels(self, width: int, height: int) -> np.ndarray:
        """The corners in pixels of a frame of this size (4 x 2 float)."""
        return np.asarray(self.corners, float) * [width, height]


@dataclass
class Scale:
    homography: list[list[float]]  # 3x3: undistorted frame fractions (u, v, 1) -> table mm
    tile_mm: float = 45.0
    tile_px: float = 0.0  # tile side in pixels of the calibration frame
    tiles_used: int = 1  # how many tiles the fit used
    lens_k: float = 0.0  # division-model lens distortion (see :func:`undistort_division`)

    def to_table(self, width: int, height: int) -> np.ndarray:
        """3x3 homography from undistorted pixels of a ``width`` x ``height`` frame to table mm
        (equal to frame pixels when ``lens_k`` is 0; else use :meth:`to_table_points`)."""
        return np.asarray(self.homography, float) @ np.diag([1 / width, 1 / height, 1.0])

    def to_table_points(self, points, width: int, height: int) -> np.ndarray:
        """Frame pixels (N x 2) -> table mm (N x 2), lens distortion undone."""
        und = undistort_division(points, self.lens_k, (width, height))
        q = np.c_[und, np.ones(len(und))] @ self.to_table(width, height).T
        return q[:, :2] / q[:, 2:3]

    def to_image_points(self, points_mm, width: int, height: int) -> np.ndarray:
        """Table mm (N x 2) -> frame pixels (N x 2), lens distortion applied."""
        inv = np.linalg.inv(self.to_table(width, height))
        pts = np.asarray(points_mm, float).reshape(-1, 2)
        q = np.c_[pts, np.ones(len(pts))] @ inv.T
        return distort_division(q[:, :2] / q[:, 2:3], self.lens_k, (width, height))

    def top_down(self, width: int, height: int, px_per_mm: float, origin_mm=(0.0, 0.0)):
        """3x3 homography from (undistorted) frame pixels to a top-down image at ``px_per_mm``
        whose pixel (0, 0) is the table point ``origin_mm`` (for ``cv2.warpPerspective``; with
        a lens ``lens_k`` use :meth:`top_down_maps`)."""
        shift = np.array(
            [
                [px_per_mm, 0, -origin_mm[0] * px_per_mm],
                [0, px_per_mm, -origin_mm[1] * px_per_mm],
                [0, 0, 1.0],
            ]
        )
        return shift @ self.to_table(width, height)

    def top_down_maps(self, width: int, height: int, px_per_mm: float, origin_mm, out_size):
        """``cv2.remap`` maps (float32 x, y) for a top-down image of ``out_size`` (w, h) pixels at
        ``px_per_mm`` starting at table point ``origin_mm``, lens distortion included."""
        ow, oh = out_size
        xs, ys = np.meshgrid(np.arange(ow) + 0.5, np.arange(oh) + 0.5)
        mm = np.c_[xs.ravel() / px_per_mm + origin_mm[0], ys.ravel() / px_per_mm + origin_mm[1]]
        px = self.to_image_points(mm, width, height)
        return (
            px[:, 0].reshape(oh, ow).astype(np.float32),
            px[:, 1].reshape(oh, ow).astype(np.float32),
        )


def undistort_division(points, k: float, size) -> np.ndarray:
    """Division model: ``x_u = c + (x_d - c) / (1 + k r²)`` with ``c`` the frame centre and ``r``
    the distance from it over half the frame diagonal. Distorted pixels (N x 2) -> undistorted."""
    pts = np.asarray(points, float).reshape(-1, 2)
    if k == 0:
        return pts.copy()
    w, h = size
    c, s = np.array([(w - 1) / 2, (h - 1) / 2]), float(np.hypot(w, h) / 2)
    p = (pts - c) / s
    return p / (1 + k * (p**2).sum(axis=1, keepdims=True)) * s + c


def distort_division(points, k: float, size) -> np.ndarray:
    """Inverse of :func:`undistort_division`: undistorted pixels (N x 2) -> frame pixels."""
    pts = np.asarray(points, float).reshape(-1, 2)
    if k == 0:
        return pts.copy()
    w, h = size
    c, s = np.array([(w - 1) / 2, (h - 1) / 2]), float(np.hypot(w, h) / 2)
    p = (pts - c) / s
    ru = np.linalg.norm(p, axis=1)
    # r_u = r_d / (1 + k r_d²)  <=>  k r_u r_d² - r_d + r_u = 0 (the root near r_u)
    disc = np.sqrt(np.maximum(1 - 4 * k * ru**2, 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        rd = np.where(ru > 1e-12, 2 * ru / (1 + disc), 0.0)
        factor = np.where(ru > 1e-12, rd / ru, 1.0)
    return p * factor[:, None] * s + c


@dataclass
class Camera:
    matrix: list[list[float]]  # 3x3 in pixels of image_size
    distortion: list[float]  # OpenCV order k1 k2 p1 p2 [k3 ...]
    image_size: list[int]  # [width, height]
    rms_px: float = 0.0  # reprojection error of the calibration
    views: int = 0

    def matrix_for(self, width: int, height: int) -> np.ndarray:
        """The camera matrix scaled to another frame size of the same aspect ratio."""
        sx, sy = width / self.image_size[0], height / self.image_size[1]
        return np.diag([sx, sy, 1.0]) @ np.asarray(self.matrix, float)


@dataclass
class FollowerColour:
    name: str
    lab: list[float]  # mean colour, OpenCV 8-bit Lab (L, a, b in 0..255)
    cov: list[list[float]]  # 3x3 covariance of the samples (regularised)
    samples: int = 0


GLARE = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)  # parts of white light a glossy figure may reflect
BRIGHTER = (1.0, 1.3, 1.6)  # more light on a figure than on the one calibrated (never less)
# A camera keeps colour at half the resolution of brightness (JPEG and webcam 4:2:0), and the lens
# blurs: a follower a few pixels wide shows its own lightness but a colour (chroma) partly taken
# from what is around it. This is the part taken, fitted on rendered followers: a calibrated
# follower's chroma less the same follower's in play, regressed on the table's chroma less it,
# is 0.15 of it (seeds 1000-1029 and 1100-1129; 0.12 and 0.15 on seeds 1200-1229, 1300-1329).
BLEED = 0.15
LUMA = (0.114, 0.587, 0.299)  # BGR weights of a camera's luma (BT.601), what it keeps sharp


def chroma(bgr) -> np.ndarray:
    """What BGR colours (... x 3) differ from the grey of the same luma: the colour channels a
    camera keeps at half resolution."""
    bgr = np.asarray(bgr, float)
    return bgr - (bgr @ np.asarray(LUMA))[..., None]


def with_chroma(bgr, factor) -> np.ndarray:
    """BGR colours (... x 3) with their :func:`chroma` scaled by ``factor``."""
    bgr = np.asarray(bgr, float)
    return bgr + (factor - 1) * chroma(bgr)


def shades_bgr(bgr, factors, glare=(0.0,)) -> np.ndarray:
    """A BGR colour under each light of ``factors`` (scaled: shade darkens and greys it) with
    each part of white ``glare`` blended in: (factors x glare) x 3 floats."""
    lit = np.clip(np.asarray(bgr, float)[None, :] * np.asarray(factors)[:, None], 0, 255)
    return np.concatenate([lit * (1 - g) + 255 * g for g in glare])


def shades_lab(bgr, factors, glare=(0.0,), bleed=(0.0,)) -> np.ndarray:
    """:func:`shades_bgr` with each part ``bleed`` of its chroma lost to what is around it
    (:data:`BLEED`), as OpenCV 8-bit Lab: (bleed x factors x glare) x 3."""
    shades = shades_bgr(bgr, factors, glare)
    return _bgr_to_lab(np.concatenate([with_chroma(shades, 1 - b) for b in bleed]))


def _bgr_to_lab(bgr) -> np.ndarray:
    """BGR floats (... x 3) as OpenCV 8-bit Lab floats."""
    import cv2

    bgr = np.asarray(bgr, float)
    flat = np.clip(np.round(bgr), 0, 255).astype(np.uint8).reshape(1, -1, 3)
    return cv2.cvtColor(flat, cv2.COLOR_BGR2Lab).reshape(bgr.shape).astype(float)


def lab_to_bgr(lab) -> np.ndarray:
    """An OpenCV 8-bit Lab colour as BGR (floats)."""
    import cv2

    return cv2.cvtColor(np.uint8([[np.clip(lab, 0, 255)]]), cv2.COLOR_Lab2BGR)[0, 0].astype(float)


@dataclass
class FollowerColours:
    colours: list[FollowerColour] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.colours]

    def distances(self, lab: np.ndarray, around: np.ndarray | None = None) -> np.ndarray:
        """Mahalanobis distances (N x colours) of Lab colours (N x 3) to each learned colour,
        also as a glare whitens it (:data:`GLARE`), under more light (:data:`BRIGHTER`) and
        with part of its chroma lost to what is around it (:data:`BLEED`): the colour was
        learned on one standing follower, and a figure lying on its back shows its lit, glossy
        front; a red one in the lamp's full light is as light as a yellow one calibrated in the
        table's dimmer part (a brighter red is still red, it was read yellow). A small figure in
        play takes part of its chroma from the tile under it, as the calibrated one did from
        the table (which the calibration takes away): a blue or green one on a grey or brown
        tile is greyer than its colour, and was read black; given ``around`` (the Lab colour
        around each figure: the tile it stands on), the chroma lost is the tile's, as the
        calibrated figure's was the table's (a black farmer on a green field shows a dark faint
        green, and was read green). One covariance (the
        colours' pooled) for all: how a figure's colour spreads between its lit and shaded
        faces is much the same for every colour, and a colour learned with a wide spread would
        otherwise take every figure that fits no colour well. (Modelling shade, the colour
        scaled darker, made a green figure in shade black: measured with ``bench/colours.py``,
        again with the chroma taken from the table undone.)"""
        lab = np.asarray(lab, float).reshape(-1, 3)
        inv = np.linalg.inv(np.mean([np.asarray(c.cov) for c in self.colours], axis=0))
        tinted = None
        if around is not None:
            import cv2

            flat = np.clip(np.asarray(around, float), 0, 255).astype(np.uint8)  # as lab_to_bgr
            around_bgr = cv2.cvtColor(flat.reshape(1, -1, 3), cv2.COLOR_Lab2BGR)[0].astype(float)
            tinted = BLEED * chroma(around_bgr)  # N x 3

        def nearest(seen):  # squared distance to the nearest of ``seen`` (N or 1 x shades x 3)
            d = lab[:, None, :] - seen
            return np.einsum("nsi,ij,nsj->ns", d, inv, d).min(axis=1)

        out = np.empty((len(lab), len(self.colours)))
        for j, c in enumerate(self.colours):
            shades = shades_bgr(lab_to_bgr(c.lab), BRIGHTER, GLARE)
            greyed = with_chroma(shades, 1 - BLEED)  # its part BLEED of chroma lost
            dist = nearest(_bgr_to_lab(np.concatenate([shades, greyed]))[None])
            if tinted is not None:  # ... to the chroma around it
                dist = np.minimum(dist, nearest(_bgr_to_lab(greyed[None] + tinted[:, None])))
            out[:, j] = np.sqrt(dist)
        return out

    def classify(self, lab: np.ndarray, around: np.ndarray | None = None) -> list[str]:
        """The nearest colour name for each Lab colour (N x 3); ``around``: see
        :meth:`distances`."""
        idx = np.argmin(self.distances(lab, around), axis=1)
        return [self.colours[i].name for i in idx]


@dataclass
class Profile:
    frame: FrameInfo
    table: TableOutline | None = None
    scale: Scale | None = None
    camera: Camera | None = None
    followers: FollowerColours | None = None
    appearance: dict | None = None  # the vision layer's tile appearance model, serialised
    reference: dict | None = None  # {"png": base64, "width": w, "height": h} grey thumbnail
    # [x, y]: the grid cell beside the board where the players put the drawn tile (the start
    # tile is [0, 0]; vision.live.spot)
    drawn_spot: list[int] | None = None
    created: str = ""
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        data = {"format": FORMAT, **asdict(self)}
        return _finite(data)

    @classmethod
    def from_json(cls, data: dict, source: str = "profile") -> Profile:
        """Validate and build a profile from its JSON dict (migrating older versions)."""
        return _parse(_migrate(data, source), source)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the profile atomically (a temporary file beside it, then a rename)."""
        path = Path(path)
        text = json.dumps(self.to_json(), indent=1, allow_nan=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else _default_mode())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path


def _default_mode() -> int:
    """``0o666`` less the process umask (what ``open()`` would give a new file)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def profile_json(path: str | os.PathLike) -> dict | None:
    """The JSON of ``path`` if it is a meeplecam profile (of any version); None if it is
    something else (a geometry file of the renderer) or cannot be read: the caller that needs
    the file says what is wrong with it."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and str(data.get("format", "")).startswith(FORMAT_PREFIX):
        return data
    return None


def load(path: str | os.PathLike) -> Profile:
    """Read and validate a profile file; :class:`ProfileError` names the file and the problem."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise ProfileError(
            f"{path}: no such profile file (make one with `meeplecam calibrate`)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path}: cannot read the profile: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProfileError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "the file is damaged: run `meeplecam calibrate` again"
        ) from None
    return Profile.from_json(data, str(path))


def _version(data, source: str) -> int:
    if not isinstance(data, dict):
        raise ProfileError(f"{source}: a profile is a JSON object, found {type(data).__name__}")
    fmt = data.get("format")
    if not isinstance(fmt, str) or not fmt.startswith(FORMAT_PREFIX):
        raise ProfileError(
            f"{source}: not a meeplecam profile (format {fmt!r}, expected {FORMAT!r})"
        )
    try:
        return int(fmt[len(FORMAT_PREFIX) :])
    except ValueError:
        raise ProfileError(f"{source}: unknown profile format {fmt!r}") from None


def _migrate(data, source: str) -> dict:
    version = _version(data, source)
    if version > VERSION:
        raise ProfileError(
            f"{source}: written by a newer meeplecam (format {data['format']!r}; this one reads "
            f"{FORMAT!r}): update meeplecam or run `meeplecam calibrate` again"
        )
    while version < VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise ProfileError(
                f"{source}: profile format {data['format']!r} is too old to convert; "
                "run `meeplecam calibrate` again to make a new profile"
            )
        try:
            data = step(dict(data))
        except (KeyError, TypeError, ValueError) as exc:
            raise ProfileError(f"{source}: cannot convert the old profile: {exc}") from None
        version = _version(data, source)
    return data


class _Bad(Exception):
    pass


def _num(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _Bad(f"{where} must be a finite number, found {value!r}")
    return float(value)


def _matrix(value, rows: int, cols: int, where: str) -> list[list[float]]:
    if not isinstance(value, list) or len(value) != rows:
        raise _Bad(f"{where} must be a list of {rows} rows")
    out = []
    for i, row in enumerate(value):
        if not isinstance(row, list) or len(row) != cols:
            raise _Bad(f"{where}[{i}] must be a list of {cols} numbers")
        out.append([_num(x, f"{where}[{i}]") for x in row])
    return out


def _section(data: dict, key: str) -> dict | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _Bad(f"'{key}' must be an object")
    return value


def _parse(data: dict, source: str) -> Profile:
    try:
        return _parse_sections(data)
    except _Bad as exc:
        raise ProfileError(f"{source}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:  # anything unforeseen: still name the file
        raise ProfileError(f"{source}: malformed profile ({type(exc).__name__}: {exc})") from None


def _parse_sections(data: dict) -> Profile:
    fr = _section(data, "frame")
    if fr is None:
        raise _Bad("'frame' (the calibration frame's width and height) is missing")
    frame = FrameInfo(
        int(_num(fr.get("width"), "frame.width")), int(_num(fr.get("height"), "frame.height"))
    )
    if frame.width <= 0 or frame.height <= 0:
        raise _Bad(f"frame size {frame.width}x{frame.height} is not positive")
    profile = Profile(frame=frame, created=str(data.get("created", "")))
    if (spot := data.get("drawn_spot")) is not None:
        if not (
            isinstance(spot, list)
            and len(spot) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in spot)
        ):
            raise _Bad(f"drawn_spot must be a cell [x, y] of whole numbers, found {spot!r}")
        profile.drawn_spot = list(spot)
    notes = data.get("notes", [])
    profile.notes = [str(n) for n in notes] if isinstance(notes, list) else []
    if (t := _section(data, "table")) is not None:
        corners = _matrix(t.get("corners"), 4, 2, "table.corners")
        if any(not -1.0 <= c <= 2.0 for pt in corners for c in pt):
            raise _Bad("table.corners must be fractions of the frame (0..1, a little outside)")
        src = t.get("source", "detected")
        if src not in TABLE_SOURCES:
            raise _Bad(f"table.source must be one of {', '.join(TABLE_SOURCES)}, found {src!r}")
        quad = np.asarray(corners)
        d1, d2 = quad[2] - quad[0], quad[3] - quad[1]
        area = 0.5 * (d1[0] * d2[1] - d1[1] * d2[0])
        if abs(area) < 1e-4:
            raise _Bad("table.corners enclose no area")
        profile.table = TableOutline(corners, src)
    if (s := _section(data, "scale")) is not None:
        hom = _matrix(s.get("homography"), 3, 3, "scale.homography")
        if abs(np.linalg.det(np.asarray(hom))) < 1e-12:
            raise _Bad("scale.homography is singular")
        tile_mm = _num(s.get("tile_mm", 45.0), "scale.tile_mm")
        if tile_mm <= 0:
            raise _Bad("scale.tile_mm must be positive")
        profile.scale = Scale(
            hom,
            tile_mm,
            _num(s.get("tile_px", 0.0), "scale.tile_px"),
            int(_num(s.get("tiles_used", 1), "scale.tiles_used")),
            _num(s.get("lens_k", 0.0), "scale.lens_k"),
        )
    if (c := _section(data, "camera")) is not None:
        mat = _matrix(c.get("matrix"), 3, 3, "camera.matrix")
        dist = c.get("distortion")
        if not isinstance(dist, list) or not 4 <= len(dist) <= 14:
            raise _Bad("camera.distortion must be a list of 4 to 14 numbers")
        size = c.get("image_size")
        if not isinstance(size, list) or len(size) != 2:
            raise _Bad("camera.image_size must be [width, height]")
        profile.camera = Camera(
            mat,
            [_num(x, "camera.distortion") for x in dist],
            [int(_num(x, "camera.image_size")) for x in size],
            _num(c.get("rms_px", 0.0), "camera.rms_px"),
            int(_num(c.get("views", 0), "camera.views")),
        )
    if (f := _section(data, "followers")) is not None:
        items = f.get("colours")
        if not isinstance(items, list):
            raise _Bad("followers.colours must be a list")
        colours = []
        for i, item in enumerate(items):
            where = f"followers.colours[{i}]"
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise _Bad(f"{where} must be an object with a 'name'")
            lab = _matrix([item.get("lab")], 1, 3, f"{where}.lab")[0]
            cov = _matrix(item.get("cov"), 3, 3, f"{where}.cov")
            if np.any(np.linalg.eigvalsh(np.asarray(cov)) <= 0):
                raise _Bad(f"{where}.cov is not positive definite")
            colours.append(
                FollowerColour(
                    item["name"], lab, cov, int(_num(item.get("samples", 0), f"{where}.samples"))
                )
            )
        names = [c.name for c in colours]
        if len(set(names)) != len(names):
            raise _Bad(f"followers.colours has a name twice: {names}")
        profile.followers = FollowerColours(colours)
    profile.appearance = _section(data, "appearance")
    profile.reference = _section(data, "reference")
    return profile


def _finite(value):
    """Plain JSON types (numpy scalars and arrays converted); refuses NaN and infinity."""
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, np.ndarray):
        return _finite(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("a profile value is not a finite number")
    return value
