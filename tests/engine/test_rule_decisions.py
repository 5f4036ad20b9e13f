"""Every decision of rules/README.md ("Decisions where the sources are silent or disagree") and the
record rules of FORMATS.md that go with them (discards, table, supply, occupied features).

The start tile is D at (0, 0): city cap N, road W-E.
"""

from __future__ import annotations

import pytest
from records import breakdown, game, points, supply, totals, turn_scores

# --- Counting: tiles, not segments ---------------------------------------------------------------


def test_counting_a_city_counts_a_tile_with_two_segments_of_it_once():
    """Cities count tiles: I at (1,2) holds two segments of the ring city, which has 4 tiles."""
    record = (
        game(players=["red", "yellow"])
        .tile("N", 0, 1, 180, meeple="S")
        .tile("N", 1, 1, 270)
        .tile("N", 0, 2, 90)
        .tile("I", 1, 2, 0)
    )
    assert breakdown(record.report(), "red") == points(city=2 * 4)


def test_counting_a_road_through_one_tile_twice_counts_it_once():
    """Roads count tiles: the road runs through both curves of WI7 and counts it once."""
    record = (
        game(players=["red", "yellow"])
        .tile("W", -1, 0, 0, meeple="E")  # red thief; the road starts at a village
        .tile("WI7", 1, 0, 0)  # in at W, out at N (first curve)
        .tile("V", 1, -1, 270)  # S -> E
        .tile("V", 2, -1, 0)  # W -> S
        .tile("V", 2, 0, 90)  # N -> W, back into WI7 at E, out at S (second curve)
        .tile("A", 1, 1, 180)  # ends at a cloister
    )
    report = record.report()
    # W, D, WI7, V, V, V, A: 7 tiles (8 road segments)
    assert turn_scores(report)[-1] == {"red": 7, "yellow": 0}
    assert breakdown(report, "red") == points(road=7)


# --- Small city ----------------------------------------------------------------------------------

PENNANT_CAP = {
    "PX": {
        "count": 1,
        "sides": "CFFF",
        "cities": [{"sides": "N", "pennant": True}],
        "roads": [],
        "cloister": False,
        "fields": [{"halves": ["ENE", "ESE", "SSE", "SSW", "WSW", "WNW"], "borders": ["N"]}],
        "icons": [],
    }
}


@pytest.mark.parametrize(("small_city", "expected"), [(None, 4), (4, 4), (2, 2)])
def test_small_city_of_two_tiles(small_city, expected):
    """A completed city of two tiles: 4 by default, 2 (1 per tile) with small_city 2."""
    options = {} if small_city is None else {"small_city": small_city}
    record = game(players=["red", "yellow"], options=options).tile("E", 0, -1, 180, meeple="S")
    report = record.report()
    assert turn_scores(report) == [{"red": expected, "yellow": 0}]
    assert breakdown(report, "red") == points(city=expected)


@pytest.mark.parametrize(("small_city", "expected"), [(4, 2 * 2 + 2), (2, 2 + 1)])
def test_small_city_with_a_pennant(small_city, expected):
    """Small city: 2 per tile and 2 per pennant (4); first edition 1 per tile and 1 per pennant
    (2). A one-cap tile with a pennant (a promotional tile, entered in tile_types)."""
    record = game(
        players=["red", "yellow"], options={"small_city": small_city}, tile_types=PENNANT_CAP
    ).tile("PX", 0, -1, 180, meeple="S")
    assert breakdown(record.report(), "red") == points(city=expected)


def test_small_city_option_leaves_larger_cities_and_incomplete_cities_alone():
    """small_city 2 changes only completed cities of exactly two tiles."""
    three_tiles = (
        game(players=["red", "yellow"], options={"small_city": 2})
        .tile("M", 0, -1, 180, meeple="S")
        .tile("E", 1, -1, 270)
    )
    assert breakdown(three_tiles.report(), "red") == points(city=8)
    open_two_tiles = game(players=["red", "yellow"], options={"small_city": 2}).tile(
        "M", 0, -1, 180, meeple="S"
    )
    assert breakdown(open_two_tiles.report(), "red") == points(city=2 + 1)


# --- Farms ---------------------------------------------------------------------------------------


