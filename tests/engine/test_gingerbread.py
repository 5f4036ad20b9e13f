"""The Gingerbread Man (rules/002_*.txt, rules/README.md "Gingerbread Man", FORMATS.md).

The six icon tiles' shapes are unknown, so these records enter INVENTED shapes in "tile_types",
exactly as a player would (records.GB_TILES; GB1 is the tile of the FORMATS.md example). The start
tile is D at (0, 0): city cap N, road W-E; the Gingerbread Man starts in that city.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from records import GB_TILES, breakdown, game, gingerbread_game, points, supply, turn_scores

from meeplecam.engine import RecordError, Spot, Turn, hints, load_record, score_report
from meeplecam.engine.record import event_to_dict

# --- The FORMATS.md example ----------------------------------------------------------------------

FORMATS_RECORD = {
    "format": "meeplecam-record/1",
    "tileset": "winter+gingerbread",
    "options": {
        "farm_scoring": "c3",
        "small_city": 4,
        "table": {"min_x": -6, "max_x": 7, "min_y": -4, "max_y": 4},
        "table_edge_closes": False,
    },
    "players": [{"name": "Ann", "colour": "red"}, {"name": "Bo", "colour": "yellow"}],
    "start": {"tile": "D", "x": 0, "y": 0, "rotation": 0},
    "turns": [
        {"tile": "U", "x": 1, "y": 0, "rotation": 0, "meeple": {"at": "E"}},
        {
            "tile": "GB1",
            "x": 2,
            "y": 0,
            "rotation": 0,
            "meeple": {"at": "S"},
            "gingerbread": {"x": 2, "y": 0, "at": "N"},
        },
        {
            "tile": "E",
            "x": 2,
            "y": -1,
            "rotation": 180,
            "meeple": {"at": "NNE"},
            "gingerbread": {"x": 0, "y": 0, "at": "N"},
        },
        {"tile": "U", "x": -1, "y": 0, "rotation": 0},
    ],
    "tile_types": {
        "GB1": {
            "count": 1,
            "sides": "CFCR",
            "cities": [{"sides": "N", "pennant": True}, {"sides": "S"}],
            "roads": ["W"],
            "cloister": False,
            "fields": [{"halves": ["ENE", "ESE", "WSW", "WNW"], "borders": ["N", "S"]}],
            "icons": ["gingerbread"],
        },
        **{tile: GB_TILES[tile] for tile in ("GB2", "GB3", "GB4", "GB5", "GB6")},
    },
}

FORMATS_REPORT = {
    "players": [
        {
            "name": "Ann",
            "colour": "red",
            "score": 7,
            "breakdown": {"road": 4, "city": 0, "cloister": 0, "farm": 3, "gingerbread": 0},
        },
        {
            "name": "Bo",
            "colour": "yellow",
            "score": 1,
            "breakdown": {"road": 0, "city": 1, "cloister": 0, "farm": 0, "gingerbread": 0},
        },
    ],
    "turns": [
        {"scores": {"red": 0, "yellow": 0}},
        {"scores": {"red": 0, "yellow": 0}},
        {"scores": {"red": 0, "yellow": 0}},
        {"scores": {"red": 0, "yellow": 0}},
    ],
    "final_scoring": {"red": 7, "yellow": 1},
    "winner": ["red"],
}


def test_formats_example_record_scores_exactly_as_its_report():
    assert score_report(load_record(FORMATS_RECORD)) == FORMATS_REPORT


def run_score(tmp_path, record: dict) -> subprocess.CompletedProcess:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record), "utf-8")
    return subprocess.run(
        [sys.executable, "-m", "meeplecam.cli", "score", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_formats_example_on_the_command_line(tmp_path):
    done = run_score(tmp_path, FORMATS_RECORD)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == FORMATS_REPORT


def test_command_line_error_names_the_turn(tmp_path):
    record = json.loads(json.dumps(FORMATS_RECORD))
    del record["turns"][2]["gingerbread"]  # the move the completed city requires
    done = run_score(tmp_path, record)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "turn 3" in lines[0]


def test_gingerbread_set_without_the_icon_tiles_is_an_error_that_says_so():
    record = game(players=["red", "yellow"], tileset="winter+gingerbread").record()
    with pytest.raises(RecordError, match="GB1"):
        load_record(record)


# --- Start and leaving a city (002: 1st type of scoring) -----------------------------------------


def knight_in_start_city():
    """Red's knight in the start city (D + N at (0,-1), open to the east)."""
    return gingerbread_game(players=["red", "yellow"]).tile("N", 0, -1, 180, meeple="S")


