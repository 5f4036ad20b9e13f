"""The worked examples of the rule book (rules/001_*.txt captions) and the FAQ answers with
numbers (rules/000_*.txt notes), each rebuilt as a legal game record from TILES.md geometry.

The pictures are missing, so every board here is one that fits its caption: the points, the
followers and the features the caption names. The start tile is D at (0, 0): city cap N, road W-E.
"""

from __future__ import annotations

from records import breakdown, game, points, supply, totals, turn_scores

from meeplecam.engine import format_report, laps

# --- 3. Completed roads, cities and cloisters ----------------------------------------------------


def test_road_red_scores_4():
    """“RED scores 4 points” (a completed road of four tiles)."""
    record = (
        game(players=["red", "yellow"])
        .tile("U", 1, 0, 0, meeple="E")  # red thief on the road through the start tile
        .tile("W", -1, 0, 0)  # the road ends at a village (T-junction) in the west
        .tile("WI3", 2, 0, 180)  # ... and at a city gate in the east: W, D, U, WI3
    )
    report = record.report()
    assert turn_scores(report) == [
        {"red": 0, "yellow": 0},
        {"red": 0, "yellow": 0},
        {"red": 4, "yellow": 0},
    ]
    assert breakdown(report, "red") == points(road=4)
    assert totals(report) == {"red": 4, "yellow": 0}
    assert supply(record) == {"red": 7, "yellow": 7}


def test_road_red_scores_3():
    """“RED scores 3 points” (a completed road of three tiles: crossroads to cloister)."""
    record = (
        game(players=["red", "yellow"])
        .tile("X", -1, 0, 0, meeple="E")  # red thief on the road that leaves the crossroads east
        .tile("A", 1, 0, 90)  # the road ends at the cloister: X, D, A
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 3, "yellow": 0}
    assert breakdown(report, "red") == points(road=3)
    assert breakdown(report, "yellow") == points()


def test_city_red_scores_8_three_segments_and_one_pennant():
    """“RED scores 8 points (three city segments and one pennant)”."""
    record = (
        game(players=["red", "yellow"])
        .tile("M", 0, -1, 180, meeple="S")  # diagonal city S+E with pennant joins the start city
        .tile("E", 1, -1, 270)  # a cap W closes it: D, M, E = 3 tiles + 1 pennant
    )
    report = record.report()
    assert turn_scores(report) == [{"red": 0, "yellow": 0}, {"red": 8, "yellow": 0}]
    assert breakdown(report, "red") == points(city=8)
    assert report["final_scoring"] == {"red": 0, "yellow": 0}
    assert supply(record)["red"] == 7


def four_tile_ring() -> tuple:
    """A city of four tiles and five segments: tile I at (1, 2) holds two segments of it."""
    return (
        game(players=["red", "yellow"])
        .tile("N", 0, 1, 180, meeple="S")  # city S+E below the start tile
        .tile("N", 1, 1, 270)  # city W+S
        .tile("N", 0, 2, 90)  # city N+E
        .tile("I", 1, 2, 0)  # caps N and W: both are segments of the same city, which closes
    )


def test_city_red_scores_8_four_segments_both_segments_on_a_tile_count_once():
    """“A: When both city segments on a tile are in a single city, they only count as one
    segment. RED scores 8 points (four city segments, no pennants)”."""
    report = four_tile_ring().report()
    assert turn_scores(report)[-1] == {"red": 8, "yellow": 0}
    assert breakdown(report, "red") == points(city=8)


def test_both_knights_draw_blue_and_red_score_the_full_10_points():
    """“The new tile joins the previously unconnected city segments, forming a single completed
    city. BLUE and RED both score the full 10 points, as they both have one knight in the
    city—a draw!”"""
    record = (
        game(players=["red", "blue"])
        .tile("N", 0, -1, 180, meeple="S")  # red knight: start city + city S+E
        .tile("V", 1, 0, 0)
        .tile("E", 2, 0, 0)  # a cap N, not yet connected to red's city
        .tile("N", 2, -1, 270, meeple="W")  # blue knight: city W+S on that cap
        .tile("G", 1, -1, 0)  # red joins both parts: D, N, G, N, E = 5 tiles
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 10, "blue": 10}
    assert breakdown(report, "red") == points(city=10)
    assert breakdown(report, "blue") == points(city=10)
    assert report["winner"] == ["red", "blue"]
    assert supply(record) == {"red": 7, "blue": 7}


