"""Rectify: camera frame -> top-down board image at a fixed scale.

A :class:`Rectifier` holds one homography from *grid coordinates* to image pixels (the convention
of ``meeplecam.vision.grid.Grid``: cell ``(x, y)`` spans ``[x, x+1] x [y, y+1]``, the start tile is
cell ``(0, 0)``, x east, y south). ``board(frame, window)`` warps a window of cells to an image of
``cell_px`` pixels per cell, north up; ``cell(board, x, y)`` cuts one cell out of it.

Where the homography comes from (in order of preference): a calibration profile, the synthetic
renderer's ground truth beside the frames (:func:`from_truth`), or the still-image table and grid
detection of ``meeplecam.vision`` on the first settled frame (:func:`from_detection`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from meeplecam.engine import Bounds
from meeplecam.vision.table import apply_homography as _apply

# focal lengths (in frame widths) a camera over a table can have: a phone's ultra-wide is
# about 0.4, a webcam 0.6 to 1, a zoomed camera a few; a homography that needs more or less is
# too square-on (or too noisy) to place the camera
MIN_FOCAL, MAX_FOCAL = 0.25, 8.0

Window = tuple[int, int, int, int]  # min_x, min_y, max_x, max_y (inclusive cells)


@dataclass(frozen=True)
class Board:
    """A top-down picture of a window of cells."""

    image: np.ndarray
    window: Window
    cell_px: int

    def cell(self, x: int, y: int, margin: float = 0.0) -> np.ndarray:
        """The picture of cell (x, y), grown by ``margin`` cells on every side (clipped)."""
        p = self.cell_px
        x0, y0 = (x - self.window[0]) * p, (y - self.window[1]) * p
        m = round(margin * p)
        h, w = self.image.shape[:2]
        return self.image[max(0, y0 - m) : min(h, y0 + p + m), max(0, x0 - m) : min(w, x0 + p + m)]

    def contains(self, cell: tuple[int, int]) -> bool:
        x0, y0, x1, y1 = self.window
        return x0 <= cell[0] <= x1 and y0 <= cell[1] <= y1

    def cells(self):
        x0, y0, x1, y1 = self.window
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                yield (x, y)


class Rectifier:
    """Frame -> top-down board image, from a grid-to-image homography."""

    # the table's edge (image px, 4 x 2) where the camera found it with the start tile
    table_edge: np.ndarray | None = None

    def __init__(self, grid_to_image: np.ndarray, cell_px: int = 48, frame_size=None):
        self.grid_to_image = np.asarray(grid_to_image, np.float64).reshape(3, 3)
        self.cell_px = int(cell_px)
        self.frame_size = frame_size  # (w, h) of the frames, when known: clips the window

    def warp_matrix(self, window: Window) -> np.ndarray:
        """Image px -> board px for a window."""
        p = self.cell_px
        board_to_grid = np.array([[1 / p, 0, window[0]], [0, 1 / p, window[1]], [0, 0, 1.0]])
        return np.linalg.inv(self.grid_to_image @ board_to_grid)

    def board(self, frame: np.ndarray, window: Window) -> Board:
        import cv2

        p = self.cell_px
        size = ((window[2] - window[0] + 1) * p, (window[3] - window[1] + 1) * p)
        image = cv2.warpPerspective(
            frame,
            self.warp_matrix(window),
            size,
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(0, 0, 0),
        )
        return Board(image, window, p)

    def visible(self, cell: tuple[int, int]) -> bool:
        """Whether the cell's centre lies inside the frame (when the frame size is known)."""
        if self.frame_size is None:
            return True
        u, v = self.to_image([(cell[0] + 0.5, cell[1] + 0.5)])[0]
        w, h = self.frame_size
        return 0 <= u < w and 0 <= v < h

    def to_image(self, grid_points) -> np.ndarray:
        pts = np.asarray(grid_points, np.float64).reshape(-1, 2)
        h = np.c_[pts, np.ones(len(pts))] @ self.grid_to_image.T
        return h[:, :2] / h[:, 2:3]

    def cell_corners(self, x: int, y: int) -> np.ndarray:
        return self.to_image([(x, y), (x + 1, y), (x + 1, y + 1), (x, y + 1)])

    def shifted(self, dx: int, dy: int) -> Rectifier:
        """The same grid with cell (dx, dy) renamed (0, 0)."""
        t = np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1.0]])
        return Rectifier(self.grid_to_image @ t, self.cell_px, self.frame_size)

    def to_dict(self) -> dict:
        return {"grid_to_image": self.grid_to_image.tolist(), "cell_px": self.cell_px}

    @cached_property
    def camera_foot(self) -> np.ndarray | None:
        return camera_foot(self.grid_to_image, self.frame_size)

    def lean(self, cell: tuple[int, int]) -> tuple[float, float]:
        """The way a standing figure on ``cell`` leans in the top-down picture (a unit vector
        in grid units): away from the point of the table below the camera. Seen from above,
        the figure's top is drawn further out along the ray from the camera. North (0, -1)
        when the camera cannot be placed (frame size unknown, a camera looking straight down)."""
        if self.camera_foot is None:
            return (0.0, -1.0)
        d = np.array([cell[0] + 0.5, cell[1] + 0.5]) - self.camera_foot
        norm = float(np.hypot(*d))
        return (0.0, -1.0) if norm < 1e-6 else (float(d[0] / norm), float(d[1] / norm))


