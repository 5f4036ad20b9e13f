"""This copy's tile appearance from photos of tiles laid in rows in a given order, or of a whole set.

The user lays tiles north up (the tile's top towards the far side of the table), a finger's width
apart, in rows read like text (left to right, rows from the far side to the near side), and lists
their letters in that order (``--tiles-order D,A,B,...``). Each tile is found, its corners refined,
cut out north up and handed to the vision layer's appearance model, the same way
``vision.model.build_from_folder`` treats a scan (so both make the same kind of template).

With ``--tiles-order whole-set`` the photos (or scanner sheets of tiles on white paper) hold the
whole set instead, each tile once, in no order and at any rotation: letters and rotations are read
by the art-free model and chosen jointly so that each letter is used as often as the set holds it.
"""

from __future__ import annotations

import cv2
import numpy as np

from meeplecam.vision.edges import refine_quad
from meeplecam.vision.table import side_lengths

from .errors import CalibrationError
from .scale import find_tiles
from .surface import segment


def rows_order(quads: list[np.ndarray]) -> list[np.ndarray]:
    """Quads in reading order: grouped into rows by their centres' y, each row left to right."""
    centres = np.array([q.mean(axis=0) for q in quads])
    side = float(np.median([np.linalg.norm(q[1] - q[0]) for q in quads]))
    order = np.argsort(centres[:, 1])
    rows: list[list[int]] = []
    for i in order:
        if rows and abs(centres[i, 1] - np.mean([centres[j, 1] for j in rows[-1]])) < 0.5 * side:
            rows[-1].append(int(i))
        else:
            rows.append([int(i)])
    return [quads[i] for row in rows for i in sorted(row, key=lambda j: centres[j, 0])]


def crops(frame: np.ndarray, size: int = 96) -> list[np.ndarray]:
    """Every tile lying on the table, cut out north up at ``size`` pixels, in reading order."""
    surface = segment(frame)
    quads = []
    for q in find_tiles(frame, surface):
        side = float(np.mean(side_lengths(q)))
        quads.append(refine_quad(frame, q, band=max(3.0, 0.11 * side), lens_k=surface.lens_k))
    out = []
    dst = np.float32([[0, 0], [size, 0], [size, size], [0, size]])
    for q in rows_order(quads):
        m = cv2.getPerspectiveTransform(np.float32(q), dst)
        out.append(cv2.warpPerspective(frame, m, (size, size), flags=cv2.INTER_AREA))
    return out


def appearance_from_rows(frame, order: list[str], tileset, inset: float = 0.04):
    """The vision layer's appearance model from a photo of tiles in rows (letters in ``order``),
    or from several (a list of images; the letters run on from one photo to the next).

    ``order == ["whole-set"]``: the photos (or scanner sheets) hold the whole set, each tile
    once, in no order and at any rotation; see :func:`appearance_from_whole_set`.
    """
    from meeplecam.vision.model import AppearanceModel, features
    from meeplecam.vision.terrain import balance, white_gains

    frames = list(frame) if isinstance(frame, (list, tuple)) else [frame]
    if [o.lower() for o in order] == [WHOLE_SET]:
        return appearance_from_whole_set(frames, tileset, inset)[0]
    pieces = pieces_of(frames)
    if len(pieces) != len(order):
        raise CalibrationError(
            f"{len(pieces)} tiles found in the photo but {len(order)} letters given: lay the tiles "
            "a finger's width apart, in rows, all in view"
        )
    model = AppearanceModel(tileset.name)
    for img, tile_id in zip(pieces, order, strict=True):
        if tile_id not in tileset:
            raise CalibrationError(f"tile {tile_id!r} is not in tile set {tileset.name}")
        h, w = img.shape[:2]
        a, b = int(inset * h), int(inset * w)
        img = img[a : h - a, b : w - b]
        img = balance(img, white_gains(img))
        model.templates.setdefault(tile_id, []).append(features(img, model.size))
    return model


# --- A whole set, in no order: the letters come from the set's counts --------------------------

WHOLE_SET = "whole-set"  # the --tiles-order value that asks for this


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each run of true values."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def on_light_background(frame: np.ndarray) -> bool:
    """Whether the image's border is mostly white paper (a scan or a sheet), not a table."""
    hsv = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV)
    k = max(2, min(frame.shape[:2]) // 100)
    border = np.concatenate(
        [hsv[:k].reshape(-1, 3), hsv[-k:].reshape(-1, 3), hsv[:, :k].reshape(-1, 3)]
    )
    return bool(((border[:, 1] < 40) & (border[:, 2] > 170)).mean() > 0.5)


def sheet_crops(frame: np.ndarray, size: int = 96) -> list[np.ndarray]:
    """Tiles in a grid on white paper (a scanner sheet), cut out as they lie, in reading order.

    Columns and rows are the runs of mostly non-white pixels across the sheet; a run several
    tiles long (tiles touching) is split evenly into square tiles.
    """
    scale = 1000 / max(frame.shape[:2])
    small = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    ink = (hsv[..., 1] > 40) | (hsv[..., 2] < 170)
    xs = [r for r in _runs(ink.mean(axis=0) > 0.5) if r[1] - r[0] > 50]
    ys = [r for r in _runs(ink.mean(axis=1) > 0.5) if r[1] - r[0] > 50]
    if not xs or not ys:
        raise CalibrationError("no tiles found on the sheet: scan them on white, a little apart")
    unit = min(b - a for a, b in xs + ys)

    def split(runs):
        out = []
        for a, b in runs:
            n = max(1, round((b - a) / unit))
            out += [(a + (b - a) * k / n, a + (b - a) * (k + 1) / n) for k in range(n)]
        return out

    dst = np.float32([[0, 0], [size, 0], [size, size], [0, size]])
    out = []
    for y0, y1 in split(ys):
        for x0, x1 in split(xs):
            quad = np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]) / scale
            m = cv2.getPerspectiveTransform(quad, dst)
            out.append(cv2.warpPerspective(frame, m, (size, size), flags=cv2.INTER_AREA))
    return out