def test_cloister_red_scores_9():
    """“RED scores 9 points (for 8 surrounding tiles and the cloister itself.)”"""
    record = (
        game(players=["red", "yellow"])
        .tile("B", 0, 1, 0, meeple="C")  # red monk below the start tile
        .tile("A", -1, 0, 270)
        .tile("A", 1, 0, 90)
        .tile("B", -1, 1, 0)
        .tile("B", 1, 1, 0)
        .tile("E", -1, 2, 180)
        .tile("E", 0, 2, 180)
        .tile("E", 1, 2, 180)  # the eighth neighbour
    )
    report = record.report()
    scores = turn_scores(report)
    assert scores[-2] == {"red": 0, "yellow": 0}
    assert scores[-1] == {"red": 9, "yellow": 0}
    assert breakdown(report, "red") == points(cloister=9)
    assert supply(record)["red"] == 7


def test_follower_deployed_scored_and_returned_in_the_same_turn():
    """“It is possible to deploy a follower, score immediately, and have the follower returned,
    all in the same turn ... 1. Complete a road ... 2. Deploy a thief ... 3. Score ... 4. Return
    the thief” ("Rood scoort 3 punten")."""
    record = (
        game(players=["red", "yellow"])
        .tile("X", -1, 0, 0)
        .tile("A", 1, 0, 90, meeple="W")  # yellow completes X-D-A and stands on it
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 0, "yellow": 3}
    assert breakdown(report, "yellow") == points(road=3)
    assert supply(record) == {"red": 7, "yellow": 7}
    # the returned thief is back in the supply: yellow can place seven more
    g = game(players=["red", "yellow"]).tile("X", -1, 0, 0).tile("A", 1, 0, 90, meeple="W")
    g.tile("U", -2, 0, 0)
    g.tile("B", 0, 1, 0, meeple="C")
    assert supply(g) == {"red": 7, "yellow": 6}


# --- The scoreboard ------------------------------------------------------------------------------


def test_scoreboard_blue_scores_3_from_48_to_1_and_lays_the_figure_down():
    """“BLUE scores 3 points. He moved his figure that started on 48. To indicate that the score
    is greater than 50, he lays the figure down.”"""
    assert laps(48) == (0, 48)
    assert laps(48 + 3) == (1, 1)
    assert laps(50) == (1, 0)
    assert laps(49) == (0, 49)
    assert laps(100 + 7) == (2, 7)
    report = {
        "players": [
            {"name": "Blue", "colour": "blue", "score": 51, "breakdown": points(road=51)},
        ],
        "turns": [],
        "final_scoring": {"blue": 0},
        "winner": ["blue"],
    }
    assert "1 (+1x50)" in format_report(report)


# --- Final scoring -------------------------------------------------------------------------------


def final_scoring_board():
    return (
        game(players=["red", "yellow", "blue", "green", "black"])
        .tile("U", -1, 0, 0, meeple="E")  # red thief: U, D, then the city gate of WI3
        .tile("B", 0, 1, 0, meeple="C")  # yellow monk
        .tile("WI3", 1, 0, 180, meeple="S")  # blue knight in the city below the gate
        .tile("E", -1, -1, 90, meeple="E")  # green knight (cap E)
        .tile("F", 1, -1, 0, meeple="W")  # black knight (city W-E, pennant)
        .tile("B", 1, -2, 0)
        .tile("M", 1, 1, 90)  # blue's city grows: WI3 + M (pennant), open east
        .tile("G", 2, -1, 0)  # black's city grows east
        .tile("E", 0, -2, 180, meeple="S")  # green's second knight (cap S)
        .tile("C", 0, -1, 0)  # black joins it all: D, C, E, E, F, G = 6 tiles, 2 pennants
    )


def test_final_scoring_incomplete_road_cloister_and_cities():
    """“RED scores 3 points for the incomplete road. YELLOW scores 5 points for the incomplete
    cloister. BLUE scores 3 points for the incomplete city on the bottom right. GREEN scores 8
    points for the large incomplete city. BLACK scores nothing, since GREEN has more knights in
    the city.”"""
    report = final_scoring_board().report()
    assert turn_scores(report)[-1] == dict.fromkeys(["red", "yellow", "blue", "green", "black"], 0)
    assert breakdown(report, "red") == points(road=3)
    assert breakdown(report, "yellow") == points(cloister=5)
    assert breakdown(report, "blue") == points(city=3)
    assert breakdown(report, "green") == points(city=8)
    assert breakdown(report, "black") == points()
    assert report["final_scoring"] == {"red": 3, "yellow": 5, "blue": 3, "green": 8, "black": 0}
    assert report["winner"] == ["green"]


