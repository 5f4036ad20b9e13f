"""A small drawn table for tests and benchmarks of the live loop (not the synthetic renderer).

It plays a seeded random game and draws every turn the way a camera would see it, cheaply: tiles
as flat terrain colours with speckles (segment geometry from the engine), followers as coloured
blobs (a standing one leans away from the camera), a table with wood grain, a perspective camera,
sensor noise and a hand that comes in before each tile and leaves after it. ``frames()`` yields
``(frame, truth)``; ``write(folder)`` stores a replay fixture (frames, ``table.json`` with the
grid-to-image homography, ``expected.json`` with the game record).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from meeplecam.engine import Discard, Game, Turn, find_tileset, to_record
from meeplecam.engine.playout import random_game

from .appearance import (
    CITY,
    CLOISTER,
    DEFAULT_COLOURS,
    FIELD,
    PENNANT,
    ROAD,
    VILLAGE,
    anchor_points,
    kind_map,
)

PALETTES = {
    "summer": {
        FIELD: (74, 160, 111),
        ROAD: (192, 220, 230),
        CITY: (106, 164, 201),
        CLOISTER: (184, 207, 217),
        PENNANT: (170, 70, 40),
        VILLAGE: (192, 220, 230),
    },
    "winter": {
        FIELD: (248, 243, 238),
        ROAD: (147, 143, 141),
        CITY: (124, 176, 216),
        CLOISTER: (154, 184, 205),
        PENNANT: (150, 74, 39),
        VILLAGE: (147, 143, 141),
    },
}


@dataclass
class DrawnConfig:
    frame_size: tuple[int, int] = (1280, 720)
    tile_px: int = 44  # on the top-down canvas
    gap_px: int = 2
    canvas: tuple[int, int] = (1500, 1000)
    tilt: float = 0.16  # how much narrower the far edge of the table looks
    noise: float = 3.0
    hand_frames: int = 2
    settled_frames: int = 4
    late_followers: bool = False  # followers laid after their tile has settled alone
    palette: str = "summer"
    jpeg: int = 90


class DrawnGame:
    def __init__(
        self,
        seed: int = 1,
        players: int = 2,
        max_turns: int | None = None,
        tileset: str = "winter",
        config: DrawnConfig | None = None,
        follower_chance: float = 0.5,
    ):
        self.config = cfg = config or DrawnConfig()
        self.rng = np.random.default_rng(seed)
        self.tileset = find_tileset(tileset)
        self.game = random_game(
            self.tileset, players, seed, follower_chance=follower_chance, max_turns=max_turns
        )
        self.colours = [p.colour for p in self.game.players]
        self.pitch = cfg.tile_px + cfg.gap_px
        # a canvas big enough for the whole board, the board centred on it
        cells = [e.cell for e in self.game.log if isinstance(e, Turn)] + [(0, 0)]
        xs, ys = [c[0] for c in cells], [c[1] for c in cells]
        w = max(cfg.canvas[0], (max(xs) - min(xs) + 5) * self.pitch)
        h = max(cfg.canvas[1], (max(ys) - min(ys) + 5) * self.pitch)
        self.size = (w, h)
        mid_x = (max(xs) + min(xs) + 1) / 2 * self.pitch
        mid_y = (max(ys) + min(ys) + 1) / 2 * self.pitch
        self.origin = (int(w / 2 - mid_x), int(h / 2 - mid_y))
        self.canvas = self._table()
        fw, fh = cfg.frame_size
        src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        t = cfg.tilt * fw
        dst = np.float32([[40 + t, 20], [fw - 40 - t, 20], [fw - 20, fh - 15], [20, fh - 15]])
        import cv2

        self.canvas_to_image = cv2.getPerspectiveTransform(src, dst)
        p = self.pitch
        grid_to_canvas = np.array([[p, 0, self.origin[0]], [0, p, self.origin[1]], [0, 0, 1.0]])
        self.grid_to_image = self.canvas_to_image @ grid_to_canvas
        self._art: dict = {}
        self._noise: list[np.ndarray] = []

    # --- drawing ----------------------------------------------------------------------------
    def _table(self) -> np.ndarray:
        import cv2

        w, h = self.size
        base = np.array([90, 120, 160], np.float32) * self.rng.uniform(0.85, 1.1)
        grain = cv2.resize(self.rng.normal(0, 1, (h // 20, 2)).astype(np.float32), (w, h))
        img = base[None, None, :] + 12 * grain[..., None]
        return np.clip(img, 0, 255).astype(np.uint8)

    def _tile_art(self, tile, rotation: int) -> np.ndarray:
        key = (tile.id, rotation)
        art = self._art.get(key)
        if art is None:
            size = self.config.tile_px
            kinds, _ = kind_map(tile, rotation, size)
            pal = PALETTES[self.config.palette]
            lut = np.array([pal[k] for k in sorted(pal)], np.uint8)
            art = lut[kinds].astype(np.int16)
            rng = np.random.default_rng(zlib.crc32(f"{tile.id}/{rotation}".encode()))
            speck = rng.random((size, size)) < 0.06
            art[speck] -= 40
            art = np.clip(art, 0, 255).astype(np.uint8)
            self._art[key] = art
        return art

    def _cell_origin(self, x: int, y: int) -> tuple[int, int]:
        g = self.config.gap_px // 2
        return self.origin[0] + x * self.pitch + g, self.origin[1] + y * self.pitch + g

    def lay(self, canvas: np.ndarray, turn: Turn) -> None:
        art = self._tile_art(self.tileset[turn.tile], turn.rotation)
        x0, y0 = self._cell_origin(turn.x, turn.y)
        s = self.config.tile_px
        canvas[y0 : y0 + s, x0 : x0 + s] = art

    def follower(
        self, canvas: np.ndarray, cell, tile, rotation: int, segment: int, colour: str
    ) -> None:
        import cv2

        ax, ay = anchor_points(tile, rotation)[segment]
        x0, y0 = self._cell_origin(*cell)
        s = self.config.tile_px
        bx, by = int(x0 + ax * s), int(y0 + ay * s)
        bgr = DEFAULT_COLOURS.get(colour, (128, 128, 128))
        dark = tuple(int(c * 0.6) for c in bgr)
        if tile.segments[segment].kind == "field":  # lying
            cv2.ellipse(canvas, (bx, by), (8, 5), 0, 0, 360, bgr, -1)
            cv2.ellipse(canvas, (bx, by), (8, 5), 0, 0, 360, dark, 1)
        else:  # standing: leans north (away from the camera) in the top-down view
            cv2.rectangle(canvas, (bx - 5, by - 14), (bx + 5, by + 2), bgr, -1)
            cv2.circle(canvas, (bx, by - 15), 4, bgr, -1)
            cv2.rectangle(canvas, (bx - 5, by - 14), (bx + 5, by + 2), dark, 1)

    def photo(self, canvas: np.ndarray, hand=None) -> np.ndarray:
        import cv2

        frame = cv2.warpPerspective(
            canvas, self.canvas_to_image, self.config.frame_size, borderValue=(70, 70, 70)
        )
        if hand is not None:
            cx, cy = hand
            fw, fh = self.config.frame_size
            skin = (120, 160, 215)
            cv2.line(frame, (int(cx), int(cy)), (int(cx * 0.7 + fw * 0.15), fh + 50), skin, 70)
            cv2.ellipse(frame, (int(cx), int(cy)), (55, 40), 30, 0, 360, skin, -1)
        if not self._noise:
            # OpenCV's own generator, seeded from the game's: the same game draws the same
            # frames whatever ran before it in the process
            cv2.setRNGSeed(int(self.rng.integers(2**31)))
            for _ in range(5):
                noise = np.empty(frame.shape, np.int16)
                cv2.randn(noise, 0, self.config.noise)
                self._noise.append(noise)
        noise = self._noise[int(self.rng.integers(len(self._noise)))]
        return cv2.add(frame, noise, dtype=cv2.CV_8U)

    # --- the sequence -------------------------------------------------------------------------
    def frames(self) -> Iterator[tuple[np.ndarray, dict]]:
        """Every frame of the game with its truth (``event``: index of the last laid event)."""
        cfg = self.config
        canvas = self.canvas.copy()
        replay = Game.start(self.tileset, self.game.players, self.game.options)
        self.lay(canvas, replay.start_turn)
        truth = {"grid_to_image": self.grid_to_image.tolist(), "event": -1}
        for _ in range(cfg.settled_frames):
            yield self.photo(canvas), truth
        for index, event in enumerate(self.game.log):
            if isinstance(event, Discard):
                replay.apply(event)
                continue
            player = replay.current
            result = replay.apply(event)
            target = self.grid_to_image @ np.array([event.x + 0.5, event.y + 0.5, 1.0])
            tx, ty = target[:2] / target[2]
            for k in range(cfg.hand_frames):
                jitter = self.rng.normal(0, 25, 2)
                yield self.photo(canvas, (tx + jitter[0], ty + 60 - 30 * k + jitter[1])), truth
            self.lay(canvas, event)
            truth = {"grid_to_image": self.grid_to_image.tolist(), "event": index}
            if event.meeple is not None and cfg.late_followers:  # a player thinking it over
                yield self.photo(canvas, (tx + 40, ty + 90)), truth
                for _ in range(cfg.settled_frames):
                    yield self.photo(canvas), truth
                yield self.photo(canvas, (tx + 10, ty + 70)), truth
            if event.meeple is not None:
                tile = self.tileset[event.tile]
                seg = tile.oriented(event.rotation).segment_at(event.meeple)
                self.follower(canvas, event.cell, tile, event.rotation, seg, self.colours[player])
            yield self.photo(canvas, (tx + 40, ty + 90)), truth
            for _ in range(cfg.settled_frames):
                yield self.photo(canvas), truth
            if result.returned:
                for f in result.returned:
                    self.erase_follower(canvas, replay, f)
                yield self.photo(canvas, (tx, ty + 80)), truth
        for _ in range(cfg.settled_frames):
            yield self.photo(canvas), truth

    def erase_follower(self, canvas: np.ndarray, game: Game, follower) -> None:
        """Redraw the follower's tile (and its neighbours' spill) without the follower."""
        placed = game.board.tiles[follower.cell]
        x, y = follower.cell
        self.lay(canvas, Turn(placed.tile.id, x, y, placed.rotation))
        others = [f for f in game.board.followers() if f.cell == follower.cell]
        for f in others:
            self.follower(
                canvas, f.cell, placed.tile, placed.rotation, f.segment, self.colours[f.player]
            )

    def expected(self) -> dict:
        record = to_record(self.game)
        record["turns"] = [t for t in record["turns"] if "discard" not in t]
        return record

    def write(self, folder: str | Path) -> Path:
        import cv2

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for i, (frame, _) in enumerate(self.frames()):
            cv2.imwrite(
                str(folder / f"f{i}.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, self.config.jpeg]
            )
        (folder / "table.json").write_text(
            json.dumps(
                {
                    "grid_to_image": self.grid_to_image.tolist(),
                    "image_size": list(self.config.frame_size),
                }
            )
        )
        (folder / "expected.json").write_text(json.dumps(self.expected(), indent=1))
        return folder


__all__ = ["DrawnConfig", "DrawnGame"]