def three_farms_one_city(farm_scoring: str):
    """City D + N + E (complete) is bordered by three farms: blue owns two, yellow one."""
    return (
        game(players=["blue", "yellow"], options={"farm_scoring": farm_scoring})
        .tile("N", 0, -1, 270, meeple="NNE")  # blue farmer north-east of the city
        .tile("U", 1, 0, 0, meeple="NNW")  # yellow farmer on the start tile's north field
        .tile("E", -1, -1, 90, meeple="WSW")  # blue farmer west of the city; city complete
    )


@pytest.mark.parametrize(
    ("method", "blue", "yellow"),
    [
        ("c3", 3 + 3, 3),  # each farm on its own: blue's two farms both score the city
        ("c2", 3, 3),  # a city counts at most once per player
        ("c1", 4, 0),  # per city: blue has 2 farmers around it, yellow 1; 4 points
    ],
)
def test_farm_methods_give_different_points_on_the_same_board(method, blue, yellow):
    """rules/README.md: c3 scores each farm on its own, c2 each city once per player, c1 each
    city once, 4 points for the players with most farmers on the farms around it."""
    report = three_farms_one_city(method).report()
    assert turn_scores(report)[-1] == {"blue": 0, "yellow": 0}
    assert breakdown(report, "blue") == points(farm=blue)
    assert breakdown(report, "yellow") == points(farm=yellow)


def test_farm_default_method_is_c3():
    record = (
        game(players=["blue", "yellow"])
        .tile("N", 0, -1, 270, meeple="NNE")
        .tile("U", 1, 0, 0, meeple="NNW")
        .tile("E", -1, -1, 90, meeple="WSW")
    )
    assert totals(record.report()) == {"blue": 6, "yellow": 3}


@pytest.mark.parametrize(("method", "each"), [("c3", 3), ("c2", 3), ("c1", 4)])
def test_farm_methods_tie_all_score(method, each):
    """Ties: every player with the most farmers scores, in every method."""
    record = (
        game(players=["blue", "yellow"], options={"farm_scoring": method})
        .tile("N", 0, -1, 270, meeple="NNE")  # blue
        .tile("E", -1, -1, 90, meeple="WSW")  # yellow; the city is complete
    )
    assert totals(record.report()) == {"blue": each, "yellow": each}


@pytest.mark.parametrize("method", ["c3", "c2", "c1"])
def test_farms_count_only_completed_cities(method):
    """Only completed cities count for farms."""
    open_city = game(players=["red", "yellow"], options={"farm_scoring": method}).tile(
        "N", 0, -1, 180, meeple="NNW"
    )  # red farmer beside the open city D + N (open to the east)
    assert breakdown(open_city.report(), "red") == points()
    closed = open_city.tile("E", 1, -1, 270)  # yellow closes it
    per_city = 4 if method == "c1" else 3
    assert breakdown(closed.report(), "red") == points(farm=per_city)


def test_farms_count_a_city_only_along_its_wall():
    """A city borders a farm only along a wall: L at (0,-1) completes the start city; the
    field in L's corner between its two roads does not touch the city wall."""
    record = (
        game(players=["red", "yellow"])
        .tile("L", 0, -1, 180, meeple="NNE")  # red farmer in the corner between roads N and E
        .tile("U", 1, -1, 0, meeple="SSE")  # yellow farmer on the field along the city wall
    )
    report = record.report()
    assert breakdown(report, "red") == points()
    assert breakdown(report, "yellow") == points(farm=3)


# --- Discards ------------------------------------------------------------------------------------

NARROW = {"table": {"min_x": -1, "max_x": 1, "min_y": 0, "max_y": 0}}  # three cells in a row


def test_discard_of_a_tile_with_no_legal_placement_keeps_the_turn():
    """A true discard: C (no road) fits nowhere on a one-row table; the same player then
    places the next tile (a follower of red's colour), and the turn passes after that."""
    record = (
        game(players=["red", "yellow"], options=NARROW)
        .discard("C")
        .tile("U", 1, 0, 0, meeple="E", colour="red")
        .tile("U", -1, 0, 0, meeple="SSW", colour="yellow")
    )
    report = record.report()
    assert len(report["turns"]) == 3
    assert turn_scores(report) == [{"red": 0, "yellow": 0}] * 3
    # red's road U, D, U is open: 3 at the end; yellow's farm has no city
    assert totals(report) == {"red": 3, "yellow": 0}