def min_cost_assignment(cost: np.ndarray) -> np.ndarray:
    """For an n x m cost matrix (n <= m), the column of each row, all distinct, of least total
    cost (the Hungarian method with potentials, O(n^2 m))."""
    n, m = cost.shape
    if n > m:
        raise ValueError("more rows than columns")
    u, v = np.zeros(n + 1), np.zeros(m + 1)
    match = np.zeros(m + 1, dtype=int)  # column j (1-based) -> row (1-based), 0: free
    for i in range(1, n + 1):
        match[0] = i
        j0 = 0
        minv = np.full(m + 1, np.inf)
        way = np.zeros(m + 1, dtype=int)
        used = np.zeros(m + 1, dtype=bool)
        while match[j0]:
            used[j0] = True
            i0 = match[j0]
            free = ~used[1:]
            cur = cost[i0 - 1] - u[i0] - v[1:]
            better = free & (cur < minv[1:])
            minv[1:][better] = cur[better]
            way[1:][better] = j0
            cand = np.where(free, minv[1:], np.inf)
            j1 = int(np.argmin(cand)) + 1
            delta = cand[j1 - 1]
            u[match[used]] += delta
            v[used] -= delta
            minv[1:][free] -= delta
            j0 = j1
        while j0:
            j1 = way[j0]
            match[j0] = match[j1]
            j0 = j1
    out = np.empty(n, dtype=int)
    for j in range(1, m + 1):
        if match[j]:
            out[match[j] - 1] = j - 1
    return out


def _prepared(img: np.ndarray, px: int, inset: float = 0.04) -> np.ndarray:
    """A crop as the scanner hands it to the classifier: inset, white-balanced, ``px`` square."""
    from meeplecam.vision.terrain import balance, white_gains

    h, w = img.shape[:2]
    a, b = int(inset * h), int(inset * w)
    img = img[a : h - a, b : w - b]
    img = balance(img, white_gains(img))
    return cv2.resize(img, (px, px), interpolation=cv2.INTER_AREA)


def label_whole_set(pieces: list[np.ndarray], tileset, classifier=None) -> list[tuple[str, int]]:
    """(letter, rotation) of each crop, chosen jointly so that no letter is used more often than
    the set holds it (exactly as often when the crops are the whole set).

    Each crop is read by the art-free classifier (geometry and terrain) at every rotation; the
    letters then go to the crops by a least-cost assignment of crops to the set's tile copies
    (cost: minus the log-probability of the letter at its best rotation).
    """
    from meeplecam.vision.tiles import TileClassifier

    copies = [t.id for t in tileset.types.values() for _ in range(t.count)]
    if len(pieces) > len(copies):
        raise CalibrationError(
            f"{len(pieces)} tiles found but the set {tileset.name} has {len(copies)}: is a tile "
            "in two photos?"
        )
    clf = classifier or TileClassifier(tileset, None)
    px = clf.cfg.get("crop_px", 96)
    letters = list(tileset.types)
    logp = np.full((len(pieces), len(letters)), -50.0)
    best_rot = [[0] * len(letters) for _ in pieces]
    for i, img in enumerate(pieces):
        for cand in clf.classify(_prepared(img, px)):  # best first
            k = letters.index(cand.tile)
            if logp[i, k] == -50.0:
                logp[i, k] = max(-50.0, float(np.log(cand.prob + 1e-22)))
                best_rot[i][k] = cand.rotation
    cost = -logp[:, [letters.index(c) for c in copies]]
    cols = min_cost_assignment(cost)
    out = []
    for i, j in enumerate(cols):
        k = letters.index(copies[j])
        out.append((copies[j], best_rot[i][k]))
    return out


def pieces_of(frames: list[np.ndarray]) -> list[np.ndarray]:
    """Every tile in the photos: scanner sheets (white paper) or photos of the table."""
    out = []
    for frame in frames:
        if on_light_background(frame):
            out += sheet_crops(frame)
            continue
        try:
            out += crops(frame)
        except (CalibrationError, cv2.error):  # tiles edge to edge, trimmed to the tiles
            out += sheet_crops(frame)
    return out


def appearance_from_whole_set(frames: list[np.ndarray], tileset, inset: float = 0.04):
    """The vision layer's appearance model from photos or scans of a whole set in no order and at
    any rotation (``--tiles-order whole-set``): letters and rotations come from
    :func:`label_whole_set`. Returns the model and the (letter, rotation) of each tile found."""
    pieces = pieces_of(frames)
    if not pieces:
        raise CalibrationError("no tiles found in the photos")
    labels = label_whole_set(pieces, tileset)
    return model_from_labelled(pieces, labels, tileset, inset), labels


def model_from_labelled(pieces, labels, tileset, inset: float = 0.04):
    """Appearance templates from crops as they lie and their (letter, rotation)."""
    from meeplecam.vision.model import AppearanceModel, features, rotate_cw
    from meeplecam.vision.terrain import balance, white_gains

    model = AppearanceModel(tileset.name)
    for img, (tile_id, rotation) in zip(pieces, labels, strict=True):
        h, w = img.shape[:2]
        a, b = int(inset * h), int(inset * w)
        img = img[a : h - a, b : w - b]
        img = balance(img, white_gains(img))
        canonical = rotate_cw(img, -rotation % 360)
        model.templates.setdefault(tile_id, []).append(features(canonical, model.size))
    return model