def camera_foot(grid_to_image: np.ndarray, frame_size) -> np.ndarray | None:
    """The point of the table plane below the camera, in grid units, from the plane's
    homography alone: the focal length is the one that makes the grid's two axes
    perpendicular and equally long in space (principal point at the frame's centre, square
    pixels). None when the frame size is unknown or the view is too square-on to tell."""
    if frame_size is None:
        return None
    w, h = frame_size
    centred = np.array([[1, 0, -(w - 1) / 2], [0, 1, -(h - 1) / 2], [0, 0, 1.0]]) @ grid_to_image
    (a1, b1, c1), (a2, b2, c2) = centred[:, 0], centred[:, 1]
    # (a1 a2 + b1 b2) / f^2 + c1 c2 = 0 and (a1^2 + b1^2 - a2^2 - b2^2) / f^2 + c1^2 - c2^2 = 0
    p = np.array([a1 * a2 + b1 * b2, a1**2 + b1**2 - a2**2 - b2**2])
    q = np.array([c1 * c2, c1**2 - c2**2])
    if float(p @ p) < 1e-12:
        return None
    inv_f2 = -float(p @ q) / float(p @ p)
    if inv_f2 <= 0:
        return None
    f = 1 / np.sqrt(inv_f2)
    if not MIN_FOCAL * w <= f <= MAX_FOCAL * w:  # no lens a table is filmed with: noise
        return None
    m = np.diag([1 / f, 1 / f, 1.0]) @ centred  # = scale * [r1 r2 t]
    scale = (np.linalg.norm(m[:, 0]) + np.linalg.norm(m[:, 1])) / 2
    r1, r2, t = m[:, 0] / scale, m[:, 1] / scale, m[:, 2] / scale
    if t[2] < 0:  # the table lies in front of the camera
        r1, r2, t = -r1, -r2, -t
    rot = np.column_stack([r1, r2, np.cross(r1, r2)])
    return (-rot.T @ t)[:2]


