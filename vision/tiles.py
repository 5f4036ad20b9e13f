"""Stage 4: the type and rotation of one tile crop, for any tile set.

Two sources of evidence, added as log-scores per (type, rotation):

* geometry + terrain (always): the crop's terrain probabilities against each candidate's expected
  class map at its rotation (``geometry.expected``), plus pennant evidence. Needs no images of the
  art, so it reads a printing it has never seen.
* appearance (when a model is given): distance to the nearest labelled template of each type,
  turned to each rotation. This tells apart what geometry cannot (U/WI6, X/WI7, A/WI8 by their
  decorations, F/G and friends by the pennant drawing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import geometry, terrain
from .config import settings
from .model import AppearanceModel, features, rotate_cw


@dataclass(frozen=True)
class Candidate:
    tile: str
    rotation: int
    score: float  # log-score (higher is better)
    prob: float = 0.0


class TileClassifier:
    """Scores every (type, distinct rotation) of a tile set for a north-up tile crop."""

    def __init__(self, tileset, model: AppearanceModel | None = None, cfg: dict | None = None):
        self.tileset = tileset
        self.model = model if model and model.templates else None
        self.cfg = cfg or settings("tiles")
        self.tcfg = settings("terrain")
        self.scfg = settings("sides")
        self._zones = None
        size = self.cfg["template_px"]
        self.options = [(t.id, r) for t in tileset.types.values() for r in t.distinct_rotations]
        maps = [geometry.expected(tileset[t], r, size) for t, r in self.options]
        self._cls = np.stack([m[0] for m in maps]).reshape(len(maps), -1).astype(np.int64)
        w = np.stack([m[1] for m in maps]).reshape(len(maps), -1)
        # pixels that tell apart types with the same sides (I/N, H/F, …) count more
        groups: dict[str, list[int]] = {}
        for i, (t, r) in enumerate(self.options):
            groups.setdefault(tileset[t].oriented(r).sides, []).append(i)
        for members in groups.values():
            if len(members) > 1:
                cls = self._cls[members]
                varies = (cls != cls[0]).any(axis=0)
                w[members] *= np.where(varies, self.cfg["discriminative_boost"], 1.0)
        self._w = w / w.sum(axis=1, keepdims=True)
        self._pennant = np.array(
            [any(s.pennant for s in tileset[t].segments) for t, _ in self.options]
        )
        self._side_idx = np.array(
            [["CRF".index(ch) for ch in tileset[t].oriented(r).sides] for t, r in self.options]
        )
        if self.model:
            self._prepare_templates()

    def side_evidence(self, probs: np.ndarray) -> np.ndarray:
        """Per side (N E S W): log-likelihoods of C, R, F from the terrain along that side."""
        size = probs.shape[0]
        if self._zones is None or self._zones[0][0].shape[0] != size:
            c = (np.arange(size) + 0.5) / size
            u, v = np.meshgrid(c, c)
            zones = []
            for side in range(4):
                depth = (v, 1 - u, 1 - v, u)[side]
                along = (u, v, u, v)[side]
                mid = (depth > 0.03) & (depth < 0.18) & (np.abs(along - 0.5) < 0.15)
                band = (depth > 0.03) & (depth < 0.14) & (np.abs(along - 0.5) < 0.3)
                zones.append((mid, band))
            self._zones = zones
        sc = self.scfg
        out = np.zeros((4, 3))
        for side, (mid, band) in enumerate(self._zones):
            road = float((probs[..., terrain.ROAD] > 0.5)[mid].mean())
            city = float(probs[..., terrain.CITY][band].mean())
            zr = (road - sc["road_threshold"]) / sc["road_scale"]
            zc = (city - sc["city_threshold"]) / sc["city_scale"]
            is_city, not_city = -np.logaddexp(0, -zc), -np.logaddexp(0, zc)
            is_road, not_road = -np.logaddexp(0, -zr), -np.logaddexp(0, zr)
            out[side] = (is_city, not_city + is_road, not_city + not_road)
        return out

    def geometry_scores(self, crop: np.ndarray) -> np.ndarray:
        import cv2

        size = self.cfg["template_px"]
        probs = terrain.classify(crop, self.tcfg)
        ev = self.side_evidence(probs)
        side_ll = ev[np.arange(4)[None, :], self._side_idx].sum(axis=1)
        small = cv2.resize(probs, (size, size), interpolation=cv2.INTER_AREA).reshape(-1, 4)
        logp = np.log(small + 0.02)
        picked = logp[np.arange(size * size)[None, :], self._cls]
        geo = (picked * self._w).sum(axis=1)
        pen = terrain.pennant(crop, self.tcfg)
        z = (pen - self.cfg["pennant_threshold"]) / self.cfg["pennant_scale"]
        # a visible shield is strong evidence; none seen is weak (shields hide under glare)
        sig = 1 / (1 + np.exp(-z))
        pen_ll = np.where(self._pennant, np.log(0.2 + 0.8 * sig), np.log(0.2 + 0.8 * (1 - sig)))
        return (
            self.cfg["geometry_weight"] * geo * 10
            + self.cfg["pennant_weight"] * pen_ll
            + self.scfg["weight"] * side_ll
        )

    def _prepare_templates(self) -> None:
        ids = [t for t in self.model.templates if t in self.tileset]
        self._tpl = np.stack([a for t in ids for a in self.model.templates[t]]).reshape(
            -1, self.model.size**2 * 3
        )
        self._tpl_type = np.array([ids.index(t) for t in ids for _ in self.model.templates[t]])
        self._tpl_ids = ids
        # for each option: (type index, the turns q whose placement equals the option's rotation)
        self._opt_map = []
        for t, r in self.options:
            tile = self.tileset[t]
            qs = [k for k, q in enumerate((0, 90, 180, 270)) if tile.canonical_rotation(q) == r]
            self._opt_map.append((ids.index(t) if t in ids else -1, qs))

    def appearance_scores(self, crop: np.ndarray) -> np.ndarray:
        feats = np.stack(
            [
                features(rotate_cw(crop, -r % 360), self.model.size).ravel()
                for r in (0, 90, 180, 270)
            ]
        )
        # squared distances templates x turns, then the nearest template of each type per turn
        d = (
            (self._tpl**2).sum(1)[:, None] - 2 * self._tpl @ feats.T + (feats**2).sum(1)[None, :]
        ) / feats.shape[1]
        n_types = len(self._tpl_ids)
        best = np.full((n_types, 4), np.inf)
        np.minimum.at(best, self._tpl_type, d)
        worst = float(best[np.isfinite(best)].max()) if np.isfinite(best).any() else 0.0
        out = np.empty(len(self.options))
        for i, (ti, qs) in enumerate(self._opt_map):
            out[i] = -(best[ti, qs].min() if ti >= 0 else worst) / self.cfg["appearance_scale"]
        return self.cfg["appearance_weight"] * out

    def rank(self, crop: np.ndarray, allowed) -> list[Candidate]:
        """Only the (tile, rotation) options the rules allow at a cell, best first, with
        probabilities renormalised over them (what the live tracker asks after a turn)."""
        keep = {(t, self.tileset[t].canonical_rotation(r)) for t, r in allowed}
        cands = [c for c in self.classify(crop) if (c.tile, c.rotation) in keep]
        total = sum(c.prob for c in cands) or 1.0
        return [Candidate(c.tile, c.rotation, c.score, c.prob / total) for c in cands]

    def learn(self, crop: np.ndarray, tile: str, rotation: int) -> None:
        """Add a confirmed reading as an appearance sample (self-calibration during play)."""
        from .model import AppearanceModel

        if self.model is None:
            self.model = AppearanceModel(self.tileset.name)
        self.model.add_sample(crop, tile, rotation)
        self._prepare_templates()

    def classify(self, crop: np.ndarray) -> list[Candidate]:
        """All candidates, best first, with softmax probabilities."""
        score = self.geometry_scores(crop)
        if self.model:
            score = score + self.appearance_scores(crop)
        p = np.exp((score - score.max()) / self.cfg["temperature"])
        p /= p.sum()
        order = np.argsort(-score)
        return [
            Candidate(self.options[i][0], self.options[i][1], float(score[i]), float(p[i]))
            for i in order
        ]
