"""Where roads meet at a village (a T-junction, a crossroads) the art draws houses with snowy
roofs: the scorer learns them as a village, not as road, so that snow never looks like road."""

import numpy as np

from meeplecam.engine import find_tileset
from meeplecam.vision.live.appearance import (
    CITY,
    FIELD,
    ROAD,
    VILLAGE,
    ScorerConfig,
    TerrainScorer,
    lab_bins,
    trimmed_map,
)

SNOW, ROAD_GREY, TAN = (235, 230, 225), (90, 100, 110), (110, 160, 200)  # BGR


def _crop(tile_id: str, village=SNOW) -> np.ndarray:
    cfg = ScorerConfig()
    kinds, _ = trimmed_map(find_tileset("winter")[tile_id], 0, cfg.size, cfg.inset)
    colours = {FIELD: SNOW, ROAD: ROAD_GREY, CITY: TAN, VILLAGE: village}
    crop = np.zeros((*kinds.shape, 3), np.uint8)
    for kind, colour in colours.items():
        crop[kinds == kind] = colour
    return crop


def test_a_snowy_village_does_not_make_snow_look_like_road():
    scorer = TerrainScorer()
    for tile_id in ("D", "W", "W"):  # the start tile, then T-junctions with snowy villages
        scorer.learn(_crop(tile_id), find_tileset("winter")[tile_id], 0)
    snow = lab_bins(np.array([[SNOW]], np.uint8))[0, 0]
    log = scorer.kind_log()
    # ten times likelier as field than as road (1.8 in log, six times, with the village as road)
    assert log[FIELD, snow] - log[ROAD, snow] > np.log(10)