class MappedRectifier(Rectifier):
    """A rectifier whose grid -> image mapping is a function (lens distortion included): the
    board is cut with ``remap`` maps computed once per window."""

    _maps: dict

    def board(self, frame: np.ndarray, window: Window) -> Board:
        import cv2

        maps = self._maps.get(window)
        if maps is None:
            p = self.cell_px
            w = (window[2] - window[0] + 1) * p
            h = (window[3] - window[1] + 1) * p
            # the mapping is smooth: project a coarse lattice (every STEP pixels) and
            # interpolate, 64 times fewer lens projections than one per pixel
            step = 8
            cw, ch = w // step + 2, h // step + 2
            xs, ys = np.meshgrid(np.arange(cw) * step + 0.5, np.arange(ch) * step + 0.5)
            grid = np.c_[xs.ravel() / p + window[0], ys.ravel() / p + window[1]]
            img = self.to_image(grid).astype(np.float32)
            cx, cy = img[:, 0].reshape(ch, cw), img[:, 1].reshape(ch, cw)
            full = np.array([[step, 0, 0], [0, step, 0]], np.float32)  # coarse -> full px
            mx = cv2.warpAffine(
                cx, full, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
            )
            my = cv2.warpAffine(
                cy, full, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
            )
            maps = cv2.convertMaps(mx, my, cv2.CV_16SC2)
            self._maps = {window: maps}  # one window at a time: memory stays flat
        image = cv2.remap(frame, maps[0], maps[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        return Board(image, window, self.cell_px)


class ProfileRectifier(MappedRectifier):
    """The table geometry of a calibration profile (``meeplecam.vision.profile``): its
    ``scale`` maps table mm (origin: the start tile's north-west corner) to frame pixels with the
    lens; cells are ``tile_mm + gap_mm`` apart."""

    def __init__(self, scale, frame_size, cell_px: int = 48, gap_mm: float = 0.9):
        self.scale = scale
        pitch = float(scale.tile_mm) + gap_mm
        self.grid_to_mm = np.array([[pitch, 0, -gap_mm / 2], [0, pitch, -gap_mm / 2], [0, 0, 1.0]])
        w, h = frame_size
        hom = np.linalg.inv(np.asarray(scale.to_table(w, h), np.float64))
        super().__init__(hom @ self.grid_to_mm, cell_px, (w, h))
        self._maps = {}

    def to_image(self, grid_points) -> np.ndarray:
        pts = np.asarray(grid_points, np.float64).reshape(-1, 2)
        mm = np.c_[pts, np.ones(len(pts))] @ self.grid_to_mm.T
        w, h = self.frame_size
        return self.scale.to_image_points(mm[:, :2] / mm[:, 2:3], w, h)


def profile_locator(path, cell_px: int = 48):
    """A ``locate`` callback for the tracker: the profile's geometry at the first frame's size;
    also returns the profile's follower colours (BGR by name) for the scorer."""
    from meeplecam.vision import profile as profile_module

    prof = profile_module.load(path)
    if prof.scale is None:
        raise profile_module.ProfileError(f"{path}: the profile has no table scale (calibrate)")
    colours = {}
    if prof.followers is not None:
        for c in prof.followers.colours:
            colours[c.name] = tuple(int(v) for v in profile_module.lab_to_bgr(c.lab))

    def locate(frame: np.ndarray) -> Rectifier:
        h, w = frame.shape[:2]
        rectifier = ProfileRectifier(prof.scale, (w, h), cell_px)
        if prof.table is not None:
            rectifier.table_edge = np.asarray(prof.table.pixels(w, h), np.float64)
        return rectifier

    return locate, colours


class CameraRectifier(MappedRectifier):
    """A rectifier through a calibrated camera with lens distortion: grid -> table mm (affine)
    -> image px by the pinhole model (``K``, ``dist``, ``rvec``, ``tvec``)."""

    def __init__(self, grid_to_mm, camera: dict, cell_px: int = 48, frame_size=None):
        self.grid_to_mm = np.asarray(grid_to_mm, np.float64).reshape(3, 3)
        self.K = np.asarray(camera["K"], np.float64)
        self.dist = np.asarray(camera.get("dist", [0, 0, 0, 0, 0]), np.float64)
        self.rvec = np.asarray(camera["rvec"], np.float64).reshape(3)
        self.tvec = np.asarray(camera["tvec"], np.float64).reshape(3)
        self.camera = camera
        import cv2

        rot = cv2.Rodrigues(self.rvec)[0]
        hom = self.K @ np.column_stack([rot[:, 0], rot[:, 1], self.tvec])
        super().__init__(hom / hom[2, 2] @ self.grid_to_mm, cell_px, frame_size)
        self._maps: dict = {}

    def to_image(self, grid_points) -> np.ndarray:
        import cv2

        pts = np.asarray(grid_points, np.float64).reshape(-1, 2)
        mm = np.c_[pts, np.ones(len(pts))] @ self.grid_to_mm.T
        xyz = np.c_[mm[:, :2] / mm[:, 2:3], np.zeros(len(pts))]
        out, _ = cv2.projectPoints(xyz, self.rvec, self.tvec, self.K, self.dist)
        return out.reshape(-1, 2)

    def shifted(self, dx: int, dy: int) -> CameraRectifier:
        t = np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1.0]])
        return CameraRectifier(self.grid_to_mm @ t, self.camera, self.cell_px, self.frame_size)


def fit_grid_to_mm(tiles: list[dict]) -> np.ndarray:
    """Affine grid -> table mm through the centres of tiles (``x``, ``y``, ``corners_mm``);
    one tile alone gives its own size as the pitch."""
    centres = np.array([np.mean(t["corners_mm"], axis=0) for t in tiles], np.float64)
    cells = np.array([(t["x"] + 0.5, t["y"] + 0.5) for t in tiles], np.float64)
    if len(tiles) >= 3 and len({t["x"] for t in tiles}) > 1 and len({t["y"] for t in tiles}) > 1:
        a = np.c_[cells, np.ones(len(cells))]
        sol, *_ = np.linalg.lstsq(a, centres, rcond=None)
        return np.vstack([sol.T, [0, 0, 1.0]])
    c = np.asarray(tiles[0]["corners_mm"], np.float64)
    ex, ey = c[1] - c[0], c[3] - c[0]
    origin = centres[0] - 0.5 * ex - 0.5 * ey - ex * tiles[0]["x"] - ey * tiles[0]["y"]
    return np.array([[ex[0], ey[0], origin[0]], [ex[1], ey[1], origin[1]], [0, 0, 1.0]])


