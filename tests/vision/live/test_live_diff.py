"""The diff's light model: one change of light, fitted from many cells' looks."""

from __future__ import annotations

import numpy as np

from meeplecam.vision.live.diff import Look, light_change, relit


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
