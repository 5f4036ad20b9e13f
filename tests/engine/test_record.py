"""Game records: every kind of bad input names the turn and the reason; saving is atomic."""

import json
import subprocess
import sys

import pytest

from meeplecam.engine import RecordError, find_tileset, load_record, save_record, to_record
from meeplecam.engine.playout import random_game


def record(*turns, **extra):
    return {
        "format": "meeplecam-record/1",
        "tileset": "winter",
        "players": [{"name": "Ann", "colour": "red"}, {"name": "Bo", "colour": "yellow"}],
        "start": {"tile": "D", "x": 0, "y": 0, "rotation": 0},
        "turns": list(turns),
        **extra,
    }


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        (
            [{"tile": "U", "x": 1, "y": 0, "rotation": 90}],
            "turn 1: U at \\(1,0\\) rotation 90: its west side \\(field\\) does not match the road of D at \\(0,0\\)",
        ),
        ([{"tile": "U", "x": 0, "y": 0}], "turn 1: .*already taken by D"),
        ([{"tile": "U", "x": 3, "y": 0}], "turn 1: .*touches no placed tile"),
        ([{"tile": "Q9", "x": 1, "y": 0}], "turn 1: .*unknown tile type 'Q9'"),
        (
            [{"tile": "U", "x": 1, "y": 0, "rotation": 45}],
            "turn 1: U at \\(1,0\\): rotation must be",
        ),
        ([{"tile": "U", "x": "1", "y": 0}], "turn 1: U: 'x' and 'y' must be whole numbers"),
        ([{"x": 1, "y": 0}], "turn 1: a turn needs 'tile'"),
        (["U"], "turn 1: a turn must be an object"),
        ([{"tile": "U", "x": 1, "y": 0, "meeple": {"at": "C"}}], "turn 1: .*U has no .* at 'C'"),
        ([{"tile": "U", "x": 1, "y": 0, "meeple": "E"}], "turn 1: .*'meeple' must be an object"),
        (
            [{"tile": "U", "x": 1, "y": 0, "meeple": {"at": "E", "colour": "yellow"}}],
            "turn 1: .*the follower is yellow, but it is red's turn",
        ),
        (
            [
                {"tile": "U", "x": 1, "y": 0, "meeple": {"at": "E"}},
                {"tile": "U", "x": 2, "y": 0, "meeple": {"at": "W"}},
            ],
            "turn 2: U at \\(2,0\\) rotation 0: the road at W is already occupied by red",
        ),
        ([{"discard": "U"}], "turn 1: discard of U: U fits at"),
        (
            [
                {
                    "tile": "E",
                    "x": 0,
                    "y": -1,
                    "rotation": 180,
                    "gingerbread": {"x": 0, "y": 0, "at": "N"},
                }
            ],
            "turn 1: .*does not move this turn",
        ),
    ],
)
def test_illegal_turns_name_the_turn_and_the_reason(turns, message):
    with pytest.raises(RecordError, match=message) as error:
        load_record(record(*turns))
    assert error.value.turn == int(message.split()[1].rstrip(":"))


def test_using_more_copies_than_the_set_holds_is_an_error():
    # The winter set has one C tile; the second one is refused.
    one = record({"tile": "C", "x": 0, "y": -1})
    with pytest.raises(RecordError, match="all 1 copies of C in set winter are used"):
        load_record({**one, "turns": [*one["turns"], {"tile": "C", "x": 0, "y": -2}]})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"players": [{"colour": "red"}]}, "players: a game has 2 to 8 players"),
        ({"players": [{"colour": "red"}, {"colour": "red"}]}, "two players share the colour red"),
        ({"options": {"farm_scoring": "c4"}}, "farm_scoring must be c3, c2 or c1"),
        ({"options": {"small_city": 3}}, "small_city must be 4 or 2"),
        ({"options": {"table": {"min_x": 0}}}, "table must give whole numbers"),
        ({"tileset": "seasons"}, "unknown tile set 'seasons'"),
        ({"tileset": "winter+gingerbread"}, "needs the tile types GB1"),
        ({"format": "other/2"}, "format 'other/2' is not"),
        ({"start": {"tile": "ZZ"}}, "start: unknown tile type"),
        ({"turns": {"tile": "U"}}, "'turns' must be a list"),
        ({"tile_types": {"GB1": {"sides": "CCCX"}}}, "tile GB1: 'sides' must be"),
    ],
)
def test_malformed_records_say_what_is_wrong(change, message):
    with pytest.raises(RecordError, match=message):
        load_record({**record(), **change})


def test_a_table_edge_limits_the_play_area():
    bounded = {"options": {"table": {"min_x": -1, "max_x": 1, "min_y": -1, "max_y": 1}}}
    load_record(record({"tile": "U", "x": 1, "y": 0}, **bounded))
    with pytest.raises(RecordError, match=r"turn 2: .*beyond the table edge"):
        load_record(record({"tile": "U", "x": 1, "y": 0}, {"tile": "U", "x": 2, "y": 0}, **bounded))


def test_symmetric_rotations_compare_equal_and_output_the_smallest():
    game = load_record(
        record({"tile": "U", "x": 1, "y": 0, "rotation": 180, "meeple": {"at": "W"}})
    )
    turn = to_record(game)["turns"][0]
    assert turn["rotation"] == 0
    assert turn["meeple"] == {"at": "E"}


def test_save_is_atomic_and_leaves_no_temporary_files(tmp_path, monkeypatch):
    game = random_game(find_tileset("winter"), 2, seed=3)
    path = tmp_path / "game.json"
    save_record(to_record(game), path)
    first = path.read_text()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", crash)
    with pytest.raises(OSError, match="disk full"):
        save_record({"format": "meeplecam-record/1", "turns": []}, path)
    assert path.read_text() == first, "a failed save must leave the previous record intact"
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]


def run_score(*args):
    return subprocess.run(
        [sys.executable, "-m", "meeplecam.cli", "score", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_score_command_prints_the_report(tmp_path):
    game = random_game(find_tileset("winter"), 3, seed=5)
    path = tmp_path / "game.json"
    save_record(to_record(game), path)
    result = run_score(path, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [p["score"] for p in report["players"]] == [
        t + sum(f.values()) for t, f in zip(game.totals, game.final_scoring(), strict=True)
    ]
    table = run_score(path)
    assert "total" in table.stdout and "winner" in table.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        (json.dumps(record({"tile": "U", "x": 1, "y": 0, "rotation": 90})), "turn 1: U at (1,0)"),
    ],
)
def test_score_command_rejects_bad_records_with_one_line(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = run_score(path, "--json")
    assert result.returncode == 1
    assert result.stdout == ""
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_score_command_reports_a_missing_file(tmp_path):
    result = run_score(tmp_path / "nope.json")
    assert result.returncode == 1
    assert "cannot read" in result.stderr