def from_truth(truth: dict, cell_px: int = 48) -> Rectifier:
    """A rectifier from a ground-truth JSON object. Understood keys (first found wins):

    - ``grid_to_image``: 3x3, grid coordinates -> image px (this package's own fixtures);
    - ``camera`` (``K dist rvec tvec``) and ``tiles[].corners_mm`` (the synthetic renderer's
      truth): the grid is fitted through the tile centres in table mm, lens distortion included;
    - ``tiles``: a list of ``{"x", "y", "corners": [[u, v] x4]}`` (image px, clockwise from the
      north-west corner): a homography is fitted through all tile corners;
    - ``homography`` with ``pitch_mm`` and ``origin_mm`` (the north-west corner of cell (0, 0) in
      table millimetres): ``homography`` maps table millimetres to image px.
    """
    size = truth.get("image_size") or truth.get("frame_size")
    frame_size = tuple(size[:2]) if size else None
    if "grid_to_image" in truth:
        return Rectifier(np.array(truth["grid_to_image"]), cell_px, frame_size)
    tiles = truth.get("tiles")
    camera = truth.get("camera")
    if tiles and camera and all("corners_mm" in t for t in tiles):
        return CameraRectifier(fit_grid_to_mm(tiles), camera, cell_px, frame_size)
    if tiles and all("corners" in t for t in tiles):
        src, dst = [], []
        for t in tiles:
            x, y = t["x"], t["y"]
            src += [(x, y), (x + 1, y), (x + 1, y + 1), (x, y + 1)]
            dst += [tuple(c) for c in t["corners"]]
        return Rectifier(_fit(src, dst), cell_px, frame_size)
    if "homography" in truth and "pitch_mm" in truth:
        pitch = float(truth["pitch_mm"])
        ox, oy = truth.get("origin_mm", (0.0, 0.0))
        grid_to_mm = np.array([[pitch, 0, ox], [0, pitch, oy], [0, 0, 1.0]])
        return Rectifier(np.array(truth["homography"]) @ grid_to_mm, cell_px, frame_size)
    raise KeyError("the truth file holds no grid_to_image, tiles[].corners or homography")


def _fit(src, dst) -> np.ndarray:
    import cv2

    h, _ = cv2.findHomography(np.float32(src), np.float32(dst))
    if h is None:
        raise ValueError("cannot fit a homography through the given corners")
    return h


# Cells are a tile plus the gap between laid tiles apart. One tile alone cannot show the gap; laid
# tiles leave about 1-2 mm (the synthetic renderer 1.7 mm on average), and refine() measures it
# once tiles are down.
GAP_MM = 1.2


def from_detection(frame: np.ndarray, cell_px: int = 48) -> Rectifier:
    """Find the table and the start tile alone on it (``meeplecam.vision.table.find_start_tile``)
    on a frame that shows the start tile, naming the tile's cell (0, 0), its top side north.

    The table's outline (a rectangle: its far-apart corners fix the perspective and, through the
    camera model, its proportions) and the tile (a 45 mm square: it fixes the scale and the grid's
    angle) give the homography. Raises VisionError (``TableNotLocated``, ``NoTiles``) when it
    cannot: a ValueError, so the tracker keeps waiting for a better view.
    """
    from meeplecam.vision import table as table_stage

    found = table_stage.find_start_tile(frame)
    h, w = frame.shape[:2]
    hom = start_tile_homography(found.table, found.corners, (w, h))
    rectifier = Rectifier(hom, cell_px, (w, h))
    rectifier.table_edge = _table_edge(found, (w, h))
    return rectifier


def play_area(rectifier: Rectifier, table_edge, laid, reach: int = 60) -> Bounds | None:
    """The play area in cells: the smallest bounds holding every cell within ``reach`` of the
    start tile that lies on the table (``table_edge``: its corners, image px, 4 x 2) at its
    middle or at one of the four points a quarter of a tile in from its corners, as the grid
    maps them. A tile laid on the table, even hanging half over its edge, then lies in it with
    the edge found a third of a tile off; what the rules forbid is off the table. The bounds
    are a rectangle of cells, so a board laid askew gets the cells around it that fit. None
    when the table is not wholly in view (the frame's border cuts it), when the edge holds no
    cell, reaches ``reach``, or leaves out a tile ``laid`` (cells) as the camera read them: it
    is then no edge of this board."""
    from skimage.measure import points_in_poly

    edge = np.asarray(table_edge, np.float64).reshape(-1, 2)
    if rectifier.frame_size is not None and not _wholly_in_view(edge, rectifier.frame_size):
        return None
    span = np.arange(-reach, reach + 1)
    xs, ys = np.meshgrid(span, span)
    cells = np.c_[xs.ravel(), ys.ravel()]
    offsets = np.array([(0.5, 0.5), (0.25, 0.25), (0.75, 0.25), (0.75, 0.75), (0.25, 0.75)])
    points = rectifier.to_image((cells[:, None, :] + offsets).reshape(-1, 2))
    on_table = points_in_poly(np.nan_to_num(points, nan=-1e9), edge)
    inside = cells[on_table.reshape(len(cells), len(offsets)).any(axis=1)]
    if not len(inside):
        return None
    (x0, y0), (x1, y1) = inside.min(axis=0), inside.max(axis=0)
    if -reach in (x0, y0) or reach in (x1, y1):
        return None  # a table wider than any (a wrong edge)
    bounds = Bounds(int(x0), int(x1), int(y0), int(y1))
    return bounds if all(cell in bounds for cell in laid) else None


