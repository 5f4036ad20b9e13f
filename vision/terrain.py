"""Stage 3: per-pixel terrain (field, city, road, building) and pennant evidence, from colour.

The classes rest on what every printing shares: fields are green, roads pale and unsaturated,
cities warm (ochre, brown, brick red), pennants blue. ``classify(crop)`` returns soft
probabilities (H x W x 4, channels in :data:`CLASSES` order) so that later stages can weigh doubt.
"""

from __future__ import annotations

import cv2
import numpy as np

from .config import settings

CLASSES = ("field", "city", "road", "building")
FIELD, CITY, ROAD, BUILDING = range(4)


def _ramp(x: np.ndarray, lo: float, hi: float, soft: float) -> np.ndarray:
    """1 inside [lo, hi], falling to 0 over ``soft`` outside."""
    return np.clip(np.minimum(x - lo, hi - x) / soft + 0.5, 0, 1)


def classify(bgr: np.ndarray, cfg: dict | None = None) -> np.ndarray:
    """Soft terrain probabilities per pixel of a (north-up) tile crop."""
    cfg = cfg or settings("terrain")
    soft = cfg["softness"]
    hsv = cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV).astype(np.float32)
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    field = _ramp(h, *cfg["field_hue"], soft / 2) * _ramp(s, cfg["field_sat_min"], 999, soft)
    warm = np.maximum(_ramp(h, *cfg["city_hue"], soft / 2), _ramp(h, 170, 200, soft / 2))
    city = warm * _ramp(s, cfg["city_sat_min"], 999, soft)
    road = _ramp(s, -999, cfg["road_sat_max"], soft) * _ramp(v, cfg["road_val_min"], 999, soft * 2)
    other = 0.1 + 0.5 * city
    probs = np.stack([field, city, road, other], axis=-1) + 1e-3
    return probs / probs.sum(axis=-1, keepdims=True)


def pennant(bgr: np.ndarray, cfg: dict | None = None) -> float:
    """Evidence of a pennant (coat of arms): small bright patches touching dark bluish ones.

    Shields are quartered blue and white in the printings we know: the white quarters are the
    brightest small blobs of a city and sit right beside the dark blue ones. Returns the area of
    such blobs in pixels of a 96-pixel crop (0 when no shield is visible).
    """
    cfg = cfg or settings("terrain")
    hsv = cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)
    light = cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab)[..., 0]
    lo, hi = cfg["pennant_hue"]
    blue = (hsv[..., 0] >= lo) & (hsv[..., 0] <= hi) & (hsv[..., 1] >= cfg["pennant_sat_min"])
    blue &= light < cfg["pennant_dark_l"]
    near = cv2.dilate(blue.astype(np.uint8), np.ones((3, 3), np.uint8))
    white = (light > cfg["pennant_white_l"]).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(white)
    scale = (96 / bgr.shape[0]) ** 2
    lo_a, hi_a = cfg["pennant_blob_px"]
    score = 0.0
    for i in range(1, n):
        area = stats[i, cv2.CC_STAT_AREA] * scale
        if lo_a <= area <= hi_a:
            x, y, w, h = stats[i, :4]
            blob = labels[y : y + h, x : x + w] == i
            score += float(near[y : y + h, x : x + w][blob].mean()) * area
    return score


def white_gains(pixels: np.ndarray, percentile: float = 98.0) -> np.ndarray:
    """Per-channel gains that make the brightest tile pixels (roads, walls) neutral white.

    Only the brighter half of the pixels vote, and gains are capped, so that a tile with no road
    (a city filling the crop) is not turned pale.
    """
    pixels = np.asarray(pixels).reshape(-1, 3).astype(np.float32)
    if len(pixels) == 0:
        return np.ones(3, np.float32)
    ref = np.percentile(pixels, percentile, axis=0)
    gains = ref.max() / np.maximum(ref, 1.0)
    return np.clip(gains, 1.0, 1.6).astype(np.float32)


def balance(bgr: np.ndarray, gains: np.ndarray) -> np.ndarray:
    return np.clip(bgr.astype(np.float32) * gains, 0, 255).astype(np.uint8)