def test_after_a_discard_the_follower_belongs_to_the_same_player():
    record = (
        game(players=["red", "yellow"], options=NARROW)
        .discard("C")
        .tile("U", 1, 0, 0, meeple="E", colour="yellow")
    )
    assert "red" in record.error(2)


def test_discard_of_a_tile_with_a_legal_placement_is_an_error():
    game(players=["red", "yellow"], options=NARROW).discard("U").error(1)
    game(players=["red", "yellow"]).discard("C").error(1)  # unbounded: C fits at (0,-1)
    game(players=["red", "yellow"]).tile("U", 1, 0, 0).discard("E").error(2)


def test_a_discarded_tile_uses_up_its_copy():
    record = game(players=["red", "yellow"], options=NARROW).discard("C").discard("C")
    record.error(2)  # C has one copy


def test_tile_counts_the_start_tile_uses_a_copy():
    """FORMATS.md: the set limits the copies of each type; the start tile uses up a copy (D: 4
    in the set, so three more)."""
    record = game(players=["red", "yellow"]).tile("D", 1, 0, 0).tile("D", 2, 0, 0)
    record.tile("D", 3, 0, 0).report()
    record.tile("D", 4, 0, 0).error(4)
    game(players=["red", "yellow"]).tile("C", 0, -1, 0).tile("C", 0, -2, 0).error(2)


# --- The table edge ------------------------------------------------------------------------------


def test_table_a_tile_beyond_the_edge_is_illegal():
    table = {"table": {"min_x": -1, "max_x": 1, "min_y": -1, "max_y": 1}}
    game(players=["red", "yellow"], options=table).tile("U", 1, 0, 0).tile("U", 2, 0, 0).error(2)
    game(players=["red", "yellow"], options=table).tile("E", 0, -2, 180).error(1)
    game(players=["red", "yellow"], options=table).tile("U", 1, 0, 0).report()  # on the edge


def edge_city(edge_closes: bool, meeple: str = "N"):
    table = {"min_x": -3, "max_x": 3, "min_y": -1, "max_y": 3}
    options = {"table": table, "table_edge_closes": edge_closes}
    # F at (0,-1): city N-S with pennant, its north side faces the table edge
    return game(players=["red", "yellow"], options=options).tile("F", 0, -1, 90, meeple=meeple)


def test_table_edge_closes_a_city_which_scores_during_play():
    """table_edge_closes: a side facing off the table counts as closed: D + F is complete."""
    closed = edge_city(edge_closes=True).report()
    assert turn_scores(closed) == [{"red": 2 * 2 + 2, "yellow": 0}]
    assert breakdown(closed, "red") == points(city=6)
    # without the house rule the city stays open: 1 per tile and pennant at the end
    open_ = edge_city(edge_closes=False).report()
    assert turn_scores(open_) == [{"red": 0, "yellow": 0}]
    assert breakdown(open_, "red") == points(city=3)


def test_table_edge_closed_city_counts_for_farms():
    """ "a city closed that way is complete (also for farms)”"""
    assert breakdown(edge_city(True, meeple="ENE").report(), "red") == points(farm=3)
    assert breakdown(edge_city(False, meeple="ENE").report(), "red") == points()