# --- Farms ---------------------------------------------------------------------------------------


def two_farms_board(lower: str, city_on_upper_farm: bool):
    """Upper farm (blue farmer on U) borders two completed cities; the lower farm (south of the
    road) borders one. ``lower``: the colour that puts the farmer on the lower farm."""
    players = ["blue", "red"]
    turns = [
        ("U", 1, 0, 0, "NNE", "blue"),  # blue farmer north of the road
        ("E", 0, 1, 180, "ENE", lower),  # farmer on the farm south of the road
        ("E", 0, -1, 180, None, None),  # closes the start city (city 1)
        ("E", 0, 2, 0, None, None),  # closes the city below (city 3)
        ("E", 1, -1, 0, None, None),  # a cap N on the upper farm ...
        ("E", 1, -2, 180, None, None),  # ... closed (city 2)
    ]
    if lower == "blue":  # blue places both farmers: the lower one on its second turn
        turns[1], turns[2] = turns[2], turns[1]
    record = game(players=players)
    for tile, x, y, rotation, meeple, who in turns:
        record.tile(tile, x, y, rotation, meeple=meeple, colour=who)  # the record checks who
    if city_on_upper_farm:
        record.tile("N", 2, -1, 90)  # an incomplete city N+E on the upper farm
    return record


def test_farm_blue_scores_9_upper_farmer_6_lower_farmer_3():
    """“BLUE scores 9 points (6 points for the upper farmer and 3 points for the lower one).”"""
    record = two_farms_board(lower="blue", city_on_upper_farm=False)
    report = record.report()
    assert turn_scores(report)[-1] == {"blue": 0, "red": 0}
    assert breakdown(report, "blue") == points(farm=9)
    assert breakdown(report, "red") == points()
    assert supply(record)["blue"] == 5  # farmers never come back


def test_farm_blue_scores_6_red_scores_3_incomplete_city_generates_nothing():
    """“BLUE scores 6 points. RED scores 3 points. The incomplete city generates no points.”"""
    report = two_farms_board(lower="red", city_on_upper_farm=True).report()
    assert breakdown(report, "blue") == points(farm=6)
    assert breakdown(report, "red") == points(farm=3)


def large_and_small_farm(tie: bool):
    """City A (WI1 + E, at (1,0)-(2,0)) borders the large farm north of the road and the small
    farm south of it; city B (D + N + E, at (0,0)-(0,-1)-(-1,-1)) borders the large farm only.
    The large farm is four separate pieces until U at (-1,0) and B at (1,-1) join them."""
    return (
        game(players=["red", "yellow", "blue"])
        .tile("N", 0, -1, 270, meeple="NNE")  # red farmer (piece north-east of city B)
        .tile("WI1", 1, 0, 90, meeple="NNE" if tie else None)  # road into city A's gate
        .tile("B", 1, 1, 0, meeple="NNW")  # blue farmer on the small farm (south of the road)
        .tile("E", -1, -1, 90, meeple="WSW")  # red farmer (piece west of city B); B complete
        .tile("E", 2, 0, 270, meeple="NNE")  # yellow farmer (piece east of city A); A complete
        .tile("B", 2, -1, 0)
        .tile("U", -1, 0, 0)  # joins the west piece with the start tile's north field
        .tile("B", 1, -1, 0)  # joins everything north of the road into the large farm
    )


def test_farm_red_owns_the_large_farm_6_blue_the_small_farm_3_yellow_nothing():
    """“Having the majority of farmers, RED owns the large farm, and scores 6 points: 3 each for
    the cities A and B. BLUE owns the small farm, scoring 3 points for city A. YELLOW does not
    have a majority, so earns no points.”"""
    report = large_and_small_farm(tie=False).report()
    assert breakdown(report, "red") == points(farm=6)
    assert breakdown(report, "blue") == points(farm=3)
    assert breakdown(report, "yellow") == points()
    assert report["final_scoring"] == {"red": 6, "yellow": 0, "blue": 3}


