"""Follower colours: learn each colour under this table's light, check that they can be told apart.

The user lays one follower of each colour in play on the table (or taps them on the page). Each
follower gives a patch of pixels; :func:`learn` keeps robust Lab statistics per colour (the pixels
nearest the patch's median, so the table, a shadow or a glare spot at the rim does not count) and
:func:`separability` reports, for every pair, how many standard deviations apart they are along the
line joining them (``margin``). Names default to the nearest of the usual colours (red, yellow,
green, blue, black, …) and can be set by the user. Classification is the profile's
:meth:`~meeplecam.vision.profile.FollowerColours.classify` (nearest by Mahalanobis distance).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import cv2
import numpy as np

from meeplecam.vision.profile import FollowerColour, FollowerColours

from .config import settings
from .errors import CalibrationError


class ColoursNotSeparable(CalibrationError):
    """Two follower colours are too similar under this light to be told apart."""


def to_lab(bgr: np.ndarray) -> np.ndarray:
    """BGR uint8 pixels (any shape ... x 3) as float OpenCV Lab (0..255 each), N x 3."""
    px = np.asarray(bgr, np.uint8).reshape(-1, 1, 3)
    return cv2.cvtColor(px, cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float64)


def patch_pixels(image: np.ndarray, centre: tuple[float, float], radius: float) -> np.ndarray:
    """The BGR pixels of a disk (a tapped follower) as N x 3."""
    h, w = image.shape[:2]
    mask = np.zeros((h, w), np.uint8)
    cv2.circle(mask, (round(centre[0]), round(centre[1])), max(1, round(radius)), 1, -1)
    return image[mask > 0].reshape(-1, 3)


def follower_pixels(
    image: np.ndarray, centre, radius: float, surface_lab=None, keep: float = 0.5
) -> np.ndarray:
    """Lab pixels of a follower around ``centre``: a disk, of which the ``keep`` part least like
    the table surface (a small figure's disk also holds table and shadow)."""
    lab = to_lab(patch_pixels(image, centre, radius))
    if surface_lab is None or len(lab) < 8:
        return lab
    d = np.linalg.norm(lab - np.asarray(surface_lab, float), axis=1)
    return lab[d >= np.quantile(d, 1 - keep)]


def robust_stats(lab: np.ndarray, trim: float | None = None, floor: float | None = None):
    """Mean and covariance of the Lab pixels nearest their median (drops ``trim`` of them)."""
    cfg = settings("colours")
    trim = cfg["trim"] if trim is None else trim
    floor = cfg["cov_floor"] if floor is None else floor
    lab = np.asarray(lab, np.float64).reshape(-1, 3)
    if len(lab) < 5:
        raise CalibrationError(f"too few pixels to learn a colour ({len(lab)})")
    med = np.median(lab, axis=0)
    mad = np.median(np.abs(lab - med), axis=0) * 1.4826 + 1.0
    d = np.sqrt((((lab - med) / mad) ** 2).sum(axis=1))
    keep = lab[d <= np.quantile(d, 1 - trim)]
    mean = keep.mean(axis=0)
    cov = np.cov(keep.T) + floor * np.eye(3)
    return mean, cov


def reference_name(lab: np.ndarray, taken: Sequence[str] = ()) -> str:
    """The usual follower colour nearest to a Lab colour (names not yet taken first): by hue angle
    for coloured ones (brightness varies with the light), by lightness for black, grey, white."""
    cfg = settings("colours")
    refs = {n: to_lab(np.array(c, np.uint8))[0] for n, c in cfg["reference_bgr"].items()}

    def chroma(v):
        return float(np.hypot(v[1] - 128, v[2] - 128))

    def hue(v):
        return float(np.arctan2(v[2] - 128, v[1] - 128))

    lab = np.asarray(lab, float)
    coloured = chroma(lab) >= cfg["min_chroma"]

    def cost(name: str) -> float:
        ref = refs[name]
        if coloured != (chroma(ref) >= cfg["min_chroma"]):
            return 1e6 + abs(ref[0] - lab[0])
        if coloured:
            d = abs((hue(ref) - hue(lab) + np.pi) % (2 * np.pi) - np.pi)
            return d * 100 + 0.1 * abs(ref[0] - lab[0])
        return abs(ref[0] - lab[0])

    order = sorted(refs, key=cost)
    free = [n for n in order if n not in taken]
    return (free or [f"colour{len(taken) + 1}"])[0]


def learn(samples: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> FollowerColours:
    """Learn colours from Lab samples (N x 3 each): a mapping name -> samples, or a list whose
    names are guessed with :func:`reference_name`."""
    if not isinstance(samples, Mapping):
        named: dict[str, np.ndarray] = {}
        for s in samples:
            named[reference_name(np.median(np.asarray(s).reshape(-1, 3), axis=0), list(named))] = s
        samples = named
    if not samples:
        raise CalibrationError("no follower colours to learn: lay one follower of each colour")
    colours = []
    for name, lab in samples.items():
        mean, cov = robust_stats(lab)
        colours.append(FollowerColour(str(name), mean.tolist(), cov.tolist(), len(lab)))
    return FollowerColours(colours)


def rename(model: FollowerColours, names: Sequence[str]) -> FollowerColours:
    """The same colours with the user's names (in the model's order)."""
    if len(names) != len(model.colours) or len(set(names)) != len(names):
        raise CalibrationError(
            f"give {len(model.colours)} different names for the colours {model.names}, got {names}"
        )
    return FollowerColours(
        [
            FollowerColour(n, c.lab, c.cov, c.samples)
            for n, c in zip(names, model.colours, strict=True)
        ]
    )


@dataclass
class PairMargin:
    a: str
    b: str
    margin: float  # distance of the means in standard deviations along the joining line (summed)
    distance: float  # Euclidean Lab distance of the means


@dataclass
class SeparabilityReport:
    pairs: list[PairMargin] = field(default_factory=list)
    min_margin: float = 3.0
    warn_margin: float = 5.0

    @property
    def ok(self) -> bool:
        return all(p.margin >= self.min_margin for p in self.pairs)

    @property
    def worst(self) -> PairMargin | None:
        return min(self.pairs, key=lambda p: p.margin) if self.pairs else None

    def lines(self) -> list[str]:
        out = []
        for p in sorted(self.pairs, key=lambda p: p.margin):
            if p.margin < self.min_margin:
                verdict = "TOO SIMILAR: use another colour for one of them, or more light"
            elif p.margin < self.warn_margin:
                verdict = "separable, but close"
            else:
                verdict = "clearly separable"
            out.append(
                f"{p.a} / {p.b}: margin {p.margin:.1f} (need {self.min_margin:g}), "
                f"Lab distance {p.distance:.0f}: {verdict}"
            )
        return out

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "min_margin": self.min_margin,
            "pairs": [
                {"a": p.a, "b": p.b, "margin": round(p.margin, 2), "distance": round(p.distance, 1)}
                for p in self.pairs
            ],
        }


def separability(model: FollowerColours) -> SeparabilityReport:
    """Every pair's margin: ``|m_a - m_b| / (sd_a + sd_b)`` with each colour's standard deviation
    taken along the line joining the means."""
    cfg = settings("colours")
    report = SeparabilityReport(min_margin=cfg["min_margin"], warn_margin=cfg["warn_margin"])
    for a, b in combinations(model.colours, 2):
        d = np.subtract(b.lab, a.lab)
        dist = float(np.linalg.norm(d))
        u = d / (dist + 1e-12)
        sd = np.sqrt(u @ np.asarray(a.cov) @ u) + np.sqrt(u @ np.asarray(b.cov) @ u)
        report.pairs.append(PairMargin(a.name, b.name, dist / sd, dist))
    return report


def classify_patches(model: FollowerColours, patches: Sequence[np.ndarray]) -> list[str]:
    """The colour of each follower patch (Lab pixels N x 3): its median pixel's nearest colour."""
    meds = np.array([np.median(np.asarray(p).reshape(-1, 3), axis=0) for p in patches])
    return model.classify(meds)


def find_followers(
    image: np.ndarray,
    surface_lab: np.ndarray,
    min_area: float,
    max_area: float,
    exclude: np.ndarray | None = None,
    threshold: float | None = None,
):
    """Blobs that differ from the table surface colour and have a follower's area (pixels):
    a list of (centre x, centre y, radius) in image pixels, largest first. ``exclude`` is a mask
    (uint8, image size) of places that are not followers (the tiles, outside the table)."""
    lab = cv2.cvtColor(cv2.GaussianBlur(image, (5, 5), 0), cv2.COLOR_BGR2Lab).astype(np.float32)
    diff = np.linalg.norm(lab - np.asarray(surface_lab, np.float32), axis=2)
    if threshold is None:  # well above the table's own variation (wood grain, uneven light)
        spread = diff[exclude == 0] if exclude is not None else diff
        threshold = max(12.0, 3.0 * float(np.quantile(spread, 0.75)))
    mask = (diff > threshold).astype(np.uint8)
    if exclude is not None:
        mask &= (exclude == 0).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, _, stats, cents = cv2.connectedComponentsWithStats(mask)
    found = []
    for i in range(1, n):
        area = stats[i, cv2.CC_STAT_AREA]
        w, h = stats[i, cv2.CC_STAT_WIDTH], stats[i, cv2.CC_STAT_HEIGHT]
        if min_area <= area <= max_area and max(w, h) <= 3 * min(w, h):
            found.append((float(cents[i][0]), float(cents[i][1]), 0.35 * min(w, h), area))
    found.sort(key=lambda f: -f[3])
    return [f[:3] for f in found]
