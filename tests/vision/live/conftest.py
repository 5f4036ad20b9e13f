"""Fixtures of the live-loop tests: a small drawn game (cheap, deterministic)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def drawn_game():
    from meeplecam.vision.live.drawn import DrawnConfig, DrawnGame

    return DrawnGame(seed=5, max_turns=12, config=DrawnConfig(frame_size=(960, 540)))


@pytest.fixture(scope="session")
def drawn_frames(drawn_game):
    return [frame for frame, _ in drawn_game.frames()]


@pytest.fixture(scope="session")
def art_cell():
    """``art_cell(tile_id, rotation, palette, seed=0)``: a 48 px top-down cell of the winter set's
    tile art as the live loop cuts it: the tile with a thin gap of wooden table around it,
    softened like a camera and with sensor noise."""
    import cv2
    import numpy as np

    from meeplecam.engine import find_tileset
    from meeplecam.vision.synth import art

    tileset = find_tileset("winter")

    def picture(tile_id: str, rotation: int, palette: str, seed: int = 0) -> np.ndarray:
        drawn = art.tile_art(tileset[tile_id], rotation, palette, 46)
        cell = np.full((48, 48, 3), (120, 150, 170), np.uint8)  # wood
        cell[1:47, 1:47] = drawn
        cell = cv2.GaussianBlur(cell, (3, 3), 0.8)
        noise = np.random.default_rng(seed).normal(0, 3, cell.shape)
        return np.clip(cell + noise, 0, 255).astype(np.uint8)

    return picture
