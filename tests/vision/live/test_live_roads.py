"""The road test of the live scorer: a road crossing a side is a stripe across its middle at every
depth near the edge; a tree or a dark patch of field is not."""

import cv2
import numpy as np

from meeplecam.vision.live.roads import Crossing, RoadCrossings

GRASS, ROAD, TREE = (60, 150, 70), (225, 230, 235), (30, 70, 35)  # BGR


def _cell(roads: str, tree_on: str = "", size: int = 60, seed: int = 0) -> np.ndarray:
    """A field tile with a road from the centre out through each side in ``roads`` (N E S W
    letters), a little off the middle and wavy as drawn art is, and a dark tree at the edge of
    each side in ``tree_on``; grass with some noise."""
    rng = np.random.default_rng(seed)
    cell = np.empty((size, size, 3), np.uint8)
    cell[:] = GRASS
    cell = np.clip(cell + rng.normal(0, 4, cell.shape), 0, 255).astype(np.uint8)
    c = size // 2
    ends = {"N": (c + 3, 0), "E": (size - 1, c - 2), "S": (c - 2, size - 1), "W": (0, c + 2)}
    for side in roads:
        cv2.line(cell, (c, c), ends[side], ROAD, 3)
    spots = {"N": (c - 8, 3), "E": (size - 4, c + 8), "S": (c + 8, size - 4), "W": (3, c - 8)}
    for side in tree_on:
        cv2.circle(cell, spots[side], 3, TREE, -1)
    return cell


def _contrasts(crossings) -> list:
    return [None if c is None else c.contrast for c in crossings]


def test_a_road_crosses_its_sides_and_no_other():
    north, east, south, west = _contrasts(RoadCrossings().read(_cell("NS")))
    assert min(north, south) > 2 * max(east, west)


def test_a_tree_at_the_edge_is_no_road():
    north, east, south, west = _contrasts(RoadCrossings().read(_cell("EW", tree_on="NS")))
    assert min(east, west) > 2 * max(north, south)


def test_animals_scattered_along_a_side_are_no_road():
    """Boars by a side (Winter tile WI2): a dark beast near the edge and another a little further
    in, at another place along the side. Each depth holds a dark stripe, but no stripe runs
    through both (read as a road, WI2 was taken for K)."""
    cell = _cell("EW")
    size = cell.shape[0]
    for x, y in ((0.35, 0.06), (0.65, 0.14)):  # north side: one beast in each depth band
        cv2.circle(cell, (round(x * size), round(y * size)), 2, TREE, -1)
    north, east, _, west = _contrasts(RoadCrossings().read(cell))
    assert min(east, west) > 2 * north


def test_a_follower_over_a_side_says_nothing_of_it():
    roads = RoadCrossings()
    hidden = np.zeros((roads.config.size,) * 2, bool)
    hidden[:20, 30:66] = True  # over the north side's middle
    north, east, south, west = roads.read(_cell("NS"), hidden)
    assert north is None and None not in (east, south, west)


def test_what_a_road_looks_like_is_learned_from_the_tiles_confirmed():
    roads = RoadCrossings()
    for seed, (laid, sides) in enumerate([("EW", "FRFR"), ("NES", "RRRF"), ("SW", "FFRR")]):
        roads.learn(roads.read(_cell(laid, seed=seed)), sides)
    evidence = roads.evidence(roads.read(_cell("NS", seed=7)))
    assert evidence[0] > 0.5 and evidence[2] > 0.5
    assert evidence[1] < -0.5 and evidence[3] < -0.5
    # a straight road agrees with the picture, a junction on its east side does not
    assert RoadCrossings.agreement(evidence, "RFRF") > RoadCrossings.agreement(evidence, "RRRF")