def test_starts_in_the_start_city_and_leaving_it_scores_its_knights():
    """The Gingerbread Man starts in the start tile's city; an icon tile sends it to another
    unfinished city, and each knight in the city it left scores 1 per tile (D + N: 2)."""
    record = knight_in_start_city().tile("GB2", 0, 1, 180, gingerbread=(0, 1, "S"))
    report = record.report()
    assert turn_scores(report) == [{"red": 0, "yellow": 0}, {"red": 2, "yellow": 0}]
    # the knight stays: at the end it scores the open city as usual (2 tiles)
    assert breakdown(report, "red") == points(gingerbread=2, city=2)
    assert breakdown(report, "yellow") == points()
    assert supply(record)["red"] == 6


def seven_tile_city():
    """An unfinished city of 7 tiles (2 pennants) holding the Gingerbread Man, with two red
    knights and one blue knight, joined from three separate parts."""
    return (
        gingerbread_game(players=["red", "blue"])
        .tile("U", 1, 0, 0)
        .tile("U", -1, 0, 0)
        .tile("R", 0, -1, 180, meeple="S")  # red knight in the start city (city S, E, W)
        .tile("U", 2, 0, 0)
        .tile("U", -2, 0, 0)
        .tile("F", 2, -1, 0, meeple="W")  # blue knight, separate city W-E
        .tile("F", -2, -1, 0, meeple="E")  # red knight, separate city W-E
        .tile("G", -1, -1, 0)  # joins the west part
        .tile("R", 1, -1, 0)  # joins the east part; open to the north
        .tile("E", 3, -1, 270)  # 7 tiles: D R G F R F E; open at (-3,-1) and (1,-2)
    )


def test_002_leaving_example_blue_7_red_14():
    """002: “Red places a tile with the gingerbread man icon and moves the gingerbread man into
    the top right city. Because the gingerbread man was removed from the left city, Blue scores
    7 points (7 tiles, 1 knight) and Red 14 points (7 tiles, 2 knights).”"""
    record = seven_tile_city().tile("GB2", 1, 1, 180, gingerbread=(1, 1, "S"))
    report = record.report()
    scores = turn_scores(report)
    assert scores[-2] == {"red": 0, "blue": 0}
    assert scores[-1] == {"red": 14, "blue": 7}
    # the knights stay; at the end red (2 knights) takes the open city: 7 tiles + 2 pennants
    assert breakdown(report, "red") == points(gingerbread=14, city=9)
    assert breakdown(report, "blue") == points(gingerbread=7)
    assert supply(record) == {"red": 5, "blue": 6}


def test_a_knight_on_the_icon_tile_itself_scores_when_the_city_is_left():
    """The icon tile extends the Gingerbread Man's city and carries a knight: the knight stands
    in the city when the move comes (after the turn's placement and scoring), so it scores."""
    record = (
        gingerbread_game(players=["red", "yellow"])
        .tile("E", 0, 1, 180)  # red: another unfinished city
        .tile("GB3", 0, -1, 180, meeple="S", gingerbread=(0, 1, "S"))  # yellow: D + GB3
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 0, "yellow": 2}
    assert breakdown(report, "yellow") == points(gingerbread=2, city=2)


# --- Its city completed (002: 2nd type of scoring) -----------------------------------------------


def six_tile_city_before_completion():
    return (
        gingerbread_game(players=["red", "blue"])
        .tile("U", 1, 0, 0)
        .tile("U", -1, 0, 0)
        .tile("R", 0, -1, 180, meeple="S")  # red knight in the start city
        .tile("U", 2, 0, 0)
        .tile("U", -2, 0, 0)
        .tile("E", 2, -1, 270, meeple="W")  # blue knight, a cap W
        .tile("E", -2, -1, 90, meeple="E")  # red knight, a cap E
        .tile("G", -1, -1, 0)  # joins the west cap
        .tile("E", 0, 1, 180)  # another unfinished city, below the start tile
        .tile("U", 3, 0, 0)
    )


