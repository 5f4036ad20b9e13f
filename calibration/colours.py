"""Follower colours: learn each colour under this table's light, check that they can be told apart.

The user lays one follower of each colour in play on the table (or taps them on the page). Each
follower gives a patch of pixels, from which the table's light (:func:`under_table_light`) and the
chroma the small figure took from the table around it (:func:`without_table_chroma`) are taken
away; :func:`learn` keeps robust Lab statistics per colour (the pixels nearest the patch's median,
so the table, a shadow or a glare spot at the rim does not count) and :func:`separability`
reports, for every pair, how many standard deviations apart they are along the line joining them
(``margin``). Names default to the nearest of the usual colours (red, yellow, green, blue, black,
…) and can be set by the user. Classification is the profile's
:meth:`~meeplecam.vision.profile.FollowerColours.classify` (nearest by Mahalanobis distance).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations, permutations

import cv2
import numpy as np

from meeplecam.vision.profile import BLEED, FollowerColour, FollowerColours, chroma, with_chroma

from .config import settings
from .errors import CalibrationError


class ColoursNotSeparable(CalibrationError):
    """Two follower colours are too similar under this light to be told apart."""


def to_lab(bgr: np.ndarray) -> np.ndarray:
    """BGR uint8 pixels (any shape ... x 3) as float OpenCV Lab (0..255 each), N x 3."""
    px = np.asarray(bgr, np.uint8).reshape(-1, 1, 3)
    return cv2.cvtColor(px, cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float64)


def tapped_follower_pixels(
    image: np.ndarray, centre, radius: float, table_bgr: np.ndarray
) -> np.ndarray:
    """Lab pixels of the follower tapped at ``centre``: within ``radius`` of the tap, the pixels
    unlike the table around them (``table_bgr``: :func:`local_background`, image size) by at
    least half as much as the most unlike one, those joined to it (the figure covers them at
    least half; its blurred rim and its shadow less). A tap marks a figure only roughly (at its
    foot or its middle), and a disk around the tap holds as much table and shadow as figure:
    keeping the half of the disk least like the table learned a black follower on wood dark
    brown, and with a wrong tile size (a wide disk) every colour nearly the table's."""
    h, w = image.shape[:2]
    r = max(2, round(radius))
    cx, cy = round(centre[0]), round(centre[1])
    x0, y0, x1, y1 = max(cx - r, 0), max(cy - r, 0), min(cx + r + 1, w), min(cy + r + 1, h)
    if x1 <= x0 or y1 <= y0:
        return np.empty((0, 3))
    lab = to_lab(image[y0:y1, x0:x1])
    d = np.linalg.norm(lab - to_lab(table_bgr[y0:y1, x0:x1]), axis=1).reshape(y1 - y0, x1 - x0)
    ys, xs = np.mgrid[y0:y1, x0:x1]
    d[(xs - centre[0]) ** 2 + (ys - centre[1]) ** 2 > radius**2] = 0
    strong = (d >= 0.5 * d.max()) & (d > 0)
    _, labels = cv2.connectedComponents(strong.astype(np.uint8))
    figure = (labels == labels.flat[int(np.argmax(d))]).ravel()
    if figure.sum() < 8:  # a figure of a few pixels: its most unlike ones
        figure = d.ravel() >= np.sort(d.ravel())[-8]
    return lab[figure]


TABLE_NOISE = 3.0  # sd of the table's local colour (BGR levels) where the light is even
WHITE_SURE = 3.0  # how many standard errors of the fit a glare's white must be to be taken away


def under_table_light(lab: np.ndarray, local_bgr, typical_bgr) -> np.ndarray:
    """Lab pixels of a follower with the white of a lamp's glare taken away.

    The light on the table around the follower (``local_bgr``) is fitted as the table's typical
    colour (``typical_bgr``, its median over the whole surface) times a gain plus white
    (``local = gain * typical + white``, least squares over the three channels), and that white
    is taken from the follower's pixels too. A black follower calibrated in a lamp's hot spot was
    learned grey, and every black figure in play, out of the glare, was read green or blue.
    Only glare is undone: a figure under brighter or dimmer light is within the classifier's
    spread, and dividing by a gain fitted on a dark table blew a green up to a colour no figure
    had. The nearer the table is to grey, the less gain and white can be told apart, so the
    white is taken only when it is well beyond what the table's own noise makes of it."""
    local = np.asarray(local_bgr, float).reshape(3)
    typical = np.asarray(typical_bgr, float).reshape(3)
    design = np.stack([typical, np.ones(3)], axis=1)
    normal = design.T @ design
    if np.linalg.cond(normal) > 1e12:  # a black table: nothing to tell the light by
        return np.asarray(lab, float).reshape(-1, 3)
    _, white = np.linalg.solve(normal, design.T @ local)
    standard_error = TABLE_NOISE * np.sqrt(np.linalg.inv(normal)[1, 1])
    if white <= WHITE_SURE * standard_error:
        return np.asarray(lab, float).reshape(-1, 3)
    bgr = cv2.cvtColor(np.clip(lab, 0, 255).astype(np.uint8)[None], cv2.COLOR_Lab2BGR)[0]
    return to_lab(np.clip(bgr.astype(float) - white, 0, 255))