def test_farm_tie_red_and_yellow_both_score_6_blue_3():
    """“On the large farm RED and YELLOW both have two farmers, and so both score 6 points: 3
    each for the cities A and B. BLUE owns the small farm, scoring 3 points for city A.”"""
    report = large_and_small_farm(tie=True).report()
    assert breakdown(report, "red") == points(farm=6)
    assert breakdown(report, "yellow") == points(farm=6)
    assert breakdown(report, "blue") == points(farm=3)
    assert report["winner"] == ["red", "yellow"]


def three_farms_board():
    """Farm 1 (south of the road y=0): D, WI1 and WI5 south fields, borders cities A and B.
    Farm 2 (north of it): D, WI1, WI5 north fields, B at (-1,-1), the fields of the caps at
    (0,-1) and (1,-1); borders A, B and C. Farm 3 (below the road of U at (0,1)): the fields of
    the three H tiles in column x=0 and three cloisters beside them; borders the four cities
    of that column. A = J + WI1, B = WI5 + E + E, C = D + E."""
    return (
        game(players=["blue", "red", "yellow", "black"])
        .tile("WI5", 1, 0, 90, meeple="SSE")  # blue: farm 1
        .tile("WI1", -1, 0, 270, meeple="NNE")  # red: farm 2 (start tile's north field)
        .tile("U", 0, 1, 0)
        .tile("E", 0, 2, 180)
        .tile("E", 0, -1, 180, meeple="NNW")  # blue: farm 2 (still a separate field); C done
        .tile("E", 1, -1, 180)
        .tile("H", 0, 3, 0, meeple="ENE")  # yellow: farm 3
        .tile("H", 0, 4, 0, meeple="ENE")  # black: farm 3 (a separate field for now)
        .tile("B", -1, -1, 0)  # joins farm 2
        .tile("J", -2, 0, 90)  # A done
        .tile("H", 0, 5, 0, meeple="ENE")  # yellow: farm 3
        .tile("E", 0, 6, 0)
        .tile("E", 2, 0, 270)  # B done
        .tile("B", 1, 3, 0)  # these three join farm 3
        .tile("B", 1, 4, 0)
        .tile("B", 1, 5, 0)
    )


def test_detailed_farm_example_blue_6_red_and_blue_9_yellow_12():
    """“Farm 1: BLUE owns farm 1. Two completed cities (A and B) border the farm ... a total of
    6 points. Farm 2: RED and BLUE own farm 2. There are three completed cities (A, B and C)
    bordering or lying within this farm. RED and BLUE therefore score 9 points each ... Farm 3:
    YELLOW owns farm 3, since YELLOW has more farmers on it than BLACK. There are four
    completed cities bordering or lying within farm 3, so YELLOW scores 12 points.”"""
    report = three_farms_board().report()
    assert turn_scores(report)[-1] == {"blue": 0, "red": 0, "yellow": 0, "black": 0}
    assert breakdown(report, "blue") == points(farm=6 + 9)
    assert breakdown(report, "red") == points(farm=9)
    assert breakdown(report, "yellow") == points(farm=12)
    assert breakdown(report, "black") == points()
    assert report["final_scoring"] == {"blue": 15, "red": 9, "yellow": 12, "black": 0}


def test_road_forming_a_closed_circle_is_complete():
    """“A road is completed when the road segments on both sides end in a crossing, a city
    segment, or a cloister, or when the road forms a closed circle.”"""
    record = (
        game(players=["red", "yellow"])
        .tile("V", 0, 1, 270, meeple="E")  # red thief on a curve E-S below the start tile
        .tile("V", 1, 1, 0)
        .tile("V", 0, 2, 180)
        .tile("V", 1, 2, 90)  # the circle closes: 4 tiles
    )
    report = record.report()
    assert turn_scores(report)[-2] == {"red": 0, "yellow": 0}
    assert turn_scores(report)[-1] == {"red": 4, "yellow": 0}
    assert breakdown(report, "red") == points(road=4)


# --- How can multiple followers stand on one feature? -------------------------------------------


def corner_fields():
    return (
        game(players=["blue", "red", "yellow"])
        .tile("E", 0, -1, 180, meeple="NNW")  # turn 1: blue farmer on the field around the cap
        .tile("V", 1, 0, 0, meeple="NNE")  # turn 2: red farmer; the fields meet only at a corner
    )


