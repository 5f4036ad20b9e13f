"""Stage 1: find the table surface and the tiles' silhouette on it.

``detect(image)`` returns a :class:`Table`: the outline (corners clockwise from the one nearest the
image's top-left corner, in image pixels), the working scale and the mask of tile-coloured pixels.
Tiles are saturated (green fields, orange/brown cities); a table surface is usually not (white,
black, grey, wood is darker and less saturated than the tiles' green). The table is the region of
surface colour connected to the tiles, grown by flood fill from the ring around them.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .blank import shows_nothing
from .config import settings, work_width
from .errors import CameraCovered, NoTiles, TableNotLocated


@dataclass
class Table:
    corners: np.ndarray | None  # 4x2 float, image pixels, clockwise from top-left; None = not found
    scale: float  # work image pixels per image pixel
    work: np.ndarray  # the image at working scale (BGR)
    tile_mask: np.ndarray  # uint8 0/1 at working scale: tile-coloured pixels
    surface_mask: np.ndarray  # uint8 0/1 at working scale: the table surface (tiles included)

    def contains(self, points: np.ndarray) -> np.ndarray:
        """Which image points (N x 2) lie on the table (True everywhere when no outline)."""
        if self.corners is None:
            return np.ones(len(points), bool)
        poly = self.corners.astype(np.float32).reshape(-1, 1, 2)
        return np.array(
            [cv2.pointPolygonTest(poly, (float(x), float(y)), False) >= 0 for x, y in points]
        )


def to_work(image: np.ndarray) -> tuple[np.ndarray, float]:
    """The image resized so that its longer side is the working width."""
    scale = work_width() / max(image.shape[:2])
    if scale >= 1:
        return image.copy(), 1.0
    return cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA), scale


def tile_colour_mask(work: np.ndarray, cfg: dict | None = None) -> np.ndarray:
    cfg = cfg or settings("table")
    hsv = cv2.cvtColor(work, cv2.COLOR_BGR2HSV)
    mask = (hsv[..., 1] > cfg["tile_saturation"]) & (hsv[..., 2] > cfg["tile_value"])
    mask = mask.astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))


def order_corners(pts: np.ndarray) -> np.ndarray:
    """Four points clockwise (in image coordinates, y down), starting nearest the top-left."""
    pts = np.asarray(pts, np.float64).reshape(-1, 2)
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])  # clockwise on screen as angle grows
    pts = pts[np.argsort(ang)]
    start = int(np.argmin(np.hypot(pts[:, 0], pts[:, 1])))
    return np.roll(pts, -start, axis=0)


def _quad(contour: np.ndarray, eps: float) -> np.ndarray:
    hull = cv2.convexHull(contour)
    peri = cv2.arcLength(hull, True)
    for k in (eps, eps * 2, eps * 4, eps * 8):
        approx = cv2.approxPolyDP(hull, k * peri, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float64)
    rect = cv2.minAreaRect(hull)
    return cv2.boxPoints(rect).astype(np.float64)


def something_in_view(image: np.ndarray) -> None:
    """Raises :class:`CameraCovered` where ``image`` (BGR or grey) shows nothing at all."""
    if shows_nothing(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image):
        raise CameraCovered(
            "the picture shows nothing (black, or one flat colour): is the camera covered, or "
            "its lens cap on?"
        )


def detect(image: np.ndarray) -> Table:
    """Find the table and the tiles on it; raises :class:`CameraCovered` for a picture of
    nothing and :class:`NoTiles` for an empty table."""
    cfg = settings("table")
    work, scale = to_work(image)
    something_in_view(work)
    h, w = work.shape[:2]
    mask = tile_colour_mask(work, cfg)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    if n <= 1:
        raise NoTiles("no tiles on the table: nothing tile-coloured (green or brown) in the image")
    big = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    if stats[big, cv2.CC_STAT_AREA] < 0.002 * h * w:
        raise NoTiles("no tiles on the table: the largest tile-coloured patch is too small")
    # Surface: flood from a ring just outside the tile cluster, through similar colours.
    cluster = (labels == big).astype(np.uint8)
    ring = cv2.dilate(cluster, np.ones((15, 15), np.uint8)) - cv2.dilate(
        cluster, np.ones((7, 7), np.uint8)
    )
    ys, xs = np.nonzero(ring & (1 - mask))
    if len(xs) == 0:
        raise TableNotLocated("the tiles fill the whole image: no table surface around them")
    blur = cv2.GaussianBlur(work, (5, 5), 0)
    lab = cv2.cvtColor(blur, cv2.COLOR_BGR2Lab)
    seed_colour = np.median(lab[ys, xs], axis=0)
    dist = np.linalg.norm(lab.astype(np.float32) - seed_colour.astype(np.float32), axis=2)
    surface = (dist < cfg["flood_tolerance"]).astype(np.uint8) | cluster
    surface = cv2.morphologyEx(surface, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
    _, lab2, st2, _ = cv2.connectedComponentsWithStats(surface)
    comp = lab2[cluster > 0]
    comp = np.bincount(comp[comp > 0]).argmax() if np.any(comp > 0) else 0
    corners = None
    if comp and st2[comp, cv2.CC_STAT_AREA] >= cfg["min_table_fraction"] * h * w:
        region = (lab2 == comp).astype(np.uint8)
        region = cv2.morphologyEx(region, cv2.MORPH_OPEN, np.ones((7, 7), np.uint8))
        contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if contours:
            cnt = max(contours, key=cv2.contourArea)
            quad = _quad(cnt, cfg["poly_epsilon"])
            quad[:, 0] = np.clip(quad[:, 0], 0, w - 1)
            quad[:, 1] = np.clip(quad[:, 1], 0, h - 1)
            corners = order_corners(quad / scale)
            surface = region
    return Table(corners, scale, work, mask, surface)


def rectify(image: np.ndarray, corners: np.ndarray, px_per_unit: float = 1.0) -> np.ndarray:
    """Warp the table quadrilateral to a top-down rectangle (sides' mean lengths, times a scale)."""
    c = np.asarray(corners, np.float32)
    wdt = (np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 2 * px_per_unit
    hgt = (np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 2 * px_per_unit
    dst = np.float32([[0, 0], [wdt - 1, 0], [wdt - 1, hgt - 1], [0, hgt - 1]])
    m = cv2.getPerspectiveTransform(c, dst)
    return cv2.warpPerspective(image, m, (round(wdt), round(hgt)))


# --- the table and the start tile on a live view (replay and the live loop without a profile) ---
#
# ``detect`` above is made for photos of whole boards: tiles fill much of the picture and their
# saturated colours find them. A camera over a table at the start of a game sees the start tile
# alone (about 2-5 % of the table's diagonal), maybe beside the score track (a large board, the most
# saturated thing on the table) and a few followers. So here the table is found first (the large
# region of one colour around the frame's centre), and the start tile is the square thing of a
# tile's size on it, found by being unlike the table around it rather than by its colour: a snowy
# tile on a white table has little colour, but its edges, roads and city do differ from the table.

TILE_MM = 45.0
# A tile against the table's diagonal: tables are about 0.6 m to 2 m across (a small square table
# has a diagonal of 0.85 m, a long one 2.2 m), widened for the perspective and unusual tables.
TILE_OF_TABLE = (0.012, 0.1)
MIN_SIDE_SHARPNESS = 1.0  # colour step per quarter pixel that a tile's side shows at least
SQUARE_RATIO = 0.92  # a tile's shorter extent over its longer one on the table, at least
# the same in the picture where no table is seen: a camera tilted by up to 30 degrees shortens
# a tile to 0.87 of its width, a city cap the table's colour to 0.8 or less
SQUARE_RATIO_UNSEEN = 0.85
STRIP_OBJECTS = 0.1  # share of a tile's missing strip unlike the table, at least
SHARP_STEP = 5.0  # Lab colour step per pixel of a tile's border or art (wood grain: 1-2)
MAX_SIDE_SKEW_DEG = 4.0  # angle between a tile's opposite sides in the picture, at most
_OUTLINE_WORK = 480
MIN_TABLE_SHARE = 0.1  # of the frame that a table covers, at least
CLEARLY_BETTER = 1.15  # an outline's fit times its rim's contrast, over the fuller region's
# of the diagonal: how far the sub-pixel edges may move a rough corner, unless they are straight
MAX_REFINE_SHIFT = 0.02
# of finding the sub-pixel edges, each from the last's outline, at most: a faint edge far from
# the rough outline is reached a band at a time (snowy 07006: five rounds)
REFINE_ROUNDS = 8
MIN_CONTRAST = 10.0  # Lab distance between a table's rim and what lies beyond it, at least
# a table found by its hue: the step in hue at its rim over the hue's spread there, at least (40
# synthetic games, snowy and scans: 2.6 to 9.5 where the outline is right)
MIN_HUE_SEPARATION = 2.5
# per side, the share of its edge points on its line (calibration's ``min_edge_support``: wrong
# outlines of 100 synthetic scenes had 0.16-0.24 on their weakest side, right ones 0.33 or more)
MIN_EDGE_SUPPORT = 0.25
# how much more of its weakest side a hue outline has on its line than the colour's, to replace it
# (40 synthetic games and 100 calibration scenes: a smaller margin puts right none of the wrong
# outlines, and swaps right ones for others as right)
CLEARLY_STRAIGHTER = 0.2
ASPECT_SURE = 0.02  # how much a table's proportions may change with a corner a pixel off
GROW_STEPS = (1, 1.5, 2, 3, 4)  # Lab steps between neighbours a table's surface may make


@dataclass
class StartTile:
    table: np.ndarray  # 4 x 2 table corners (image px, clockwise from the top-left)
    corners: np.ndarray  # 4 x 2 tile corners (image px, clockwise from the top-left), sub-pixel
    candidates: int  # how many tile-sized square things were seen on the table
    edge_seen: bool = True  # ``table`` is the table's edge, not the frame standing in for it


@dataclass
class TableRegion:
    """The table surface found on a small copy of a frame."""

    quad: np.ndarray  # 4 x 2 corners on the small copy, clockwise from the top-left
    region: np.ndarray  # uint8 0/1: the surface's colour (what lies on it left out)
    filled: np.ndarray  # uint8 0/1: the region with its holes filled (tiles on the table)
    small: np.ndarray  # the small copy (BGR, smoothed)
    lab: np.ndarray  # the small copy in Lab (float)
    scale: float  # small copy pixels per frame pixel
    contrast: float  # Lab distance between the outline's rim and what lies beyond it

    @property
    def fill(self) -> float:
        """How well the region fits its quadrilateral (1 = exactly)."""
        return _fill(self.quad, self.filled)


def table_outline(frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The table (corners clockwise from the top-left, image px; and its filled mask at frame
    size) by :func:`locate_table`. Raises TableNotLocated."""
    found = locate_table(frame)
    if not found.trusted:
        raise TableNotLocated(
            f"the table's colour is close to its surroundings' (contrast {found.region.contrast:.0f})"
        )
    h, w = frame.shape[:2]
    filled = cv2.resize(found.region.filled, (w, h), interpolation=cv2.INTER_NEAREST)
    return found.corners, filled


@dataclass
class TableFound:
    """A table region with its sides found to a fraction of a pixel."""

    region: TableRegion
    corners: np.ndarray  # 4 x 2 frame px, clockwise from the top-left
    lens_k: float  # division-model distortion that straightens the sides (0 when not measured)
    support: tuple[float, ...]  # per side, the share of its edge points on its line
    trusted: bool  # its colour (or hue) stands out from the surroundings' clearly enough
    by_hue: bool = False  # found by its hue alone (its colour's outline was less straight)

    @property
    def weakest_side(self) -> float:
        return min(self.support)


def locate_table(frame: np.ndarray) -> TableFound:
    """The table by its colour (:func:`find_table_region`), or by its hue alone
    (:func:`_hue_region`) where that outline is clearly the straighter: each region's rough
    outline is refined to the table's edges (:func:`~meeplecam.vision.edges.refine_outline`: the
    small copy places them a few pixels off), and a side cut through the table (a lamp's glare
    split its colour; a table of the floor's colour merged with it) follows no straight edge.
    Where neither is trusted, the colour's comes back untrusted. Raises TableNotLocated."""
    small, lab, scale = _work_copy(frame)
    try:
        colour = find_table_region(frame, (small, lab, scale))
        found = _refined(frame, colour, colour.contrast >= MIN_CONTRAST)
    except TableNotLocated as exc:
        found, missed = None, exc
    if found is not None and found.trusted and found.weakest_side + CLEARLY_STRAIGHTER > 1:
        return found  # no outline is clearly straighter
    hue = _hue_region(small, lab, scale)
    hue_found = _refined(frame, hue, True, by_hue=True) if hue is not None else None
    if (
        hue_found is not None
        and hue_found.weakest_side >= MIN_EDGE_SUPPORT
        and (
            found is None
            or not found.trusted
            or hue_found.weakest_side >= found.weakest_side + CLEARLY_STRAIGHTER
        )
    ):
        return hue_found
    if found is None:
        raise missed
    return found


def _refined(
    frame: np.ndarray, region: TableRegion, trusted: bool, by_hue: bool = False
) -> TableFound:
    from .edges import refine_outline

    rough = order_corners(region.quad / region.scale)
    # Each round looks for the edges in a band around the last round's outline: a faint edge (a
    # table of nearly the floor's colour) far from the rough outline is reached in a few. A
    # round that leaves the sides less straight on the whole found something else's edge (the
    # table's own lower rim, a floorboard), and one that moves no corner by half a pixel found
    # the same edges again: the last round before it stands. (The weakest side alone wavers
    # while the edges close in one side at a time: stopping on it left 07006's outline 20 px
    # short of its edge. On 300 frames of 50 games, within 1 % on all 300 (299), median error
    # 0.81 px (0.84).)
    corners, lens_k, support = refine_outline(frame, rough)
    for _ in range(REFINE_ROUNDS - 1):
        again = refine_outline(frame, corners)
        if np.mean(again[2]) < np.mean(support) or np.abs(again[0] - corners).max() < 0.5:
            break
        corners, lens_k, support = again
    diagonal = float(np.linalg.norm(rough[2] - rough[0]))
    far = np.linalg.norm(corners - rough, axis=1).max() > MAX_REFINE_SHIFT * diagonal
    if far and min(support) < MIN_EDGE_SUPPORT:
        return TableFound(region, rough, 0.0, (0.0,) * 4, trusted, by_hue)  # something else's
    return TableFound(region, corners, lens_k, support, trusted, by_hue)


def _work_copy(frame: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(small smoothed copy, its Lab as float, small pixels per frame pixel) of a frame."""
    h, w = frame.shape[:2]
    s = _OUTLINE_WORK / max(h, w)
    small = cv2.resize(frame, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA)
    small = cv2.bilateralFilter(small, 7, 30, 7)
    return small, cv2.cvtColor(small, cv2.COLOR_BGR2Lab).astype(np.float32), s


def find_table_region(frame: np.ndarray, work=None) -> TableRegion:
    """The table as the large region of one colour that fills the frame's centre but not its
    border, on a small copy (``work``: :func:`_work_copy`'s, when made already). Three
    guesses: Lab k-means' colour classes; a fill grown from their middle over small colour
    steps; the colour classes with lightness counting half (a table in a lamp's fall-off can be
    as dark as the floor but not of its hue). Of the first two,
    the one that fills its quadrilateral better (a leak into the floor or a notch of glare
    leaves a ragged region); any guess whose quadrilateral both fits its region (intersection
    over union) and has a sharper rim (the colour inside against outside: a side cut through
    the table is table on both sides) by a clear margin replaces it. Raises TableNotLocated."""
    small, lab, s = work if work is not None else _work_copy(frame)
    classes = _colour_classes(lab)
    hues = _colour_classes(lab * np.float32((0.5, 1, 1)))
    if classes is None and hues is None:
        raise TableNotLocated("the table does not stand out from its surroundings")
    seeds = classes if classes is not None else hues
    masks = [classes, _grown_surface(small, seeds), hues]
    guesses = [_outline(m) if m is not None else None for m in masks]
    # a neat small region (the start tile, a patch of light) is no table
    guesses = [g if g and g[2].sum() >= MIN_TABLE_SHARE * g[2].size else None for g in guesses]
    if not any(guesses):
        raise TableNotLocated("no table surface found")

    contrast = {i: outline_contrast(lab, g[0]) for i, g in enumerate(guesses) if g}
    merit = {i: _overlap(guesses[i][0], guesses[i][2]) * contrast[i] for i in contrast}
    first = [i for i in (0, 1) if i in contrast]
    chosen = max(first, key=lambda i: _fill(guesses[i][0], guesses[i][2])) if first else None
    challenger = max(merit, key=merit.get)
    if chosen is None or merit[challenger] > CLEARLY_BETTER * merit[chosen]:
        chosen = challenger
    quad, region, filled = guesses[chosen]
    return TableRegion(quad, region, filled, small, lab, s, contrast[chosen])


def _hue_region(small: np.ndarray, lab: np.ndarray, scale: float) -> TableRegion | None:
    """The table told from the floor by its hue alone, or None. A table of nearly the floor's
    colour, where the light's fall-off over both is a larger step than theirs (Lab contrast 0
    to 5), still differs in hue by a few units all over: the chroma, smoothed and stretched to
    its spread over the frame, is clustered as :func:`_colour_classes` does the colour. Taken
    only when the hue inside the outline's rim stands clear of the hue beyond it, by
    ``MIN_HUE_SEPARATION`` times its spread there."""
    chroma = cv2.GaussianBlur(lab, (0, 0), 2)
    chroma[..., 0] = 0
    spread = float(chroma[..., 1:].reshape(-1, 2).std(axis=0).mean())
    chroma[..., 1:] *= 10.0 / max(spread, 1e-3)
    classes = _colour_classes(chroma)
    guess = _outline(classes) if classes is not None else None
    if guess is None or guess[2].sum() < MIN_TABLE_SHARE * guess[2].size:
        return None
    quad, region, filled = guess
    inner, outer = _rim(lab.shape[:2], quad)
    if inner.sum() < 20 or outer.sum() < 20:
        return None
    inside, beyond = lab[inner > 0][:, 1:], lab[outer > 0][:, 1:]
    step = np.linalg.norm(np.median(inside, axis=0) - np.median(beyond, axis=0))
    noise = 0.5 * (inside.std(axis=0).mean() + beyond.std(axis=0).mean())
    if step < MIN_HUE_SEPARATION * noise:
        return None
    return TableRegion(quad, region, filled, small, lab, scale, outline_contrast(lab, quad))


def _colour_classes(lab: np.ndarray, k: int = 4) -> np.ndarray | None:
    """uint8 0/1: the k-means colour classes of the table (the class that fills the centre but
    not the border, with its other shades), or None when no class stands out."""
    sh, sw = lab.shape[:2]
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(7)  # the same frame gives the same outline
    _, labels, centres = cv2.kmeans(
        np.ascontiguousarray(lab.reshape(-1, 3)), k, None, crit, 3, cv2.KMEANS_PP_CENTERS
    )
    labels = labels.reshape(sh, sw)
    border = np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]])
    centre = labels[sh // 4 : 3 * sh // 4, sw // 4 : 3 * sw // 4]
    c_share = np.bincount(centre.ravel(), minlength=k) / centre.size
    b_share = np.bincount(border, minlength=k) / border.size
    best = int(np.argmax(c_share - b_share))
    if c_share[best] - b_share[best] < 0.2:
        return None
    mask = (labels == best).astype(np.uint8)
    # other shades of the table (grain, light falling off): near colours, rare at the border
    for j in range(k):
        near = float(np.linalg.norm(centres[j] - centres[best]))
        if (
            j != best
            and b_share[j] < 0.2
            and (near < 18 or (near < 35 and c_share[j] > b_share[j]))
        ):
            mask |= (labels == j).astype(np.uint8)
    return mask


def _fill(quad: np.ndarray, filled: np.ndarray) -> float:
    """A region's area over its quadrilateral's (over 1: the region spills beyond it)."""
    return float(filled.sum()) / max(float(cv2.contourArea(np.float32(quad))), 1.0)


def _overlap(quad: np.ndarray, filled: np.ndarray) -> float:
    """Intersection over union of a quadrilateral and a region."""
    poly = np.zeros_like(filled)
    cv2.fillPoly(poly, [np.round(quad).astype(np.int32)], 1)
    return float((poly & filled).sum() / max(int((poly | filled).sum()), 1))


def outline_contrast(lab: np.ndarray, quad: np.ndarray) -> float:
    """Lab distance between the median colours just inside and just outside an outline (``lab``
    and ``quad`` at one scale): a table of nearly the floor's colour is found by colour alone only
    unreliably, and the outline's fit does not show it (a band of wood grain can be a neat quad)."""
    inner, outer = _rim(lab.shape[:2], quad)
    if inner.sum() < 20 or outer.sum() < 20:
        return 100.0  # the table fills the frame: nothing outside it to compare with
    return float(
        np.linalg.norm(np.median(lab[inner > 0], axis=0) - np.median(lab[outer > 0], axis=0))
    )


def _rim(shape: tuple[int, int], quad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """uint8 0/1 bands just inside and just outside an outline (3 % of the picture wide)."""
    h, w = shape
    poly = np.zeros((h, w), np.uint8)
    cv2.fillPoly(poly, [np.round(quad).astype(np.int32)], 1)
    ring = max(3, round(0.03 * max(h, w)))
    kernel = np.ones((ring, ring), np.uint8)
    return poly - cv2.erode(poly, kernel), cv2.dilate(poly, kernel) - poly


def _outline(mask: np.ndarray):
    """(quadrilateral, region, filled region) of a surface mask's largest region (work scale),
    or None. The quadrilateral is four lines fitted to the region's outline, or its convex
    hull's where those lines meet far outside the picture (a ragged side: the hull still spans
    it)."""
    found = largest_region(mask)
    if found is None:
        return None
    cnt, region, filled = found
    points = cnt.reshape(-1, 2).astype(np.float64)
    hull = _quad(cnt, 0.01)
    lines = four_lines(points)
    quad = order_corners(fit_sides(points, order_corners(hull if lines is None else lines)))
    h, w = mask.shape
    reach = np.array([w, h]) * 0.25
    if np.any(quad < -reach) or np.any(quad > np.array([w, h]) + reach):
        quad = order_corners(hull)
    return quad, region, filled


def _grown_surface(small: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """The table grown from its colour region's middle over steps of colour too small to be an
    edge (the light falling off across the table splits its colour in two for k-means, and the
    darker half can share a cluster with the floor): the most permissive flood fill that still
    stops short of the frame's border. uint8 0/1, or all 0 when every fill leaks."""
    sh, sw = seeds.shape
    ys, xs = np.nonzero(seeds)
    if not len(xs):
        return np.zeros_like(seeds)
    nearest = int(np.argmin((xs - sw / 2) ** 2 + (ys - sh / 2) ** 2))
    seed = (int(xs[nearest]), int(ys[nearest]))
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)
    best = np.zeros_like(seeds)
    for step in GROW_STEPS:
        fill = np.zeros((sh + 2, sw + 2), np.uint8)
        flags = 4 | cv2.FLOODFILL_MASK_ONLY | (1 << 8)
        cv2.floodFill(lab, fill, seed, 0, (step,) * 3, (step,) * 3, flags)
        grown = fill[1:-1, 1:-1]
        edge = np.concatenate([grown[0], grown[-1], grown[:, 0], grown[:, -1]])
        if edge.mean() > 0.02:
            break
        best = grown
    return best


def largest_region(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(outer contour, region, region with its holes filled: tiles on the table) of the largest
    region of a binary mask after a small opening that clears specks; None when nothing is left."""
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, lab_cc, stats, _ = cv2.connectedComponentsWithStats(mask)
    if n <= 1:
        return None
    big = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    region = (lab_cc == big).astype(np.uint8)
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cnt = max(contours, key=cv2.contourArea)
    filled = np.zeros_like(region)
    cv2.drawContours(filled, [cnt], -1, 1, -1)
    return cnt, region, filled


def rectangle_aspect(quad_px, size) -> float | None:
    """Width over depth of the rectangle seen as ``quad_px`` (clockwise from the top-left), for a
    camera with square pixels and its principal point at the frame's centre (Zhang and He's
    whiteboard method); None when the view is too nearly head-on to tell."""
    c = np.array([(size[0] - 1) / 2, (size[1] - 1) / 2])
    q = np.asarray(quad_px, float) - c
    m1, m2, m4, m3 = (np.r_[p, 1.0] for p in q)  # TL, TR, BR, BL
    k2 = np.dot(np.cross(m1, m4), m3) / np.dot(np.cross(m2, m4), m3)
    k3 = np.dot(np.cross(m1, m4), m2) / np.dot(np.cross(m3, m4), m2)
    n2, n3 = k2 * m2 - m1, k3 * m3 - m1
    if abs(n2[2] * n3[2]) < 1e-12:
        return None
    f2 = -(n2[0] * n3[0] + n2[1] * n3[1]) / (n2[2] * n3[2])
    if not np.isfinite(f2) or f2 <= (0.3 * max(size)) ** 2 or f2 >= (5 * max(size)) ** 2:
        return None
    a2 = (n2[0] ** 2 + n2[1] ** 2) / f2 + n2[2] ** 2
    a3 = (n3[0] ** 2 + n3[1] ** 2) / f2 + n3[2] ** 2
    return float(np.sqrt(a2 / a3))


def sure_aspect(quad_px, size) -> float | None:
    """:func:`rectangle_aspect` where a corner a pixel off (an outline found to a pixel) changes
    it by ``ASPECT_SURE`` at most, else None. A table tilted away about one axis only, its
    left and right sides nearly parallel in the picture, tells its proportions poorly: snowy
    game 07006's true 1.76 came out 1.62 from corners within a pixel, and the start tile was
    then "completed" to that shape, 5 px too wide."""
    aspect = rectangle_aspect(quad_px, size)
    if aspect is None or aspect_wobble(quad_px, size) > ASPECT_SURE:
        return None
    return aspect


def aspect_wobble(quad_px, size) -> float:
    """How much :func:`rectangle_aspect` changes (relative) with a corner a pixel off, at
    most; infinite where the nudged outline tells no proportions."""
    quad_px = np.asarray(quad_px, float)
    aspect = rectangle_aspect(quad_px, size)
    if aspect is None:
        return np.inf
    wobble = 0.0
    for corner in range(4):
        for step in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            nudged = quad_px.copy()
            nudged[corner] += step
            other = rectangle_aspect(nudged, size)
            if other is None:
                return np.inf
            wobble = max(wobble, abs(other / aspect - 1))
    return wobble


def four_lines(points: np.ndarray, tol: float = 1.5) -> np.ndarray | None:
    """The outline's four straight sides by sequential RANSAC on its contour points: a shadow or
    a glare cutting into the table's region is short beside a table edge, and the convex hull
    would take its cut for a side."""
    rng = np.random.default_rng(0)
    pool = points
    lines = []
    for _ in range(4):
        if len(pool) < 20:
            return None
        i, j = rng.integers(0, len(pool), (2, 600))
        d = pool[j] - pool[i]
        length = np.linalg.norm(d, axis=1)
        ok = length > 15
        if not ok.any():  # a region too small or too thin to have sides
            return None
        i, d, length = i[ok], d[ok], length[ok]
        nrm = np.stack([-d[:, 1], d[:, 0]], axis=1) / length[:, None]
        dist = np.abs(np.einsum("pnk,pk->pn", pool[None] - pool[i][:, None], nrm))
        best = int(np.argmax((dist < tol).sum(axis=1)))
        inl = pool[dist[best] < tol]
        mean = inl.mean(axis=0)
        _, _, vt = np.linalg.svd(inl - mean)
        lines.append((mean, vt[0]))
        far = np.abs((pool - mean) @ np.array([-vt[0][1], vt[0][0]])) > 2 * tol
        pool = pool[far]
    centre = points.mean(axis=0)
    lines.sort(key=lambda ln: np.arctan2(ln[0][1] - centre[1], ln[0][0] - centre[0]))
    quad = intersect_lines(lines[1:] + lines[:1])
    if quad is None:
        return None
    area = cv2.contourArea(quad.astype(np.float32))
    if not cv2.isContourConvex(quad.astype(np.float32)) or area < 0.5 * cv2.contourArea(
        points.astype(np.float32)
    ):
        return None
    return order_corners(quad)


def fit_sides(points: np.ndarray, quad: np.ndarray, rounds: int = 3) -> np.ndarray:
    """Lines through the contour points near the middle of each side (rounded corners and things
    at the corners do not count), intersected: straighter than the polygon's own corners."""
    for _ in range(rounds):
        lines = []
        for i in range(4):
            a, b = quad[i], quad[(i + 1) % 4]
            length = np.linalg.norm(b - a)
            d = (b - a) / length
            rel = points - a
            t = rel @ d / length
            dist = np.abs(rel @ np.array([-d[1], d[0]]))
            sel = points[(t > 0.15) & (t < 0.85) & (dist < max(3.0, 0.03 * length))]
            if len(sel) < 10:
                return quad
            vx, vy, x0, y0 = cv2.fitLine(sel.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01)
            lines.append((np.array([x0[0], y0[0]]), np.array([vx[0], vy[0]])))
        out = intersect_lines(lines)
        if out is None:
            break
        quad = out
    return quad


def intersect_lines(lines) -> np.ndarray | None:
    """Corner i where line i-1 meets line i (lines as point, direction)."""
    out = []
    for i in range(4):
        (p1, d1), (p2, d2) = lines[(i - 1) % 4], lines[i]
        mat = np.column_stack([d1, -d2])
        if abs(np.linalg.det(mat)) < 1e-9:
            return None
        sol = np.linalg.solve(mat, p2 - p1)
        out.append(p1 + sol[0] * d1)
    return np.asarray(out)


def objects_on_table(frame: np.ndarray, table_mask: np.ndarray, reach: int = 0) -> np.ndarray:
    """uint8 0/1 at frame size: what differs from the table around it. The table's own colour is
    a wide median (several tiles across) at a small scale, so uneven light and glare stay table,
    and the difference is taken at full resolution, where a start tile is 20-60 px wide. With
    ``reach`` (px), only what lies that near a sharp colour step counts: a tile's border and art
    are sharp, the rim of a lamp's glare or a soft shadow beside the tile is not (joined to the
    tile, either made it no square)."""
    h, w = frame.shape[:2]
    s = _OUTLINE_WORK / max(h, w)
    small = cv2.resize(frame, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA)
    local = cv2.medianBlur(small, 2 * (small.shape[1] // 24) + 1)
    local = cv2.resize(local, (w, h), interpolation=cv2.INTER_LINEAR)
    lab = cv2.cvtColor(cv2.GaussianBlur(frame, (3, 3), 0), cv2.COLOR_BGR2Lab).astype(np.float32)
    diff = np.linalg.norm(lab - cv2.cvtColor(local, cv2.COLOR_BGR2Lab).astype(np.float32), axis=2)
    inside = table_mask > 0
    if not inside.any():
        raise TableNotLocated("no table surface found")
    tol = max(10.0, 3.0 * float(np.quantile(diff[inside], 0.75)))
    found = (diff > tol) & inside
    if reach > 0:
        # Sobel / 8: the colour step per pixel
        gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3)
        step = np.sqrt((gx**2 + gy**2).sum(axis=2)) / 8
        sharp = (step > SHARP_STEP).astype(np.uint8)
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1))
        found &= cv2.dilate(sharp, kernel) > 0
    return found.astype(np.uint8)


def sharp_reach(diagonal: float) -> int:
    """How near a sharp colour step (pixels) a thing on a table of that diagonal must lie to
    count (``objects_on_table``'s ``reach``): a tile's border, not a glare's soft rim."""
    return max(2, round(0.005 * diagonal))


def find_start_tile(frame: np.ndarray) -> StartTile:
    """The table and the start tile alone on it (sub-pixel corners). Raises NoTiles with what
    was seen.

    Where no table stands out from its surroundings, or the outline found holds no tile (a
    camera zoomed onto the play area sees table to every side, and k-means takes a lighter part
    of it for the table), the frame stands in for the outline: the tile alone then fixes scale
    and angle (``vision.live.rectify.start_tile_homography`` falls back to it when the frame's
    proportions disagree with the tile's), and the grid refit the perspective."""
    whole = _whole_frame(frame.shape[1], frame.shape[0])
    try:
        outlines = [table_outline(frame)[0], whole]
    except TableNotLocated:
        outlines = [whole]
    for corners in outlines:
        try:
            found = _start_tile_within(frame, corners)
        except NoTiles as exc:
            missed = exc
            continue
        found.edge_seen = corners is not whole
        return found
    raise missed


def _whole_frame(w: int, h: int) -> np.ndarray:
    """The frame's corners, clockwise from the top-left: the outline of a table that fills it."""
    return np.float64([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]])


def _start_tile_within(frame: np.ndarray, corners: np.ndarray) -> StartTile:
    """The start tile alone inside a table outline (corners clockwise from the top-left)."""
    diag = float(np.linalg.norm(corners[2] - corners[0]))
    # Inside the outline, not inside the table's colour region: a shadow or a glare splits that
    # region (the start tile may lie in a hole of it), the straight sides are surer.
    inside = np.zeros(frame.shape[:2], np.uint8)
    centre = corners.mean(axis=0)
    shrunk = centre + (corners - centre) * (1 - 0.02)  # not the table's rim
    cv2.fillPoly(inside, [np.round(shrunk).astype(np.int32)], 1)
    objects = objects_on_table(frame, inside, reach=sharp_reach(diag))
    # join the tile's art (a snowy tile is table-white between its roads and city) into one blob
    k = max(3, round(0.006 * diag) | 1)
    blobs = cv2.morphologyEx(objects, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    contours, _ = cv2.findContours(blobs, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    # sizes compared with the table's perspective undone: a tile has the same area anywhere on it
    unit = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]])
    to_unit = cv2.getPerspectiveTransform(np.float32(corners), unit)
    lo, hi = TILE_OF_TABLE
    img = edge_image(frame)
    found = []
    for cnt in contours:
        if cv2.contourArea(cnt) < 30:
            continue
        hull = cv2.convexHull(cnt)
        fill = cv2.contourArea(cnt) / max(cv2.contourArea(hull), 1.0)
        box = order_corners(cv2.boxPoints(cv2.minAreaRect(cnt)))
        side = np.sqrt(cv2.contourArea(np.float32(box)))
        if not (lo * diag <= side <= hi * diag):
            continue
        (_, _), (a, b), _ = cv2.minAreaRect(cnt)
        rect_fill = cv2.contourArea(cnt) / max(a * b, 1.0)
        if max(a, b) / max(min(a, b), 1e-6) > 1.5 or rect_fill < 0.7 or fill < 0.75:
            continue
        # a tile's sides are sharp steps (one may be faint: a tan city on light wood); a glare
        # or a shadow on the table is a soft one
        if sorted(side_sharpness(img, box))[1] < MIN_SIDE_SHARPNESS:
            continue
        area_unit = cv2.contourArea(
            cv2.perspectiveTransform(box.reshape(-1, 1, 2).astype(np.float32), to_unit)
        )
        found.append((area_unit, rect_fill, box))
    if not found:
        raise NoTiles(
            "no tile-sized square thing on the table: lay the start tile alone, away from the "
            "score track and other things"
        )
    # a standing follower is square-ish too, but a fraction of a tile: keep the largest kind
    biggest = max(f[0] for f in found)
    tiles = [f for f in found if f[0] >= 0.45 * biggest]
    _, _, box = max(tiles, key=lambda f: (f[1], f[0]))
    refined = _refine_square(img, box)
    refined = _complete_square(objects, corners, refined, (frame.shape[1], frame.shape[0]))
    return StartTile(corners, refined, len(tiles))


def apply_homography(hom: np.ndarray, pts) -> np.ndarray:
    """Points (N x 2) through a 3x3 homography."""
    pts = np.asarray(pts, np.float64).reshape(-1, 2)
    h = np.c_[pts, np.ones(len(pts))] @ np.asarray(hom).T
    return h[:, :2] / h[:, 2:3]


def _complete_square(objects: np.ndarray, table: np.ndarray, quad: np.ndarray, size) -> np.ndarray:
    """A tile found much shorter one way than the other, on the table (its perspective undone
    by the outline and the camera's proportions, :func:`sure_aspect`), lacks a strip whose
    colour is the table's (a city cap on a table of its colour): the square is completed on the
    end where the missing strip holds things unlike the table (the art's roofs and walls), if
    either does. ``objects``: :func:`objects_on_table`'s mask."""
    h, w = objects.shape
    square = SQUARE_RATIO
    if np.array_equal(table, _whole_frame(w, h)):  # no table: the frame as seen from above,
        aspect, square = w / h, SQUARE_RATIO_UNSEEN  # and a tile a little short is the tilt
    else:
        aspect = sure_aspect(table, size)
    if aspect is None:
        return quad
    unit = np.float32([[0, 0], [aspect, 0], [aspect, 1], [0, 1]])
    to_table = cv2.getPerspectiveTransform(np.float32(table), unit).astype(np.float64)
    q = apply_homography(to_table, quad)
    lengths = np.linalg.norm(np.roll(q, -1, axis=0) - q, axis=1)  # side i from corner i to i+1
    along, across = (lengths[0] + lengths[2]) / 2, (lengths[1] + lengths[3]) / 2
    if min(along, across) / max(along, across) >= square:
        return quad
    grow = abs(along - across)
    # the short sides (0 and 2 when ``along`` is short) are lengthened at one end: side 1 or 3
    # moves out, the corners on it along the short sides' directions
    best, best_share = quad, STRIP_OBJECTS
    for side in (1, 3) if along < across else (0, 2):
        a, b = side, (side + 1) % 4
        new = q.copy()
        for corner, other in ((a, (a - 1) % 4), (b, (b + 1) % 4)):
            d = q[corner] - q[other]
            new[corner] = q[corner] + grow * d / np.linalg.norm(d)
        candidate = apply_homography(np.linalg.inv(to_table), new)
        strip = np.zeros_like(objects)
        cv2.fillPoly(
            strip,
            [np.round(candidate[[a, b]].tolist() + quad[[b, a]].tolist()).astype(np.int32)],
            1,
        )
        share = float((objects & strip).sum()) / max(int(strip.sum()), 1)
        if share > best_share:
            best, best_share = candidate, share
    return best


def edge_image(frame: np.ndarray) -> np.ndarray:
    """The float image the edge finders read: lightly blurred, so that a step is found to a
    fraction of a pixel rather than on one noisy pixel."""
    return cv2.GaussianBlur(frame, (3, 3), 0).astype(np.float32)


def side_sharpness(img: np.ndarray, quad: np.ndarray) -> list[float]:
    """Per side of a quadrilateral, how sharp the strongest edge near it is (within 15 % of a
    side: the median over points along the side of the largest colour step per quarter pixel;
    ``img`` a float image)."""
    quad = np.asarray(quad, np.float64).reshape(4, 2)
    side = float(np.mean(side_lengths(quad)))
    band = max(3.0, 0.15 * side)
    out = []
    for base, nrm in outward_sides(quad, np.linspace(0.15, 0.85, 16)):
        _, strength = edge_offsets(img, base, np.tile(nrm, (len(base), 1)), band)
        out.append(float(np.median(strength)))
    return out


def refine_square(frame: np.ndarray, quad: np.ndarray, rounds: int = 2) -> np.ndarray:
    """A tile's corners to sub-pixel precision: on each side the strongest colour edge along the
    normal (gradient centroid), a robust line through those points, the lines intersected."""
    return _refine_square(edge_image(frame), quad, rounds)


def _refine_square(img: np.ndarray, quad: np.ndarray, rounds: int = 2) -> np.ndarray:
    quad = np.asarray(quad, np.float64).reshape(4, 2)
    for r in range(rounds):
        side = float(np.mean(side_lengths(quad)))
        band = max(3.0, (0.15 if r == 0 else 0.06) * side)
        lines = []
        # first the outermost clear edge (a city wall drawn just inside a tile whose city has
        # the table's colour can be the stronger one), then the sharpest one near it (not the
        # soft rim of the tile's shadow)
        tol = max(0.6, 0.02 * side)
        found = list(_edge_points(img, quad, band, 0.5 if r == 0 else None))
        for pts in found:
            line = robust_line(pts, tol)
            if line is None:
                return quad
            lines.append(line)
        lines = _parallel_sides(lines, found, tol)
        out = intersect_lines(lines)  # corner i between sides i-1 and i
        if out is None or np.max(np.linalg.norm(out - quad, axis=1)) > max(0.3 * side, 6.0):
            return quad  # the fit ran off: keep what we had
        quad = out
    return quad


def _parallel_sides(lines, points, tol: float):
    """A tile's opposite sides are near parallel in the picture (a few degrees of perspective
    across one tile): where two are not, the line through fewer of its own edge points (one
    drawn through a city's curved wall when the city has the table's colour) is replaced by
    the parallel to the other through the largest group of its points."""
    lines = list(lines)
    for i, j in ((0, 2), (1, 3)):
        (_, di), (_, dj) = lines[i], lines[j]
        if abs(float(np.dot(di, dj))) >= np.cos(np.radians(MAX_SIDE_SKEW_DEG)):
            continue
        support = [_support(lines[k], points[k], tol) for k in (i, j)]
        good, bad = (i, j) if support[0] >= support[1] else (j, i)
        d = lines[good][1]
        nrm = np.array([-d[1], d[0]])
        offsets = points[bad] @ nrm
        near = np.abs(offsets[:, None] - offsets[None, :]) <= tol
        members = near[int(np.argmax(near.sum(axis=1)))]
        lines[bad] = (points[bad][members].mean(axis=0), d)
    return lines


def _support(line, pts: np.ndarray, tol: float) -> int:
    point, d = line
    return int((np.abs((pts - point) @ np.array([-d[1], d[0]])) <= tol).sum())


def side_lengths(quad: np.ndarray) -> np.ndarray:
    """The lengths of a quadrilateral's four sides (side i from corner i - 1 to corner i)."""
    quad = np.asarray(quad, np.float64).reshape(4, 2)
    return np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1)


def outward_sides(quad: np.ndarray, ts: np.ndarray):
    """Per side of a quadrilateral: (points at fractions ``ts`` along it, its outward normal)."""
    centre = quad.mean(axis=0)
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        nrm = np.array([-d[1], d[0]])
        if np.dot(centre - a, nrm) > 0:
            nrm = -nrm
        yield a + np.outer(ts, b - a), nrm


def _edge_points(img, quad, band: float, outermost: float | None = None, samples: int = 24):
    for base, nrm in outward_sides(quad, np.linspace(0.15, 0.85, samples)):
        off, _ = edge_offsets(img, base, np.tile(nrm, (len(base), 1)), band, outermost)
        yield base + off[:, None] * nrm


def edge_offsets(
    img: np.ndarray,
    base: np.ndarray,
    normals: np.ndarray,
    band: float,
    outermost: float | None = None,
):
    """Where the strongest colour edge lies along each normal (``base`` N x 2 points, ``normals``
    N x 2 unit vectors, searched within +-``band`` px of ``img``, a float image): offsets (px,
    sub-pixel: the centroid of the gradient around its peak, unbiased by the sampling phase; a
    thin gap between two tiles gives its middle) and the edge strengths. ``outermost``: take
    instead the farthest peak along the normal at least this share of the strongest."""
    step = 0.25
    offsets = np.arange(-band, band + 0.01, step)
    pts = (base[:, None, :] + offsets[None, :, None] * normals[:, None, :]).astype(np.float32)
    vals = cv2.remap(
        img, pts[..., 0], pts[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    vals = vals.reshape(len(base), len(offsets), -1)
    grad = np.linalg.norm(np.diff(vals, axis=1), axis=2)
    k = np.argmax(grad, axis=1).astype(np.float64)
    strength = grad.max(axis=1)
    if outermost is not None:
        padded = np.pad(grad, ((0, 0), (1, 1)))
        peak = (grad >= padded[:, :-2]) & (grad >= padded[:, 2:])
        peak &= grad >= outermost * strength[:, None]
        k = (grad.shape[1] - 1 - np.argmax(peak[:, ::-1], axis=1)).astype(np.float64)
    half = round(1.5 / step)
    for _ in range(3):  # the centroid in a window re-centred on the last centroid
        idx = np.round(k)[:, None].astype(int) + np.arange(-half, half + 1)[None, :]
        idx = np.clip(idx, 0, grad.shape[1] - 1)
        win = np.take_along_axis(grad, idx, axis=1)
        win = np.clip(win - win.min(axis=1, keepdims=True), 0, None) + 1e-9
        k = (win * idx).sum(axis=1) / win.sum(axis=1)
    return offsets[0] + step * (k + 0.5), strength


def robust_line(pts: np.ndarray, tol: float = 0.6, stride: int = 6):
    """(point, unit direction) through the largest collinear subset of edge points (every pair
    at least ``1/stride`` of the points apart tried: the art's own edges near a tile's border can
    hold nearly half of them), refitted by least squares; None for fewer than 4 points."""
    pts = np.asarray(pts, np.float64)
    n = len(pts)
    if n < 4:
        return None
    i, j = np.triu_indices(n, k=max(1, n // stride))
    d = pts[j] - pts[i]
    length = np.linalg.norm(d, axis=1)
    ok = length > 1e-6
    i, d, length = i[ok], d[ok], length[ok]
    nrm = np.stack([-d[:, 1], d[:, 0]], axis=1) / length[:, None]
    dist = np.abs(np.einsum("pnk,pk->pn", pts[None, :, :] - pts[i][:, None, :], nrm))
    inliers = dist <= tol
    best = int(np.argmax(inliers.sum(axis=1) - 0.01 * dist.clip(max=tol).sum(axis=1)))
    sel = pts[inliers[best]]
    mean = sel.mean(axis=0)
    _, _, vt = np.linalg.svd(sel - mean)
    return mean, vt[0]