def without_table_chroma(lab: np.ndarray, local_bgr, bleed: float = BLEED) -> np.ndarray:
    """Lab pixels of a follower with the chroma it took from the table around it (``local_bgr``)
    taken away: a camera keeps colour at half resolution, so a figure a few pixels wide shows a
    part ``bleed`` (:data:`~meeplecam.vision.profile.BLEED`) of the table's chroma in place of
    its own (``seen = (1 - bleed) * own + bleed * table`` in chroma, its luma kept). A black
    follower on red wood was learned dark brown (and read green on a field), a green one and a
    yellow one nearer each other than they are (a yellow figure in play then read green). In
    play the figure takes chroma from the tiles instead; the classifier allows for that
    (:meth:`~meeplecam.vision.profile.FollowerColours.distances`)."""
    lab = np.asarray(lab, float).reshape(-1, 3)
    if not 0 < bleed < 1 or not len(lab):
        return lab
    bgr = cv2.cvtColor(np.clip(lab, 0, 255).astype(np.uint8)[None], cv2.COLOR_Lab2BGR)[0]
    table_chroma = chroma(np.asarray(local_bgr, float).reshape(3))
    own = with_chroma(bgr.astype(float) - bleed * table_chroma, 1 / (1 - bleed))
    return to_lab(np.clip(own, 0, 255))


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


def _name_costs(labs: np.ndarray, names: Sequence[str], refs: np.ndarray) -> np.ndarray:
    """The cost of naming each Lab colour (rows) after each reference (columns): hue distance
    for coloured ones, lightness for black, grey, white. A small follower is blended with the
    table and shaded, so its chroma is low: how sure it is coloured grows with its chroma rather
    than switching at one threshold. Names outside the usual set (the base game's colours)
    cost a little more, so an orange-ish yellow stays yellow when yellow is free."""
    cfg = settings("colours")
    o = np.asarray(labs, float).reshape(-1, 3)
    o_chroma = np.hypot(o[:, 1] - 128, o[:, 2] - 128)
    r_chroma = np.hypot(refs[:, 1] - 128, refs[:, 2] - 128)
    o_hue = np.arctan2(o[:, 2] - 128, o[:, 1] - 128)
    r_hue = np.arctan2(refs[:, 2] - 128, refs[:, 1] - 128)
    d_hue = np.abs((r_hue[None] - o_hue[:, None] + np.pi) % (2 * np.pi) - np.pi)
    d_light = np.abs(refs[None, :, 0] - o[:, None, 0])
    sure = np.clip(o_chroma / (2 * cfg["min_chroma"]), 0, 1)[:, None]
    coloured = r_chroma[None] >= cfg["min_chroma"]
    cost = np.where(coloured, 100 * d_hue + 0.1 * d_light + 150 * (1 - sure), d_light + 150 * sure)
    usual = set(cfg["default_names"])
    return cost + np.array([0.0 if n in usual else cfg["unusual_name_cost"] for n in names])


def guess_names(labs: Sequence[np.ndarray]) -> list[str]:
    """Names for the colours of the followers laid out together (one Lab colour each), chosen
    jointly: each name once, the least total cost (:func:`_name_costs`). Naming one follower at
    a time went wrong under a coloured light: the first took the name that the next one fitted
    far better (a yellow gone greenish took "green" from the green one)."""
    cfg = settings("colours")
    names = list(cfg["reference_bgr"])
    refs = np.array([to_lab(np.array(cfg["reference_bgr"][n], np.uint8))[0] for n in names])
    cost = _name_costs(np.asarray(labs, float), names, refs)
    n = len(cost)
    if n > len(names):  # more colours than names: the rest get numbers
        return guess_names(labs[: len(names)]) + [f"colour{i + 1}" for i in range(len(names), n)]
    if n <= 6:  # every assignment (10P6 = 151200 at most)
        perms = np.array(list(permutations(range(len(names)), n)))
        best = perms[np.argmin(cost[np.arange(n)[None], perms].sum(axis=1))]
        return [names[j] for j in best]
    out: list[str | None] = [None] * n  # many colours: the cheapest pairs first
    for flat in np.argsort(cost, axis=None):
        i, j = divmod(int(flat), len(names))
        if out[i] is None and names[j] not in out:
            out[i] = names[j]
    return [str(v) for v in out]


