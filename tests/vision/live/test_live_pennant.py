"""The pennant contrast test of the live scorer: a blue blot on a city where the geometry model
puts a pennant speaks for the option with a pennant, a plain city for the one without."""

import numpy as np

from meeplecam.engine import Kind, find_tileset
from meeplecam.vision.live.appearance import TerrainScorer, city_spots


def _pennant_pair():
    """Two tile types that differ only by a pennant (same sides, one has a pennant)."""
    ts = find_tileset("winter")
    types = list(ts.types.values())
    for a in types:
        for b in types:
            pa = any(s.pennant for s in a.segments if s.kind is Kind.CITY)
            pb = any(s.pennant for s in b.segments if s.kind is Kind.CITY)
            if pa and not pb and a.sides == b.sides:
                return a, b
    raise AssertionError("no pennant pair in the tile set")


def _city_crop(scorer, tile, rotation, blot: bool):
    kinds = scorer._kinds(tile, rotation)
    crop = np.full((*kinds.shape, 3), (220, 220, 220), np.uint8)  # snowy field
    crop[kinds != 0] = (110, 160, 200)  # tan city (BGR)
    if blot:
        (_, _, x, y), *_ = [s for s in city_spots(tile, rotation) if s[1]]
        size = scorer.config.size
        full = round(size / (1 - 2 * scorer.config.inset))
        d = (full - size) // 2
        cx, cy = round(x * full - d), round(y * full - d)
        crop[cy - 2 : cy + 2, cx - 2 : cx + 2] = (150, 80, 60)  # a blue shield
    return crop


def test_city_spots_turn_with_the_tile():
    tile, _ = _pennant_pair()
    (seg, has, x0, y0), *_ = [s for s in city_spots(tile, 0) if s[1]]
    (_, _, x1, y1), *_ = [s for s in city_spots(tile, 90) if s[0] == seg]
    assert has
    assert (x1, y1) == (1 - y0, x0)  # a clockwise quarter turn


def test_blot_decides_between_pennant_and_plain_city():
    with_pennant, plain = _pennant_pair()
    scorer = TerrainScorer()
    options = [(with_pennant, 0), (plain, 0)]
    for blot, winner in ((True, 0), (False, 1)):
        crop = _city_crop(scorer, with_pennant, 0, blot)
        scorer.learn(crop, with_pennant if blot else plain, 0)
        keep = np.ones(crop.shape[:2], bool)
        terms = [scorer._pennant_term(_lab_of(crop), t, r, keep) for t, r in options]
        assert terms[winner] > terms[1 - winner]
    assert scorer.pennant_seen[0] and scorer.pennant_seen[1]  # both learned (self-calibration)


def _lab_of(crop):
    import cv2

    return cv2.cvtColor(crop, cv2.COLOR_BGR2Lab).astype(np.float64)