def start_tile_homography(table_px, tile_px, size, tile_mm: float = 45.0, gap_mm: float = GAP_MM):
    """Grid -> image homography from the table outline and the start tile's corners (both image
    px, clockwise from the top-left): the tile's top side is north."""
    tile_px = np.asarray(tile_px, np.float64).reshape(4, 2)
    h_unit, sx, sy, aspect = _outline_perspective(table_px, tile_px, size, tile_mm)
    if aspect is None:
        # The outline is no rectangle under a plausible camera (a shadow or the floor cut into
        # it): its perspective would mislead more than it helps. The tile alone, as an affine
        # map (no perspective over the few cells around it), until refine() sees more tiles.
        c = tile_px
        e1 = ((c[1] - c[0]) + (c[2] - c[3])) / 2
        e2 = ((c[3] - c[0]) + (c[2] - c[1])) / 2
        affine = np.array([[e1[0], e2[0], c[0, 0]], [e1[1], e2[1], c[0, 1]], [0, 0, 1.0]])
        # the corners' mean is the tile's centre whatever the affine's skew
        affine[:2, 2] += c.mean(axis=0) - _apply(affine, [(0.5, 0.5)])[0]
        grow = (tile_mm + gap_mm) / tile_mm
        centre = np.array([[grow, 0, 0.5 - 0.5 * grow], [0, grow, 0.5 - 0.5 * grow], [0, 0, 1]])
        return affine @ centre
    # The table's proportions (from its far-apart corners) are surer than those of a 20-60 px
    # tile; the tile's area still gives the scale.
    s = np.sqrt(sx * sy)
    sx, sy = s / np.sqrt(aspect), s * np.sqrt(aspect)
    to_mm = np.diag([1 / sx, 1 / sy, 1.0]) @ h_unit
    q = _apply(to_mm, tile_px)
    centre = q.mean(axis=0)
    # the tile's angle: the mean direction of its four sides, each turned onto the top side's
    angles = []
    for i in range(4):
        d = q[(i + 1) % 4] - q[i]
        angles.append(np.arctan2(d[1], d[0]) - i * np.pi / 2)
    a = np.angle(np.mean(np.exp(1j * np.array(angles))))
    p = tile_mm + gap_mm
    ca, sa = np.cos(a) * p, np.sin(a) * p
    grid_to_mm = np.array(
        [
            [ca, -sa, centre[0] - 0.5 * (ca - sa)],
            [sa, ca, centre[1] - 0.5 * (sa + ca)],
            [0, 0, 1.0],
        ]
    )
    hom = np.linalg.inv(to_mm) @ grid_to_mm
    return hom / hom[2, 2]


def _outline_perspective(table_px, tile_px, size, tile_mm: float = 45.0):
    """(table px -> a 1000-unit square, the tile's units per mm along x and y there, the
    table's aspect): the aspect is None where the outline is no rectangle under a plausible
    camera, or one whose proportions disagree with the tile's."""
    import cv2

    from meeplecam.vision.table import rectangle_aspect, sure_aspect

    table_px = np.asarray(table_px, np.float64).reshape(4, 2)
    unit = np.float32([[0, 0], [1000, 0], [1000, 1000], [0, 1000]])
    h_unit = cv2.getPerspectiveTransform(np.float32(table_px), unit).astype(np.float64)
    c = _apply(h_unit, np.asarray(tile_px, np.float64).reshape(4, 2))
    e1 = ((c[1] - c[0]) + (c[2] - c[3])) / 2
    e2 = ((c[3] - c[0]) + (c[2] - c[1])) / 2
    # a square of side t turned by a under diag(sx, sy): e1 = t (sx cos a, sy sin a),
    # e2 = t (-sx sin a, sy cos a), so |(e1x, e2x)| = t sx and |(e1y, e2y)| = t sy
    sx = np.hypot(e1[0], e2[0]) / tile_mm
    sy = np.hypot(e1[1], e2[1]) / tile_mm
    aspect = rectangle_aspect(table_px, size)
    if aspect is not None and sure_aspect(table_px, size) is None:
        aspect = sy / sx  # the outline tells its perspective but not its proportions: the tile's
    if aspect is None or abs((sy / sx) / aspect - 1) > 0.15:
        return h_unit, sx, sy, None
    return h_unit, sx, sy, aspect