def learn(samples: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> FollowerColours:
    """Learn colours from Lab samples (N x 3 each): a mapping name -> samples, or a list whose
    names are guessed with :func:`guess_names`."""
    if not isinstance(samples, Mapping):
        meds = [np.median(np.asarray(s).reshape(-1, 3), axis=0) for s in samples]
        samples = dict(zip(guess_names(meds), samples, strict=True))
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
    # Lab distance of two colours' means beyond which they are told apart whatever their margin:
    # a margin is measured with the spread of a figure's pixels (its lit and shaded faces, wide
    # along a pair that differs much in lightness, as yellow and green), but a figure is read
    # by the median of its pixels, which strays far less (pairs too similar in earnest were 9 to
    # 31 apart; yellow and green 52 and 59 apart on the demo table had been refused)
    clear_distance: float = 40.0

    def too_similar(self, p: PairMargin) -> bool:
        return p.margin < self.min_margin and p.distance < self.clear_distance

    @property
    def ok(self) -> bool:
        return not any(self.too_similar(p) for p in self.pairs)

    @property
    def worst(self) -> PairMargin | None:
        """The pair most alike: a pair too similar first, then by margin."""
        if not self.pairs:
            return None
        return min(self.pairs, key=lambda p: (not self.too_similar(p), p.margin))

    def lines(self) -> list[str]:
        out = []
        for p in sorted(self.pairs, key=lambda p: (not self.too_similar(p), p.margin)):
            if self.too_similar(p):
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
            "clear_distance": self.clear_distance,
            "pairs": [
                {"a": p.a, "b": p.b, "margin": round(p.margin, 2), "distance": round(p.distance, 1)}
                for p in self.pairs
            ],
        }


def separability(model: FollowerColours) -> SeparabilityReport:
    """Every pair's margin: ``|m_a - m_b| / (sd_a + sd_b)`` with each colour's standard deviation
    taken along the line joining the means; too similar where the margin is short and the means
    are also near (:attr:`SeparabilityReport.clear_distance`)."""
    cfg = settings("colours")
    report = SeparabilityReport(
        min_margin=cfg["min_margin"],
        warn_margin=cfg["warn_margin"],
        clear_distance=cfg["clear_distance"],
    )
    for a, b in combinations(model.colours, 2):
        d = np.subtract(b.lab, a.lab)
        dist = float(np.linalg.norm(d))
        u = d / (dist + 1e-12)
        sd = np.sqrt(u @ np.asarray(a.cov) @ u) + np.sqrt(u @ np.asarray(b.cov) @ u)
        report.pairs.append(PairMargin(a.name, b.name, dist / sd, dist))
    return report


def classify_patches(
    model: FollowerColours,
    patches: Sequence[np.ndarray],
    around: Sequence[np.ndarray] | None = None,
) -> list[str]:
    """The colour of each follower patch (Lab pixels N x 3): its median pixel's nearest colour;
    with ``around`` (Lab pixels of what surrounds each figure), allowing for the chroma the
    figure takes from it."""

    def medians(pixels):
        return np.array([np.median(np.asarray(p).reshape(-1, 3), axis=0) for p in pixels])

    return model.classify(medians(patches), None if around is None else medians(around))