@pytest.mark.parametrize(("edge_closes", "during_play"), [(True, 3), (False, 0)])
def test_table_edge_closes_a_road(edge_closes, during_play):
    """A road that runs into the table edge at both ends is complete with the house rule."""
    options = {"table": NARROW["table"], "table_edge_closes": edge_closes}
    record = (
        game(players=["red", "yellow"], options=options)
        .tile("U", 1, 0, 0, meeple="E")  # the road: U, D, U from edge to edge
        .tile("U", -1, 0, 0)
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": during_play, "yellow": 0}
    assert breakdown(report, "red") == points(road=3)


def test_table_edge_closes_needs_a_table():
    """Without a table (unbounded) nothing faces an edge: the option changes nothing."""
    record = game(players=["red", "yellow"], options={"table_edge_closes": True})
    report = record.tile("F", 0, -1, 90, meeple="N").report()
    assert turn_scores(report) == [{"red": 0, "yellow": 0}]
    assert breakdown(report, "red") == points(city=3)


def edge_cloister(edge_closes: bool):
    table = {"min_x": -1, "max_x": 1, "min_y": 0, "max_y": 1}
    options = {"table": table, "table_edge_closes": edge_closes}
    return game(players=["red", "yellow"], options=options).tile("B", 0, 1, 0, meeple="C")


def test_table_edge_closes_a_cloister_counts_the_cells_off_the_table():
    """A cloister on the edge counts the three cells beyond it as filled, at the end ..."""
    assert breakdown(edge_cloister(True).report(), "red") == points(cloister=2 + 3)
    assert breakdown(edge_cloister(False).report(), "red") == points(cloister=2)


def test_table_edge_closes_a_cloister_completes_during_play():
    """... and for completion during play: 5 tiles on the table + 3 cells off it + itself."""
    record = (
        edge_cloister(True)
        .tile("U", -1, 0, 0)
        .tile("U", 1, 0, 0)
        .tile("B", -1, 1, 0)
        .tile("B", 1, 1, 0)
    )
    report = record.report()
    assert turn_scores(report)[-2] == {"red": 0, "yellow": 0}
    assert turn_scores(report)[-1] == {"red": 9, "yellow": 0}
    assert breakdown(report, "red") == points(cloister=9)
    # the same board without the house rule: 6 tiles, open, 6 at the end
    plain = (
        edge_cloister(False)
        .tile("U", -1, 0, 0)
        .tile("U", 1, 0, 0)
        .tile("B", -1, 1, 0)
        .tile("B", 1, 1, 0)
    )
    assert turn_scores(plain.report())[-1] == {"red": 0, "yellow": 0}
    assert breakdown(plain.report(), "red") == points(cloister=6)


def test_table_edge_closes_a_cloister_placed_complete_scores_at_once():
    """In a corner of a 2x2 table a cloister may be complete the moment it is placed."""
    table = {"min_x": 0, "max_x": 1, "min_y": 0, "max_y": 1}
    record = (
        game(players=["red", "yellow"], options={"table": table, "table_edge_closes": True})
        .tile("U", 1, 0, 0)
        .tile("B", 0, 1, 0)
        .tile("B", 1, 1, 0, meeple="C")  # red: 4 tiles on the table + 5 cells off it
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 9, "yellow": 0}
    assert breakdown(report, "red") == points(cloister=9)
    assert supply(record)["red"] == 7


# --- Tiles that their sides alone mislead --------------------------------------------------------


def thief_west():
    """Red's thief on the road from a village at (-1,0) through the start tile to (1,0)."""
    return game(players=["red", "yellow"]).tile("W", -1, 0, 0, meeple="E")


def test_u_and_wi6_have_the_same_sides_but_wi6_ends_the_road_at_a_cloister():
    """U and WI6 both read F R F R."""
    through = thief_west().tile("U", 1, 0, 0).report()
    assert turn_scores(through)[-1] == {"red": 0, "yellow": 0}  # the road goes on
    assert breakdown(through, "red") == points(road=3)
    ended = thief_west().tile("WI6", 1, 0, 0, meeple="C").report()
    assert turn_scores(ended)[-1] == {"red": 3, "yellow": 0}  # W, D, WI6: complete
    assert breakdown(ended, "red") == points(road=3)
    assert breakdown(ended, "yellow") == points(cloister=1 + 1)  # D is its neighbour
    thief_west().tile("U", 1, 0, 0, meeple="C").error(2)  # U has no cloister


def test_x_and_wi7_have_the_same_sides_but_different_roads():
    """X and WI7 both read R R R R: X ends four roads, WI7 carries two curves through."""
    crossing = thief_west().tile("X", 1, 0, 0, meeple="N").report()
    assert turn_scores(crossing)[-1] == {"red": 3, "yellow": 0}  # W, D, X: complete
    assert breakdown(crossing, "yellow") == points(road=1)  # its own 1-tile road north
    curves = thief_west().tile("WI7", 1, 0, 0).report()
    assert turn_scores(curves)[-1] == {"red": 0, "yellow": 0}  # the road turns north, open
    assert breakdown(curves, "red") == points(road=3)
    thief_west().tile("WI7", 1, 0, 0, meeple="N").error(2)  # N is red's road on WI7


def test_a_and_wi8_have_the_same_sides_but_only_a_has_a_cloister():
    """A and WI8 both read F F R F."""
    cloister = game(players=["red", "yellow"]).tile("A", 0, 1, 0, meeple="C").report()
    assert breakdown(cloister, "red") == points(cloister=2)
    game(players=["red", "yellow"]).tile("WI8", 0, 1, 0, meeple="C").error(1)
    village = game(players=["red", "yellow"]).tile("WI8", 0, 1, 0, meeple="S").report()
    assert breakdown(village, "red") == points(road=1)


# --- Followers -----------------------------------------------------------------------------------


def seven_monks():
    """Red puts a monk on each of 7 cloisters in a row below the start tile; yellow fills the
    gaps without followers."""
    record = game(players=["red", "yellow"])
    cloisters = [("B", 0), ("B", 0), ("B", 0), ("B", 0), ("A", 0), ("A", 0), ("A", 0)]
    fillers = [("E", 0), ("E", 0), ("E", 0), ("E", 0), ("E", 0), ("H", 0), ("H", 0)]
    x = 0
    for (cloister, rc), (filler, rf) in zip(cloisters, fillers, strict=True):
        record.tile(cloister, x, 1, rc, meeple="C")
        record.tile(filler, x + 1, 1, rf)
        x += 2
    return record, x


def test_supply_of_seven_an_eighth_follower_is_an_error():
    record, x = seven_monks()
    assert supply(record) == {"red": 0, "yellow": 7}
    eighth = record.tile("WI6", x, 1, 90, meeple="C")
    assert "follower" in eighth.error(15)
    record, x = seven_monks()
    record.tile("WI6", x, 1, 90).report()  # the tile alone is fine


def six_monks_and_a_thief():
    """Red's seven followers: six monks in a row below the start tile and a thief on the road
    from the village at (-1,0) through the start tile; yellow places tiles only."""
    record = game(players=["red", "yellow"])
    x = 0
    for cloister, filler in zip("BBBBAA", "EEEEEH", strict=True):
        record.tile(cloister, x, 1, 0, meeple="C")
        record.tile(filler, x + 1, 1, 0)
        x += 2
    record.tile("W", -1, 0, 0, meeple="E")  # turn 13: red's seventh follower
    record.tile("H", x, 1, 0)  # turn 14
    return record


def test_supply_is_counted_before_the_turn_returns_followers():
    """FORMATS: the supply is counted when the follower is placed, before that turn's scoring
    returns anyone. Red, with none left, closes its own road at turn 15 (WI3: W, D, WI3)."""
    record = six_monks_and_a_thief()
    assert supply(record) == {"red": 0, "yellow": 7}
    record.tile("WI3", 1, 0, 180, meeple="S")  # a knight on the (closing) city: no supply
    assert "follower" in record.error(15)
    record = six_monks_and_a_thief().tile("WI3", 1, 0, 180)
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 3, "yellow": 0}
    assert supply(record)["red"] == 1