def test_002_completion_example_blue_6_red_12_then_red_14_for_the_city():
    """002: “Red uses his tile to complete the city occupied by the gingerbread man. For the
    gingerbread man scoring, Blue scores 6 points (6 tiles, 1 knight) and Red 12 points (6
    tiles, 2 knights). Then Red scores 14 points for the city, as per the normal rules.
    Finally, Red moves the gingerbread man into an incomplete city.”"""
    record = six_tile_city_before_completion().tile("F", 1, -1, 0, gingerbread=(0, 1, "S"))
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 12 + 14, "blue": 6}
    assert breakdown(report, "red") == points(gingerbread=12, city=14)
    assert breakdown(report, "blue") == points(gingerbread=6)
    assert supply(record) == {"red": 7, "blue": 7}


def test_completion_move_is_required_and_only_to_an_unfinished_city():
    six_tile_city_before_completion().tile("F", 1, -1, 0).error(11)  # no move given
    # the completed city itself is no target
    six_tile_city_before_completion().tile("F", 1, -1, 0, gingerbread=(0, 0, "N")).error(11)


def test_completion_move_then_the_new_city_is_left_with_scoring():
    """After the move, the Gingerbread Man is in the city below the start tile: a knight placed
    there scores when the next icon tile sends it elsewhere."""
    record = (
        six_tile_city_before_completion()
        .tile("F", 1, -1, 0, gingerbread=(0, 1, "S"))
        .tile("N", 0, 2, 0, meeple="N")  # blue knight joins the city below: 2 tiles
        .tile("GB2", -1, 1, 180, gingerbread=(-1, 1, "S"))  # red: icon tile, move
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 26, "blue": 6 + 2}


# --- At most one move per turn -------------------------------------------------------------------


def test_icon_tile_completing_its_own_city_moves_it_once_without_leaving_scoring():
    """rules/README.md: an icon tile that completes the Gingerbread Man's city triggers one
    move, and nobody scores for leaving the (already scored) city."""
    record = (
        gingerbread_game(players=["red", "yellow"])
        .tile("E", 0, 1, 180)  # red: another unfinished city
        .tile("GB2", 0, -1, 180, meeple="S", gingerbread=(0, 1, "S"))  # yellow closes D + GB2
    )
    report = record.report()
    # knights first: 1 per tile (2); then the city: 4; no second 2 for leaving it
    assert turn_scores(report)[-1] == {"red": 0, "yellow": 2 + 4}
    assert breakdown(report, "yellow") == points(gingerbread=2, city=4)
    assert supply(record)["yellow"] == 7


# --- Nowhere to go -------------------------------------------------------------------------------


def test_no_other_unfinished_city_it_stays_and_nobody_scores():
    """002: “If there are no incomplete cities where the gingerbread man may move to, then he
    stays in the city he currently occupies.” GB3 joins the start city, the only one."""
    stays = gingerbread_game(players=["red", "yellow"]).tile("GB3", 0, -1, 180, meeple="S")
    report = stays.report()
    assert turn_scores(report) == [{"red": 0, "yellow": 0}]
    assert breakdown(report, "red") == points(city=2)  # no Gingerbread Man scoring at the end
    # naming a city is an error: there is nowhere else to go
    gingerbread_game(players=["red", "yellow"]).tile(
        "GB3", 0, -1, 180, meeple="S", gingerbread=(0, -1, "S")
    ).error(1)
    # it stayed: the next icon tile takes it from the start city, and red's knight scores
    moved = stays.tile("E", 0, 1, 180).tile("GB2", -1, 1, 180, gingerbread=(0, 1, "S"))
    assert turn_scores(moved.report())[-1] == {"red": 2, "yellow": 0}


def test_its_city_completed_with_nowhere_to_go_it_leaves_and_returns_with_no_scoring():
    """002: “If that city is completed, he is then removed from the board, and will be able to
    return to play when another gingerbread man tile is played.” rules/README.md: the player
    who places the next icon tile puts it into an unfinished city; nobody scores."""
    closed = gingerbread_game(players=["red", "yellow"]).tile("E", 0, -1, 180, meeple="S")
    report = closed.report()
    assert turn_scores(report) == [{"red": 1 * 2 + 4, "yellow": 0}]
    assert breakdown(report, "red") == points(gingerbread=2, city=4)
    # no city to move to: a move is an error
    gingerbread_game(players=["red", "yellow"]).tile(
        "E", 0, -1, 180, meeple="S", gingerbread=(0, -1, "S")
    ).error(1)
    back = closed.tile("GB2", 0, 1, 180, meeple="S", gingerbread=(0, 1, "S"))  # yellow
    assert turn_scores(back.report())[-1] == {"red": 6, "yellow": 0}
    # it is back in GB2's city: the next icon tile moves it and yellow's knight scores 1
    again = back.tile("GB5", -1, 1, 0, gingerbread=(-1, 1, "N"))  # red
    assert turn_scores(again.report())[-1] == {"red": 6, "yellow": 1}