def test_a_side_crossing_between_the_odd_field_and_the_faintest_road_says_little():
    """A snowfield side with a cluster of dark specks in its middle crosses like a faint road
    (snowy game 07019: 31, where the table's road sides crossed at 31 to 58 and its field sides
    mostly at 5 to 15, the odd one up to 33). Read as a sure road, it made a three-sided city
    without a road the one with a road the rules had left."""
    rng = np.random.default_rng(3)
    roads = RoadCrossings()
    roads.seen[0].extend(rng.normal(48, 5, 110))  # road sides
    fields = rng.normal(9, 3.5, 200)
    fields[:6] = [22, 24, 26, 28, 30, 33]  # specks, a shadow: a few crossings far up the tail
    roads.seen[1].extend(fields)
    grey = (-20.0, 0.0, 0.0)  # no tint learned: any tint may be a road's
    crossings = (Crossing(31.0, grey), Crossing(48.0, grey), Crossing(9.0, grey), None)
    faint, road, field = roads.evidence(crossings)[:3]
    assert abs(faint) < 0.5
    assert road == 1.0 and field == -1.0


def _snowy(cell: np.ndarray) -> np.ndarray:
    """The cell in snowy art: white fields, a dark grey road."""
    snowy = cell.copy()
    field = np.abs(cell.astype(int) - GRASS).sum(axis=2) < 40
    snowy[field], snowy[~field] = (235, 235, 235), (90, 90, 90)
    return snowy


def _learned(art=lambda cell: cell) -> RoadCrossings:
    roads = RoadCrossings()
    for seed, (laid, sides) in enumerate([("EW", "FRFR"), ("NES", "RRRF"), ("SW", "FFRR")]):
        roads.learn(roads.read(art(_cell(laid, seed=seed))), sides)
    return roads


def test_a_side_a_lamps_glare_clipped_to_white_may_have_lost_a_road_never_gained_one():
    """A straight road whose west end a lamp's glare clipped to white (Winter scans game 08009:
    its D was read over as WI3, whose road turns away before that side). As the picture looks,
    no road leaves by the west; with the clipped pixels known, that side says nothing, and the
    road still seen through the glare on another side counts in full."""
    roads = _learned()
    cell = _cell("EW", seed=5)
    size = cell.shape[0]
    cell[:, : size // 3] = 255  # the west third clipped
    as_it_looks = roads.evidence(roads.read(cell))
    assert as_it_looks[3] < -0.5
    known = roads.evidence(roads.read(cell), roads.covered(cell.min(axis=2) >= 250))
    assert known[3] == 0.0 and known[1] > 0.5
    straight, ending = (RoadCrossings.agreement(known, sides) for sides in ("FRFR", "FRFF"))
    assert straight == ending
    # on snow, the glare clips the field around a dark road, not the road: it still counts
    roads = _learned(_snowy)
    snowy = _snowy(_cell("EW", seed=5))
    snowy[:, : size // 3] = np.clip(snowy[:, : size // 3].astype(int) + 40, 0, 255)
    clipped = snowy.min(axis=2) >= 250
    assert roads.covered(clipped)[3]
    assert roads.evidence(roads.read(snowy), roads.covered(clipped))[3] > 0.5


def test_a_stripe_not_of_the_roads_tint_is_no_road():
    """A blue streak of snow across a snowfield side (Winter scans: an E, a field on its west,
    read as WI2 with a road there) crosses as strongly as the pale roads the table has
    confirmed, but not in their colour: it says nothing for a road, and a pale road still
    counts in full."""
    roads = _learned()
    streak = _cell("EW", seed=4)
    size = streak.shape[0]
    cv2.line(streak, (size // 2 - 3, 0), (size // 2 - 1, size // 3), (170, 90, 40), 3)
    crossing = roads.read(streak)[0]
    assert crossing.contrast > roads.read(_cell("NS", seed=4))[0].contrast / 2
    north, east, _, west = roads.evidence(roads.read(streak))
    assert north == 0.0 and min(east, west) > 0.5
    # before the table has confirmed enough roads to know their colour, it is a road
    novice = RoadCrossings()
    novice.seen[0].extend([40.0, 42.0, 44.0])
    novice.seen[1].extend([5.0, 6.0, 7.0, 8.0])
    assert novice.evidence(novice.read(streak))[0] > 0.5
