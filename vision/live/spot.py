"""The drawn-tile spot: a place on the table beside the board where the player puts the tile
just drawn, face up, before laying it. The camera reads its type there, so that the page can
show where it fits and what it would score while the player thinks.

The spot is a grid cell (the start tile is cell ``(0, 0)``, as everywhere in the live loop) chosen
at set-up (``--drawn-spot X,Y``, or marked in the calibration profile). A tile put down by hand
lies anyhow in it: the spot watches that cell and the eight around it, finds the tile there
against the spot's empty look (a square of tile size that differs from the table), and cuts it
out, turned square, for the scorer. Which way the tile lies does not matter: the player has not
chosen yet, so every rotation of every type left in the bag is an option, and the best rotation
speaks for its type. The tracker keeps these cells out of the board's diff while the spot lies
off the board and its frontier.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rectify import Board, Window

CHANGED = 14.0  # lighter than the empty spot by this (Lab L, 8 bit), or half as far in colour
DARKER = 40.0  # or darker by this: more than a shadow (a green field on a white table)
SIDE = (0.6, 1.8)  # a tile's side in cells (wide: a grid found on the start tile alone is
# least sure far from it, where a spot lies; a hand or a heap of tiles is larger)
FILLED = 0.75  # share of its rotated square that the changed pixels fill: a square thing
INNER = 0.92  # of the square found, the printed face (the rest: the cardboard's edge)


@dataclass
class DrawnTileSpot:
    cell: tuple[int, int]
    empty: np.ndarray | None = None  # the spot's Lab picture with nothing on it
    table: np.ndarray | None = None  # the table's colour there (BGR median of the empty spot)

    @property
    def window(self) -> Window:
        x, y = self.cell
        return (x - 1, y - 1, x + 1, y + 1)

    @property
    def cells(self) -> set[tuple[int, int]]:
        x, y = self.cell
        return {(x + dx, y + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)}

    def free(self, board) -> bool:
        """Whether the spot lies apart from an engine ``board``'s tiles and the cells a tile
        may be laid on: once the board grows into it, a tile there is a turn, not the drawn
        tile (the camera stops reading the spot, and the page stops showing it)."""
        return not (self.cells & (board.tiles.keys() | board.frontier.keys()))

    def look(self, region: Board) -> np.ndarray | None:
        """The tile lying on the spot in ``region`` (the spot's window, cut from a settled
        view) as a square picture of one cell, or None when the spot holds no tile. The first
        view seen is taken as the spot empty, as is every later view that shows nothing on it
        (the light drifts over an evening)."""
        import cv2

        lab = cv2.cvtColor(region.image, cv2.COLOR_BGR2LAB).astype(np.float32)
        if self.empty is None or self.empty.shape != lab.shape:
            self._empty(region, lab)
            return None
        # a tile is lighter than the table, of another colour or much darker; its shadow only
        # a little darker
        diff = lab - self.empty
        changed = (
            (diff[..., 0] > CHANGED)
            | (diff[..., 0] < -DARKER)
            | (np.hypot(diff[..., 1], diff[..., 2]) > CHANGED / 2)
        ).astype(np.uint8)
        changed = cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        changed = cv2.morphologyEx(changed, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
        contours, _ = cv2.findContours(changed, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            self._empty(region, lab)
            return None
        contour = max(contours, key=cv2.contourArea)
        (cx, cy), (w, h), angle = cv2.minAreaRect(contour)
        p = region.cell_px
        if not SIDE[0] * p <= min(w, h) <= max(w, h) <= SIDE[1] * p:
            return None  # something else lies there (a hand, a cup, a heap of tiles)
        if cv2.contourArea(cv2.convexHull(contour)) < FILLED * w * h:
            return None
        # inside the cardboard's dark edge and its shadow, as a board cell shows a tile
        inner = (w * INNER, h * INNER)
        corners = cv2.boxPoints(((cx, cy), inner, angle)).astype(np.float32)
        if _clockwise_area(corners) < 0:  # keep the picture unmirrored
            corners = corners[::-1].copy()
        square = np.float32([[0, 0], [p, 0], [p, p], [0, p]])
        warp = cv2.getPerspectiveTransform(corners, square)
        return cv2.warpPerspective(region.image, warp, (p, p), flags=cv2.INTER_LINEAR)

    def _empty(self, region: Board, lab: np.ndarray) -> None:
        self.empty = lab
        self.table = np.median(region.image.reshape(-1, 3), axis=0)


def parse_spot(text: str) -> tuple[int, int]:
    """``"X,Y"`` (``--drawn-spot``): the spot's grid cell, the start tile being ``0,0``."""
    try:
        x, y = (int(v) for v in text.replace(" ", "").split(","))
    except ValueError:
        raise ValueError(
            f"--drawn-spot must be a cell X,Y (the start tile is 0,0), not {text!r}"
        ) from None
    return x, y


def spot_for(text: str | None, profile: str | None) -> tuple[int, int] | None:
    """The drawn-tile spot to watch: ``--drawn-spot`` when given, else the one a calibration
    profile marks (``meeplecam calibrate --drawn-spot``), else None."""
    if text:
        return parse_spot(text)
    if not profile:
        return None
    from meeplecam.vision.profile import Profile, profile_json

    data = profile_json(profile)
    if data is None:
        return None  # the geometry's loading says what is wrong with the file
    spot = Profile.from_json(data, profile).drawn_spot
    return (spot[0], spot[1]) if spot else None


def _clockwise_area(points: np.ndarray) -> float:
    """Twice the signed area of a polygon, positive when its corners run clockwise on screen
    (y down)."""
    x, y = points[:, 0], points[:, 1]
    return float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def ranked_types(scores: list[float], options) -> list[tuple[str, float]]:
    """Each tile type among ``options`` ((tile, rotation) pairs, scored ``scores``) at its best
    rotation, best first."""
    best: dict[str, float] = {}
    for (tile, _), score in zip(options, scores, strict=True):
        best[tile.id] = max(score, best.get(tile.id, -np.inf))
    return sorted(best.items(), key=lambda item: -item[1])


__all__ = ["DrawnTileSpot", "parse_spot", "ranked_types", "spot_for"]