def test_icon_tile_completing_its_city_with_nowhere_to_go_it_leaves_the_board():
    """The icon tile completes the Gingerbread Man's city (knights score 1 per tile, then the
    city) and no unfinished city is left: no move, it leaves the board until the next icon
    tile, whose player must put it into an unfinished city."""
    record = (
        gingerbread_game(players=["red", "yellow"])
        .tile("E", 0, 1, 180)  # red: a cap S below the start tile
        .tile("E", 0, -1, 180, gingerbread=(0, 1, "S"))  # yellow closes the start city: move
        .tile("GB2", 0, 2, 0, meeple="N")  # red: icon tile closes the city below
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 2 + 4, "yellow": 0}
    assert breakdown(report, "red") == points(gingerbread=2, city=4)
    record.tile("U", 1, 0, 0)  # yellow
    with_move = record.record()
    record.tile("GB6", -1, 0, 0).error(5)  # red's icon tile: the move is required
    back = gingerbread_game(players=["red", "yellow"])
    back.data = with_move
    back.tile("GB6", -1, 0, 0, gingerbread=(-1, 0, "N"))
    assert turn_scores(back.report())[-1] == {"red": 6, "yellow": 0}


def test_discard_with_a_gingerbread_move_is_an_error():
    """FORMATS.md: "gingerbread" is required exactly when a move is due; present at any other
    time it is an error. A discarded tile is not placed, so no move is ever due."""
    narrow = {"table": {"min_x": -1, "max_x": 1, "min_y": 0, "max_y": 0}}
    record = gingerbread_game(players=["red", "yellow"], options=narrow)
    record.data["turns"].append({"discard": "GB2", "gingerbread": {"x": 0, "y": 0, "at": "N"}})
    record.error(1)


def test_discarded_icon_tile_moves_nothing():
    """A discarded icon tile is not placed: no move, no scoring, the same player goes on."""
    narrow = {"table": {"min_x": -1, "max_x": 1, "min_y": 0, "max_y": 0}}
    record = (
        gingerbread_game(players=["red", "yellow"], options=narrow)
        .discard("GB2")  # no road: fits nowhere on this table
        .tile("U", 1, 0, 0, meeple="E", colour="red")
    )
    report = record.report()
    assert turn_scores(report) == [{"red": 0, "yellow": 0}] * 2


def test_off_the_board_the_next_icon_tile_must_place_it():
    closed = gingerbread_game(players=["red", "yellow"]).tile("E", 0, -1, 180)
    closed.tile("GB2", 0, 1, 180).error(2)


def test_off_the_board_completing_a_city_moves_nothing():
    closed = gingerbread_game(players=["red", "yellow"]).tile("E", 0, -1, 180)
    record = closed.tile("E", 0, 1, 180).tile("H", 0, 2, 0)  # closes a city: no move due
    record.report()
    closed = gingerbread_game(players=["red", "yellow"]).tile("E", 0, -1, 180)
    closed.tile("E", 0, 1, 180).tile("H", 0, 2, 0, gingerbread=(0, 2, "S")).error(3)


def test_city_closed_by_the_table_edge_counts_as_completed_for_the_gingerbread_man():
    """With table_edge_closes the start city closed by F against the edge is completed: its
    knights score 1 per tile first, then the city, then the completer moves the figure."""
    options = {
        "table": {"min_x": -3, "max_x": 3, "min_y": -1, "max_y": 3},
        "table_edge_closes": True,
    }
    record = (
        gingerbread_game(players=["red", "yellow"], options=options)
        .tile("E", 0, 1, 180)  # red: another unfinished city
        .tile("F", 0, -1, 90, meeple="N", gingerbread=(0, 1, "S"))  # yellow: D + F, pennant
    )
    report = record.report()
    assert turn_scores(report)[-1] == {"red": 0, "yellow": 2 + 6}
    assert breakdown(report, "yellow") == points(gingerbread=2, city=6)
    gingerbread_game(players=["red", "yellow"], options=options).tile("E", 0, 1, 180).tile(
        "F", 0, -1, 90, meeple="N"
    ).error(2)


# --- Malformed and illegal moves -----------------------------------------------------------------


def test_missing_move_after_an_icon_tile_is_an_error():
    knight_in_start_city().tile("GB2", 0, 1, 180).error(2)


