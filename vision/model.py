"""The appearance model (how this copy's tiles look) and the profile data type.

An appearance model holds, per tile type, small colour templates of the tile in canonical
orientation. It is built from a folder of labelled tile images (``labels.csv`` with a file name,
a tile letter and the sides as scanned, N E S W) such as ``../shared/data/real/scans``; the sides
give each image's rotation through the engine's tile set. Saved as JSON, written atomically.

A calibration profile (``vision.profile``) may carry a model in its ``appearance`` section.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from .errors import ImageUnreadable, ModelError
from .terrain import balance, white_gains

MODEL_FORMAT = "meeplecam-appearance/1"
TEMPLATE_PX = 20
# The pennant-twin test compares the camera's picture with art blurred by this much (sigma, of
# the tile's side): a shield is a few camera pixels, blurred into the city around it, and
# against sharp art a blurred shield looked as much like none as like one. On the 318
# pennant-twin cells with no follower of 20 games drawn with the Winter scans (1920x1080,
# ``bench/twins.py``): 318 right, 0 wrong, none near a tie (315, 3 and 6 against sharp art);
# the snowy art's 334, right either way. The whole-tile distance keeps the sharp art: blurred,
# it read slightly worse.
TWIN_BLUR = 1 / 30


@dataclass
class AppearanceModel:
    tileset: str
    size: int = TEMPLATE_PX
    templates: dict[str, list[np.ndarray]] = field(default_factory=dict)  # canonical, Lab float
    _turned_cache: dict = field(default_factory=dict, repr=False, compare=False)

    def add_sample(self, bgr: np.ndarray, tile: str, rotation: int, limit: int = 8) -> None:
        """A north-up crop of ``tile`` placed at ``rotation`` becomes a canonical template; the
        oldest samples beyond ``limit`` per type are dropped."""
        canonical = rotate_cw(bgr, -rotation % 360)
        samples = self.templates.setdefault(tile, [])
        samples.append(features(canonical, self.size))
        del samples[:-limit]
        for quarter in range(4):
            for blurred in (False, True):
                self._turned_cache.pop((tile, quarter, blurred), None)

    def distance(
        self, feats: np.ndarray, tile: str, rotation: int, keep: np.ndarray | None = None
    ) -> float | None:
        """Mean squared distance between ``feats`` (:func:`features` of a north-up crop, at this
        model's size) and the nearest sample of ``tile`` turned to ``rotation``, over the pixels
        ``keep`` allows (a follower on the tile is no evidence of the art under it), each side
        re-centred on those pixels. None when the model holds no sample of the tile."""
        if keep is None:
            keep = np.ones(feats.shape[:2], bool)
        if not keep.any():
            return 0.0 if tile in self.templates else None
        per_pixel = self.pixel_distances(feats, tile, rotation, keep)
        return None if per_pixel is None else float(per_pixel[keep].mean())

    def pixel_distances(
        self, feats: np.ndarray, tile: str, rotation: int, keep: np.ndarray
    ) -> np.ndarray | None:
        """Per pixel, the squared distance of ``feats`` from the sample of ``tile`` turned to
        ``rotation`` that is nearest over the pixels ``keep`` (some must be), each re-centred
        on those pixels; None when the model holds no sample of the tile."""
        turned = self._turned(tile, (rotation // 90) % 4)
        if turned is None:
            return None
        x = feats - feats[keep].mean(axis=0)
        t = turned - turned[:, keep].mean(axis=1)[:, None, None, :]
        per_pixel = ((t - x) ** 2).sum(axis=3)  # samples x size x size
        return per_pixel[int(per_pixel[:, keep].mean(axis=1).argmin())]

    def glare_fits(
        self, lab: np.ndarray, options, keep: np.ndarray, rounds: int = 4
    ) -> list[tuple[float, np.ndarray] | None]:
        """How well each of ``options`` (tile id, rotation) explains ``lab`` (:func:`lab_image`
        of a north-up crop) seen through a lamp's glare: each pixel the art (at a level of its
        own) mixed with white light, by a share that changes evenly across the tile (a plane,
        clipped to 0..1: :func:`plane_share`). Per option, over the pixels ``keep``: the mean
        squared distance left by its nearest sample and that sample's plane coefficients; None
        for a type the model holds no sample of. The level and the plane are fitted in turn
        (each a least-squares fit given the other), ``rounds`` times, all samples at once."""
        owners, stacks = [], []
        for i, (tile, rotation) in enumerate(options):
            turned = self._turned(tile, (rotation // 90) % 4)
            if turned is not None:
                owners += [i] * len(turned)
                stacks.append(turned[:, keep])
        out: list[tuple[float, np.ndarray] | None] = [None] * len(options)
        if not stacks or not keep.any():
            return out
        samples = np.concatenate(stacks)  # samples x pixels x 3
        basis = _plane_basis(lab.shape[0])[keep]  # pixels x (1, x, y)
        seen = lab[keep]
        ridge = 1e-3 * len(basis) * np.eye(3, dtype=np.float32)
        share = np.zeros(samples.shape[:2], np.float32)
        for _ in range(rounds):
            art = 1 - share
            level = (
                art[..., None] * (seen - art[..., None] * samples - share[..., None] * WHITE)
            ).sum(axis=1) / np.maximum((art**2).sum(axis=1), 1e-6)[:, None]
            drawn = samples + level[:, None, :]
            towards = WHITE - drawn
            weight = (towards**2).sum(axis=2)  # samples x pixels
            normal = (basis.T[None] * weight[:, None, :]) @ basis + ridge
            rhs = ((seen - drawn) * towards).sum(axis=2) @ basis
            coefs = np.linalg.solve(normal, rhs[..., None])[..., 0]
            share = np.clip(coefs @ basis.T, 0.0, 1.0).astype(np.float32)
        fitted = (1 - share)[..., None] * (samples + level[:, None, :]) + share[..., None] * WHITE
        distances = ((seen - fitted) ** 2).sum(axis=2).mean(axis=1)
        for j, i in enumerate(owners):
            if out[i] is None or distances[j] < out[i][0]:
                out[i] = (float(distances[j]), coefs[j])
        return out

    def twin_distances(
        self, feats: np.ndarray, a: tuple[str, int], b: tuple[str, int], keep=None, contrast=12.0
    ) -> tuple[float, float] | None:
        """Where the first samples of two (type, rotation) drawn alike (pennant twins, a tile
        and its icon twin) differ by more than ``contrast`` (Lab) and ``keep`` allows: the mean squared distance
        of ``feats`` from each type's nearest sample there; None when a type has no sample or
        they differ nowhere seen. Over the whole tile a shield is a few pixels of hundreds, lost
        in the noise; and a camera shows the art with less contrast than a scan (blur, light:
        about two thirds on the synthetic table), which would make a faint shield look like
        none. So each sample is first blurred as a camera blurs it (``TWIN_BLUR``) and scaled,
        per channel, to the contrast of ``feats`` over the pixels where the twins agree."""
        ta, tb = (self._turned(tile, (rotation // 90) % 4, True) for tile, rotation in (a, b))
        if ta is None or tb is None:
            return None
        if keep is None:
            keep = np.ones(feats.shape[:2], bool)
        differ = keep & (np.linalg.norm(ta[0] - tb[0], axis=2) > contrast)
        agree = keep & ~differ
        if differ.sum() < 3 or agree.sum() < 20:
            return None
        x = feats - feats[keep].mean(axis=0)

        def nearest(turned: np.ndarray) -> float:
            t = turned - turned[:, keep].mean(axis=1)[:, None, None, :]
            ts, xs = t[:, agree], x[agree]
            gain = (ts * xs).sum(axis=1) / np.maximum((ts * ts).sum(axis=1), 1e-6)
            fitted = t[:, differ] * gain[:, None, :]
            return float(((fitted - x[differ]) ** 2).sum(axis=2).mean(axis=1).min())

        return nearest(ta), nearest(tb)

    def sample(self, tile: str, rotation: int) -> np.ndarray | None:
        """The first sample of ``tile`` turned to ``rotation`` (features), if the model has one."""
        turned = self._turned(tile, (rotation // 90) % 4)
        return None if turned is None else turned[0]

    def _turned(self, tile: str, quarter: int, blurred: bool = False) -> np.ndarray | None:
        """The samples of ``tile`` turned clockwise by ``quarter`` quarter turns (cached);
        ``blurred``: as the twin test compares them (``TWIN_BLUR``)."""
        import cv2

        samples = self.templates.get(tile)
        if not samples:
            return None
        key = (tile, quarter, blurred)  # add_sample forgets the tile's entries
        cached = self._turned_cache.get(key)
        if cached is None:
            sigma = TWIN_BLUR * self.size if blurred else 0.0
            cached = np.stack(
                [
                    rotate_cw(cv2.GaussianBlur(a, (0, 0), sigma) if sigma else a, 90 * quarter)
                    for a in samples
                ]
            )
            self._turned_cache[key] = cached
        return cached

    def to_json(self) -> dict:
        return {
            "format": MODEL_FORMAT,
            "tileset": self.tileset,
            "size": self.size,
            "templates": {
                t: [np.round(a, 1).ravel().tolist() for a in arrs]
                for t, arrs in self.templates.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict) -> AppearanceModel:
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            raise ModelError(f"not an appearance model (expected format {MODEL_FORMAT!r})")
        try:
            size = int(data["size"])
            templates = {
                str(t): [np.asarray(a, np.float32).reshape(size, size, 3) for a in arrs]
                for t, arrs in data["templates"].items()
            }
            return cls(str(data.get("tileset", "base")), size, templates)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(f"malformed appearance model: {exc}") from None


def lab_image(bgr: np.ndarray, size: int = TEMPLATE_PX) -> np.ndarray:
    """A small colour image in the features' terms, not centred: OpenCV's 8-bit Lab with the
    lightness halved (brightness varies with light more than hue does). White is
    :data:`WHITE`."""
    import cv2

    small = cv2.resize(bgr, (size, size), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab).astype(np.float32)
    lab[..., 0] *= 0.5
    return lab


WHITE = np.array([127.5, 128.0, 128.0], np.float32)  # white light, in lab_image's terms


def features(bgr: np.ndarray, size: int = TEMPLATE_PX) -> np.ndarray:
    """A small, lighting-normalised colour image (:func:`lab_image`, each channel centred on
    its mean)."""
    return centred(lab_image(bgr, size))


def centred(lab: np.ndarray) -> np.ndarray:
    """A :func:`lab_image` as :func:`features`: each channel less its mean."""
    return lab - lab.reshape(-1, 3).mean(axis=0)


def plane_share(coefs: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The share of glare a :meth:`AppearanceModel.glare_fits` plane gives at frame points
    (``x``, ``y`` from -0.5 to 0.5 across the frame), clipped to 0..1."""
    return np.clip(coefs[0] + coefs[1] * x + coefs[2] * y, 0.0, 1.0)


