"""The table scene of one game: table, floor, board layout, score track, and the top-down canvas.

Lengths are table millimetres (``X`` east, ``Y`` south from the table's north-west corner). The
canvas is the table plane drawn top-down at ``scale`` px/mm; canvas pixel ``u`` has its centre at
``X = (u + 0.5) / scale + origin_x``. Tiles keep a small gap and a slight jitter that never makes
two tiles overlap, so every tile's outline is exact ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from meeplecam.engine import Game, Kind

from . import figures
from .art import smooth_noise, tile_art
from .camera import random_camera, random_optics
from .config import bgr, config, uniform
from .geometry import anchors

Cell = tuple[int, int]
# The Gingerbread Man stands a little off the city's follower spot (mm).
GINGER_OFFSET = np.array([4.0, 4.0])


@dataclass(frozen=True)
class MarkerSheets:
    """Printed table-corner markers (what ``meeplecam markers`` prints), one in each table
    corner, paper corner on the table's: ArUco ids 0-3 clockwise from the north-west."""

    dictionary: str  # OpenCV's name of the ArUco dictionary, e.g. "DICT_4X4_50"
    marker_mm: float  # the black square's side
    margin_mm: float  # white paper around it


@dataclass(frozen=True)
class TableState:
    """What lies on the table at one moment."""

    tiles: tuple[tuple[Cell, str, int], ...]  # (cell, tile id, rotation) in the order laid
    followers: tuple[tuple[int, Cell, int], ...]  # (player, cell, segment)
    gingerbread: tuple[Cell, int] | None  # (cell, segment)
    scores: tuple[int, ...]
    event: int  # record turns applied (0: the start tile alone)


@dataclass(frozen=True)
class TilePose:
    centre: tuple[float, float]  # mm
    angle: float  # degrees, clockwise on the table (y south)
    variant: int