def test_follower_only_on_an_unoccupied_feature_error_names_the_turn():
    base = game(players=["red", "yellow"]).tile("U", 1, 0, 0, meeple="E")  # red thief
    message = base.tile("U", 2, 0, 0, meeple="W").error(2)  # same road
    assert "occupied" in message
    farm = game(players=["red", "yellow"]).tile("U", 1, 0, 0, meeple="NNE")
    farm.tile("U", 2, 0, 0, meeple="WNW").error(2)  # same field
    ok = game(players=["red", "yellow"]).tile("U", 1, 0, 0, meeple="E")
    ok.tile("U", 2, 0, 0, meeple="SSE").report()  # the field is free
    game(players=["red", "yellow"]).tile("U", 1, 0, 0, meeple="C").error(1)  # no cloister


def test_majority_two_knights_beat_one_during_play():
    """The player with the most knights scores the city; the other scores nothing."""
    record = (
        game(players=["red", "blue"])
        .tile("N", 0, -1, 180, meeple="S")  # red knight 1
        .tile("V", 1, 0, 0)
        .tile("E", 2, 0, 0)
        .tile("N", 2, -1, 270, meeple="W")  # blue knight
        .tile("B", 2, -2, 0)
        .tile("U", -1, 0, 0)
        .tile("E", 1, -2, 180, meeple="S")  # red knight 2
        .tile("R", 1, -1, 0)  # blue joins and completes: 6 tiles
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 12, "blue": 0}
    assert breakdown(report, "blue") == points()
    assert supply(record) == {"red": 7, "blue": 7}
