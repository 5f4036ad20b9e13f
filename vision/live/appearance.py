"""The pluggable tile scorer of the live loop, and the default one that learns during play.

A scorer answers one question: how well does this top-down crop of a cell look like tile type
``t`` at rotation ``r``? (:class:`TileScorer`: ``score(crop, options, ignore, cell) -> scores`` and
``learn(crop, tile, rotation, ignore, cell)``.) The rules have already narrowed the options to what may
lie at that cell, so the scorer only ranks a handful of candidates.

:class:`TerrainScorer` reads a tile by what it depicts (DECISIONS.md, "Recognition that survives a
new art edition"): every candidate says which pixel is field, road, city or cloister (its segment
geometry at its rotation); the scorer keeps a colour histogram per terrain kind and scores a
candidate by the mean log-likelihood of the crop's colours under the kinds the candidate puts
there. The histograms start from the start tile (known) and grow with every committed turn
(self-calibration: labelled samples of this art under this light). Once a tile type has been seen,
its mean appearance (a template in canonical orientation) adds a small second term where a crop
correlates with it well above what types that merely share roads or cities reach. Pennants, a few blurred
pixels at camera scale, get their own test: a blue spot anywhere well inside the city, weighed by
what the cities seen so far looked like with and without one; and once the players have
confirmed one of two types that differ only by a pennant, by how a crop differs from that
type's picture (``vision.live.twins``); how much a pale spot counts against its blue (snow on a
roof, or a shield's white half) is learned from the cities confirmed. The four edges get two more:
what a road, city or field side looks like on this table, learned from the tiles confirmed so far
(``vision.live.sides``), and whether a road crosses each (``vision.live.roads``).

When the copy's art is known (an appearance model, ``vision.model``: from a calibration profile,
``--model``, or the art the demo table draws), every option is also scored by how far the cell
picture is from that art at the option's rotation. The art shows what terrain cannot: a pennant
pair's shield, the decorations of the Winter tiles that share sides with base tiles.

Followers are found with the same histograms: pixels that the current player's colour explains
much better than any terrain kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Protocol

import numpy as np

from meeplecam.engine import Kind, TileType
from meeplecam.vision.live.evidence import Samples, Split
from meeplecam.vision.live.roads import RoadCrossings
from meeplecam.vision.live.sides import SideProfiles
from meeplecam.vision.live.twins import (
    LIGHTNESS,
    TwinPictures,
    View,
    choose_lightness,
    drawn_twins,
    has_pennant,
    north_up,
    pennant_pair,
    shield_twins,
)
from meeplecam.vision.model import AppearanceModel, centred, lab_image, plane_share

FIELD, ROAD, CITY, CLOISTER, PENNANT, VILLAGE = range(6)
N_KINDS = 6
PENNANT_BLUE, PENNANT_WHITE = (156, 74, 39), (240, 240, 240)
MIN_SAMPLES = 30  # pixels a kind needs before its own histogram is trusted
BINS_L, BINS_AB = 8, 24  # colour bins: lightness varies with light, chroma tells things apart
N_BINS = BINS_L * BINS_AB * BINS_AB
SHAPE = (BINS_L, BINS_AB, BINS_AB)

GINGERBREAD = "gingerbread"  # the Gingerbread Man's colour name (a profile's may replace it)

# Follower colours (BGR) when no profile gives them: the usual painted wooden figures.
DEFAULT_COLOURS = {
    "red": (30, 32, 200),
    "yellow": (26, 194, 242),
    "green": (58, 139, 46),
    "blue": (180, 79, 31),
    "black": (32, 32, 32),
    "grey": (140, 140, 140),
    "pink": (168, 122, 232),
    "white": (240, 240, 240),
    "purple": (154, 61, 106),
    "orange": (26, 122, 238),
    GINGERBREAD: (42, 90, 155),  # the Gingerbread Man figure: baked brown
}


class TileScorer(Protocol):
    def score(
        self, crop: np.ndarray, options: Sequence[tuple[TileType, int]], ignore=None, cell=None
    ) -> list[float]: ...

    def learn(
        self, crop: np.ndarray, tile: TileType, rotation: int, ignore=None, cell=None
    ) -> None: ...


@lru_cache(maxsize=1024)  # a few sizes in the live loop; bounded for callers with many
def kind_map(tile: TileType, rotation: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(kinds, labels): terrain kind (FIELD ... VILLAGE) and segment index per pixel of a tile
    at a rotation, ``size`` square, north up."""
    from meeplecam.vision.synth.geometry import label_mask

    labels, kinds = label_mask(tile, rotation, size)
    # synth kinds: field road city cloister pennant village -> ours
    remap = np.array([FIELD, ROAD, CITY, CLOISTER, PENNANT, VILLAGE], np.uint8)
    out = remap[kinds]
    out.setflags(write=False)
    return out, labels


def trimmed_map(tile: TileType, rotation: int, size: int, inset: float) -> tuple:
    """(kinds, labels) of :func:`kind_map` trimmed by ``inset`` (of the cell) on each side and
    ``size`` square, as a crop prepared that way shows the tile."""
    full = round(size / (1 - 2 * inset))
    kinds, labels = kind_map(tile, rotation, full)
    d = (full - size) // 2
    return kinds[d : d + size, d : d + size], labels[d : d + size, d : d + size]


@lru_cache(maxsize=1024)
def city_mask(tile: TileType, rotation: int, size: int, inset: float) -> np.ndarray:
    """Where a tile's cities are, trimmed like :func:`trimmed_map`."""
    _, labels = trimmed_map(tile, rotation, size, inset)
    out = np.isin(labels, [segment for segment, _ in city_segments(tile)])
    out.setflags(write=False)
    return out


@cache
def anchor_points(tile: TileType, rotation: int) -> dict[int, tuple[float, float]]:
    from meeplecam.vision.synth.geometry import anchors

    return anchors(tile, rotation)


@cache
def city_segments(tile: TileType) -> tuple[tuple[int, bool], ...]:
    """(segment, has a pennant) per city segment of a tile type."""
    return tuple(
        (index, bool(seg.pennant))
        for index, seg in enumerate(tile.segments)
        if seg.kind is Kind.CITY
    )


