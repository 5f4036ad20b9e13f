"""The scans of one physical copy (``../shared/data/real/scans``) as the renderer's ``copy`` art:
each scan is turned to its type's canonical orientation, so that a placed tile shows its fields,
roads and cities where the rules put them."""

import numpy as np
import pytest

from meeplecam.engine import find_tileset
from meeplecam.vision.synth import art

pytestmark = pytest.mark.skipif(
    not art.copy_scans_available(), reason="../shared/data/real/scans is absent"
)


def _side_middles(image: np.ndarray) -> list[np.ndarray]:
    """The mean BGR colour at the middle of each side (N E S W), just inside the tile's edge."""
    n = image.shape[0]
    a, b, c, d = round(0.45 * n), round(0.55 * n), round(0.03 * n), round(0.10 * n)
    patches = [
        image[c:d, a:b],
        image[a:b, n - d : n - c],
        image[n - d : n - c, a:b],
        image[a:b, c:d],
    ]
    return [p.reshape(-1, 3).mean(axis=0) for p in patches]


@pytest.mark.parametrize("tile_id", list("ABCDEFGHIJKLMNOPQRSTUVWX"))
def test_a_copy_scan_is_turned_so_that_its_fields_lie_where_the_rules_say(tile_id):
    tile = find_tileset("base")[tile_id]
    canonical = art.canonical_art(tile, art.COPY)
    for side, (blue, green, red) in zip(tile.sides, _side_middles(canonical), strict=True):
        grassy = green > red + 15 and green > blue + 15
        assert grassy == (side == "F"), (
            f"{tile_id}: side {side} looks {'grassy' if grassy else 'built'}"
        )


def test_the_copys_start_tile_is_drawn_from_its_scans_not_from_the_winter_drawings():
    tile = find_tileset("base")["D"]
    assert not np.array_equal(art.canonical_art(tile, art.COPY), art.canonical_art(tile, "winter"))
    assert art.canonical_art(tile, art.COPY, 1).shape == art.canonical_art(tile, art.COPY, 0).shape
