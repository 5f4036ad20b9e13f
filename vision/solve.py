"""The board that looks most like the table: every cell's type and rotation chosen all together.

Each cell has its options (a type at a rotation, its sides N E S W, and how much the cell looks
like it); the solution takes one option per cell, every side matching the side of the
neighbour across it (when both are cells being solved: the options already fit the tiles that
stay), no type more often than its copies allow, and the most score in all. A mixed-integer
program (``scipy.optimize.milp``, HiGHS): a binary per option, one per cell, a count per type,
and per pair of touching cells and per side kind, as many of the one's options with that kind
on the shared side chosen as of the other's.

Reading tile by tile, one misread forces its neighbours' readings (a road it added must go on
next door), and theirs in turn; the cluster fits together, so no tile of it can be read again
alone. The board solved all together can read them all again at once.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from meeplecam.engine.tiles import NEIGHBOUR_OFFSETS

Cell = tuple[int, int]


class Option(NamedTuple):
    tile: str
    rotation: int
    sides: str  # N E S W as the tile lies at that rotation
    score: float  # how much the cell looks like it


def solve_board(
    options: dict[Cell, list[Option]], copies: dict[str, int], time_limit: float = 20.0
) -> dict[Cell, Option] | None:
    """One option per cell (see the module), or None when none fits together (or the solver
    found no solution within ``time_limit`` seconds)."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    cells = list(options)
    columns: dict[Cell, list[int]] = {}
    flat: list[tuple[Cell, Option]] = []
    for cell in cells:
        columns[cell] = list(range(len(flat), len(flat) + len(options[cell])))
        flat += [(cell, option) for option in options[cell]]
    if not flat or not all(columns.values()):
        return None
    rows, cols, values, lower, upper = [], [], [], [], []

    def constrain(terms, low: float, high: float) -> None:
        for column, value in terms:
            rows.append(len(lower))
            cols.append(column)
            values.append(value)
        lower.append(low)
        upper.append(high)

    for cell in cells:
        constrain([(k, 1) for k in columns[cell]], 1, 1)
    by_type: dict[str, list[int]] = {}
    for k, (_, option) in enumerate(flat):
        by_type.setdefault(option.tile, []).append(k)
    for tile, where in by_type.items():
        constrain([(k, 1) for k in where], 0, copies.get(tile, 0))
    kinds = sorted({kind for _, option in flat for kind in option.sides})
    for x, y in cells:
        for side in (1, 2):  # east and south: each touching pair once
            dx, dy = NEIGHBOUR_OFFSETS[side]
            other = (x + dx, y + dy)
            if other not in columns:
                continue
            facing = (side + 2) % 4
            for kind in kinds:
                mine = [(k, 1) for k in columns[(x, y)] if flat[k][1].sides[side] == kind]
                theirs = [(k, -1) for k in columns[other] if flat[k][1].sides[facing] == kind]
                constrain(mine + theirs, 0, 0)
    matrix = coo_array((values, (rows, cols)), shape=(len(lower), len(flat))).tocsr()
    result = milp(
        -np.array([option.score for _, option in flat]),
        constraints=LinearConstraint(matrix, lower, upper),
        integrality=np.ones(len(flat)),
        bounds=Bounds(0, 1),
        options={"time_limit": time_limit},
    )
    if result.x is None:
        return None
    return {flat[k][0]: flat[k][1] for k in np.flatnonzero(result.x > 0.5)}


__all__ = ["Option", "solve_board"]