@dataclass
class ScorerConfig:
    size: int = 32  # crops are scored at this size
    inset: float = 0.08  # part of the cell trimmed on each side (gaps, neighbours)
    prior_count: float = 0.01  # pseudo-count per histogram bin
    smooth: float = 0.6  # histogram blur (bins)
    # a type the players confirmed before: how much looking like its template (the
    # correlation of the crop with its mean crop) adds, from template_floor (types that share
    # roads or cities correlate up to about there) to a perfect match
    template_weight: float = 0.1
    template_floor: float = 0.75
    follower_sd: float = 9.0  # Lab spread of a follower colour before any sample
    follower_ratio: float = 1.5  # log-likelihood ratio a follower pixel needs over terrain
    follower_min_area: float = 0.015  # of the crop
    # pixels of a blob the colour must explain clearly: over 70 rendered games (bench/
    # figures.py) every figure showed 7 or more, 9 of 14 specks of art in a player's colour
    # (a cloister's roofs) 6 or fewer
    follower_core_px: int = 7
    # a figure in shade (a dull yellow knight) may have no pixel its colour explains clearly,
    # but many it explains a little: a blob of figure size (follower_faint_area to
    # follower_max_known) whose ratios over terrain add up to this counts too. Census of the
    # 40 snowy and scans games at their end: the three figures missed by the core had 17 to 34,
    # the 5604 figure-free cells' blobs 0.6 at most
    follower_evidence: float = 8.0
    follower_faint_area: float = 0.03
    follower_close: int = 3  # pixels across which the bits of one figure are joined
    # a figure's shaded side blurs into the tile around it: its blob grows this many pixels
    # into colours the figure's colour nearly explains (log-likelihood ratio over follower_near)
    follower_grow: int = 2
    follower_near: float = -1.0
    # a figure the players say is there covers about 0.06 of the crop: a blob of its colour
    # larger than this is the tile's art, and is not learned as the figure
    follower_max_known: float = 0.15
    # a figure's foot is read from the part of its blob that its colour explains at least this
    # share as clearly as its clearest pixels (the 90th percentile): the figure's shadow on a
    # pale tile can join the blob, a little likelier the figure's than the terrain's, and pull
    # the foot into the next segment (an A's road figure read as its monk). Over the 40 snowy
    # and scans games (a census of 555 figures with two or more spots) 0.4 to 0.7 all read every
    # spot right; the whole blob, two wrong.
    figure_core: float = 0.5
    pennant_prior: float = 60.0  # pseudo-samples of the pennant colours before any pennant
    blur: int = 3  # Gaussian blur of the crop before reading colours
    kind_strength: float = 100.0  # samples at which a kind weighs as much as the broad model
    pennant_city: float = 0.5  # share of the city's colours in a pennant's region
    outlier: float = 0.1  # share of the broad model in every kind (bounds one pixel's evidence)
    pennant_weight: float = 0.04  # weight of the pennant contrast test per city segment
    # what a city's contrast (Lab: _city_contrast) says at each lightness weight
    # (vision.live.twins.LIGHTNESS): until the table has shown cities with a pennant and
    # without, "a pennant" above the threshold (sure `scale` beyond) at the weight its fields
    # suggest (snowy_whiteness); then the log-likelihood ratio (pennant : none) at the weight
    # that tells them apart here, sure at 9
    pennant_splits: dict[float, Split] = field(
        default_factory=lambda: {
            0.5: Split(threshold=10.0, scale=4.0, sure_ratio=9.0, min_sd=2.0),
            -0.3: Split(threshold=18.0, scale=4.0, sure_ratio=9.0, min_sd=2.0),
        }
    )
    pennant_min_city: float = 0.15  # of the crop: a smaller city (eroded) has no pennant test
    # fields whose lightness less twice their chroma (Lab, 0-255) is above this are snow: the
    # snowy art's 175-250, grass 35-70 under the renderer's lights
    snowy_whiteness: float = 120.0
    # where a pennant twin's picture is known (vision.live.twins), its share of the pennant
    # term, the rest the blot test's, per lightness weight: where a pale spot counts for a
    # shield (grass art) the blot test finds its white half on the first city and stays
    twin_shares: dict[float, float] = field(default_factory=lambda: {0.5: 1.0, -0.3: 0.5})
    tolerance: int = 1  # each kind's evidence is the best within this square (pixels, odd)
    side_weight: float = 0.2  # weight of the side profiles learned in play (vision.live.sides)
    road_weight: float = 0.1  # weight of the road crossings per side (vision.live.roads)
    reference_weight: float = 1.0  # weight of the appearance model's term, when one is given
    # weight of the model's pennant-twin test: the cell against both twins' art only where
    # they differ (vision.model.AppearanceModel.twin_distances)
    reference_twin_weight: float = 0.3
    reference_scale: float = 100.0  # squared Lab distance that costs one unit of score
    reference_contrast: float = 12.0  # Lab distance at which two tiles' art counts as different
    reference_inset: float = 0.02  # part of the cell trimmed for it (the gap: the tile's border
    # and corners stay, where a pennant is often drawn)
    # a blob of a player's colour whose pixels are this close to the option's art (mean squared
    # distance, the model's features) is the art, not a figure: on the copy on a white table
    # (10 games, art model), a cloister's red roofs read as a monk at 175, 181 and 583, the 156
    # figures at 526 or more (monks on cloisters 559 and 740)
    art_figure_distance: float = 350.0
    # a lamp's glare (see _through_glare): the options' art explains the cell this much
    # better seen through glare. Four snowy games, art model: the three washed-out cells read
    # wrong 0.05 to 0.11, every other cell 0.24 or more (most 0.5 to 1)
    glare_ratio: float = 0.15
    # fitting glare is slow: every option is fitted only where the likeliest explains the cell
    # this much better through glare (the three cells above: 0.19 or less; 6 cells of 331)
    glare_suspect: float = 0.3  # 0: no glare reading
    glare_washed: float = 0.5  # share of glare over which a pixel tells the other terms nothing


def _city_inside(city: np.ndarray) -> np.ndarray:
    """Where the pennant tests read a city: its rim, where the field is blurred in, eroded
    away, and the crop's edge (the gap and the neighbour) left out."""
    import cv2

    inner = cv2.erode(city.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    inner[[0, -1]] = inner[:, [0, -1]] = False
    return inner


def lab_bins(crop: np.ndarray) -> np.ndarray:
    import cv2

    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2Lab)
    lab = lab.astype(np.uint16)
    ql = (lab[..., 0] * BINS_L) >> 8
    qa = (lab[..., 1] * BINS_AB) >> 8
    qb = (lab[..., 2] * BINS_AB) >> 8
    return (ql * BINS_AB + qa) * BINS_AB + qb