def local_background(
    image: np.ndarray, size: float, inside: np.ndarray | None = None
) -> np.ndarray:
    """The table around each pixel (BGR, image size): a median over about ``size`` pixels, which
    ignores a follower (a small part of the window). At half resolution: four times cheaper, and
    the table's shading is smooth anyway. With ``inside`` (a mask of the table, image size), what
    lies outside it (the floor, the table's darker front edge, the tiles) counts as the table
    nearest to it: a follower laid near the table's edge is compared with the table, not with a
    window half full of floor."""
    k = 2 * max(3, int(size) // 4) + 1
    half = cv2.resize(image, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    if inside is not None:
        small = cv2.resize(inside.astype(np.uint8), (half.shape[1], half.shape[0]))
        if small.any() and not small.all():
            # each outside pixel takes the colour of the nearest inside one
            _, nearest = cv2.distanceTransformWithLabels(
                1 - small, cv2.DIST_L2, 3, labelType=cv2.DIST_LABEL_PIXEL
            )
            where = np.zeros(int(nearest.max()) + 1, np.int64)
            where[nearest[small > 0]] = np.flatnonzero(small > 0)
            half = half.reshape(-1, 3)[where[nearest]].reshape(half.shape)
    return cv2.resize(
        cv2.medianBlur(half, k), (image.shape[1], image.shape[0]), interpolation=cv2.INTER_LINEAR
    )


STRONG_SHARE = 0.3  # of a follower blob's pixels, at least, well above the table's noise


def _blobs(weak: np.ndarray, strong: np.ndarray, diff: np.ndarray, max_area: float):
    """The pixels (ys, xs) of each connected blob of ``weak``. One grown far beyond its strong
    pixels (larger than ``max_area``, or under :data:`STRONG_SHARE` strong) whose strong pixels
    are a figure's worth is cut again at a third of its own peak: the table's grain, a little
    unlike the table around it, had joined a dark figure's rim to a patch of table ten times
    its size, and a figure's shadow on a plain table had grown it threefold."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(weak)
    for i in range(1, n):
        x, y, w, h = stats[i, :4]
        box = labels[y : y + h, x : x + w] == i
        ys, xs = np.nonzero(box)
        core = int(strong[ys + y, xs + x].sum())
        grown = len(ys) > max_area or core < STRONG_SHARE * len(ys)
        if not grown or not 0 < core <= max_area:  # a figure, or a large thing (a box)
            yield ys + y, xs + x
            continue
        peak = float(np.quantile(diff[ys + y, xs + x], 0.99))
        tight = (box & (diff[y : y + h, x : x + w] > peak / 3)).astype(np.uint8)
        m, sub = cv2.connectedComponents(tight)
        for j in range(1, m):
            ys, xs = np.nonzero(sub == j)
            yield ys + y, xs + x


def find_follower_blobs(
    image: np.ndarray,
    surface_lab: np.ndarray,
    min_area: float,
    max_area: float,
    exclude: np.ndarray | None = None,
    threshold: float | None = None,
    background: float | None = None,
):
    """Followers lying on the table: a list of (centre x, centre y, radius, Lab pixels N x 3),
    most salient first. ``exclude`` is a mask (uint8, image size) of places that are not
    followers (the tiles, outside the table); areas are in pixels.

    With ``background`` (a window of about two tiles, pixels) each pixel is compared with the
    table *around it* (:func:`local_background`) rather than with one table colour
    (``surface_lab``): light falling off across the table or a glare spot would otherwise lift
    the threshold above a dark follower in dim light, or a yellow one on wood. The threshold is
    set from the table's own noise (median absolute deviation), and a blob is grown from its
    strong pixels down to 70 % of it (hysteresis: a thin standing figure keeps its silhouette,
    and neighbours do not merge through wood grain). The pixels returned for learning the colour
    are the blob's half least like the table (its rim is blended with the table)."""
    blur = cv2.GaussianBlur(image, (3, 3), 0)
    lab = cv2.cvtColor(blur, cv2.COLOR_BGR2Lab).astype(np.float32)
    if background:
        table = None if exclude is None else exclude == 0
        ref = cv2.cvtColor(local_background(blur, background, table), cv2.COLOR_BGR2Lab)
        ref = ref.astype(np.float32)
    else:
        ref = np.asarray(surface_lab, np.float32)
    diff = np.linalg.norm(lab - ref, axis=2)
    # The colour is learned from the frame's own pixels: the blur above (for finding blobs) mixes
    # a figure a few pixels wide with the table around it.
    sharp = cv2.cvtColor(image, cv2.COLOR_BGR2Lab).astype(np.float64)
    free = np.ones(diff.shape, bool) if exclude is None else exclude == 0
    if threshold is None:  # well above the table's own variation (grain, noise, uneven light)
        d = diff[free]
        med = float(np.median(d))
        sigma = 1.4826 * float(np.median(np.abs(d - med)))
        threshold = max(8.0, med + 6.0 * sigma)
    strong = (diff > threshold) & free
    weak = ((diff > 0.7 * threshold) & free).astype(np.uint8)
    found = []
    for ys, xs in _blobs(weak, strong, diff, max_area):
        area = len(ys)
        w, h = np.ptp(xs) + 1, np.ptp(ys) + 1
        # A blob counts when it holds a clump of strong pixels (noise rarely makes one).
        if not (
            min_area <= area <= max_area and strong[ys, xs].sum() >= max(4, STRONG_SHARE * area)
        ):
            continue
        if max(w, h) > 4 * min(w, h):
            continue  # a line (a table edge, a crack), not a figure
        d = diff[ys, xs]
        core = d >= np.quantile(d, 0.6)
        r = 0.35 * (min(w, h) + np.sqrt(area)) / 2
        found.append(
            (float(xs.mean()), float(ys.mean()), float(r), sharp[ys[core], xs[core]], d.sum())
        )
    found.sort(key=lambda f: -f[4])
    return [f[:4] for f in found]