def test_fields_touching_at_a_corner_are_not_connected_and_join_later():
    """“Turn 1: BLUE places a follower on the field.” “The fields are not connected at the
    corners! Turn 2: RED places the tile at the upper right and places a farmer on the field. He
    may do this becauase the fields are not yet connected.” “Turn 3: Now the two field segments
    are connected as part of a larger field. In this way it is possible for several followers to
    be on one farm.”"""
    record = corner_fields().tile("B", 1, -1, 0)  # turn 3 joins the two fields
    report = record.report()
    # one farm, one farmer each: a tie, both own it and score the completed start city
    assert breakdown(report, "blue") == points(farm=3)
    assert breakdown(report, "red") == points(farm=3)
    assert breakdown(report, "yellow") == points()


def test_the_player_who_joins_occupied_farms_may_not_deploy_a_farmer():
    """“Be careful: The player who placed the new tile may not deploy a farmer, since the (now
    connected) farm is already occupied by farmers.”"""
    corner_fields().tile("B", 1, -1, 0, meeple="NNW").error(3)
    corner_fields().tile("B", 1, -1, 0, meeple="C").report()  # a monk is fine


def test_blue_may_not_place_a_thief_on_an_occupied_road_but_a_monk_or_a_farmer():
    """“BLUE may not place a thief, as the road is already occupied. He may play a monk or place
    a follower on the field.”"""
    for at in ("W", "C", "NNE"):
        record = game(players=["red", "blue"]).tile("U", 1, 0, 0, meeple="E")
        record.tile("A", 2, 0, 90, meeple=at)
        if at == "W":
            assert "occupied" in record.error(2)
        else:
            record.report()


def test_blue_may_not_place_a_knight_in_a_claimed_city_but_a_thief_or_a_farmer():
    """“BLUE may not place a knight in the city, as the city is already claimed. He may place a
    thief on the road or place a follower on the field.”"""
    for at in ("W", "N", "ESE"):
        record = game(players=["red", "blue"]).tile("N", 0, -1, 180, meeple="S")
        record.tile("WI3", 1, -1, 270, meeple=at)  # city W joins red's city; road N; field
        if at == "W":
            assert "occupied" in record.error(2)
        else:
            record.report()


# --- The FAQ answers with numbers (notes of 000 / 001) -------------------------------------------


def test_faq_incomplete_cloister_with_five_neighbours_earns_6():
    """“The cloister earns 1 point for the cloister itself and 1 point for every neighbouring
    tile. When there are five tiles surrounding the cloister it earns 6 in total.”"""
    record = (
        game(players=["red", "yellow"])
        .tile("B", 0, 1, 0, meeple="C")  # red monk; neighbour 1: the start tile
        .tile("U", -1, 0, 0)
        .tile("U", 1, 0, 0)
        .tile("B", -1, 1, 0)
        .tile("B", 1, 1, 0)  # five neighbours
        .tile("U", 2, 0, 0)  # not a neighbour
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 0, "yellow": 0}
    assert breakdown(report, "red") == points(cloister=6)
    assert report["final_scoring"] == {"red": 6, "yellow": 0}


def test_faq_incomplete_road_earns_1_per_tile_blue_earns_4():
    """“During the final scoring, roads earn exactly as much as during the game, that is, 1 point
    per road segment. In the example shown, blue earns four points at the end of the game.”"""
    record = (
        game(players=["blue", "red"])
        .tile("U", 1, 0, 0, meeple="W")
        .tile("U", -1, 0, 0)
        .tile("V", 2, 0, 0)  # curves south, still open
    )
    report = record.report()
    assert breakdown(report, "blue") == points(road=4)
    assert report["final_scoring"] == {"blue": 4, "red": 0}


def test_faq_roads_between_t_junctions_every_thief_on_its_own_road():
    """“Every crossing (or junction) ends a road, irrespective of which direction they reach the
    junction from ... In the example shown, every thief is on its own road.”"""
    record = (
        game(players=["red", "yellow"])
        .tile("W", 1, 0, 0, meeple="W")  # red thief: the road D - junction, open to the west
        .tile("W", 2, 0, 0, meeple="W")  # yellow thief between the two junctions: complete (2)
        .tile("W", -1, 0, 0, meeple="S")  # red closes its road (3) and takes a south road
        .tile("W", 3, 0, 0, meeple="S")  # yellow: another junction, another road of its own
    )
    report = record.report()
    assert turn_scores(report) == [
        {"red": 0, "yellow": 0},
        {"red": 0, "yellow": 2},
        {"red": 3, "yellow": 2},
        {"red": 3, "yellow": 2},  # the road between junctions (2,0) and (3,0) has no thief
    ]
    # final: red's 1-tile south road of (-1,0), yellow's of (3,0)
    assert breakdown(report, "red") == points(road=4)
    assert breakdown(report, "yellow") == points(road=3)