@lru_cache(maxsize=8)
def _plane_basis(size: int) -> np.ndarray:
    """(1, x, y) at each pixel centre of a ``size`` square frame, x and y from -0.5 to 0.5."""
    y, x = (np.mgrid[0:size, 0:size] + 0.5) / size - 0.5
    basis = np.stack([np.ones((size, size)), x, y], axis=-1).astype(np.float32)
    basis.setflags(write=False)
    return basis


def rotate_cw(img: np.ndarray, rotation: int) -> np.ndarray:
    """Turn an image clockwise by ``rotation`` degrees."""
    return np.ascontiguousarray(np.rot90(img, -(rotation // 90) % 4))


def read_labels(folder: Path) -> list[tuple[Path, str, str]]:
    """(image path, tile id, sides N E S W as imaged) from ``labels.csv``."""
    path = folder / "labels.csv"
    if not path.is_file():
        raise ModelError(f"{folder}: no labels.csv (file, tile letter, sides N E S W)")
    rows = []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise ModelError(f"{path}: empty")
        for row in reader:
            if len(row) >= 3 and row[0].strip():
                rows.append((folder / row[0].strip(), row[1].strip(), row[2].strip().upper()))
    return rows


def build_from_folder(folder: str | Path, tileset, inset: float = 0.04) -> AppearanceModel:
    """Templates from labelled tile images: each is turned back to canonical orientation."""
    import cv2

    folder = Path(folder)
    model = AppearanceModel(tileset.name)
    for path, tile_id, sides in read_labels(folder):
        if tile_id not in tileset:
            raise ModelError(f"{path.name}: tile {tile_id!r} is not in tile set {tileset.name}")
        fits = tileset[tile_id].rotations_fitting(sides)
        if not fits:
            raise ModelError(f"{path.name}: sides {sides} do not fit tile {tile_id}")
        img = cv2.imread(str(path))
        if img is None:
            raise ImageUnreadable(f"{path}: cannot read image")
        h, w = img.shape[:2]
        a, b = int(inset * h), int(inset * w)
        img = img[a : h - a, b : w - b]
        img = balance(img, white_gains(img))
        canonical = rotate_cw(img, -fits[0] % 360)
        model.templates.setdefault(tile_id, []).append(features(canonical, model.size))
    if not model.templates:
        raise ModelError(f"{folder}: labels.csv lists no images")
    return model


ART_TEMPLATE_PX = 24  # the live tracker's cells: 24 read camera pictures of known art best


def build_from_art(tileset, palette: str, size: int = ART_TEMPLATE_PX) -> AppearanceModel:
    """Templates from the tile art the synthetic table draws (``palette``: ``winter`` for the
    engine's own drawings, ``scans`` for the Winter scans in ``../shared/data/winter-tiles``):
    the appearance model of the demo table, and of any copy whose art is that printing. Every art
    variant of a type that is drawn differently is a sample: the table draws one copy of each
    type as its variant, with animals, or with its trees elsewhere (without that copy's picture,
    a tree on its field side was read as T's road stub)."""
    from .synth import art

    model = AppearanceModel(tileset.name, size)
    for tile in tileset.types.values():
        drawn: list[np.ndarray] = []
        for variant in (0, 1):
            canonical = art.canonical_art(tile, palette, variant)
            if not any(np.array_equal(canonical, other) for other in drawn):
                drawn.append(canonical)
                model.templates.setdefault(tile.id, []).append(features(canonical, size))
    return model


def save_json(data: dict, path: str | Path) -> None:
    """Write JSON atomically (temporary file in the same folder, then rename)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_model(path: str | Path) -> AppearanceModel:
    """An appearance model file, or the appearance section of a calibration profile."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: cannot read appearance model ({exc})") from None
    if isinstance(data, dict) and str(data.get("format", "")).startswith("meeplecam-profile/"):
        return model_from_profile(path) or AppearanceModel("base")
    return AppearanceModel.from_json(data)


def model_from_profile(path: str | Path) -> AppearanceModel | None:
    """The appearance model saved in a calibration profile (``vision.profile``), if any."""
    from .profile import load

    app = load(path).appearance
    return AppearanceModel.from_json(app) if app else None
