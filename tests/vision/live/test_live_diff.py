"""The diff's light models: one change of light, fitted from many cells' looks; a shadow over
part of the table, cell by cell."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from meeplecam.vision.live.diff import (
    Look,
    light_change,
    relit,
    shade_field,
    shade_gains,
    unshaded,
)
from meeplecam.vision.live.rectify import Board


def _look(lab: np.ndarray) -> Look:
    return Look(lab.astype(np.uint8), np.zeros(4, np.float32))


def _cells(rng, n: int = 30) -> list[np.ndarray]:
    """Cells of a table and tiles: each one colour with noise, lightness 60 to 220."""
    colours = rng.uniform([60, 100, 100], [220, 160, 170], (n, 3))
    return [np.clip(c + rng.normal(0, 6, (20, 20, 3)), 0, 255) for c in colours]


def test_a_lamp_switched_is_one_change_of_light_found_despite_a_new_tile():
    rng = np.random.default_rng(3)
    before = _cells(rng)
    lamp = np.array([[0.8, 0, 0, 10], [0, 1.0, 0, 4], [0, 0, 1.0, -6], [0, 0, 0, 1.0]])
    now = [np.c_[c.reshape(-1, 3), np.ones(400)] @ lamp[:3].T for c in before]
    now = [n.reshape(20, 20, 3) for n in now]
    now[4] = np.full((20, 20, 3), (90.0, 150, 110))  # a tile laid meanwhile
    found = light_change([(_look(b), _look(n)) for b, n in zip(before, now, strict=True)])
    assert found is not None
    probe = np.array([[100, 128, 128, 1.0], [200, 110, 150, 1.0]])
    assert np.abs(probe @ found.T - probe @ lamp.T).max() < 3


@pytest.mark.parametrize("seed", range(10))
def test_a_table_mostly_bare_still_gives_the_light_on_its_tiles(seed):
    """Most cells are bare table, one grey, each view with its own little noise: the cells
    fitted best span no colour, yet the light found must carry the few tiles over too (a
    warmer lamp)."""
    rng = np.random.default_rng(seed)
    grey = np.array([110.0, 128, 128])
    tiles = rng.uniform([60, 100, 100], [220, 160, 170], (6, 3))
    colours = [grey] * 24 + list(tiles)
    lamp = np.array([[1.15, 0, 0, -4], [0, 1.0, 0, 3], [0, 0, 1.0, 8], [0, 0, 0, 1.0]])

    def seen(colour):
        return np.clip(colour + rng.normal(0, 2, (20, 20, 3)), 0, 255)

    before = [seen(c) for c in colours]
    now = [seen(lamp[:3, :3] @ c + lamp[:3, 3]) for c in colours]
    found = light_change([(_look(b), _look(n)) for b, n in zip(before, now, strict=True)])
    probe = np.c_[tiles, np.ones(len(tiles))]
    assert np.abs(probe @ found.T - probe @ lamp.T).max() < 4


def test_too_few_cells_tell_nothing():
    rng = np.random.default_rng(4)
    cells = _cells(rng, 5)
    assert light_change([(_look(c), _look(c)) for c in cells]) is None


def test_relighting_by_no_change_keeps_the_picture():
    rng = np.random.default_rng(5)
    bgr = rng.integers(30, 220, (16, 16, 3), dtype=np.uint8)
    same = relit(bgr, np.eye(4))
    error = np.abs(same.astype(int) - bgr)
    assert error.max() <= 6 and error.mean() < 1  # 8-bit Lab and back rounds a little


def _bgr_look(bgr: np.ndarray) -> Look:
    return _look(cv2.cvtColor(np.clip(bgr, 0, 255).astype(np.uint8), cv2.COLOR_BGR2Lab))


def test_a_shadow_is_told_from_a_tile_laid_under_it():
    """Tiles under a player's shadow look the same, only darker: each gives the shadow's
    gain; a tile laid on the table meanwhile looks like no darker table, and gives none."""
    rng = np.random.default_rng(6)
    cells = {(x, 0): rng.integers(40, 230, (20, 20, 3)).astype(np.float32) for x in range(4)}
    table = np.full((20, 20, 3), 200.0, np.float32)
    pairs = [(c, _bgr_look(pic), _bgr_look(pic * 0.65)) for c, pic in cells.items()]
    pairs.append(((4, 0), _bgr_look(table), _bgr_look(cells[(0, 0)] * 0.65)))  # a new tile
    gains = shade_gains(pairs, threshold=20)
    assert set(gains) == set(cells)
    assert all(abs(g - 0.65) < 0.05 for g in gains.values())


def test_the_shadow_reaches_the_cells_it_could_not_be_measured_on():
    gains = {(0, 0): 0.6, (1, 0): 0.62, (5, 0): 0.95}
    field = shade_field(gains, [(x, 0) for x in range(9)])
    assert abs(field[(2, 0)] - 0.62) < 1e-6  # a new tile next to the shadowed ones
    assert field[(4, 0)] == 0.95 and field[(8, 0)] == 1.0  # nothing measured near: no shadow


def test_a_board_in_shadow_is_read_as_in_the_light():
    rng = np.random.default_rng(7)
    image = rng.integers(40, 200, (48, 96, 3)).astype(np.uint8)
    board = Board(image, (0, 0, 1, 0), 48)
    shadowed = Board((image * np.float32(0.7)).astype(np.uint8), board.window, 48)
    restored = unshaded(shadowed, {(0, 0): 0.7, (1, 0): 0.7})
    assert np.abs(restored.image.astype(int) - image).mean() < 1.5
