"""The side term of the live scorer (``vision.live.sides``): what a road, city and field side look
like on this table, learned from the tiles it has confirmed, tells apart legal options that differ
on a side no neighbour covers."""

import numpy as np
import pytest

from meeplecam.engine import find_tileset
from meeplecam.vision.live.sides import SideProfiles
from meeplecam.vision.synth import art

TILESET = find_tileset("winter")
SNOW, TRACK, WALL = (235, 230, 225), (70, 80, 90), (90, 140, 190)


def _drawn_cell(sides: str, road_width: int = 3) -> np.ndarray:
    """48 px of snow with a thin dark track from the centre to each road side and a tan band
    along each city side (N E S W)."""
    cell = np.full((48, 48, 3), SNOW, np.uint8)
    c, h = 24, road_width // 2 + 1
    for side, kind in enumerate(sides):
        turned = np.rot90(cell, side)  # a view: side ``side`` at the top
        if kind == "R":
            turned[:c, c - h : c + h] = TRACK
        elif kind == "C":
            turned[:10] = WALL
    return cell


def test_a_thin_road_is_told_from_a_field_side():
    profiles = SideProfiles()
    profiles.learn(profiles.read(_drawn_cell("CRFR")), "CRFR")  # the start tile
    straight = profiles.read(_drawn_cell("FRFR"))
    costs = {sides: profiles.cost(straight, sides) for sides in ("FRFR", "RRFR", "FRRR", "CRFR")}
    assert min(costs, key=costs.get) == "FRFR"
    assert costs["FRRR"] > costs["FRFR"] and costs["RRFR"] > costs["FRFR"]


def test_a_kind_never_seen_neither_wins_nor_loses():
    profiles = SideProfiles()
    profiles.learn(profiles.read(_drawn_cell("FRFR")), "FRFR")  # no city seen yet
    view = profiles.read(_drawn_cell("CRFR"))
    assert profiles.cost(view[:1], "C") == 0.0  # the north side, under a kind not seen
    assert profiles.cost(view[:1], "F") > 0.0  # under field, which it clearly is not


def test_a_follower_on_a_side_hides_it():
    profiles = SideProfiles()
    profiles.learn(profiles.read(_drawn_cell("CRFR")), "CRFR")
    cell = _drawn_cell("FRFR")
    cell[2:14, 18:30] = (30, 30, 200)  # a red figure over the north edge
    hidden = np.zeros((64, 64), bool)
    hidden[2:20, 24:40] = True  # its mask at the profiles' size
    seen = profiles.read(cell, hidden)
    blind = profiles.read(cell)
    assert profiles.cost(seen, "FRFR") < profiles.cost(blind, "FRFR")


@pytest.mark.parametrize("palette", ["winter", "scans"])
def test_the_art_of_the_first_tiles_reads_a_straight_road(palette, art_cell):
    # a straight road (U) against the T-junction (W) that puts a road on its open south side:
    # on the Winter scans the road is a thin line and the terrain regions of the geometry model
    # miss it; the sides learned from the start tile and two more tiles do not
    if palette == "scans" and not art.scans_available():
        pytest.skip("../shared/data/winter-tiles is absent")
    profiles = SideProfiles()
    for seed, (tile_id, rotation) in enumerate([("D", 0), ("K", 90), ("E", 180)]):
        cell = art_cell(tile_id, rotation, palette, seed)
        profiles.learn(profiles.read(cell), TILESET[tile_id].oriented(rotation).sides)
    view = profiles.read(art_cell("U", 0, palette, 7))
    straight = profiles.cost(view, TILESET["U"].oriented(0).sides)
    for rotation in TILESET["W"].distinct_rotations:
        assert straight < profiles.cost(view, TILESET["W"].oriented(rotation).sides)


def test_a_figure_over_a_sides_middle_leaves_road_and_field_alike():
    """A figure stands where a road would cross the north side. What is left of the side is
    field on both flanks, a road under the figure or not, so the side says nothing: a junction
    whose third road runs under the figure and a straight road tie on it."""
    profiles = SideProfiles()
    for sides in ("CRFR", "FRFR", "RRFR"):
        profiles.learn(profiles.read(_drawn_cell(sides)), sides)
    cell = _drawn_cell("RRFR")
    cell[0:14, 18:30] = (30, 30, 200)
    hidden = np.zeros((64, 64), bool)
    hidden[0:20, 24:40] = True
    seen = profiles.read(cell, hidden)
    assert profiles.cost(seen, "RRFR") == profiles.cost(seen, "FRFR")
    assert profiles.cost(profiles.read(cell), "RRFR") != profiles.cost(profiles.read(cell), "FRFR")


def test_a_figure_the_scorer_crop_cuts_off_hides_the_side_beyond_the_crop():
    """The scorer's crop leaves out the cell's outer band (the gap, a neighbour's edge), which
    the side profiles read. A figure standing over the north edge is cut off where the crop
    ends, and goes on beyond it: the outer band is hidden there too, and the rest of it is
    seen."""
    from meeplecam.vision.live.appearance import TerrainScorer

    scorer = TerrainScorer()
    figure = np.zeros((scorer.config.size,) * 2, bool)
    figure[:6, 13:19] = True  # on the crop, touching its north edge
    north, east, _, _ = scorer._side_profiles(_drawn_cell("FRFR"), figure)
    valid = north[1]
    middle = valid.shape[1] // 2
    assert not valid[:, middle - 1 : middle + 1].any()  # every band, the outer one too
    assert valid[:, :3].all() and valid[:, -3:].all()
    assert east[1].all()
