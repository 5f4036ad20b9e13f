"""What a tile's four edges look like, learned during play: the live scorer's side term.

Regions of real art rarely line up with the geometry model (a Winter road is a thin wavy line, a
figure in the snow stands where the model draws a road), but every edition agrees on the edges: a
road crosses the middle of its side, a city runs along its whole side, a field side shows field.
That is also where the rules leave the doubt: the sides that touch a neighbour are fixed by it, the
open ones are what tell two legal options apart (a straight road from a T-junction, a cloister with
a road from one without).

A side's *profile* is the cell's border band, read left to right as seen from the tile's centre:
``bands`` strips at increasing depth, each averaged across its depth into ``positions`` Lab colours.
A road is in every band (it runs to the centre); a speck of decoration is in one. Each side kind
(``C``, ``R``, ``F``) keeps the per-position mean and spread of the profiles seen on the tiles the
table has confirmed (the start tile shows all three in the base sets), and an option's cost is how
far its four sides are from the profiles of the kinds it puts there, in units of that spread.
A side whose middle a follower hides says nothing: that is where a road would cross it, and
what is left (field flanks, the figure's blurred rim) told a curve beside a knight from a
junction whose third road runs under it the wrong way round.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SIDE_KINDS = "CRF"


@dataclass(frozen=True)
class SideConfig:
    size: int = 64  # the cell is read at this size
    start: float = 0.03  # depth of the first band's outer edge (cell units): the gap stays out
    depth: float = 0.08  # depth of each band
    bands: int = 2
    corner: float = 0.12  # part of each end of a side left out (where the next side's terrain is)
    positions: int = 16  # colours along a side
    prior_count: float = 3.0  # samples' worth of all sides' profile in each kind's
    min_sd: float = 3.0  # Lab spread of a position at least (sensor noise)
    cap: float = 9.0  # most that one position may cost (squared spreads): a follower's shadow,
    # a glare spot
    shift: int = 1  # positions a profile may slide (art drawn a little off the middle)
    # a side whose middle (where a road crosses it; part of the side) a figure hides this
    # much, in any band, tells nothing (see the module's notes)
    middle: tuple[float, float] = (0.35, 0.65)
    max_hidden: float = 0.3


class SideProfiles:
    """Per side kind, the running mean and spread of its profiles on this table."""

    def __init__(self, config: SideConfig | None = None):
        self.config = config or SideConfig()
        cfg = self.config
        shape = (cfg.bands, cfg.positions)
        self.count = {k: np.zeros(shape) for k in SIDE_KINDS}
        self.total = {k: np.zeros((*shape, 3)) for k in SIDE_KINDS}
        self.squares = {k: np.zeros((*shape, 3)) for k in SIDE_KINDS}

    def read(self, cell: np.ndarray, hidden: np.ndarray | None = None):
        """The four profiles of a cell picture (BGR, north up), N E S W: per side a
        (bands x positions x 3) Lab array and a (bands x positions) mask of positions seen
        (not under ``hidden``, a mask of the picture at ``config.size``)."""
        import cv2

        cfg = self.config
        n = cfg.size
        lab = cv2.cvtColor(
            cv2.resize(cell, (n, n), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2Lab
        ).astype(np.float64)
        seen = np.ones((n, n), bool) if hidden is None else ~hidden
        start, depth = round(cfg.start * n), round(cfg.depth * n)
        # corners are left out: there the neighbouring sides' terrain meets
        trim = round(cfg.corner * n)
        edges = np.linspace(trim, n - trim, cfg.positions + 1).round().astype(int)
        width = np.diff(edges)
        out = []
        for quarter in range(4):  # np.rot90 by k brings side k to the top, read left to right
            image, mask = np.rot90(lab, quarter), np.rot90(seen, quarter)
            colours = np.empty((cfg.bands, cfg.positions, 3))
            valid = np.empty((cfg.bands, cfg.positions), bool)
            for band in range(cfg.bands):
                rows = slice(start + band * depth, start + (band + 1) * depth)
                weight = mask[rows].astype(np.float64)
                sums = np.add.reduceat((image[rows] * weight[..., None]).sum(axis=0), edges[:-1])
                w = np.add.reduceat(weight.sum(axis=0), edges[:-1])
                colours[band] = sums / np.maximum(w, 1)[:, None]
                valid[band] = w > 0.5 * depth * width
            out.append((colours, valid))
        return out

    def learn(self, profiles, sides: str) -> None:
        """Add the profiles of a tile whose sides (N E S W letters) are known."""
        for (colours, valid), kind in zip(profiles, sides, strict=True):
            w = valid.astype(np.float64)
            self.count[kind] += w
            self.total[kind] += colours * w[..., None]
            self.squares[kind] += colours**2 * w[..., None]

    def _model(self, kind: str):
        """(mean, variance) per band, position and channel of a side kind: its own samples
        shrunk towards all sides' (``prior_count`` samples' worth), so that a kind seen once or
        twice (the start tile's) tells little apart until the table has shown more."""
        cfg = self.config
        n = self.count[kind]
        if not n.any():
            return None
        all_n = sum(self.count.values())[..., None]
        all_total, all_squares = sum(self.total.values()), sum(self.squares.values())
        all_mean = all_total / np.maximum(all_n, 1e-9)
        all_var = np.maximum(all_squares / np.maximum(all_n, 1e-9) - all_mean**2, 0)
        k = cfg.prior_count
        mean = (self.total[kind] + k * all_mean) / (n[..., None] + k)
        own = self.squares[kind] - 2 * mean * self.total[kind] + n[..., None] * mean**2
        var = (np.maximum(own, 0) + k * (all_var + (all_mean - mean) ** 2)) / (n[..., None] + k)
        return mean, np.maximum(var, cfg.min_sd**2)

    def cost(self, profiles, sides: str, memo: dict | None = None) -> float:
        """How unlike the learned kinds the four profiles are, for an option whose sides are
        ``sides``: per side, half the mean squared distance in spreads (the best of the small
        slides), summed. Kinds never seen cost nothing (they neither win nor lose). ``memo``
        shares a side's cost across the options of one cell."""
        memo = {} if memo is None else memo
        total = 0.0
        for index, kind in enumerate(sides):
            key = (index, kind)
            if key not in memo:
                memo[key] = self._side_cost(profiles[index], kind)
            total += memo[key]
        return total

    def _side_cost(self, profile, kind: str) -> float:
        model = self._model(kind)
        if model is None:
            return 0.0
        cfg = self.config
        mean, var = model
        colours, valid = profile
        lo, hi = (round(f * cfg.positions) for f in cfg.middle)
        if (~valid[:, lo:hi]).mean(axis=1).max() > cfg.max_hidden:
            return 0.0
        best = None
        for shift in range(-cfg.shift, cfg.shift + 1):
            d = np.minimum(
                ((colours - np.roll(mean, shift, 1)) ** 2 / np.roll(var, shift, 1)).sum(axis=2),
                cfg.cap,
            )
            use = valid.copy()
            if shift > 0:
                use[:, :shift] = False  # rolled in from the other end
            elif shift < 0:
                use[:, shift:] = False
            if use.sum() < use.size // 2:
                continue
            value = float(d[use].mean())
            best = value if best is None else min(best, value)
        return 0.0 if best is None else 0.5 * best