def _table_edge(found, size) -> np.ndarray | None:
    """The table's edge of ``found`` (a ``table.StartTile``) where it is one: the table found,
    not the frame standing in, and an outline the grid's perspective was taken from
    (``_outline_perspective``)."""
    corners = np.asarray(found.table, np.float64).reshape(4, 2)
    if not found.edge_seen or _outline_perspective(corners, found.corners, size)[3] is None:
        return None
    return corners


def _wholly_in_view(corners: np.ndarray, size) -> bool:
    """Whether a table's corners (image px) all lie in a frame of ``size`` (w, h), 1 % of it
    in from its border: a side the border cuts is the frame's, not the table's (and a lens
    model folds points far outside the frame back into it)."""
    w, h = size
    margin = 0.01 * min(w, h)
    return bool((corners >= margin).all() and (corners <= (w - 1 - margin, h - 1 - margin)).all())


class CorrectedRectifier(MappedRectifier):
    """A rectifier with a small grid-side homography correction ``C`` in front of another one
    (which keeps its own mapping, lens distortion included): grid -> C -> base."""

    def __init__(self, base: Rectifier, correction: np.ndarray):
        self.base = base
        self.correction = np.asarray(correction, np.float64).reshape(3, 3)
        super().__init__(base.grid_to_image @ self.correction, base.cell_px, base.frame_size)
        self._maps = {}

    def to_image(self, grid_points) -> np.ndarray:
        return self.base.to_image(_apply(self.correction, grid_points))

    def shifted(self, dx: int, dy: int) -> CorrectedRectifier:
        t = np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1.0]])
        return CorrectedRectifier(self.base, self.correction @ t)


def _corrected(rectifier: Rectifier, correction: np.ndarray) -> Rectifier:
    if type(rectifier) is Rectifier:
        return Rectifier(
            rectifier.grid_to_image @ correction, rectifier.cell_px, rectifier.frame_size
        )
    if isinstance(rectifier, CorrectedRectifier):
        return CorrectedRectifier(rectifier.base, rectifier.correction @ correction)
    return CorrectedRectifier(rectifier, correction)


def _border_samples(cells, per_side: int = 7):
    """Grid points along every side of the given cells (each side once) and their grid normals.
    A side between two laid tiles is their gap; a side facing an empty cell is a tile's edge."""
    ts = np.linspace(0.12, 0.88, per_side)
    pts, nrm = [], []
    sides = set()
    for x, y in cells:
        sides |= {("h", x, y), ("h", x, y + 1), ("v", x, y), ("v", x + 1, y)}
    for kind, x, y in sorted(sides):
        if kind == "h":  # the line y, from x to x+1
            pts += [(x + t, y) for t in ts]
            nrm += [(0.0, 1.0)] * per_side
        else:
            pts += [(x, y + t) for t in ts]
            nrm += [(1.0, 0.0)] * per_side
    return np.asarray(pts, np.float64), np.asarray(nrm, np.float64)


def _image_normals(rect: Rectifier, pts: np.ndarray, nrm: np.ndarray, eps: float = 0.02):
    """Image points and unit image normals of grid points with grid normals."""
    a = rect.to_image(pts)
    b = rect.to_image(pts + eps * nrm[:, ::-1])  # along the side
    d = b - a
    d /= np.linalg.norm(d, axis=1, keepdims=True) + 1e-12
    return a, np.stack([-d[:, 1], d[:, 0]], axis=1)


def border_score(rectifier: Rectifier, frame: np.ndarray, cells) -> float:
    """How well the grid's lines fall on the laid tiles' borders and gaps: the mean colour
    gradient across the predicted side lines, at the lines themselves (higher is better)."""
    from meeplecam.vision.table import edge_image

    return _border_score(rectifier, edge_image(frame), list(cells))


def _border_score(rectifier: Rectifier, img: np.ndarray, cells: list) -> float:
    from meeplecam.vision.table import edge_offsets

    if not cells:
        return 0.0
    pts, nrm = _border_samples(cells)
    base, normals = _image_normals(rectifier, pts, nrm)
    _, strength = edge_offsets(img, base, normals, 0.5)
    return float(np.mean(strength))


