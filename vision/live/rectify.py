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

import numpy as np

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
    import cv2

    from meeplecam.vision import profile as profile_module

    prof = profile_module.load(path)
    if prof.scale is None:
        raise profile_module.ProfileError(f"{path}: the profile has no table scale (calibrate)")
    colours = {}
    if prof.followers is not None:
        for c in prof.followers.colours:
            lab = np.uint8([[np.clip(c.lab, 0, 255)]])
            colours[c.name] = tuple(int(v) for v in cv2.cvtColor(lab, cv2.COLOR_Lab2BGR)[0, 0])

    def locate(frame: np.ndarray) -> Rectifier:
        h, w = frame.shape[:2]
        return ProfileRectifier(prof.scale, (w, h), cell_px)

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


def from_detection(frame: np.ndarray, cell_px: int = 48) -> Rectifier:
    """Find the table and the grid on a frame that shows the start tile alone (still-image
    detection of ``meeplecam.vision``), naming the tile's cell (0, 0).

    Raises VisionError (``TableNotLocated``, ``GridNotFound``, ``NoTiles``) when it cannot.
    """
    from meeplecam.vision import grid as grid_stage
    from meeplecam.vision import table as table_stage
    from meeplecam.vision.errors import NoTiles

    table = table_stage.detect(frame)
    grid = grid_stage.detect(table)
    if not grid.cells:
        raise NoTiles("no tile found on the first settled frame (the start tile)")
    col, row = max(grid.cells, key=lambda c: grid.cells[c])
    # grid.homography maps grid coordinates to *work* pixels or image pixels; scale to image px.
    h = np.asarray(grid.homography, np.float64)
    scale = getattr(table, "scale", 1.0) or 1.0
    work_to_image = np.diag([1 / scale, 1 / scale, 1.0])
    probe = h @ np.array([col + 0.5, row + 0.5, 1.0])
    u, v = probe[:2] / probe[2]
    fh, fw = frame.shape[:2]
    if u > fw * scale * 1.01 or v > fh * scale * 1.01 or scale == 1.0:
        work_to_image = np.eye(3)
    rect = Rectifier(work_to_image @ h, cell_px, (fw, fh))
    return rect.shifted(col, row)


__all__ = [
    "Board",
    "CameraRectifier",
    "MappedRectifier",
    "ProfileRectifier",
    "Rectifier",
    "Window",
    "fit_grid_to_mm",
    "from_detection",
    "from_truth",
    "profile_locator",
]
