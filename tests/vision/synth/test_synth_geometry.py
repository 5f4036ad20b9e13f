"""Label masks and art follow each tile type's segments at every rotation."""

import numpy as np
import pytest

from meeplecam.engine import HALVES, SIDES, Kind, find_tileset, load_tile_file
from meeplecam.vision.synth import geometry as g
from meeplecam.vision.synth.art import tile_art

TILESET = find_tileset(
    "winter+gingerbread", load_tile_file("engine/data/gingerbread-template.toml")
)
KIND_OF = {Kind.CITY: {g.CITY, g.PENNANT}, Kind.ROAD: {g.ROAD}, Kind.FIELD: {g.FIELD},
           Kind.CLOISTER: {g.CLOISTER}}  # fmt: skip


def _side_point(side: int, at: float, n: int) -> tuple[int, int]:
    """(row, col) just inside side ``side`` at fraction ``at`` along it, clockwise."""
    k = min(n - 1, int(at * n))
    return [(1, k), (k, n - 2), (n - 2, n - 1 - k), (n - 1 - k, 1)][side]


@pytest.mark.parametrize("tile_id", sorted(TILESET.types))
def test_label_mask_matches_segments(tile_id):
    tile = TILESET.types[tile_id]
    n = 96
    for rotation in (0, 90, 180, 270):
        labels, kinds = g.label_mask(tile, rotation, n)
        o = tile.oriented(rotation)
        assert labels.shape == (n, n)
        for s in range(4):
            if o.side_segment[s] >= 0:
                r, c = _side_point(s, 0.5, n)
                assert labels[r, c] == o.side_segment[s], (rotation, SIDES[s])
        for h in range(8):
            if o.half_segment[h] >= 0:
                r, c = _side_point(h // 2, 0.25 + 0.5 * (h % 2), n)
                assert labels[r, c] == o.half_segment[h], (rotation, HALVES[h])
        for index, seg in enumerate(tile.segments):
            here = labels == index
            assert here.any(), f"segment {index} missing at {rotation}"
            assert set(np.unique(kinds[here])) <= KIND_OF[seg.kind]
        for index, (u, v) in g.anchors(tile, rotation).items():
            assert labels[int(v * n), int(u * n)] == index


def test_rotation_turns_clockwise():
    d = TILESET.types["D"]
    _, kinds = g.label_mask(d, 90, 64)
    assert kinds[32, 62] == g.CITY  # D at 90 has its city on the east
    assert kinds[32, 1] == g.FIELD


def test_pennants_and_villages_are_drawn_where_the_rules_put_them():
    _, kinds = g.label_mask(TILESET.types["M"], 0, 96)
    assert (kinds == g.PENNANT).any()
    _, kinds = g.label_mask(TILESET.types["N"], 0, 96)
    assert not (kinds == g.PENNANT).any()
    for tid in ("W", "X", "L", "WI8"):
        assert (g.label_mask(TILESET.types[tid], 0, 96)[1] == g.VILLAGE).any(), tid
    for tid in ("S", "WI1", "A", "U"):
        assert not (g.label_mask(TILESET.types[tid], 0, 96)[1] == g.VILLAGE).any(), tid


@pytest.mark.parametrize("palette", ["winter", "summer"])
def test_palettes_colour_terrain(palette):
    """Cities, roads and fields are told apart by colour in each palette."""
    e = TILESET.types["U"]
    art = tile_art(e, 0, palette, 96).astype(float)
    _, kinds = g.label_mask(e, 0, 96)
    field = art[kinds == g.FIELD].mean(axis=0)
    road = art[kinds == g.ROAD].mean(axis=0)
    assert np.abs(field - road).sum() > 60
    if palette == "winter":
        assert field.mean() > 200  # snow
    else:
        assert field[1] > field[2] and field[1] > field[0]  # green