class TerrainScorer:
    """Terrain-kind colour histograms + per-type templates, learned during play; and the copy's
    art, when an appearance model is given."""

    def __init__(
        self,
        config: ScorerConfig | None = None,
        colours: dict | None = None,
        reference: AppearanceModel | None = None,
    ):
        self.config = config or ScorerConfig()
        # how this copy's tiles look (vision.model), when known: the art itself, pennants and
        # decorations included, scored against every option besides the terrain
        self.reference = reference if reference is not None and reference.templates else None
        self.counts = np.zeros((N_KINDS, N_BINS), np.float64)
        self.templates: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # id -> (sum, n) canonical
        self._turned: dict = {}  # (id, rotation) -> (mean turned, seen): see _turned_template
        self.colours = dict(DEFAULT_COLOURS)
        if colours:
            self.colours.update(colours)
        self.sides = SideProfiles()
        self.roads = RoadCrossings()
        self.twins = TwinPictures()
        self.follower_counts: dict[str, np.ndarray] = {}
        self.players: list[str] = []  # follower colours in play: kept out of terrain samples
        self._log: np.ndarray | None = None
        self._follower_log: dict[str, np.ndarray] = {}
        self.samples = 0
        # per lightness weight (vision.live.twins.LIGHTNESS), the pennant contrast of learned
        # city segments: (with a pennant, without): self-calibration
        self.pennant_seen: dict[float, tuple[Samples, Samples]] = {
            w: (Samples(), Samples()) for w in LIGHTNESS
        }
        self._lightness: float | None = None  # see lightness()
        self._memo: tuple | None = None  # see _reading()
        # pennants are small blue-and-white shields in every edition: a prior until seen
        for colour, weight in ((PENNANT_BLUE, 0.7), (PENNANT_WHITE, 0.3)):
            self.counts[PENNANT] += weight * self._shades_prior(colour, self.config.pennant_prior)

    # --- preparing crops ------------------------------------------------------------------
    def prepare(self, cell: np.ndarray) -> np.ndarray:
        """A cell picture trimmed by the inset and resized to the scoring size."""
        import cv2

        cfg = self.config
        small = _trimmed(cell, cfg.inset, cfg.size)
        if cfg.blur > 1:
            small = cv2.GaussianBlur(small, (cfg.blur, cfg.blur), 0)
        return small

    def _kinds(self, tile: TileType, rotation: int) -> np.ndarray:
        """The kind map at the scoring size, trimmed by the inset like the crops."""
        return trimmed_map(tile, rotation, self.config.size, self.config.inset)[0]

    def _labels(self, tile: TileType, rotation: int) -> np.ndarray:
        return trimmed_map(tile, rotation, self.config.size, self.config.inset)[1]

    # --- the histograms ----------------------------------------------------------------------
    def _smoothed_log(self, counts: np.ndarray, smooth: float | None = None) -> np.ndarray:
        from scipy.ndimage import gaussian_filter

        cube = counts.reshape(SHAPE)
        smooth = self.config.smooth if smooth is None else smooth
        if smooth > 0:
            cube = gaussian_filter(cube, smooth, mode="constant")
        cube = cube + self.config.prior_count
        return np.log(cube / cube.sum()).reshape(-1)

    def kind_log(self) -> np.ndarray:
        """log p(colour bin | kind). Each kind is shrunk towards a could-be-anything model (mostly
        the mixture of the learned kinds, partly uniform) by how few samples it has: a kind not
        seen yet (a cloister before the first cloister tile, a pennant known only from its prior
        colours) neither wins nor loses much, and a well-seen kind keeps its own colours. Every
        kind also keeps a share of that broad model as an outlier process: a tree, a house, an
        animal or a shadow in the art is evidence of nothing, so no single pixel can outvote a
        region (without it, a dark tree in a snowy field is "road" by a wide margin). Where roads
        meet at a village the art draws houses with snowy roofs, a well, a market: a kind of its
        own (as road, its roofs made snow look like road: a straight road read as a junction)."""
        if self._log is None:
            cfg = self.config
            n = self.counts.sum(axis=1)
            probs = np.exp(np.stack([self._smoothed_log(c) for c in self.counts]))
            learned = n >= MIN_SAMPLES
            mix = probs[learned].mean(axis=0) if learned.any() else np.full(N_BINS, 1 / N_BINS)
            broad = 0.7 * mix + 0.3 / N_BINS
            w = (n / (n + cfg.kind_strength))[:, None]
            p = w * probs + (1 - w) * broad
            # a pennant is a few pixels on a city: at this scale most of its region is the city
            # around it, blurred in, and the rest is whatever a city is not (its own colours
            # once seen; before that, anything else on the tiles)
            other = [k for k in np.flatnonzero(learned) if k not in (CITY, PENNANT)]
            not_city = probs[other].mean(axis=0) if other else broad
            own = w[PENNANT] * probs[PENNANT] + (1 - w[PENNANT]) * not_city
            p[PENNANT] = cfg.pennant_city * p[CITY] + (1 - cfg.pennant_city) * own
            p = (1 - cfg.outlier) * p + cfg.outlier * broad
            self._log = np.log(p)
        return self._log

    def follower_log(self, colour: str) -> np.ndarray:
        cached = self._follower_log.get(colour)
        if cached is None:
            counts = self.follower_counts.get(colour)
            if counts is None:
                counts = self.follower_counts[colour] = self._colour_prior(colour)
            cached = self._follower_log[colour] = self._smoothed_log(counts, smooth=0.5)
        return cached

    def _colour_prior(self, colour: str) -> np.ndarray:
        return self._shades_prior(self.colours.get(colour, (128, 128, 128)), 400.0)

    def _shades_prior(self, bgr, mass: float) -> np.ndarray:
        """A follower colour before any sample: the profile colour under light from dim shade to
        bright (the colour scaled by 0.3 to 1.2: shading darkens and greys it), each a small
        Gaussian blob in Lab."""
        from meeplecam.vision.profile import shades_lab

        labs = shades_lab(bgr, np.linspace(0.3, 1.2, 10))
        centres = [(np.arange(n) + 0.5) * 256 / n for n in SHAPE]
        sd = self.config.follower_sd
        cube = np.zeros(SHAPE)
        for lab in labs:
            g = [
                np.exp(-0.5 * ((centres[i] - lab[i]) / (sd * (1.5 if i == 0 else 1))) ** 2)
                for i in range(3)
            ]
            blob = g[0][:, None, None] * g[1][None, :, None] * g[2][None, None, :]
            cube += blob / blob.sum()
        return mass * cube.reshape(-1) / cube.sum()

    # --- scoring ----------------------------------------------------------------------------
    def likelihoods(self, crop: np.ndarray) -> np.ndarray:
        """Per-kind log-likelihood maps (N_KINDS x size x size) of a prepared crop."""
        bins = lab_bins(crop)
        return self.kind_log()[:, bins]

    def score(self, crop: np.ndarray, options, ignore=None, cell=None, clipped=None) -> list[float]:
        """Each (tile, rotation) option's score: the sum of its :meth:`terms`. ``ignore`` is a
        mask of pixels to leave out (a follower on the tile); ``cell``, the untrimmed cell
        picture the crop was prepared from, adds the terms read from it; ``clipped``, a mask of
        ``cell``, the pixels a lamp's glare clipped to white: no road shows through them, so a
        side whose middle they cover says nothing of one."""
        terms = self.terms(crop, options, ignore, cell, clipped)
        return np.sum(list(terms.values()), axis=0).tolist() if options else []

    def terms(
        self, crop: np.ndarray, options, ignore=None, cell=None, clipped=None
    ) -> dict[str, list[float]]:
        """What each piece of evidence adds to each option's score, by name (one value per
        option, in order): ``terrain`` (mean log-likelihood per pixel of the option's terrain
        map), ``pennant`` (the blot and twin tests), ``template`` (types confirmed before),
        ``reference`` and ``reference twin`` (the appearance model, when there is one: the whole
        tile, and where pennant twins among the options differ), ``sides`` and ``roads`` (read
        from ``cell``). Only the terms that apply here are present."""
        reference = self._reference_features(cell, ignore) if self.reference else None
        reference_costs: list[float] = []
        seen = ignore
        if reference is not None:
            reference_costs, washed = self._reference_costs(reference, options)
            if washed is not None:  # glare: what it washed out tells the other terms nothing
                ignore = washed if ignore is None else ignore | washed
        # a tile is read against its legal options, then every other type, and read again when
        # an earlier turn is amended: what the crop shows is worked out once for all of them
        memo = self._reading(crop, cell, seen, ignore, clipped)
        asked = tuple((tile.id, rotation) for tile, rotation in options)
        if asked not in memo["terms"]:
            memo["terms"][asked] = self._terms(
                crop, options, ignore, cell, clipped, reference, reference_costs, memo
            )
        return {name: list(values) for name, values in memo["terms"][asked].items()}

    def _reading(self, crop: np.ndarray, cell, *masks) -> dict:
        """The memo of one crop's reading (the crop, the cell, the masks of pixels left out),
        kept until another crop is read or the scorer learns or changes its model."""
        key = (
            self.samples,
            crop.shape,
            crop.tobytes(),
            None if cell is None else (cell.shape, cell.tobytes()),
            *(None if mask is None else mask.tobytes() for mask in masks),
        )
        memo = self._memo
        if (
            memo is None
            or memo[0] is not self.reference
            or memo[1] is not self.config
            or memo[2] != key
        ):
            self._memo = memo = (self.reference, self.config, key, {"terms": {}})
        return memo[3]

    def _terms(
        self, crop, options, ignore, cell, clipped, reference, reference_costs, memo
    ) -> dict:
        """:meth:`terms`, with what the crop shows kept in ``memo`` (:meth:`_reading`)."""
        if "like" not in memo:
            like = self.likelihoods(crop)
            if self.config.tolerance > 1:
                like = _tolerant(like, self.config.tolerance)
            memo["like"] = like
            memo["lab"] = _lab(crop)
            memo["profiles"] = (
                self._side_profiles(cell, ignore) if self.config.side_weight else None
            )
            memo["roads"] = (
                self._road_evidence(cell, ignore, clipped) if self.config.road_weight else None
            )
            for name in ("contrasts", "sides", "templates", "twins"):
                memo[name] = {}
        like, lab, profiles, roads = memo["like"], memo["lab"], memo["profiles"], memo["roads"]
        keep = np.ones(crop.shape[:2], bool) if ignore is None else ~ignore
        n = max(1, int(keep.sum()))
        contrasts = memo["contrasts"]  # twins (O and P at one rotation) share their cities
        side_memo, template_memo, twin_memo = memo["sides"], memo["templates"], memo["twins"]
        # the model's templates show this edition's pennants as drawn: the blot test, made for
        # art never seen, would only add its guesses
        pennant_weight = 0.0 if reference is not None else self.config.pennant_weight
        alike = drawn_twins(options)  # each option's twins: the tests that tell them apart
        templated = self._templated(options, alike)
        twins = self._twins_pictured(options, alike) if pennant_weight else {}
        out: dict[str, list[float]] = {"terrain": []}
        if pennant_weight:
            out["pennant"] = []
        if templated:
            out["template"] = []
        if reference is not None:
            out["reference"] = []
            twin_of = alike if self.config.reference_twin_weight else {}
            if twin_of:
                out["reference twin"] = []
        if profiles is not None:
            out["sides"] = []
        if roads is not None:
            out["roads"] = []
        for i, (tile, rotation) in enumerate(options):
            kinds = self._kinds(tile, rotation)
            ll = np.take_along_axis(like, kinds[None].astype(np.intp), 0)[0]
            out["terrain"].append(float(ll[keep].sum()) / n)
            if pennant_weight:
                pennant = 0.0
                if city_segments(tile):
                    pennant = self._pennant_term(lab, tile, rotation, keep, contrasts)
                    twin = None
                    if (tile.id, rotation) in twins and cell is not None:
                        twin = self._twin_term(cell, ignore, tile, rotation, twin_memo)
                    if twin is not None:
                        share = self.config.twin_shares[self.lightness()]
                        pennant = share * twin + (1 - share) * pennant
                out["pennant"].append(pennant_weight * pennant)
            if templated:
                bonus = 0.0
                if (tile.id, rotation) in templated:
                    bonus = self._template_bonus(lab, tile, rotation, keep, template_memo)
                out["template"].append(bonus)
            if reference is not None:
                out["reference"].append(-reference_costs[i])
                if twin_of:
                    out["reference twin"].append(
                        self._reference_twin(
                            reference, (tile.id, rotation), twin_of.get((tile.id, rotation), ())
                        )
                    )
            sides = tile.oriented(rotation).sides
            if profiles is not None:
                cost = self.sides.cost(profiles, sides, side_memo)
                out["sides"].append(-self.config.side_weight * cost)
            if roads is not None:
                out["roads"].append(self.config.road_weight * RoadCrossings.agreement(roads, sides))
        if reference is not None:
            out["reference"] = _shared_by_pennant_twins(out["reference"], options, alike)
        return out

    def _templated(self, options, twin_of) -> set:
        """The options whose template (the mean crop of their type) may count: of the
        types the players confirmed before, all but those drawn alike with an option never
        confirmed but for a pennant (twins correlate with each other's template as well as with
        their own: O's template would take every P)."""
        if not self.config.template_weight:
            return set()
        return {
            (tile.id, rotation)
            for tile, rotation in options
            if tile.id in self.templates
            and all(t.id in self.templates for t, _ in twin_of.get((tile.id, rotation), ()))
        }

    def _twins_pictured(self, options, twin_of) -> set:
        """The options that have a pennant twin among the options and a picture of a type of
        their pair (:mod:`vision.live.twins`): the twin term decides between them."""
        return {
            (tile.id, rotation)
            for tile, rotation in options
            if any(
                has_pennant(t) != has_pennant(tile) for t, _ in twin_of.get((tile.id, rotation), ())
            )
            and self.twins.pictured_like(tile)
        }

    def _twin_term(self, cell, ignore, tile: TileType, rotation: int, memo: dict):
        """+ for an option with a pennant where the cell differs from its twins' pictures as
        a shield would, - for the plain one; None when the cell shows too little of the city.
        ``memo`` keeps the cell's Lab and each pair's evidence across the options of one cell."""
        key = (pennant_pair(tile), rotation)
        if key not in memo:
            view = self._twin_view(cell, ignore, tile, rotation, memo)
            evidence = (
                [
                    self.twins.pennant_evidence(view, tile_id, pennant, self.lightness())
                    for tile_id, pennant in self.twins.pictured_like(tile).items()
                ]
                if view is not None
                else []
            )
            evidence = [z for z in evidence if z is not None]
            z = float(np.mean(evidence)) if evidence else None
            if z is not None and (view.city & ~view.seen).any():
                z = self._shield_covered(z, (tile, rotation), ignore, unknown=z)
            memo[key] = z
        z = memo[key]
        if z is None:
            return None
        return z if has_pennant(tile) else -z

    def _twin_view(self, cell, ignore, tile: TileType, rotation: int, memo: dict) -> View | None:
        """The cell as the twin term reads it for ``tile`` at ``rotation``."""

        cfg = self.twins.config
        if "lab" not in memo:
            memo["lab"] = _lab(_trimmed(cell, cfg.inset, cfg.size))
            memo["seen"] = (
                np.ones((cfg.size, cfg.size), bool)
                if ignore is None
                else ~self._hidden_at(ignore, cfg.size, cfg.inset)
            )
        city = city_mask(tile, rotation, cfg.size, cfg.inset)
        return north_up(memo["lab"], city, memo["seen"], rotation)

    def _shield_covered(self, z: float, option: tuple[TileType, int], ignore, unknown: float):
        """Evidence ``z`` (-1 to 1) of a shield on the option's city with a figure on it
        (``ignore``): where the table has shown where this art draws the pair's shield, all
        of it if the camera sees that spot, none if the figure stands on it; until then,
        "no shield" counts ``unknown`` (the figure may stand on it)."""
        seen = self._shield_seen(option, ignore)
        if seen is None:
            return z if z >= 0 else unknown
        return z if seen else 0.0

    def _shield_seen(self, option: tuple[TileType, int], ignore) -> bool | None:
        """Whether the camera sees the spot where this table's art draws the shield of the
        option's pair (:meth:`TwinPictures.shield_spot`), no figure (``ignore``, a crop mask)
        over most of it; None until the table has shown where that is."""
        tile, rotation = option
        cfg = self.twins.config
        city = city_mask(tile, 0, cfg.size, cfg.inset)
        spot = self.twins.shield_spot(tile, _city_inside(city), self.lightness())
        if spot is None:
            return None
        if ignore is None or not ignore.any():
            return True
        hidden = np.rot90(self._hidden_at(ignore, cfg.size, cfg.inset), rotation // 90)
        r, c, k = *spot, cfg.shield_radius
        return bool(hidden[max(r - k, 0) : r + k + 1, max(c - k, 0) : c + k + 1].mean() <= 0.5)

    def _side_profiles(self, cell, ignore):
        """The four side profiles of the untrimmed cell picture, or None without one."""
        if cell is None:
            return None
        size = self.sides.config.size
        hidden = None if ignore is None else self._hidden_at(ignore, size, 0.0)
        return self.sides.read(cell, hidden)

    def _road_crossings(self, cell, ignore):
        """The four road crossings of the untrimmed cell picture, or None without one."""
        if cell is None:
            return None
        size = self.roads.config.size
        return self.roads.read(cell, None if ignore is None else self._hidden_at(ignore, size, 0.0))

    def _road_evidence(self, cell, ignore, clipped=None):
        crossings = self._road_crossings(cell, ignore)
        if crossings is None:
            return None
        return self.roads.evidence(
            crossings, None if clipped is None else self.roads.covered(clipped)
        )

    def _hidden_at(self, ignore: np.ndarray, size: int, inset: float) -> np.ndarray:
        """The crop's follower mask carried over to another frame of the cell: ``size`` pixels
        square over the cell trimmed by ``inset`` (the crop is trimmed by the scorer's). Beyond
        the crop's edge the mask goes on as it is at the edge: a figure cut off there stands
        on the cell's border band too (a follower at a side hides that side's road)."""
        cfg = self.config
        # centre of each pixel of that frame, in cell units, then in crop pixels
        u = inset + (np.arange(size) + 0.5) / size * (1 - 2 * inset)
        at = np.floor((u - cfg.inset) / (1 - 2 * cfg.inset) * ignore.shape[0]).astype(int)
        at = np.clip(at, 0, ignore.shape[0] - 1)
        return ignore[np.ix_(at, at)]

    # --- the appearance model ---------------------------------------------------------------
    def _reference_features(self, cell, ignore):
        """(features, pixels to compare, memo) of the cell at the model's size, or None without a
        cell."""
        if cell is None:
            return None
        h, w = cell.shape[:2]
        d = round(h * self.config.reference_inset)
        lab = lab_image(cell[d : h - d, d : w - d], self.reference.size)
        return centred(lab), self._reference_keep(ignore), {"lab": lab}

    def art_explains(
        self, cell, mask: np.ndarray, tile: TileType, rotation: int, memo: dict | None = None
    ) -> bool:
        """Whether the appearance model's art of ``tile`` at ``rotation`` explains a blob
        (``mask`` on the scorer crop of the untrimmed ``cell`` picture) taken for a figure: a
        cloister's red roofs are no red monk. False without a model or its art of the tile.
        ``memo`` keeps the cell's features and the blob across the options of one cell."""
        distance = self._art_distance(cell, mask, tile, rotation, memo)
        return distance is not None and distance < self.config.art_figure_distance

    def art_disowns(
        self, cell, mask: np.ndarray, tile: TileType, rotation: int, memo: dict | None = None
    ) -> bool:
        """Whether the model's art of ``tile`` at ``rotation`` clearly does not explain a blob
        (as :meth:`art_explains`): something lies on the tile. False without a model or its
        art of the tile."""
        distance = self._art_distance(cell, mask, tile, rotation, memo)
        return distance is not None and distance >= self.config.art_figure_distance

    def _art_distance(self, cell, mask, tile: TileType, rotation: int, memo) -> float | None:
        """The blob's mean squared distance from the model's art of the option (its features),
        the rest of the cell fitting the art; None without a model, a cell or the art."""
        if self.reference is None or cell is None:
            return None
        memo = {} if memo is None else memo
        if "blob" not in memo:
            memo["blob"] = self._hidden_at(mask, self.reference.size, self.config.reference_inset)
            memo["feats"] = self._reference_features(cell, None)[0]
        blob, feats = memo["blob"], memo["feats"]
        if not blob.any() or blob.all():
            return None
        per_pixel = self.reference.pixel_distances(feats, tile.id, rotation, ~blob)
        return None if per_pixel is None else float(per_pixel[blob].mean())

    def _reference_twin(self, reference, option: tuple[str, int], twins) -> float:
        """+ (up to ``reference_twin_weight``) for an option (id, rotation) whose art the cell
        matches better than each of its ``twins``' (tile, rotation) where the two are drawn
        differently (the shield, the icon), - for the others (the worst of its pairs); 0
        without a twin or where the model cannot tell."""
        feats, keep, memo = reference
        terms = []
        for tile, rotation in twins:
            pair = tuple(sorted((option, (tile.id, rotation))))
            if ("twin", pair) not in memo:
                memo["twin", pair] = self.reference.twin_distances(
                    feats, *pair, keep, self.config.reference_contrast
                )
            found = memo["twin", pair]
            if found is not None:
                mine, theirs = found if pair[0] == option else found[::-1]
                terms.append((theirs - mine) / (theirs + mine + 1e-6))
        return self.config.reference_twin_weight * min(terms, default=0.0)

    def _reference_keep(self, ignore) -> np.ndarray | None:
        """The crop's follower mask carried over to the model's frame (less trimmed, another
        size): the pixels there that show the tile. None when nothing is hidden."""
        if ignore is None:
            return None
        return ~self._hidden_at(ignore, self.reference.size, self.config.reference_inset)

    def visible_difference(self, a, b, ignore=None) -> int:
        """Crop pixels where options ``a`` and ``b`` (tile, rotation) differ and the camera sees
        them (not under a follower): their terrain kinds, and with an appearance model their art
        as well (a pennant is a few pixels of kind but a clear shield in the art)."""
        differ = self._kinds(*a) != self._kinds(*b)
        if ignore is not None:
            differ &= ~ignore
        seen = int(differ.sum())
        if self.reference is None:
            if self.config.pennant_weight and shield_twins(a, b):
                # the pennant tests look for the shield on the whole city they can see, but
                # not under a figure where the table has shown that this art draws it
                if self._shield_seen(a, ignore) is False:
                    return 0
                city = city_mask(*a, self.config.size, self.config.inset)
                seen = max(
                    seen, int(_city_inside(city if ignore is None else city & ~ignore).sum())
                )
            return seen
        cfg = self.config
        ta = self.reference.sample(a[0].id, a[1])
        tb = self.reference.sample(b[0].id, b[1])
        if ta is None or tb is None:
            return seen
        drawn = np.linalg.norm(ta - tb, axis=2) > cfg.reference_contrast
        keep = self._reference_keep(ignore)
        if keep is not None:
            drawn &= keep
        # in crop pixels: the model's pixels are larger (or smaller) than the crop's
        scale = (cfg.size / (1 - 2 * cfg.inset)) / (ta.shape[0] / (1 - 2 * cfg.reference_inset))
        return max(seen, round(int(drawn.sum()) * scale**2))

    def _reference_distance(self, reference, tile: TileType, rotation: int) -> float:
        feats, keep, memo = reference
        model = self.reference
        distance = model.distance(feats, tile.id, rotation, keep)
        if distance is None:  # a type the model lacks: as far as the farthest type it holds
            if "missing" not in memo:
                memo["missing"] = max(model.distance(feats, t, 0, keep) for t in model.templates)
            distance = memo["missing"]
        return distance

    def _reference_costs(self, reference, options) -> tuple[list[float], np.ndarray | None]:
        """Each option's cost in the appearance model's term, and the crop pixels a lamp's
        glare washed out (None where the cell shows no glare: see :meth:`_through_glare`)."""
        cfg = self.config
        distances = [self._reference_distance(reference, t, r) for t, r in options]
        washed = None
        glare = self._through_glare(reference, options, distances) if distances else None
        if glare is not None:
            distances, washed = glare
        return [cfg.reference_weight * d / cfg.reference_scale for d in distances], washed

    def _through_glare(self, reference, options, distances):
        """A glare adds white light, which on snowy art looks like snow where a road or a city
        was drawn. Where the options' art explains the cell far better seen through glare (the
        best :meth:`AppearanceModel.glare_fits` distance under ``glare_ratio`` of the best
        plain one): every option's distance through glare, scaled so that the best keeps the
        best plain distance (little is left to differ by in a washed-out picture: the order
        is what counts), and the crop pixels where the fitted glare's share is over
        ``glare_washed``, which tell the other terms nothing. None elsewhere."""
        cfg = self.config
        feats, keep, memo = reference
        keep = np.ones(feats.shape[:2], bool) if keep is None else keep
        ids = [(tile.id, rotation) for tile, rotation in options]
        plain = min(distances)
        # the likeliest first: fitting every option costs about 1 ms each
        (probe,) = self.reference.glare_fits(memo["lab"], [ids[int(np.argmin(distances))]], keep)
        if probe is None or probe[0] >= cfg.glare_suspect * plain:
            return None
        fits = self.reference.glare_fits(memo["lab"], ids, keep)
        best = min((f for f in fits if f is not None), key=lambda f: f[0])
        if best[0] >= cfg.glare_ratio * plain:
            return None
        worst = max(f[0] for f in fits if f is not None)  # for a type the model lacks
        scale = plain / max(best[0], 1e-6)
        return [scale * (worst if f is None else f[0]) for f in fits], self._washed(best[1])

    def _washed(self, coefs: np.ndarray) -> np.ndarray:
        """The crop pixels where a glare plane (in the model's frame) is over ``glare_washed``."""
        cfg = self.config
        u = cfg.inset + (np.arange(cfg.size) + 0.5) / cfg.size * (1 - 2 * cfg.inset)
        at = (u - cfg.reference_inset) / (1 - 2 * cfg.reference_inset) - 0.5
        return plane_share(coefs, at[None, :], at[:, None]) > cfg.glare_washed

    # --- pennants ----------------------------------------------------------------------------
    def lightness(self) -> float:
        """How much a lighter spot counts against its blue in the pennant tests on this table's
        art: the weight that tells the cities confirmed with a pennant and without apart best
        (:func:`vision.live.twins.choose_lightness`); until both were seen, by the fields:
        where they are snowy a pale spot is as likely snow as a shield (the first weight),
        where they are grass the shield's white half is the palest thing on a city."""
        if self._lightness is None:
            chosen = choose_lightness(self.pennant_seen)
            if chosen is None:
                snowy = self.field_whiteness() > self.config.snowy_whiteness
                chosen = LIGHTNESS[0] if snowy else LIGHTNESS[1]
            self._lightness = chosen
        return self._lightness

    def field_whiteness(self) -> float:
        """The learned fields' mean lightness less twice their mean chroma (Lab, 0-255): high
        for snow, low for grass; as snow until a field was learned (the Winter art's prior)."""
        counts = self.counts[FIELD].reshape(SHAPE)
        n = counts.sum()
        if n < MIN_SAMPLES:
            return 255.0
        centres = [(np.arange(k) + 0.5) * 256 / k for k in SHAPE]
        light = (counts.sum(axis=(1, 2)) * centres[0]).sum() / n
        a = (counts.sum(axis=(0, 2)) * centres[1]).sum() / n - 128
        b = (counts.sum(axis=(0, 1)) * centres[2]).sum() / n - 128
        return float(light - 2 * np.hypot(a, b))

    def _city_contrast(self, lab, city, lightness: float):
        """How far the bluest spot well inside a city stands out from the city's own blue spots:
        its blueness less the city's 90th percentile, where blueness is how far b* falls below
        the city's median less ``lightness`` times any lightness above it
        (:data:`vision.live.twins.LIGHTNESS`: snow is pale blue, a shield's white half the
        palest thing in a city). A pennant is a blue-and-white shield in every edition, a few
        blurred pixels at camera scale whose blue survives; editions put it in different places
        (the Winter art in the city's corner, far from where the geometry model draws it), so
        it is looked for on the whole city. Against the city's percentile, not its median: an
        art of blue roofs (or snowy ones) raises every spot of a city, and a larger city has
        more of them. The city's rim, where the field is blurred in, is eroded away; a city
        smaller than ``pennant_min_city`` (a one-side cap: no set draws a pennant there, and
        its bluest spot is not comparable with a large city's) gives None."""
        inner = _city_inside(city)
        if inner.sum() < self.config.pennant_min_city * inner.size:
            return None
        dev = lab - np.median(lab[inner], axis=0)
        blueness = (-dev[..., 2] - lightness * np.maximum(dev[..., 0], 0))[inner]
        return float(blueness.max() - np.percentile(blueness, 90))

    def pennant_evidence(self, contrast: float) -> float:
        """How much a city's contrast (:meth:`_city_contrast` at :meth:`lightness`) says
        "pennant", from -1 (surely none) to 1 (surely one), weighed by the cities seen with and
        without one here (:mod:`vision.live.evidence`: a bluish roof on a plain city and a
        faded shield overlap)."""
        lightness = self.lightness()
        yes, no = self.pennant_seen[lightness]
        return self.config.pennant_splits[lightness].evidence(contrast, yes, no)

    def _pennant_term(self, lab, tile: TileType, rotation: int, keep, contrasts=None) -> float:
        """Per city segment: + for a pennant where the option has one and the image shows a
        blot, - where it shows none (and the other way round for a city without one).
        ``contrasts`` memoises the contrast of a city region across the options of one crop
        (options that differ only by a pennant have the same cities)."""
        contrasts = {} if contrasts is None else contrasts
        labels = self._labels(tile, rotation)
        lightness = self.lightness()
        total = 0.0
        for segment, has in city_segments(tile):
            whole = labels == segment
            city = whole & keep
            key = city.tobytes()
            if key not in contrasts:
                contrasts[key] = self._city_contrast(lab, city, lightness)
            c = contrasts[key]
            if c is None:
                continue
            z = self.pennant_evidence(c)
            if not city[whole].all():
                z = self._shield_covered(z, (tile, rotation), ~keep, unknown=0.0)
            total += z if has else -z
        return total

    def _template_bonus(
        self, lab: np.ndarray, tile: TileType, rotation: int, keep, memo: dict
    ) -> float:
        """What looking like ``tile``'s template at ``rotation`` adds to an option's score: the
        correlation of the crop's Lab (``lab``) with it over the pixels ``keep`` where it was
        seen, from ``template_floor`` (0) to a perfect match (``template_weight``). ``memo``
        keeps the crop's centred pixels across the options of one crop."""
        turned, seen = self._turned_template(tile.id, rotation)
        valid = keep & seen
        if valid.sum() < 20:
            return 0.0
        key = valid.tobytes()
        if key not in memo:
            a = lab[valid] - lab[valid].mean(0)
            memo[key] = (a, np.sqrt((a * a).sum()))
        a, a_norm = memo[key]
        b = turned[valid] - turned[valid].mean(0)
        likeness = float((a * b).sum() / (a_norm * np.sqrt((b * b).sum()) + 1e-6))
        floor = self.config.template_floor
        return self.config.template_weight * max(0.0, likeness - floor) / (1 - floor)

    def _turned_template(self, tile_id: str, rotation: int) -> tuple[np.ndarray, np.ndarray]:
        """A type's template (mean Lab of its confirmed crops) turned to ``rotation``, and where
        it was seen (kept until the type is learned again)."""
        key = (tile_id, rotation)
        if key not in self._turned:
            total, n = self.templates[tile_id]
            q = -(rotation // 90)
            mean = total / np.maximum(n, 1)[..., None]
            self._turned[key] = (np.rot90(mean, q), np.rot90(n, q) > 0)
        return self._turned[key]

    # --- learning ---------------------------------------------------------------------------
    def learn(
        self, crop: np.ndarray, tile: TileType, rotation: int, ignore=None, cell=None, bare=False
    ) -> None:
        """Add a prepared crop known to show ``tile`` at ``rotation`` (self-calibration);
        ``cell``, the untrimmed picture it was prepared from, teaches the side profiles.
        ``bare``: the players said no figure stands on the tile, so every pixel is its art,
        even one a player's colour explains (red roofs on a cloister); otherwise such pixels
        are left out (a figure the detector missed, a hand's shadow), and so are the pixels a
        lamp's glare washed out (see :meth:`_through_glare`)."""
        if self.reference is not None and cell is not None:
            reference = self._reference_features(cell, ignore)
            distance = self._reference_distance(reference, tile, rotation)
            glare = self._through_glare(reference, [(tile, rotation)], [distance])
            if glare is not None:
                ignore = glare[1] if ignore is None else ignore | glare[1]
        kinds = self._kinds(tile, rotation)
        bins = lab_bins(crop)
        keep = np.ones(crop.shape[:2], bool) if ignore is None else ~ignore
        if not bare:
            keep &= ~self._follower_like(bins, kinds)
        for k in range(N_KINDS):
            sel = keep & (kinds == k)
            if sel.any():
                np.add.at(self.counts[k], bins[sel], 1.0)
        self._log = None
        lab = _lab(crop)
        labels = self._labels(tile, rotation)
        for segment, has in city_segments(tile):
            city = labels == segment
            if ignore is not None and (ignore & city).any():
                continue  # a figure on the city may hide its pennant: no measure of either
            for lightness, seen in self.pennant_seen.items():
                c = self._city_contrast(lab, city & keep, lightness)
                if c is not None:
                    seen[0 if has else 1].append(c)
        self._lightness = None
        q = rotation // 90
        lab = np.rot90(lab, q)
        mask = np.rot90(keep, q).astype(np.float64)
        total, n = self.templates.get(tile.id, (np.zeros_like(lab), np.zeros(mask.shape)))
        self.templates[tile.id] = (total + lab * mask[..., None], n + mask)
        self._turned = {k: v for k, v in self._turned.items() if k[0] != tile.id}
        sides = tile.oriented(rotation).sides
        profiles = self._side_profiles(cell, ignore)
        if profiles is not None:
            self.sides.learn(profiles, sides)
        crossings = self._road_crossings(cell, ignore)
        if crossings is not None:
            self.roads.learn(crossings, sides)
        if cell is not None and city_segments(tile):
            view = self._twin_view(cell, ignore, tile, rotation, {})
            if view is not None:
                self.twins.learn(tile, view)
        self.samples += 1

    def _follower_like(self, bins: np.ndarray, kinds: np.ndarray) -> np.ndarray:
        """Pixels that any player's colour explains better than the kind the tile puts there
        (a follower the detector missed, a hand's shadow): not learned as terrain."""
        import cv2

        if not self.players:
            return np.zeros(bins.shape, bool)
        terrain = np.take_along_axis(self.kind_log()[:, bins], kinds[None].astype(np.intp), 0)[0]
        best = np.max([self.follower_log(c)[bins] for c in self.players], axis=0)
        learned = self.counts.sum(axis=1) >= MIN_SAMPLES
        mask = ((best > terrain) & learned[kinds]).astype(np.uint8)
        return cv2.dilate(mask, np.ones((3, 3), np.uint8)) > 0

    def learn_follower(self, crop: np.ndarray, colour: str, mask: np.ndarray) -> None:
        """Add the pixels of a figure of ``colour`` (``mask`` on a prepared crop). A blob larger
        than a figure (``follower_max_known``) grew over the art around it (a yellow monk's over
        a cloister's orange roofs, which then read as yellow monks ever after): only its clear
        part (:meth:`figure_core`) is the figure's colour."""
        if mask.mean() > self.config.follower_max_known:
            mask = self.figure_core(crop, colour, mask)
        bins = lab_bins(crop)[mask]
        if len(bins) == 0:
            return
        counts = self.follower_counts.get(colour)
        if counts is None:
            counts = self.follower_counts[colour] = self._colour_prior(colour)
        np.add.at(counts, bins, 1.0)
        self._follower_log.pop(colour, None)

    # --- followers ----------------------------------------------------------------------------
    def follower_ratio(self, crop: np.ndarray, colour: str, rivals: Sequence[str] = ()):
        """Per pixel of a prepared crop, how much better ``colour`` explains it than any
        terrain kind and any of the figure colours ``rivals`` (log-likelihood ratio)."""
        bins = lab_bins(crop)
        other = self.kind_log()[:, bins].max(axis=0)
        for rival in rivals:
            other = np.maximum(other, self.follower_log(rival)[bins])
        return self.follower_log(colour)[bins] - other

    def figure_clear(self, crop: np.ndarray, colour: str, mask: np.ndarray) -> bool:
        """Whether ``colour`` shows a figure with a clear core on ``mask`` of a prepared crop
        (a pixel it explains by ``follower_ratio``). A faint blob counts as a figure in shade
        only where a figure may be: a red roof's or a village's blob may cover as much of a
        tile as a figure, but it is only a little more the colour than terrain anywhere."""
        ratio = self.follower_ratio(crop, colour)[mask]
        return bool(ratio.size) and float(ratio.max()) >= self.config.follower_ratio

    def figure_core(self, crop: np.ndarray, colour: str, mask: np.ndarray) -> np.ndarray:
        """The pixels of a follower's blob (``mask`` on a prepared crop) that ``colour``
        explains nearly as clearly as the blob's clearest (``figure_core``): where the figure
        itself stands, without the shadow or the shade of the art grown onto it."""
        ratio = self.follower_ratio(crop, colour)[mask]
        core = mask.copy()
        core[mask] = ratio >= self.config.figure_core * max(float(np.percentile(ratio, 90)), 0.0)
        return core if core.any() else mask

    def follower_mask(
        self,
        crop: np.ndarray,
        colour: str,
        rivals: Sequence[str] = (),
        within: np.ndarray | None = None,
        close: int | None = None,
        known: bool = False,
    ) -> tuple[np.ndarray, float]:
        """Pixels of a follower of ``colour`` in a prepared crop (largest blob) and its area.
        A blob is what the colour explains better than any terrain (and than the figure colours
        ``rivals``), grown from a core it explains clearly (``follower_ratio``): a figure's
        shaded side is dimmer than its lit one, and a hard threshold alone breaks it into specks
        too small to count. A blob of figure size without a clear core counts when its ratios
        add up (``follower_evidence``): a figure in shade, a little more its colour than the
        tile's all over. ``within``: where on the crop the figure may be (e.g. what changed);
        ``close``: the joining kernel, ``follower_close`` unless given; ``known``: the players
        said such a figure is there, so no clear core is needed (learning a colour whose
        figures this light shows duller than the colour had been), but a blob larger than a
        figure (``follower_max_known``) is none."""
        import cv2

        cfg = self.config
        ratio = self.follower_ratio(crop, colour, rivals)
        if within is not None:
            ratio = np.where(within, ratio, -np.inf)
        loose = (ratio > 0).astype(np.uint8)
        close = cfg.follower_close if close is None else close
        near = (ratio > cfg.follower_near).astype(np.uint8)
        if close > 1:  # a figure lying on a city of nearly its colour comes in bits
            k = np.ones((close, close), np.uint8)
            loose = cv2.morphologyEx(loose, cv2.MORPH_CLOSE, k) & near
        step = np.ones((3, 3), np.uint8)
        for _ in range(cfg.follower_grow):
            loose = cv2.dilate(loose, step) & near
        n, labels, stats, _ = cv2.connectedComponentsWithStats(loose, connectivity=4)
        if n <= 1:
            return np.zeros(loose.shape, bool), 0.0
        core_ratio, core_px = (0.0, 1) if known else (cfg.follower_ratio, cfg.follower_core_px)
        cores = np.bincount(labels[ratio > core_ratio], minlength=n)
        cored = cores >= core_px
        if not known:
            shares = stats[:, cv2.CC_STAT_AREA] / loose.size
            evidence = np.bincount(labels.ravel(), np.clip(ratio, 0, None).ravel(), minlength=n)
            cored |= (
                (evidence >= cfg.follower_evidence)
                & (shares >= cfg.follower_faint_area)
                & (shares <= cfg.follower_max_known)
            )
        areas = np.where(cored, stats[:, cv2.CC_STAT_AREA], 0)
        areas[0] = 0
        big = int(np.argmax(areas))
        area = areas[big] / loose.size
        if area < cfg.follower_min_area or (known and area > cfg.follower_max_known):
            return np.zeros(loose.shape, bool), float(area)
        return labels == big, float(area)


def _shared_by_pennant_twins(values: list[float], options, twin_of) -> list[float]:
    """Each option's whole-tile term, the best of it and its pennant twins' among the options:
    the twin test decides between them, against art blurred as the camera blurs it, while the
    whole-tile distance compares a blurred shield with a sharp one and leans to the twin without
    (on the scans games it outweighed a right twin test twice). Against every other type the
    pair counts as its likelier member, the same whichever set of options is scored (leaving the
    shield's pixels out instead made options and forbidden tiles incomparable: 97 questions)."""
    index = {(tile.id, rotation): i for i, (tile, rotation) in enumerate(options)}
    shared = list(values)
    for i, (tile, rotation) in enumerate(options):
        for twin, turned in twin_of.get((tile.id, rotation), ()):
            if has_pennant(twin) != has_pennant(tile):
                shared[i] = max(shared[i], values[index[twin.id, turned]])
    return shared


def _tolerant(like: np.ndarray, size: int) -> np.ndarray:
    """Each kind's log-likelihood map raised to its best value within a ``size`` square: an
    edition's art seldom draws a road or a city wall exactly where the geometry model puts it,
    so a region is credited when its terrain lies a pixel or so away (both options of a pair get
    the same slack, so what tells them apart is the inside of the regions where they differ)."""
    import cv2

    kernel = np.ones((size, size), np.uint8)
    return np.stack([cv2.dilate(k.astype(np.float32), kernel) for k in like])


def _trimmed(cell: np.ndarray, inset: float, size: int) -> np.ndarray:
    """A cell picture trimmed by ``inset`` (of its size) on each side, resized to ``size``."""
    import cv2

    h, w = cell.shape[:2]
    dy, dx = round(h * inset), round(w * inset)
    return cv2.resize(cell[dy : h - dy, dx : w - dx], (size, size), interpolation=cv2.INTER_AREA)


def _lab(crop: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.cvtColor(crop, cv2.COLOR_BGR2Lab).astype(np.float64)


def segment_of(tile: TileType, rotation: int, kind: Kind) -> list[int]:
    return [i for i, s in enumerate(tile.segments) if s.kind is kind]


__all__ = [
    "DEFAULT_COLOURS",
    "GINGERBREAD",
    "ScorerConfig",
    "TerrainScorer",
    "TileScorer",
    "anchor_points",
    "kind_map",
    "lab_bins",
]