def test_faq_two_knights_of_one_colour_do_not_score_double():
    """“When two followers of one color are occupying a road, city, or farm, you DO NOT score
    double in these cases ... Two knights do not double the points.”"""
    record = (
        game(players=["red", "blue"])
        .tile("N", 0, -1, 180, meeple="S")  # red knight
        .tile("V", 1, 0, 0)
        .tile("E", 2, 0, 0, meeple="N")  # red's second knight, in a separate city for now
        .tile("N", 2, -1, 270)
        .tile("G", 1, -1, 0)  # red joins and completes: 5 tiles = 10, once
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 10, "blue": 0}
    assert breakdown(report, "red") == points(city=10)
    assert supply(record) == {"red": 7, "blue": 7}


def test_faq_completing_an_unoccupied_city_without_a_knight_and_deploying_a_farmer():
    """“If you complete a previously unoccupied city when placing a tile, you do not have to
    occupy this city and earn the points. You can close the city without it being occupied and
    (for example) deploy a farmer as long as the farm is unoccupied.”"""
    record = game(players=["red", "yellow"]).tile("E", 0, -1, 180, meeple="NNW")
    report = record.report()
    assert turn_scores(report) == [{"red": 0, "yellow": 0}]  # nobody scores the city
    assert breakdown(report, "red") == points(farm=3)  # the farmer has the completed city
    assert supply(record)["red"] == 6


def test_faq_farm_closed_off_by_roads_without_a_city_scores_0():
    """“At the end of the game, do we score farms which are completely closed off by roads, but
    which don't have any adjacent cities? ... 3 points for every completed city. In this case,
    that makes a total of zero points. And the farmer is nevertheless unable to leave the farm.”"""
    record = (
        game(players=["red", "yellow"])
        .tile("V", 0, 1, 270, meeple="SSE")  # red farmer inside a road loop
        .tile("E", 0, -1, 180)  # a completed city elsewhere on the board
        .tile("V", 1, 1, 0)
        .tile("V", 0, 2, 180)
        .tile("V", 1, 2, 90)  # the loop closes: the farm inside is closed off
    )
    report = record.report()
    assert breakdown(report, "red") == points()
    assert breakdown(report, "yellow") == points()
    assert supply(record)["red"] == 6  # the farmer stays


def test_faq_12_knight_on_completed_small_city_returns_and_cannot_be_redeployed():
    """“If the player does not yet occupy this city, he or she can decide which of the two city
    segments to deploy a follower to. If the follower is deployed to the small city, it will be
    returned immediately and the player will earn four points, but the follower cannot be
    redeployed.”"""
    record = (
        game(players=["red", "yellow"])
        .tile("E", 0, 1, 180)  # red: a cap S below the start tile
        .tile("H", 0, 2, 0, meeple="N")  # yellow closes it with H and stands in the small city
    )
    report = record.report()
    assert turn_scores(report) == [{"red": 0, "yellow": 0}, {"red": 0, "yellow": 4}]
    assert breakdown(report, "yellow") == points(city=4)
    assert supply(record) == {"red": 7, "yellow": 7}
    # nobody stands in H's other (open) city: red may put a knight there next turn
    record.tile("N", 0, 3, 90, meeple="N")  # joins H's open cap: not complete
    assert breakdown(record.report(), "red") == points(city=2)


def test_faq_12_player_already_in_the_small_city_deploys_to_the_other_segment():
    """“If the player already occupies the small, now-completed city, he or she may deploy a
    second follower to the other city segment immediately after placing the tile. The small city
    will then be scored and the follower involved returned to the player.”"""
    record = (
        game(players=["red", "yellow"])
        .tile("E", 0, 1, 180, meeple="S")  # red knight in the cap
        .tile("U", 1, 0, 0)
        .tile("H", 0, 2, 0, meeple="S")  # red closes the small city, second knight on H's cap S
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 4, "yellow": 0}
    assert breakdown(report, "red") == points(city=4 + 1)  # + the open 1-tile city at the end
    assert supply(record)["red"] == 6
