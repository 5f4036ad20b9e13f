"""Whether a road leaves a tile by each of its sides: the live scorer's road term.

The options the rules leave at a cell often differ only by a road on an open side (a straight
road or a junction, a cloister with a road or without, a curve or a junction beside a city). At
camera scale a road is a thin band, two or three pixels of the scoring crop, where the terrain
histograms see a few pixels of "road" among field and the side profiles a position or two of a
wavy line; both gave junctions to straight roads. But a road crossing a side looks the same in
every edition: a narrow stripe across the side's middle that differs from the field on both of
its flanks, at every depth near the edge (a tree or a dark patch of grass is one stripe at one
depth, or differs from one flank only).

A side's *crossing* is that contrast: in each of ``bands`` strips along the side (read at
``size``, averaged across their depth), the colour distance of a stripe (a few widths) in the
side's middle from the mean of either flank, whichever is smaller; then the largest such
contrast of a stripe that runs through every band (within ``shift`` of its place: a road may be
slanted or wavy), so beasts scattered near a side, one per band, are no road. What it measures
on a road or a field side depends on the art (a grey track in snow, a white road in green
grass), so it is weighed as evidence (:mod:`vision.live.evidence`) by the crossings of the sides
the table has confirmed: roads against the others.

Measured on the cells of 6 games of one copy's scanned art (white table, 1920x1080, no
profile): road sides 20.2 / 31.9 at the 5th percentile / median, field sides 6.1 / 21.4 at the
median / 95th, city sides 12.9 median.

How strongly a stripe crosses is not all it shows: a road differs from its flanks the same way on
every tile of one art (a grey track on snow, a pale road on grass), where what crosses a field
side like a road does not (on the Winter scans a blue streak of snow, a brown boar). A crossing
also keeps its stripe's *tint*, its Lab less its flanks', and the table learns the road sides'
tints from the tiles it confirms: a stripe whose tint lies more than ``tint_spreads`` robust
spreads from the roads' says nothing for a road (and nothing against one: a figure's shadow may
tint a road).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from meeplecam.vision.live.evidence import Samples, Split


@dataclass(frozen=True)
class RoadConfig:
    size: int = 96  # the cell is read at this size
    bands: tuple[tuple[float, float], ...] = ((0.03, 0.10), (0.10, 0.18))  # depths (cell units)
    middle: tuple[float, float] = (0.25, 0.75)  # where along a side a road crosses it
    widths: tuple[float, ...] = (0.05, 0.08, 0.11)  # stripe widths tried (cell units)
    max_hidden: float = 0.2  # a side whose middle is hidden this much tells nothing
    shift: float = 1.0  # stripe widths a road may move along the side from band to band
    # a crossing of 14 says neither before the table has shown road and other sides, sure 8
    # beyond; then the log-likelihood ratio (road : other), sure at 6, of Student's t with 4
    # degrees of freedom: the odd field side (dark specks, a shadow) crosses like a faint road
    # (the 40 games with no profile: normal tails 1652 snowy / 1651 scans right, 61 / 166
    # committed wrong as read; these 1649 / 1655, 43 / 151)
    split: Split = field(
        default_factory=lambda: Split(
            threshold=14.0, scale=8.0, sure_ratio=6.0, min_sd=2.0, dof=4.0
        )
    )
    tint_spreads: float = 6.0  # a stripe this far from the roads' tint is no road's
    # the roads' tint spreads per channel at least this much (Lab units) and this part of its
    # size: a lamp's glare or a shadow over part of the table scales a road's contrast (a grey
    # track 118 darker than its snow in the light, 101 in the glare)
    tint_min_sd: float = 2.0
    tint_min_part: float = 0.15
    tint_after: int = 6  # road sides confirmed before their tint counts


class Crossing(NamedTuple):
    """How strongly a stripe crosses a side (its colour distance from the nearer of its
    flanks) and its tint (its Lab less its flanks' mean, L a b)."""

    contrast: float
    tint: tuple[float, float, float]


Crossings = tuple[Crossing | None, ...]  # N E S W; None where the camera does not see the side


class RoadCrossings:
    """The crossings of the sides the table has confirmed: roads, and every other side."""

    def __init__(self, config: RoadConfig | None = None):
        self.config = config or RoadConfig()
        self.seen: tuple[Samples, Samples] = (Samples(), Samples())  # contrasts: roads, others
        self.road_tints: list[tuple[float, float, float]] = []
        self._tint_fit: tuple[int, np.ndarray, np.ndarray] | None = None  # see _tint_normal

    def read(self, cell: np.ndarray, hidden: np.ndarray | None = None) -> Crossings:
        """The four crossings of a cell picture (BGR, north up), N E S W; ``hidden`` (a mask of
        the picture at ``config.size``) marks pixels under a follower."""
        import cv2

        cfg = self.config
        n = cfg.size
        lab = cv2.cvtColor(
            cv2.resize(cell, (n, n), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2Lab
        )
        lab = cv2.GaussianBlur(lab.astype(np.float32), (3, 3), 0)
        (lo, hi), bands = self._where_roads_cross()
        # np.rot90 by k brings side k to the top, read left to right: sides x bands x n x Lab
        sides = [np.rot90(lab, quarter) for quarter in range(4)]
        profiles = np.array([[side[rows].mean(axis=0) for rows in bands] for side in sides])
        crossings = self._stripe_contrast(profiles, lo, hi)
        if hidden is None:
            return crossings
        return tuple(
            None if covered else c
            for c, covered in zip(crossings, self.covered(hidden), strict=True)
        )

    def covered(self, mask: np.ndarray) -> list[bool]:
        """Per side, N E S W, whether ``mask`` (of the cell picture, any size) covers the
        middle of its border bands, where a road would cross, beyond ``max_hidden``."""
        import cv2

        cfg = self.config
        n = cfg.size
        if mask.shape != (n, n):
            mask = cv2.resize(mask.astype(np.uint8), (n, n), interpolation=cv2.INTER_NEAREST) > 0
        (lo, hi), bands = self._where_roads_cross()
        masks = [np.rot90(mask, quarter) for quarter in range(4)]
        return [bool(max(m[rows, lo:hi].mean() for rows in bands) > cfg.max_hidden) for m in masks]

    def _where_roads_cross(self) -> tuple[tuple[int, int], list[slice]]:
        """At the reading size, the span along a side where a road crosses it (``middle``) and
        the rows of each depth band."""
        cfg = self.config
        n = cfg.size
        lo, hi = (round(m * n) for m in cfg.middle)
        return (lo, hi), [slice(round(top * n), round(bottom * n)) for top, bottom in cfg.bands]

    def _stripe_contrast(self, profiles: np.ndarray, lo: int, hi: int) -> tuple[Crossing, ...]:
        """Per side (profiles: sides x bands x positions x Lab), the largest contrast of a
        stripe starting in ``[lo, hi)`` with its flanks (the smaller of its colour distances
        from either flank) that runs through every band: at each position, the weakest band's
        contrast there (within ``shift`` stripe widths: a road may run slanted or wavy), so two
        blots at different places along the side (animals, trees) are no road. With it, that
        stripe's tint, averaged over the bands where each crosses strongest near it."""
        n = profiles.shape[-2]
        zero = np.zeros((*profiles.shape[:-2], 1, 3))
        sums = np.concatenate([zero, np.cumsum(profiles, axis=-2)], axis=-2)
        sides = profiles.shape[0]
        best = np.zeros(sides)
        tints = np.zeros((sides, 3))
        for fraction in self.config.widths:
            w = max(2, round(fraction * n))
            start = np.arange(max(lo, w), min(hi, n - 2 * w))
            if len(start) == 0:
                continue
            inside = (sums[..., start + w, :] - sums[..., start, :]) / w
            left = (sums[..., start, :] - sums[..., start - w, :]) / w
            right = (sums[..., start + 2 * w, :] - sums[..., start + w, :]) / w
            contrast = np.minimum(
                np.linalg.norm(inside - left, axis=-1), np.linalg.norm(inside - right, axis=-1)
            )  # sides x bands x positions
            # each band's best within reach of a position; a stripe in one band at a position
            # counts as much as the weakest band reaches there
            reach = round(self.config.shift * w)
            padded = np.pad(contrast, ((0, 0), (0, 0), (reach, reach)))
            m = contrast.shape[-1]
            near = np.max([padded[..., k : k + m] for k in range(2 * reach + 1)], axis=0)
            through = np.minimum(contrast, near.min(axis=1, keepdims=True))
            strongest = through.max(axis=(1, 2))
            tint = inside - (left + right) / 2
            for side in np.flatnonzero(strongest > best):
                at = int(np.argmax(through[side].max(axis=0)))
                span = slice(max(0, at - reach), at + reach + 1)
                where = span.start + contrast[side, :, span].argmax(axis=1)
                tints[side] = tint[side, np.arange(len(where)), where].mean(axis=0)
            best = np.maximum(best, strongest)
        return tuple(
            Crossing(float(c), tuple(float(v) for v in t)) for c, t in zip(best, tints, strict=True)
        )

    def learn(self, crossings: Crossings, sides: str) -> None:
        """Add the crossings of a tile whose sides (N E S W letters) are known."""
        for crossing, kind in zip(crossings, sides, strict=True):
            if crossing is not None:
                self.seen[0 if kind == "R" else 1].append(crossing.contrast)
                if kind == "R":
                    self.road_tints.append(crossing.tint)

    def evidence(self, crossings: Crossings, clipped: list[bool] | None = None) -> list[float]:
        """Per side, how much its crossing says "a road", from -1 (surely none) to 1. A side
        ``clipped`` (a lamp's glare clipped its middle to white) may have lost a road, never
        gained one: what it says against a road is left out; a stripe not of the roads' tint
        says nothing for one."""
        roads, others = self.seen
        out = []
        for side, crossing in enumerate(crossings):
            z = 0.0
            if crossing is not None:
                z = self.config.split.evidence(crossing.contrast, roads, others)
                if z > 0 and not self.road_tinted(crossing.tint):
                    z = 0.0
            out.append(max(z, 0.0) if clipped and clipped[side] else z)
        return out

    def road_tinted(self, tint) -> bool:
        """Whether a stripe's ``tint`` is one a road's may be on this table: within
        ``tint_spreads`` of the road sides' (per channel, in robust spreads), or whatever it
        is until ``tint_after`` road sides were confirmed."""
        fit = self._tint_normal()
        if fit is None:
            return True
        centre, spread = fit
        return float(np.linalg.norm((np.asarray(tint) - centre) / spread)) <= (
            self.config.tint_spreads
        )

    def _tint_normal(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(centre, spread) per Lab channel of the road sides' tints (median, 1.4826 MAD, at
        least ``tint_min_sd`` and ``tint_min_part`` of the centre's length), fitted again only
        once one was added; None with too few."""
        cfg = self.config
        count = len(self.road_tints)
        if count < cfg.tint_after:
            return None
        if self._tint_fit is None or self._tint_fit[0] != count:
            tints = np.asarray(self.road_tints)
            centre = np.median(tints, axis=0)
            least = max(cfg.tint_min_sd, cfg.tint_min_part * float(np.linalg.norm(centre)))
            spread = np.maximum(least, 1.4826 * np.median(np.abs(tints - centre), axis=0))
            self._tint_fit = (count, centre, spread)
        return self._tint_fit[1], self._tint_fit[2]

    @staticmethod
    def agreement(evidence: list[float], sides: str) -> float:
        """How well an option's sides (N E S W letters) agree with the evidence: + for each
        road where one is seen and each other side where none is, - the other way round."""
        return sum(z if kind == "R" else -z for z, kind in zip(evidence, sides, strict=True))