class Scene:
    """Everything about one game's table that stays put: layout, camera, light, canvas."""

    def __init__(
        self,
        game: Game,
        seed: int,
        palette: str = "winter",
        size=(1280, 720),
        surface: str | None = None,
        markers: MarkerSheets | None = None,
    ):
        self.game = game
        self.markers = markers
        self.palette = palette
        self.surface = surface  # wood, cloth or white; None: wood or cloth at random
        self.size = (int(size[0]), int(size[1]))
        self.rng = np.random.default_rng(seed)
        cfg = config()
        sc = cfg["scale"]
        rng = self.rng
        self.tile_mm = float(sc["tile_mm"])
        self.gap = uniform(rng, sc["gap_mm"])
        self.pitch = self.tile_mm + self.gap
        cells = list(game.board.tiles)
        xs = [c[0] for c in cells]
        ys = [c[1] for c in cells]
        margin = cfg["table"]["margin_mm"]
        track = cfg["score_track"]
        board_w = (max(xs) - min(xs) + 1) * self.pitch
        board_d = (max(ys) - min(ys) + 1) * self.pitch
        self.table_w = max(
            uniform(rng, cfg["table"]["width_mm"]), board_w + track["width_mm"] + 3 * margin
        )
        self.table_d = max(
            uniform(rng, cfg["table"]["depth_mm"]), max(board_d, track["depth_mm"]) + 2 * margin
        )
        track_left = rng.random() < 0.5
        free_w = self.table_w - board_w - track["width_mm"] - 3 * margin
        bx = (
            margin
            + (track["width_mm"] + margin if track_left else 0)
            + rng.uniform(0, max(free_w, 0.0))
        )
        by = margin + rng.uniform(0, max(self.table_d - 2 * margin - board_d, 0.0))
        # Centre of cell (0, 0).
        self.origin = (bx + (0 - min(xs) + 0.5) * self.pitch, by + (0 - min(ys) + 0.5) * self.pitch)
        tx = margin if track_left else self.table_w - margin - track["width_mm"]
        ty = margin + rng.uniform(0, max(self.table_d - 2 * margin - track["depth_mm"], 0.0))
        self.track = (tx, ty, track["width_mm"], track["depth_mm"])
        self.poses = self._poses(game, sc)
        self.camera = random_camera(rng, (self.table_w, self.table_d), self.size)
        self.optics = random_optics(rng, self.size)
        self.shadow_mm = np.array(self.optics.light_dir) * 1.0
        near = max(self.camera.px_per_mm(p) for p in self.table_corners_mm())
        lo, hi = sc["canvas_px_per_mm"]
        self.scale = float(np.clip(near * sc["canvas_oversample"], lo, hi))
        fm = cfg["table"]["floor_margin_mm"]
        x0, y0, x1, y1 = self.camera.visible_table_area()
        x0, y0 = max(min(x0, 0) - 20, -fm - self.table_w), max(min(y0, 0) - 20, -fm - self.table_d)
        x1, y1 = (
            min(max(x1, self.table_w) + 20, 2 * self.table_w + fm),
            min(max(y1, self.table_d) + 20, 2 * self.table_d + fm),
        )
        self.canvas_origin = (float(x0), float(y0))
        self.canvas_size = (
            int(np.ceil((x1 - x0) * self.scale)),
            int(np.ceil((y1 - y0) * self.scale)),
        )
        self.tile_px = round(self.tile_mm * self.scale)
        self.colours = [
            bgr(cfg["followers"]["colours"].get(p.colour, "#808080")) for p in game.players
        ]
        self._base = None
        self._tiles_canvas = None
        self._occupied = None  # coverage (0..255) of the tiles drawn so far
        self._tiles_drawn: tuple = ()

    # --- layout -----------------------------------------------------------------------------------
    def _poses(self, game: Game, sc) -> dict[Cell, TilePose]:
        rng = self.rng
        seen: dict[str, int] = {}
        animal_copy = {
            tid: int(rng.integers(max(1, t.count))) for tid, t in game.tileset.types.items()
        }
        poses = {}
        budget = 0.45 * self.gap
        order = [game.start_turn.cell] + [e.cell for e in game.log if hasattr(e, "cell")]
        for cell in order:
            placed = game.board.tiles[cell]
            tid = placed.tile.id
            copy = seen.get(tid, 0)
            seen[tid] = copy + 1
            angle = float(np.clip(rng.normal(0, sc["jitter_deg"]), -1.5, 1.5))
            turn = abs(np.deg2rad(angle)) * self.tile_mm / np.sqrt(2)
            if turn > 0.7 * budget:
                angle *= 0.7 * budget / turn
                turn = 0.7 * budget
            off = rng.normal(0, sc["jitter_mm"], 2)
            off *= min(1.0, (budget - turn) / (np.abs(off).max() + 1e-9))
            centre = (
                self.origin[0] + cell[0] * self.pitch + off[0],
                self.origin[1] + cell[1] * self.pitch + off[1],
            )
            poses[cell] = TilePose(centre, angle, 1 if copy == animal_copy.get(tid) else 0)
        return poses

    def cell_centre_mm(self, cell: Cell) -> np.ndarray:
        """Where the centre of grid cell ``cell`` lies on the table (no tile's jitter)."""
        return np.array(
            [self.origin[0] + cell[0] * self.pitch, self.origin[1] + cell[1] * self.pitch]
        )

    def drawn_spot(self) -> Cell | None:
        """A grid cell on the table where the players put each drawn tile before laying it:
        its 3 x 3 cells lie on the table, off the score track, and its middle at least three
        cells from every tile the game lays (so the spot never touches the board's frontier); the one nearest the middle of
        the table's south edge, where the players sit. None when the table has no room."""
        cells = list(self.game.board.tiles)
        xs, ys = [c[0] for c in cells], [c[1] for c in cells]
        tx, ty, tw, td = self.track
        best, best_d = None, np.inf
        for x in range(min(xs) - 12, max(xs) + 13):
            for y in range(min(ys) - 12, max(ys) + 13):
                if any(max(abs(x - cx), abs(y - cy)) < 3 for cx, cy in cells):
                    continue
                lo = self.cell_centre_mm((x - 1, y - 1)) - self.pitch / 2
                hi = self.cell_centre_mm((x + 1, y + 1)) + self.pitch / 2
                if (
                    lo[0] < 10
                    or lo[1] < 10
                    or hi[0] > self.table_w - 10
                    or hi[1] > self.table_d - 10
                ):
                    continue
                if lo[0] < tx + tw and hi[0] > tx and lo[1] < ty + td and hi[1] > ty:
                    continue
                d = np.hypot(*(self.cell_centre_mm((x, y)) - (self.table_w / 2, self.table_d)))
                if d < best_d:
                    best, best_d = (x, y), d
        return best

    def table_corners_mm(self) -> np.ndarray:
        return np.array(
            [[0, 0], [self.table_w, 0], [self.table_w, self.table_d], [0, self.table_d]], float
        )

    def local_to_mm(self, cell: Cell, points) -> np.ndarray:
        """Tile-local unit coordinates (x east, y south, [0, 1]², board orientation) -> mm."""
        pose = self.poses[cell]
        p = (np.asarray(points, float).reshape(-1, 2) - 0.5) * self.tile_mm
        a = np.deg2rad(pose.angle)
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        return p @ rot.T + np.asarray(pose.centre)

    def tile_corners_mm(self, cell: Cell) -> np.ndarray:
        """NW, NE, SE, SW corners (board orientation) of the tile at ``cell``."""
        return self.local_to_mm(cell, [(0, 0), (1, 0), (1, 1), (0, 1)])

    def segment_mm(self, cell: Cell, segment: int) -> np.ndarray:
        placed = self.game.board.tiles[cell]
        return self.local_to_mm(cell, [anchors(placed.tile, placed.rotation)[segment]])[0]

    def follower_pose(self, cell: Cell, segment: int) -> str:
        kind = self.game.board.tiles[cell].tile.segments[segment].kind
        return "lying" if kind is Kind.FIELD else "standing"

    def track_square_mm(self, score: int) -> np.ndarray:
        """Centre of square ``score % 50`` of the score track (0 at the north-west corner, clockwise)."""
        x, y, w, d = self.track
        n = score % 50
        sw, sd = w / 16, d / 11
        if n < 16:
            return np.array([x + (n + 0.5) * sw, y + 0.5 * sd])
        if n < 26:
            return np.array([x + w - 0.5 * sw, y + (n - 15 + 0.5) * sd])
        if n < 41:
            return np.array([x + w - (n - 25 + 0.5) * sw, y + d - 0.5 * sd])
        return np.array([x + 0.5 * sw, y + d - (n - 40 + 0.5) * sd])

    def score_marker_mm(self, player: int, score: int) -> np.ndarray:
        """Where ``player``'s scoring figure stands on the track (side by side on one square)."""
        n = len(self.game.players)
        return self.track_square_mm(score) + (player - (n - 1) / 2) * np.array([3.0, 2.0])

    # --- canvas -----------------------------------------------------------------------------------
    def to_canvas(self, mm) -> np.ndarray:
        mm = np.asarray(mm, float)
        return (mm - np.asarray(self.canvas_origin)) * self.scale - 0.5

    def base_canvas(self) -> np.ndarray:
        """Floor, table and score track (cached)."""
        if self._base is None:
            self._base = _draw_base(self)
        return self._base

    def tiles_canvas(self, tiles) -> np.ndarray:
        """The base canvas with ``tiles`` laid (incremental while tiles are only added)."""
        tiles = tuple(tiles)
        if self._tiles_canvas is None or tiles[: len(self._tiles_drawn)] != self._tiles_drawn:
            self._tiles_canvas = self.base_canvas().copy()
            self._occupied = np.zeros(self._tiles_canvas.shape[:2], np.uint8)
            self._tiles_drawn = ()
        for cell, tid, rotation in tiles[len(self._tiles_drawn) :]:
            self._draw_tile(self._tiles_canvas, cell, tid, rotation)
        self._tiles_drawn = tiles
        return self._tiles_canvas

    def _draw_tile(self, canvas, cell, tid, rotation) -> None:
        import cv2

        pose = self.poses[cell]
        tile = self.game.tileset[tid]
        art = tile_art(tile, rotation, self.palette, self.tile_px, pose.variant)
        corners = self.to_canvas(self.tile_corners_mm(cell))
        shift = self.shadow_mm * 1.8 * self.scale
        _blend_poly(
            canvas,
            corners + shift,
            (0, 0, 0),
            0.45 * self.optics.shadow,
            blur=1.2 * self.scale,
            protect=self._occupied,  # a tile's shadow falls on the table, not on its neighbours
        )
        px = self.tile_px
        src = np.array([[-0.5, -0.5], [px - 0.5, -0.5], [px - 0.5, px - 0.5]], np.float32)
        M = cv2.getAffineTransform(src, corners[:3].astype(np.float32))
        box = _box(corners, canvas.shape)
        if box is None:
            return
        x0, y0, x1, y1 = box
        M[:, 2] -= (x0, y0)
        patch = cv2.warpAffine(
            art, M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        cover = coverage(corners - (x0, y0), (y1 - y0, x1 - x0))
        occupied = self._occupied[y0:y1, x0:x1]
        np.maximum(occupied, (cover * 255).astype(np.uint8), out=occupied)
        alpha = cover[..., None]
        roi = canvas[y0:y1, x0:x1]
        bright = 1.0 + 0.035 * np.sin(
            hash(cell) % 1000
        )  # each tile catches the light a little differently
        roi[:] = np.clip(patch * (alpha * bright) + roi * (1 - alpha), 0, 255).astype(np.uint8)

    def canvas(self, state: TableState) -> np.ndarray:
        """The table plane for ``state``: tiles, shadows of standing figures, lying followers."""
        canvas = self.tiles_canvas(state.tiles).copy()
        for player, cell, segment in state.followers:
            base = self.segment_mm(cell, segment)
            if self.follower_pose(cell, segment) == "lying":
                figures.lying_follower(self, canvas, base, self.colours[player], cell, segment)
            else:
                figures.standing_shadow(self, canvas, base, config()["followers"]["height_mm"])
        if state.gingerbread is not None:
            base = self.segment_mm(*state.gingerbread) + GINGER_OFFSET
            figures.standing_shadow(
                self, canvas, base, config()["followers"]["gingerbread_height_mm"]
            )
        for player, total in enumerate(state.scores):
            figures.standing_shadow(self, canvas, self.score_marker_mm(player, total), 16.0)
        return canvas

    def label_canvas(self, state: TableState) -> np.ndarray:
        """int16 canvas of (tile number + 1, segment + 1, kind + 1) per pixel; 0 = none."""
        w, h = self.canvas_size
        canvas = np.zeros((h, w, 3), np.int16)
        for number, (cell, tid, rotation) in enumerate(state.tiles):
            _label_tile(self, canvas, number, cell, tid, rotation)
        return canvas

    def flat_canvas(self, state: TableState) -> tuple[np.ndarray, dict]:
        """A flat-colour canvas: black, one colour per tile, a disc (6 mm radius) under each
        follower's base point; a pixel takes a colour when its centre lies inside. Returns it and
        colour -> what it marks."""
        w, h = self.canvas_size
        canvas = np.zeros((h, w, 3), np.uint8)
        legend = {}
        for i, (cell, _, _) in enumerate(state.tiles):
            colour = (40 + (i * 37) % 200, 30 + (i * 91) % 210, 20 + (i // 6) * 9 % 230)
            legend[colour] = ("tile", cell)
            _fill_exact(canvas, self.to_canvas(self.tile_corners_mm(cell)), colour)
        for j, (_, cell, segment) in enumerate(state.followers):
            colour = (255, 255 - j, 250)
            legend[colour] = ("follower", cell, segment)
            c = self.to_canvas(self.segment_mm(cell, segment))
            _fill_exact(canvas, c, colour, radius=6.0 * self.scale)
        if state.gingerbread is not None:
            colour = (250, 250, 255)
            legend[colour] = ("gingerbread", *state.gingerbread)
            c = self.to_canvas(self.segment_mm(*state.gingerbread) + GINGER_OFFSET)
            _fill_exact(canvas, c, colour, radius=6.0 * self.scale)
        return canvas, legend


def _label_tile(scene: Scene, canvas, number: int, cell, tid, rotation) -> None:
    import cv2

    from .geometry import label_mask

    labels, kinds = label_mask(scene.game.tileset[tid], rotation, scene.tile_px)
    corners = scene.to_canvas(scene.tile_corners_mm(cell))
    x0, y0 = np.maximum(np.floor(corners.min(axis=0)).astype(int) - 1, 0)
    x1, y1 = np.minimum(np.ceil(corners.max(axis=0)).astype(int) + 2, canvas.shape[1::-1])
    if x1 <= x0 or y1 <= y0:
        return
    px = scene.tile_px
    src = np.array([[-0.5, -0.5], [px - 0.5, -0.5], [px - 0.5, px - 0.5]], np.float32)
    M = cv2.getAffineTransform(src, (corners[:3] - (x0, y0)).astype(np.float32))
    size = (int(x1 - x0), int(y1 - y0))
    planes = [np.full((px, px), number + 1, np.int16), labels.astype(np.int16) + 1,
              kinds.astype(np.int16) + 1]  # fmt: skip
    inside = coverage(corners - (x0, y0), (size[1], size[0])) >= 0.5
    roi = canvas[y0:y1, x0:x1]
    for c, plane in enumerate(planes):
        warped = cv2.warpAffine(plane, M, size, flags=cv2.INTER_NEAREST,
                                borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
        roi[..., c][inside] = warped[inside]


def _box(poly: np.ndarray, shape) -> tuple[int, int, int, int] | None:
    """The canvas pixels (x0, y0, x1, y1) around a polygon with a pixel to spare, clipped to a
    canvas of ``shape``; None when none of it is on the canvas."""
    x0, y0 = np.floor(poly.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + 2
    x0, y0 = max(int(x0), 0), max(int(y0), 0)
    x1, y1 = min(int(x1), shape[1]), min(int(y1), shape[0])
    return None if x1 <= x0 or y1 <= y0 else (x0, y0, x1, y1)


def coverage(poly, shape) -> np.ndarray:
    """Anti-aliased mask (float32, 0..1) of a convex polygon: each pixel's covered area, from
    the signed distance of its centre to the outline (exact along straight edges; OpenCV's
    anti-aliased fillPoly draws about half a pixel too fat)."""
    pts = np.asarray(poly, float).reshape(-1, 2)
    ys, xs = np.mgrid[0 : shape[0], 0 : shape[1]].astype(np.float32)
    sign = np.sign(np.cross(np.append(pts[1] - pts[0], 0), np.append(pts[2] - pts[1], 0))[2])
    inside = np.full(shape, np.inf, np.float32)
    for a, b in zip(pts, np.roll(pts, -1, axis=0), strict=True):
        n = np.hypot(*(b - a))
        d = sign * ((b[0] - a[0]) * (ys - a[1]) - (b[1] - a[1]) * (xs - a[0])) / n
        np.minimum(inside, d, out=inside)
    return np.clip(inside + 0.5, 0.0, 1.0)


def _fill_exact(canvas, shape, colour, radius: float | None = None) -> None:
    """Colour the pixels whose centres lie inside a convex polygon (or a disc around a point)."""
    pts = np.asarray(shape, float).reshape(-1, 2)
    pad = radius or 0.0
    x0, y0 = np.floor(pts.min(axis=0) - pad).astype(int)
    x1, y1 = np.ceil(pts.max(axis=0) + pad).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, canvas.shape[1]), min(y1, canvas.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(float)
    if radius is not None:
        inside = (xs - pts[0, 0]) ** 2 + (ys - pts[0, 1]) ** 2 <= radius**2
    else:
        inside = np.ones(xs.shape, bool)
        sign = np.sign(np.cross(np.append(pts[1] - pts[0], 0), np.append(pts[2] - pts[1], 0))[2])
        for a, b in zip(pts, np.roll(pts, -1, axis=0), strict=True):
            inside &= sign * ((b[0] - a[0]) * (ys - a[1]) - (b[1] - a[1]) * (xs - a[0])) >= 0
    canvas[y0:y1, x0:x1][inside] = colour


def _blend_poly(canvas, poly, colour, alpha, blur=0.0, protect=None) -> None:
    """Blend ``colour`` into ``canvas`` over a (blurred) polygon; not where ``protect`` (uint8
    coverage of things standing as high, e.g. other tiles for a tile's shadow) is set."""
    import cv2

    x0, y0 = np.floor(poly.min(axis=0)).astype(int) - int(3 * blur) - 2
    x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + int(3 * blur) + 3
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, canvas.shape[1]), min(y1, canvas.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.float32)
    cv2.fillPoly(
        mask, [np.round((poly - (x0, y0)) * 16).astype(np.int32)], 1.0, cv2.LINE_AA, shift=4
    )
    if blur > 0.3:
        mask = cv2.GaussianBlur(mask, (0, 0), blur)
    if protect is not None:
        mask *= 1.0 - protect[y0:y1, x0:x1].astype(np.float32) / 255
    a = (mask * alpha)[..., None]
    roi = canvas[y0:y1, x0:x1]
    roi[:] = (roi * (1 - a) + np.asarray(colour, np.float32) * a).astype(np.uint8)


def _draw_base(scene: Scene) -> np.ndarray:
    import cv2

    cfg = config()["table"]
    rng = np.random.default_rng(scene.rng.integers(2**31))
    w, h = scene.canvas_size
    w2, h2 = (w + 1) // 2, (h + 1) // 2  # textures are made at half resolution

    def full(img: np.ndarray) -> np.ndarray:
        return cv2.resize(
            np.clip(img, 0, 255).astype(np.uint8), (w, h), interpolation=cv2.INTER_LINEAR
        )

    floor = np.asarray(bgr(cfg["floors"][rng.integers(len(cfg["floors"]))]), np.float32)
    n = smooth_noise(rng, (h2, w2), (8, 8))
    canvas = full(floor * (0.85 + 0.3 * n[..., None]))
    plank = max(8, int(150 * scene.scale))
    canvas[:, ::plank] = (canvas[:, ::plank] * 0.6).astype(np.uint8)
    cloth = rng.random() < cfg["cloth_chance"]
    if scene.surface is not None:
        cloth = scene.surface != "wood"
    surface = "whites" if scene.surface == "white" else "cloths" if cloth else "woods"
    colours = cfg[surface]
    base = np.asarray(bgr(colours[rng.integers(len(colours))]), np.float32)
    if surface == "whites":  # smooth, with a faint mottle
        tex = 0.97 + 0.04 * smooth_noise(rng, (h2, w2), (10, 10))
    elif cloth:
        tex = (
            0.9
            + 0.12 * smooth_noise(rng, (h2, w2), (12, 12))
            + rng.normal(0, 0.03, (h2, w2)).astype(np.float32)
        )
    else:
        grain = smooth_noise(rng, (h2, w2), (90, 4))
        fine = smooth_noise(rng, (h2 // 2, w2 // 8), (160, 6))
        fine = cv2.resize(fine, (w2, h2), interpolation=cv2.INTER_LINEAR)
        rings = np.sin(grain * 40.0) * 0.5 + 0.5
        tex = 0.8 + 0.12 * grain + 0.1 * rings + 0.1 * (fine - 0.5)
    table = full(base * tex[..., None])
    corners = scene.to_canvas(scene.table_corners_mm())
    mask = np.zeros((h, w), np.uint8)
    radius = uniform(rng, cfg["corner_radius_mm"]) * scene.scale
    _rounded_rect(mask, corners, radius)
    edge = np.zeros((h, w), np.uint8)
    south = corners + np.array([0.0, cfg["edge_mm"] * scene.scale * 0.6])
    _rounded_rect(edge, south, radius)
    canvas[edge > 0] = (base * 0.45).astype(np.uint8)
    soft = cv2.GaussianBlur(mask.astype(np.float32) / 255, (0, 0), 0.6)
    canvas = cv2.blendLinear(canvas, table, 1 - soft, soft)
    _draw_track(scene, canvas)
    if scene.markers is not None:
        _draw_corner_markers(scene, canvas, rng)
    return canvas


def _draw_corner_markers(scene: Scene, canvas, rng: np.random.Generator) -> None:
    """The printed corner markers (:class:`MarkerSheets`) in the table's corners, each sheet
    laid a little askew (up to 2 degrees) about its corner, as a hand lays it."""
    import cv2

    spec = scene.markers
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, spec.dictionary))
    modules = dictionary.markerSize + 2  # with the black border
    module_mm = spec.marker_mm / modules
    sheet_mm = spec.marker_mm + 2 * spec.margin_mm
    paper = np.asarray(bgr(config()["table"]["paper"]), np.float32)
    ink = paper * 0.12
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    for marker_id, corner in enumerate(scene.table_corners_mm()):
        # the north-west sheet turned a quarter clockwise per corner: never mirrored
        a = np.deg2rad(90.0 * marker_id + rng.uniform(-2.0, 2.0))
        turn = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])

        def to_canvas(local_mm, turn=turn, corner=corner):
            return scene.to_canvas(np.asarray(local_mm) @ turn.T + corner)

        outline = to_canvas(square * sheet_mm)
        box = _box(outline, canvas.shape)
        if box is None:
            continue
        x0, y0, x1, y1 = box
        shape, at = (y1 - y0, x1 - x0), np.array([x0, y0], float)
        sheet = coverage(outline - at, shape)
        black = np.zeros(shape, np.float32)
        bits = cv2.aruco.generateImageMarker(dictionary, marker_id, modules, borderBits=1)
        for row, col in zip(*np.nonzero(bits < 128), strict=True):
            cell = (square + np.array([col, row])) * module_mm + spec.margin_mm
            black += coverage(to_canvas(cell) - at, shape)
        colour = paper + (ink - paper) * np.clip(black, 0, 1)[..., None]
        roi = canvas[y0:y1, x0:x1].astype(np.float32)
        alpha = sheet[..., None]
        canvas[y0:y1, x0:x1] = np.clip(colour * alpha + roi * (1 - alpha), 0, 255).astype(np.uint8)


def _rounded_rect(mask, corners, radius) -> None:
    import cv2

    (x0, y0), (x1, y1) = corners[0], corners[2]
    r = float(min(radius, (x1 - x0) / 4, (y1 - y0) / 4))
    pts = []
    for cx, cy, a0 in (
        (x1 - r, y0 + r, -90),
        (x1 - r, y1 - r, 0),
        (x0 + r, y1 - r, 90),
        (x0 + r, y0 + r, 180),
    ):
        for a in np.deg2rad(np.linspace(a0, a0 + 90, 8)):
            pts.append((cx + r * np.cos(a), cy + r * np.sin(a)))
    cv2.fillPoly(mask, [np.round(np.array(pts) * 16).astype(np.int32)], 255, cv2.LINE_8, shift=4)


def _draw_track(scene: Scene, canvas) -> None:
    import cv2

    cfg = config()["score_track"]
    x, y, w, d = scene.track
    c = scene.to_canvas([[x, y], [x + w, y + d]])
    p0, p1 = tuple(np.round(c[0]).astype(int)), tuple(np.round(c[1]).astype(int))
    cv2.rectangle(canvas, (p0[0] + 3, p0[1] + 4), (p1[0] + 3, p1[1] + 4), (30, 30, 30), -1)
    cv2.rectangle(canvas, p0, p1, bgr(cfg["colour"]), -1)
    sw, sd = w / 16 * scene.scale, d / 11 * scene.scale
    inner = (
        (int(p0[0] + sw * 1.3), int(p0[1] + sd * 1.3)),
        (int(p1[0] - sw * 1.3), int(p1[1] - sd * 1.3)),
    )
    field = tile_art(
        scene.game.tileset["D"], 0, scene.palette, max(8, inner[1][0] - inner[0][0]), 0
    )
    fh = min(field.shape[0], inner[1][1] - inner[0][1])
    canvas[inner[0][1] : inner[0][1] + fh, inner[0][0] : inner[0][0] + field.shape[1]] = field[:fh]
    for n in range(50):
        cx, cy = scene.to_canvas(scene.track_square_mm(n))
        a = (int(cx - sw / 2 + 1), int(cy - sd / 2 + 1))
        b = (int(cx + sw / 2 - 1), int(cy + sd / 2 - 1))
        cv2.rectangle(canvas, a, b, bgr(cfg["square"]), -1)
        cv2.rectangle(canvas, a, b, bgr(cfg["line"]), 1)
        fs = max(0.2, sd / 60)
        cv2.putText(
            canvas,
            str(n),
            (a[0] + 1, b[1] - 2),
            cv2.FONT_HERSHEY_SIMPLEX,
            fs,
            bgr(cfg["line"]),
            1,
            cv2.LINE_AA,
        )
