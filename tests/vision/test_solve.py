"""The board solved all together: sides that touch agree, copies are counted, the most score."""

from __future__ import annotations

from meeplecam.vision.solve import Option, solve_board

STRAIGHT = Option("U", 90, "FRFR", 1.0)  # a road from west to east
FIELD = Option("B", 0, "FFFF", 0.9)  # a cloister: field all round


def test_two_neighbours_agree_on_the_side_they_share():
    """Alone, the west tile looks most like a straight road and its east neighbour most like a
    tile with field on its west side; together they cannot both be: the pair that looks most
    like the table in all, with the shared side agreeing, is two tiles without the road."""
    options = {
        (0, 0): [STRAIGHT, FIELD],
        (1, 0): [Option("V", 90, "FFRR", 0.5), Option("E", 0, "CFFF", 1.2)],
    }
    solved = solve_board(options, {"U": 1, "B": 1, "V": 1, "E": 1})
    assert solved == {(0, 0): FIELD, (1, 0): Option("E", 0, "CFFF", 1.2)}


def test_a_road_goes_on_next_door_when_that_looks_most_like_the_table():
    options = {
        (0, 0): [STRAIGHT, FIELD],
        (1, 0): [Option("V", 90, "FFRR", 1.1), Option("E", 0, "CFFF", 0.2)],
    }
    solved = solve_board(options, {"U": 1, "B": 1, "V": 1, "E": 1})
    assert solved[(0, 0)] == STRAIGHT and solved[(1, 0)].tile == "V"


def test_each_copy_is_laid_once():
    """Two tiles far apart both look most like a type with one copy left: the one it suits
    better takes it, the other its next best."""
    options = {
        (0, 0): [Option("U", 0, "RFRF", 2.0), Option("V", 0, "RRFF", 1.9)],
        (5, 5): [Option("U", 0, "RFRF", 2.0), Option("V", 0, "RRFF", 1.0)],
    }
    solved = solve_board(options, {"U": 1, "V": 2})
    assert solved[(0, 0)].tile == "V" and solved[(5, 5)].tile == "U"


def test_no_layout_that_fits_is_none():
    options = {(0, 0): [STRAIGHT], (1, 0): [Option("E", 0, "CFFF", 1.0)]}
    assert solve_board(options, {"U": 1, "E": 1}) is None
    assert solve_board({(0, 0): [STRAIGHT]}, {"U": 0}) is None  # no copy left