# Weight of a shear of the cells in refine's damping: chosen on refit chains with the true cells
# over the 46 evaluation games (none over 8 px off; 0 let game 07015 run to 45 px, 3000 no better)
SHEAR_PRIOR = 1000.0
RIGID_PRIOR = 1e5


@dataclass(frozen=True)
class Refit:
    """A grid re-fitted to the laid tiles' borders: the rectifier (the input itself when the fit
    did not improve) and ``gain``, how much better its lines fall on the borders (the ratio of
    the :func:`border_score` after to before; 1.0 when unchanged)."""

    rectifier: Rectifier
    gain: float = 1.0


def refine(rectifier: Rectifier, frame: np.ndarray, cells, **options) -> Rectifier:
    """The grid re-fitted to the laid tiles' borders (:func:`refit`), or ``rectifier`` itself."""
    return refit(rectifier, frame, cells, **options).rectifier


def refit(
    rectifier: Rectifier,
    frame: np.ndarray,
    cells,
    rounds: int = 4,
    band: float = 0.12,
    min_cells: int = 5,
    rigid_cells: int = 2,
) -> Refit:
    """The grid re-fitted to the borders and gaps of the laid tiles in ``cells`` (grid cells that
    hold a tile in ``frame``): each side of each tile is looked for within ``band`` cells of where
    the grid puts it, and a small homography correction on the grid side (8 parameters, damped
    towards none, robust to the art's own edges by Tukey weights) moves the lines onto them.

    One tile fixes its angle and scale only roughly (a few pixels of error become many cells
    away); every laid tile adds sides far apart. With fewer than ``min_cells`` tiles only a
    similarity is fitted (one scale, one turn, one shift; from ``rigid_cells`` tiles on, fewer
    are left as they are): eight parameters fitted to three or four tiles can lock onto their
    art's roads and walls (a quarter of a cell off on a synthetic game), but the borders
    between the first few tiles fix the scale the start tile alone left a few percent off (2-7
    px four cells away on the 1080p evaluation games). Returns the input unchanged when the fit does
    not improve :func:`border_score` (so it is never worse than the input), else a rectifier of
    the same kind (a lens-mapped one keeps its lens: the correction goes in front of it).

    The tracker calls it after each commit with the cells on the board and re-cuts its baseline
    if the rectifier changed (``fit.rectifier is not self.rectifier``).
    """
    from meeplecam.vision.table import edge_image, edge_offsets

    cells = sorted({(int(c[0]), int(c[1])) for c in cells})
    if len(cells) < rigid_cells or frame is None:
        return Refit(rectifier)
    img = edge_image(frame)
    pts, nrm = _border_samples(cells)
    # normalised grid coordinates around the laid cells: the 8 parameters are of like size
    arr = np.asarray(cells, np.float64) + 0.5
    centre = arr.mean(axis=0)
    spread = max(1.0, float(np.abs(arr - centre).max()) + 0.5)
    norm = np.array(
        [[1 / spread, 0, -centre[0] / spread], [0, 1 / spread, -centre[1] / spread], [0, 0, 1]]
    )
    denorm = np.linalg.inv(norm)
    # a pixel along a normal, in cells: the search band and the robust scale are set in px
    px_per_cell = float(
        np.median(np.linalg.norm(rectifier.to_image(pts + nrm) - rectifier.to_image(pts), axis=1))
    )
    theta = np.zeros(8)
    # damping: perspective terms need sides far apart, one tile's four sides cannot fix them;
    # nor can a few tiles lean the square cells into parallelograms (a shear) unless the
    # borders of many agree: fitted to the art's walls of a few, a shear is the first to give
    damping = np.diag([1, 1, 1, 1, 1, 1, 30, 30]).astype(np.float64)
    shear = np.zeros(8)
    shear[[1, 3]] = 0.5  # x moving with y and y with x alike (a turn moves them oppositely)
    prior = (damping + SHEAR_PRIOR * np.outer(shear, shear)) * (0.5 / len(cells))
    if len(cells) < min_cells:
        # too few tiles for eight parameters: one scale, one turn, one shift (a similarity)
        stretch, turn = np.zeros(8), np.zeros(8)
        stretch[[0, 4]] = 1, -1
        turn[[1, 3]] = 1, 1
        prior = prior + RIGID_PRIOR * (
            np.outer(stretch, stretch) + np.outer(turn, turn) + np.diag([0, 0, 0, 0, 0, 0, 1, 1])
        )

    def correction(th):
        delta = np.array([[1 + th[0], th[1], th[2]], [th[3], 1 + th[4], th[5]], [th[6], th[7], 1]])
        return denorm @ delta @ norm

    current = rectifier
    for r in range(rounds):
        rect = _corrected(rectifier, correction(theta))
        base, normals = _image_normals(rect, pts, nrm)
        search = max(2.0, band * px_per_cell * (0.6**r))
        off, strength = edge_offsets(img, base, normals, search)
        target = base + off[:, None] * normals
        keep = strength > 0.25 * np.median(strength)
        if keep.sum() < 8:
            break

        # Gauss-Newton on the point-to-line distances (numerical Jacobian, 8 parameters)
        def resid(th, target=target, normals=normals, keep=keep):
            proj = _corrected(rectifier, correction(th)).to_image(pts[keep])
            return np.einsum("ij,ij->i", proj - target[keep], normals[keep])

        r0 = resid(theta)
        jac = np.empty((len(r0), 8))
        for k in range(8):
            step = np.zeros(8)
            step[k] = 1e-5
            jac[:, k] = (resid(theta + step) - r0) / 1e-5
        scale = max(0.5, 1.4826 * float(np.median(np.abs(r0))))
        # IRLS with Tukey's biweight (an inner edge of the art is an outlier); the Jacobian is
        # kept: it barely moves over such small steps
        for _ in range(3):
            u = r0 / (4.685 * scale)
            w = np.where(np.abs(u) < 1, (1 - u**2) ** 2, 0.0)
            a = jac.T @ (w[:, None] * jac) + prior * px_per_cell**2
            g = jac.T @ (w * r0) + prior @ theta * px_per_cell**2
            step = -np.linalg.solve(a, g)
            r_new = resid(theta + step)
            scale = max(0.5, 1.4826 * float(np.median(np.abs(r_new))))
            r0, theta = r_new, theta + step
        current = _corrected(rectifier, correction(theta))
    if current is rectifier:
        return Refit(rectifier)
    before = _border_score(rectifier, img, cells)
    after = _border_score(current, img, cells)
    return Refit(current, after / max(before, 1e-9)) if after > before else Refit(rectifier)


