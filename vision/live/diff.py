"""The diff against the known board: how much of each cell changed between two settled views.

A cell's *look* is what the comparison needs of it (blurred Lab colour and the texture of its
lightness, inset from the cell's edges so that a neighbour's slight misregistration does not
count). Looks are computed for the whole top-down board at once (one blur, one colour conversion,
one Laplacian for a settled view instead of three per cell) and the baseline keeps looks, not
pictures, so each settled view costs one pass however many cells the window holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .rectify import Board

Cell = tuple[int, int]


@dataclass(frozen=True)
class Look:
    lab: np.ndarray  # blurred Lab, uint8, inset
    texture: np.ndarray  # mean |Laplacian| of the blurred lightness per quadrant of the inset


@dataclass(frozen=True)
class CellChange:
    fraction: float  # part of the cell whose colour changed
    spread: bool  # changed in every quadrant: a tile's art rather than a follower's spill
    texture_ratio: (
        float  # how much busier (or calmer) the cell became, in its least-changed quadrant
    )


def board_looks(board: Board, inset: float) -> dict[Cell, Look]:
    """The look of every cell of ``board``."""
    lab = cv2.cvtColor(cv2.GaussianBlur(board.image, (5, 5), 0), cv2.COLOR_BGR2Lab)
    texture = np.abs(cv2.Laplacian(lab[..., 0], cv2.CV_16S, ksize=3)).astype(np.float32)
    summed = cv2.integral(texture, sdepth=cv2.CV_64F)  # quadrant means in four lookups each
    p = board.cell_px
    d = round(p * inset)
    cells = list(board.cells())
    corners = (np.array(cells) - board.window[:2]) * p + d  # (x, y) of each inset's corner
    looks = {}
    for (x, y), texture_q in zip(cells, _quadrant_means(summed, corners, p - 2 * d), strict=True):
        x0, y0 = (x - board.window[0]) * p + d, (y - board.window[1]) * p + d
        # a copy: the baseline keeps looks from many boards, never whole boards alive
        looks[(x, y)] = Look(lab[y0 : y0 + p - 2 * d, x0 : x0 + p - 2 * d].copy(), texture_q)
    return looks


def _quadrant_means(summed: np.ndarray, corners: np.ndarray, side: int) -> np.ndarray:
    """The mean of a picture in each quadrant (top left, top right, bottom left, bottom right)
    of the ``side`` pixels square at each of ``corners`` (x, y), from its integral image."""
    half = side // 2
    x, y = corners[:, 0], corners[:, 1]
    out = []
    for r0, r1 in ((y, y + half), (y + half, y + side)):
        for c0, c1 in ((x, x + half), (x + half, x + side)):
            total = summed[r1, c1] - summed[r0, c1] - summed[r1, c0] + summed[r0, c0]
            out.append(total / ((r1 - r0) * (c1 - c0)))
    return np.stack(out, axis=1).astype(np.float32)


# blurred lightness (Lab, 0-255) at which the camera clips: a lamp's glare on the table
CLIPPED_L = 250


def changed_pixels(
    before: np.ndarray, now: np.ndarray, threshold: int, glare_threshold: int | None = None
) -> np.ndarray:
    """Where Lab pictures (uint8, ... x 3, any leading shape) differ by more than ``threshold``
    (below 255): lightness counts half (shadows and light drift change it, a new thing changes
    colour). Where both are clipped (``CLIPPED_L``: a white tile laid in a lamp's glare on the
    table) the little colour left differs by ``glare_threshold`` at most, and the camera's
    noise is clipped with it."""
    shape = before.shape
    rows = (-1, shape[-2], 3)  # OpenCV takes pictures, not stacks of them
    before, now = (
        np.ascontiguousarray(before).reshape(rows),
        np.ascontiguousarray(now).reshape(rows),
    )
    light, a, b = cv2.split(cv2.absdiff(before, now))
    summed = cv2.add(cv2.add(light >> 1, a), b)  # saturating
    changed = summed > threshold
    if glare_threshold is not None:
        clipped = cv2.min(before[..., 0], now[..., 0]) >= CLIPPED_L
        changed |= clipped & (summed > glare_threshold)
    return changed.reshape(shape[:-1])


def cell_changes(
    pairs: list[tuple[Look, Look]],
    threshold: int,
    small_change: float,
    glare_threshold: int | None = None,
) -> list[CellChange]:
    """How each cell changed from its ``before`` look to its ``now`` look (all cells at once;
    the thresholds as :func:`changed_pixels`)."""
    if not pairs:
        return []
    changed = changed_pixels(
        np.stack([b.lab for b, _ in pairs]),
        np.stack([n.lab for _, n in pairs]),
        threshold,
        glare_threshold,
    )
    fractions = changed.mean(axis=(1, 2))
    hh, hw = changed.shape[1] // 2, changed.shape[2] // 2
    quadrants = [
        (slice(None), rows, cols)
        for rows in (slice(0, hh), slice(hh, None))
        for cols in (slice(0, hw), slice(hw, None))
    ]
    changed_q = np.stack([changed[q].mean(axis=(1, 2)) for q in quadrants], axis=1)
    # texture: a tile's art is busier than most table tops even where its colour is not; it
    # must be so all over the cell (a follower's spill from a neighbour is local)
    ta = np.stack([b.texture for b, _ in pairs]) + 1.0
    tz = np.stack([n.texture for _, n in pairs]) + 1.0
    ratios = np.maximum(ta / tz, tz / ta).min(axis=1)
    spread = (fractions >= small_change) & (changed_q > small_change / 2).all(axis=1)
    return [
        CellChange(float(f), bool(s), float(r))
        for f, s, r in zip(fractions, spread, ratios, strict=True)
    ]


def light_change(
    pairs: list[tuple[Look, Look]], trim: float = 0.5, fits: float = 6.0
) -> np.ndarray | None:
    """How the light changed between the ``before`` and ``now`` looks of many cells (a lamp
    switched on, the camera's exposure): an affine map of Lab colours (4 x 4, homogeneous)
    fitted to each cell's quartiles, then again to the ``trim`` of cells it fits best (a new
    tile, a hand: changed for another reason than the light) and every other cell it maps
    within ``fits`` (|dL| + |da| + |db|). None with too few cells.

    Most cells of a table are bare, one colour: its best-fitted half alone spans no colour and
    leaves the map free to bend where the tiles' colours lie, which a little noise then does
    (on 30 cells, 24 of them grey, ten tables: the tiles' colours were mapped up to 22 off at a
    noise of 2, under 2 with ``fits``; a warmer lamp on a drawn game whose views were averaged
    over two frames warned that the whole view changed)."""
    if len(pairs) < 8:
        return None
    q = (25, 50, 75)
    before = np.stack([np.percentile(b.lab.reshape(-1, 3), q, axis=0) for b, _ in pairs])
    now = np.stack([np.percentile(n.lab.reshape(-1, 3), q, axis=0) for _, n in pairs])
    x = np.c_[before.reshape(-1, 3), np.ones(before.size // 3)]
    y = now.reshape(-1, 3)
    keep = np.ones(len(x), bool)
    for _ in range(2):
        fit, *_ = np.linalg.lstsq(x[keep], y[keep], rcond=None)
        error = np.abs(x @ fit - y).sum(axis=1).reshape(len(pairs), len(q)).max(axis=1)
        keep = np.repeat(error <= max(np.quantile(error, trim), fits), len(q))
    return np.vstack([fit.T, [0, 0, 0, 1.0]])


def relit(bgr: np.ndarray, light: np.ndarray) -> np.ndarray:
    """A BGR picture with its Lab colours mapped by ``light`` (4 x 4, as from
    :func:`light_change`)."""
    lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float32)
    lab = lab @ light[:3, :3].T.astype(np.float32) + light[:3, 3].astype(np.float32)
    lab = np.clip(lab, 0, 255).astype(np.uint8).reshape(bgr.shape)
    return cv2.cvtColor(lab, cv2.COLOR_Lab2BGR)


def shade_gains(
    pairs: list[tuple[Cell, Look, Look]], threshold: int, changed: float = 0.1
) -> dict[Cell, float]:
    """Per cell whose look is the same but for the light on it (a person's shadow, a lamp's
    pool), how much brighter it is now (``now`` = gain x ``before``, in BGR: light scales
    what the camera sees): the cells where, scaled by their median gain, less than ``changed``
    of the picture still differs by ``threshold`` (as :func:`changed_pixels`) and the grain is
    left in at least three of its quadrants. A tile laid on the table changes too much of its cell for any gain
    to explain it; an arm of the table's colour hides its grain. All cells at once."""
    if not pairs:
        return {}
    shape = pairs[0][1].lab.shape
    pairs = [p for p in pairs if p[1].lab.shape == shape and p[2].lab.shape == shape]
    # every other pixel each way (the looks are blurred), the cells stacked as one picture
    before = np.concatenate([b.lab[::2, ::2] for _, b, _ in pairs])
    now = np.concatenate([n.lab[::2, ::2] for _, _, n in pairs])
    cells, rows = len(pairs), before.shape[0] // len(pairs)
    bgr = cv2.cvtColor(before, cv2.COLOR_Lab2BGR).astype(np.float32)
    b = bgr.sum(axis=2).reshape(cells, -1)
    n = cv2.cvtColor(now, cv2.COLOR_Lab2BGR).astype(np.float32).sum(axis=2).reshape(cells, -1)
    lit = b > 60  # too dark a pixel gives no ratio
    # the median ratio of the lit pixels: the others sorted to the end of each cell's row
    ratio = np.sort(np.where(lit, n / np.maximum(b, 1.0), np.inf), axis=1)
    count = lit.sum(axis=1)
    usable = count >= 0.5 * b.shape[1]
    middle = np.take_along_axis(ratio, np.maximum(count - 1, 0)[:, None] // 2, axis=1)[:, 0]
    gains = np.where(usable, middle, 1.0).astype(np.float32)
    scale = np.repeat(gains, rows)[:, None, None]  # each cell's rows scaled by its gain
    scaled = cv2.cvtColor(np.clip(bgr * scale, 0, 255).astype(np.uint8), cv2.COLOR_BGR2Lab)
    still = changed_pixels(scaled, now, threshold).reshape(cells, -1).mean(axis=1)
    # a shadow scales the grain of what it falls on with its colour (a camera's compression
    # may smooth some of it away in the dark); an arm hides it, all but gone in most of the cell
    grain = np.stack([b.texture for _, b, _ in pairs]) * gains[:, None]
    gone = np.stack([n.texture for _, _, n in pairs]) + 0.25 < grain / 4
    usable &= gone.sum(axis=1) < 2
    return {
        cell: float(g)
        for (cell, _, _), g, ok, s in zip(pairs, gains, usable, still, strict=True)
        if ok and s < changed
    }


def shade_field(gains: dict[Cell, float], cells, reach: int = 1) -> dict[Cell, float]:
    """A gain for each of ``cells``, smooth over the board: the median of the gains measured
    (:func:`shade_gains`) within ``reach`` cells, then twice as far; 1 where none was. A cell
    that changed for another reason (a new tile) takes its neighbours' light."""
    field = {}
    for x, y in cells:
        for r in (reach, 2 * reach):
            near = [
                g
                for dy in range(-r, r + 1)
                for dx in range(-r, r + 1)
                if (g := gains.get((x + dx, y + dy))) is not None
            ]
            if near:
                field[(x, y)] = float(np.median(near))
                break
        else:
            field[(x, y)] = 1.0
    return field


def unshaded(board: Board, field: dict[Cell, float]) -> Board:
    """``board`` with the light ``field`` (cell -> gain, :func:`shade_field`) taken off: each
    pixel divided by the gain, blended between cell centres so no cell edge shows."""
    x0, y0, x1, y1 = board.window
    grid = np.array(
        [[field.get((x, y), 1.0) for x in range(x0, x1 + 1)] for y in range(y0, y1 + 1)],
        np.float32,
    )
    h, w = board.image.shape[:2]
    # each cell's gain at its centre, linear in between (the edge cells' held to the border)
    gain = cv2.resize(grid, (w, h), interpolation=cv2.INTER_LINEAR)
    image = np.clip(board.image / gain[..., None], 0, 255).astype(np.uint8)
    return Board(image, board.window, board.cell_px)


__all__ = [
    "CellChange",
    "Look",
    "board_looks",
    "cell_changes",
    "light_change",
    "relit",
    "shade_field",
    "shade_gains",
    "unshaded",
]