def test_move_without_an_icon_tile_or_completion_is_an_error():
    knight_in_start_city().tile("E", 0, 1, 180, gingerbread=(0, 1, "S")).error(2)


@pytest.mark.parametrize(
    "target",
    [
        (0, -1, "S"),  # the city it is leaving
        (0, 0, "N"),  # the same city, named on the start tile
        (0, 0, "E"),  # a road
        (0, 1, "NNE"),  # a field
        (5, 5, "N"),  # an empty cell
        (0, 1, "C"),  # no cloister there
    ],
)
def test_move_to_a_place_that_is_no_other_unfinished_city_is_an_error(target):
    knight_in_start_city().tile("GB2", 0, 1, 180, gingerbread=target).error(2)


def test_move_to_a_completed_city_is_an_error():
    record = (
        knight_in_start_city()
        .tile("E", 0, 1, 180)  # yellow
        .tile("H", 0, 2, 0)  # red closes E + H's cap N; H's cap S stays open
    )
    record.tile("GB2", -1, 1, 180, gingerbread=(0, 1, "S")).error(4)
    ok = (
        knight_in_start_city()
        .tile("E", 0, 1, 180)
        .tile("H", 0, 2, 0)
        .tile("GB2", -1, 1, 180, gingerbread=(0, 2, "S"))
    )
    assert turn_scores(ok.report())[-1] == {"red": 2, "yellow": 0}


def test_icon_tiles_do_nothing_outside_the_gingerbread_set():
    """Icon tiles only matter in winter+gingerbread (FORMATS.md)."""
    gb2 = {"GB2": GB_TILES["GB2"]}
    plain = game(players=["red", "yellow"], tile_types=gb2).tile("N", 0, -1, 180, meeple="S")
    assert turn_scores(plain.tile("GB2", 0, 1, 180).report())[-1] == {"red": 0, "yellow": 0}
    again = game(players=["red", "yellow"], tile_types=gb2).tile("N", 0, -1, 180, meeple="S")
    again.tile("GB2", 0, 1, 180, gingerbread=(0, 1, "S")).error(2)


def test_no_gingerbread_scoring_at_the_end_of_the_game():
    """rules/README.md: there is no Gingerbread Man scoring at the end of the game."""
    report = knight_in_start_city().report()
    assert breakdown(report, "red") == points(city=2)
    assert report["final_scoring"] == {"red": 2, "yellow": 0}


# --- What a camera needs to know before the turn is laid (engine.hints) --------------------------


def _moves(record, tile: str, x: int, y: int, rotation: int) -> bool:
    return hints.gingerbread_moves(record.game(), Turn(tile, x, y, rotation))


def test_an_icon_tile_moves_it_and_a_plain_tile_elsewhere_does_not():
    record = gingerbread_game(players=["red", "yellow"]).tile("U", 1, 0, 0)
    assert _moves(record, "GB2", 0, 1, 180)
    assert not _moves(record, "E", 0, 1, 180)
    assert hints.gingerbread_at(record.game()) == ((0, 0), 0)  # the start tile's city


def test_completing_its_city_moves_it_completing_another_does_not():
    record = six_tile_city_before_completion()
    assert _moves(record, "F", 1, -1, 0)  # closes the start city, where it stands
    assert not _moves(record, "N", 0, 2, 0)  # the city below the start tile stays open


def test_a_city_closed_by_the_table_edge_counts_as_completed():
    options = {
        "table": {"min_x": -3, "max_x": 3, "min_y": -1, "max_y": 3},
        "table_edge_closes": True,
    }
    record = gingerbread_game(players=["red", "yellow"], options=options).tile("E", 0, 1, 180)
    assert _moves(record, "F", 0, -1, 90)


def test_no_move_outside_the_gingerbread_set():
    record = game(players=["red", "yellow"]).tile("U", 1, 0, 0)
    assert not _moves(record, "F", 0, -1, 90)
    assert hints.gingerbread_at(record.game()) is None


def test_a_move_into_the_tile_being_laid_is_written_before_it_is_laid():
    """The live app writes a turn it has read before the engine applies it; the figure may go
    into the new tile's own city."""
    before = knight_in_start_city().game()
    turn = Turn("GB2", 0, 1, 180, gingerbread=Spot(0, 1, "S"))
    assert event_to_dict(before, turn)["gingerbread"] == {"x": 0, "y": 1, "at": "S"}