def followed(
    rectifier: Rectifier, before: Board, now: Board, min_matches: int = 24
) -> Rectifier | None:
    """The grid carried along when the camera moved (knocked, or its mount settled): ``before``
    is a top-down view cut with ``rectifier`` while it was right, ``now`` one cut with it
    since. The two views' features (ORB: the tiles' corners, roads and gaps, the table's grain)
    are matched, each placed on the grid, and the homography between them is put in front of
    the rectifier (a plane seen by a moved camera moves by a homography, lens aside). None when
    too few features agree (the view changed, not the camera) or the grid did not move."""
    import cv2

    orb = cv2.ORB_create(nfeatures=1000, fastThreshold=10)  # 1000: as sure as 3000, 6x faster

    def features(board: Board):
        grey = cv2.cvtColor(board.image, cv2.COLOR_BGR2GRAY)
        points, descriptors = orb.detectAndCompute(grey, None)
        grid = np.array([p.pt for p in points], np.float64).reshape(-1, 2) / board.cell_px
        return grid + board.window[:2], descriptors

    was, was_desc = features(before)
    seen, seen_desc = features(now)
    if was_desc is None or seen_desc is None or len(was) < min_matches or len(seen) < 2:
        return None
    pairs = cv2.BFMatcher(cv2.NORM_HAMMING).knnMatch(was_desc, seen_desc, k=2)
    good = [m for m, *rest in pairs if rest and m.distance < 0.8 * rest[0].distance]
    if len(good) < min_matches:
        return None
    src = was[[m.queryIdx for m in good]]
    dst = seen[[m.trainIdx for m in good]]
    # inliers within a twentieth of a cell (2-3 px at the board's scale)
    move, inliers = cv2.findHomography(src, dst, cv2.RANSAC, 0.05)
    if move is None or int(inliers.sum()) < min_matches:
        return None
    moved = np.abs(_apply(move, src[inliers.ravel() > 0]) - src[inliers.ravel() > 0]).max()
    if moved * before.cell_px < 1.0:  # under a pixel: the camera did not move
        return None
    return _corrected(rectifier, move)


__all__ = [
    "Board",
    "CameraRectifier",
    "MappedRectifier",
    "ProfileRectifier",
    "Rectifier",
    "Refit",
    "Window",
    "border_score",
    "fit_grid_to_mm",
    "followed",
    "from_detection",
    "from_truth",
    "profile_locator",
    "refine",
    "refit",
    "start_tile_homography",
]
