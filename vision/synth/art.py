"""Tile art: procedural drawings of every tile type from its segments, the real Winter scans, or
the scans of one physical copy of the newest base-game art (``copy``).

Art is drawn once per (tile type, palette, variant) in canonical orientation at ``art_px`` and
cached; a placed tile takes it turned clockwise and resized to the canvas scale. The drawing
follows :mod:`geometry` exactly: cities, roads, cloisters, villages and fields lie where the label
mask says. Variant 1 of a type is its Winter animal copy (animals drawn in the fields).
"""

from __future__ import annotations

import csv
import zlib
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from meeplecam.engine import TileType

from . import geometry as g
from .config import COPY_SCANS_DIR, SCANS_DIR, config, palette

SCANS = "scans"
COPY = "copy"


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def smooth_noise(rng: np.random.Generator, shape, cells=(6, 6)) -> np.ndarray:
    """Blobby noise in [0, 1] (random values on a coarse grid, cubic upsampling)."""
    import cv2

    coarse = rng.random((cells[0] + 3, cells[1] + 3)).astype(np.float32)
    big = cv2.resize(
        coarse,
        (shape[1] + 2 * shape[1] // cells[1], shape[0] + 2 * shape[0] // cells[0]),
        interpolation=cv2.INTER_CUBIC,
    )
    oy, ox = shape[0] // cells[0], shape[1] // cells[1]
    return np.clip(big[oy : oy + shape[0], ox : ox + shape[1]], 0, 1)


def _mix(a, b, t) -> np.ndarray:
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    return a + (b - a) * t[..., None]


def has_animals(tile: TileType, variant: int) -> bool:
    return tile.id in config()["animals"] and (variant == 1 or tile.id.startswith("WI"))


@cache
def canonical_art(tile: TileType, palette_name: str, variant: int = 0) -> np.ndarray:
    """The tile drawn in canonical orientation at ``art_px`` (BGR uint8)."""
    import cv2

    size = int(config()["scale"]["art_px"])
    if palette_name in (SCANS, COPY):
        scan = (
            load_scan(tile.id, variant) if palette_name == SCANS else load_copy_scan(tile, variant)
        )
        if scan is not None:
            return cv2.resize(scan, (size, size), interpolation=cv2.INTER_AREA)
        palette_name = "winter"
    p = palette(palette_name)
    rng = _rng(tile.id, palette_name, variant)
    labels, kinds = g.label_mask(tile, 0, size)
    n1 = smooth_noise(rng, (size, size), (5, 5))
    n2 = smooth_noise(rng, (size, size), (14, 3))
    grain = rng.normal(0, 1, (size, size)).astype(np.float32)
    img = _mix(p["field"], p["field_dark"], np.clip(n1 * 1.3 - 0.45, 0, 1) * 0.8)
    img = _mix(img, p["field_light"], np.clip(n2 * 1.5 - 0.8, 0, 1))
    img += grain[..., None] * 4
    city = (kinds == g.CITY) | (kinds == g.PENNANT)
    ctex = _mix(
        p["city"], p["city_dark"], np.clip(smooth_noise(rng, (size, size), (9, 9)), 0, 1) * 0.7
    )
    speck = rng.random((size, size)) < 0.02
    ctex[speck] = np.asarray(p["city_dark"], np.float32) * 0.85
    img[city] = ctex[city]
    img = np.clip(img, 0, 255).astype(np.uint8)
    geo = g.geometry(tile)
    _draw_trees(img, kinds == g.FIELD, rng, p, size)
    w = max(2, round(g.ROAD_WIDTH * size))
    for _, line in geo.roads:
        pts = np.round(line * size - 0.5).astype(np.int32)
        cv2.polylines(img, [pts], False, p["road_edge"], w, cv2.LINE_AA)
        cv2.polylines(img, [pts], False, p["road"], max(1, w - 4), cv2.LINE_AA)
    # Cities over the road ends (gates), then their walls and houses.
    img[city] = np.clip(ctex[city], 0, 255).astype(np.uint8)
    _draw_houses(img, city, rng, p, size, spacing=0.13)
    _draw_walls(img, labels, city, p, size)
    if geo.village:
        c = size // 2
        cv2.circle(img, (c, c), round(g.VILLAGE_RADIUS * size), p["village"], -1, cv2.LINE_AA)
        village = np.zeros((size, size), bool)
        cv2.circle(village.view(np.uint8), (c, c), round(g.VILLAGE_RADIUS * size * 0.8), 1, -1)
        _draw_houses(img, village, rng, p, size, spacing=0.07, count=3)
    if geo.cloister is not None:
        _draw_cloister(img, p, size)
    for _, (cx, cy) in geo.pennants:
        _draw_pennant(img, cx * size, cy * size, 0.075 * size, p)
    if has_animals(tile, variant):
        _draw_animals(img, kinds == g.FIELD, rng, p, size, config()["animals"][tile.id])
    if tile.is_gingerbread:
        _draw_gingerbread_icon(img, kinds, rng, size)
    cv2.rectangle(img, (0, 0), (size - 1, size - 1), p["border"], 1)
    return img


def tile_art(tile: TileType, rotation: int, palette_name: str, px: int, variant: int = 0):
    """The tile at ``rotation`` (clockwise), ``px`` × ``px`` pixels, north up."""
    return _tile_art(tile, rotation % 360, palette_name, int(px), variant)


@lru_cache(maxsize=512)  # two scenes' worth: every type, turn and art variant at one size
def _tile_art(tile, rotation, palette_name, px, variant):
    import cv2

    art = np.rot90(canonical_art(tile, palette_name, variant), -(rotation // 90))
    out = cv2.resize(np.ascontiguousarray(art), (px, px), interpolation=cv2.INTER_AREA)
    out.setflags(write=False)
    return out


# --- the Winter scans -----------------------------------------------------------------------------
@cache
def scan_index(folder: Path = SCANS_DIR) -> dict[str, dict[str, Path]]:
    """tile id -> {"base": path, "animal": path} of the scans present (empty when absent)."""
    index = Path(folder) / "index.csv"
    if not index.is_file():
        return {}
    out: dict[str, dict[str, Path]] = {}
    with index.open(newline="") as f:
        for row in csv.DictReader(f):
            path = Path(folder) / row["file"]
            if path.is_file():
                out.setdefault(row["tile"], {})[row["art"]] = path
    return out


def scans_available() -> bool:
    return bool(scan_index())


@cache
def load_scan(tile_id: str, variant: int = 0):
    import cv2

    found = scan_index().get(tile_id)
    if not found:
        return None
    path = found.get("animal" if variant == 1 else "base") or next(iter(found.values()))
    return cv2.imread(str(path), cv2.IMREAD_COLOR)


# --- the scans of one copy of the newest base-game art --------------------------------------------
@cache
def copy_scans(folder: Path = COPY_SCANS_DIR) -> dict[str, list[tuple[Path, str]]]:
    """tile id -> [(path, sides N E S W as scanned)] of the copy's scans (empty when absent)."""
    from meeplecam.vision.errors import VisionError
    from meeplecam.vision.model import read_labels

    try:
        rows = read_labels(Path(folder))
    except VisionError:
        return {}
    out: dict[str, list[tuple[Path, str]]] = {}
    for path, tile_id, sides in rows:
        if path.is_file():
            out.setdefault(tile_id, []).append((path, sides))
    return out


def copy_scans_available() -> bool:
    return bool(copy_scans())


@cache
def load_copy_scan(tile: TileType, variant: int = 0):
    """One of the copy's scans of ``tile`` (each physical tile of a type in turn, by
    ``variant``), turned to the type's canonical orientation and trimmed of the scan's white
    rim; None when the copy has no scan of it."""
    import cv2

    scans = copy_scans().get(tile.id)
    if not scans:
        return None
    path, sides = scans[variant % len(scans)]
    fits = tile.rotations_fitting(sides)
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None or not fits:
        return None
    rim = round(COPY_SCAN_RIM * image.shape[0])
    image = image[rim : image.shape[0] - rim, rim : image.shape[1] - rim]
    return np.ascontiguousarray(np.rot90(image, fits[0] // 90))


COPY_SCAN_RIM = 0.01  # of a scan's side: the white around the tile's rounded corners


# --- drawing helpers -------------------------------------------------------------------------------
def _free_spots(mask: np.ndarray, rng, radius: float, count: int) -> list[tuple[int, int]]:
    """Up to ``count`` random points at least ``radius`` inside ``mask`` and apart."""
    import cv2

    m = np.pad(mask.astype(np.uint8), 1)
    dist = cv2.distanceTransform(m, cv2.DIST_L2, 3)[1:-1, 1:-1]
    ys, xs = np.nonzero(dist > radius)
    spots: list[tuple[int, int]] = []
    if len(xs) == 0:
        return spots
    for i in rng.permutation(len(xs))[: count * 40]:
        x, y = int(xs[i]), int(ys[i])
        if all((x - a) ** 2 + (y - b) ** 2 > (2.2 * radius) ** 2 for a, b in spots):
            spots.append((x, y))
            if len(spots) == count:
                break
    return spots


def _draw_trees(img, field, rng, p, size) -> None:
    import cv2

    r = 0.035 * size
    for x, y in _free_spots(field, rng, r * 1.6, int(rng.integers(1, 6))):
        for _ in range(int(rng.integers(1, 4))):
            tx, ty = x + rng.normal(0, r), y + rng.normal(0, r * 0.6)
            h = r * rng.uniform(1.2, 1.8)
            tri = np.array(
                [(tx, ty - h), (tx + h * 0.5, ty + h * 0.4), (tx - h * 0.5, ty + h * 0.4)]
            )
            cv2.ellipse(
                img,
                (int(tx + h * 0.3), int(ty + h * 0.45)),
                (int(h * 0.5), int(h * 0.18)),
                0,
                0,
                360,
                p["field_dark"],
                -1,
                cv2.LINE_AA,
            )
            cv2.fillPoly(img, [tri.astype(np.int32)], p["tree"], cv2.LINE_AA)
            cap = np.array(
                [(tx, ty - h), (tx + h * 0.22, ty - h * 0.45), (tx - h * 0.25, ty - h * 0.5)]
            )
            cv2.fillPoly(img, [cap.astype(np.int32)], p["tree_snow"], cv2.LINE_AA)


def _draw_houses(img, region, rng, p, size, spacing: float, count: int | None = None) -> None:
    import cv2

    n = count if count is not None else int(region.mean() * 18) + 1
    for x, y in _free_spots(region, rng, spacing * size * 0.5, n):
        w, h = rng.uniform(0.08, 0.12) * size, rng.uniform(0.05, 0.07) * size
        a = np.deg2rad(rng.choice([0.0, 90.0]) + rng.normal(0, 12))
        along, across = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
        c = np.array([x, y], float)
        corners = [
            c + along * sx * w / 2 + across * sy * h / 2
            for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))
        ]
        body = np.array(corners)
        ridge = [c - along * w / 2, c + along * w / 2]
        shadow = body + np.array([0.08, 0.12]) * size * 0.3
        cv2.fillPoly(
            img, [shadow.astype(np.int32)], tuple(int(v * 0.6) for v in p["city_dark"]), cv2.LINE_AA
        )
        lit = np.array([corners[0], corners[1], ridge[1], ridge[0]])
        dark = np.array([ridge[0], ridge[1], corners[2], corners[3]])
        snowy = p["roof_snow"] != p["roof"]
        top = p["roof_snow"] if snowy else p["roof"]
        cv2.fillPoly(img, [body.astype(np.int32)], p["roof"], cv2.LINE_AA)  # eaves
        inset = 0.8 if snowy else 1.0
        cv2.fillPoly(img, [(c + (lit - c) * inset).astype(np.int32)], top, cv2.LINE_AA)
        shade = tuple(int(v * 0.78) for v in top)
        cv2.fillPoly(img, [(c + (dark - c) * inset).astype(np.int32)], shade, cv2.LINE_AA)
        cv2.line(
            img,
            tuple(ridge[0].astype(int)),
            tuple(ridge[1].astype(int)),
            tuple(int(v * 0.6) for v in p["roof"]),
            1,
            cv2.LINE_AA,
        )


def _draw_walls(img, labels, city, p, size) -> None:
    import cv2

    wall = max(3, round(0.028 * size))
    for index in np.unique(labels[city]):
        m = (labels == index) & city
        padded = np.pad(m.astype(np.uint8), 3, mode="edge")  # the tile edge is no wall
        dist = cv2.distanceTransform(padded, cv2.DIST_L2, 5)[3:-3, 3:-3]
        band = m & (dist <= wall)
        outer = m & (dist <= 1.5)
        img[band] = p["wall"]
        img[outer] = p["wall_dark"]
        ys, xs = np.nonzero(m & (np.abs(dist - wall * 0.55) < 0.5))
        for i in range(0, len(xs), 9):
            cv2.circle(img, (int(xs[i]), int(ys[i])), max(1, wall // 3), p["wall_dark"], -1)


def _draw_cloister(img, p, size) -> None:
    import cv2

    c = size / 2
    half = g.CLOISTER_HALF * size
    lo, hi = int(c - half), int(c + half)
    garden = tuple(
        int(v) for v in (np.asarray(p["field_dark"]) * 0.5 + np.asarray((60, 140, 70)) * 0.5)
    )
    cv2.rectangle(img, (lo, lo), (hi, hi), garden, -1)
    cv2.rectangle(img, (lo, lo), (hi, hi), p["wall_dark"], 2)
    b0, b1 = int(c - half * 0.7), int(c + half * 0.7)
    cv2.rectangle(img, (b0 + 3, int(c - half * 0.3) + 3), (b1 + 3, b1 + 3), (60, 60, 60), -1)
    cv2.rectangle(img, (b0, int(c - half * 0.3)), (b1, b1), p["cloister"], -1)
    roof = np.array(
        [
            (b0 - 2, int(c - half * 0.3)),
            (b1 + 2, int(c - half * 0.3)),
            (b1 - 4, int(c - half * 0.75)),
            (b0 + 4, int(c - half * 0.75)),
        ],
        np.int32,
    )
    cv2.fillPoly(img, [roof], p["cloister_roof"], cv2.LINE_AA)
    t = int(c - half * 0.15)
    cv2.rectangle(
        img,
        (t, int(c - half * 0.95)),
        (t + int(half * 0.35), int(c - half * 0.3)),
        p["cloister"],
        -1,
    )
    cx = t + int(half * 0.17)
    cv2.line(img, (cx, int(c - half * 1.2)), (cx, int(c - half * 0.95)), p["wall_dark"], 2)
    cv2.line(img, (cx - 4, int(c - half * 1.1)), (cx + 4, int(c - half * 1.1)), p["wall_dark"], 2)


def _draw_pennant(img, cx, cy, r, p) -> None:
    import cv2

    shield = g._shield(cx, cy, r)
    cv2.fillPoly(img, [shield], p["pennant_b"], cv2.LINE_AA)
    half = np.array(
        [
            (cx - r, cy - r),
            (cx, cy - r),
            (cx, cy + 1.15 * r),
            (cx - 0.5 * r, cy + 0.8 * r),
            (cx - r, cy + 0.2 * r),
        ],
        np.int32,
    )
    cv2.fillPoly(img, [half], p["pennant_a"], cv2.LINE_AA)
    cv2.polylines(img, [shield], True, (30, 30, 30), 2, cv2.LINE_AA)


def _draw_animals(img, field, rng, p, size, spec: dict) -> None:
    import cv2

    if spec.get("lake"):
        for x, y in _free_spots(field, rng, 0.14 * size, 1):
            cv2.ellipse(
                img,
                (x, y),
                (int(0.12 * size), int(0.08 * size)),
                20,
                0,
                360,
                p["water"],
                -1,
                cv2.LINE_AA,
            )
            cv2.ellipse(
                img,
                (x, y),
                (int(0.12 * size), int(0.08 * size)),
                20,
                0,
                360,
                p["field_dark"],
                2,
                cv2.LINE_AA,
            )
    if spec.get("house"):
        house = np.zeros_like(field)
        for x, y in _free_spots(field, rng, 0.08 * size, 1):
            cv2.circle(house.view(np.uint8), (x, y), int(0.05 * size), 1, -1)
        _draw_houses(img, house, rng, p, size, 0.05, 1)
    kind = spec.get("animal", "deer")
    big = {"bear": 0.07, "wolpertinger": 0.07, "boar": 0.04, "wolf": 0.04, "deer": 0.04}.get(
        kind, 0.03
    )
    r = big * size
    colour = (25, 25, 25) if kind == "raven" else p["animal"]
    for x, y in _free_spots(field, rng, r * 1.2, int(spec.get("n", 1))):
        angle = float(rng.uniform(0, 360))
        if kind == "raven":
            a = np.deg2rad(angle)
            wing = [(x + np.cos(a + s) * r * 1.3, y + np.sin(a + s) * r * 1.3) for s in (-2.3, 2.3)]
            pts = np.array([wing[0], (x, y), wing[1]], np.int32)
            cv2.polylines(img, [pts], False, colour, max(2, int(r * 0.35)), cv2.LINE_AA)
            continue
        cv2.ellipse(
            img,
            (x + 2, y + 3),
            (int(r), int(r * 0.45)),
            angle,
            0,
            360,
            p["field_dark"],
            -1,
            cv2.LINE_AA,
        )
        cv2.ellipse(img, (x, y), (int(r), int(r * 0.45)), angle, 0, 360, colour, -1, cv2.LINE_AA)
        a = np.deg2rad(angle)
        head = (int(x + np.cos(a) * r * 1.05), int(y + np.sin(a) * r * 1.05))
        cv2.circle(img, head, max(2, int(r * 0.35)), colour, -1, cv2.LINE_AA)
        if kind in ("deer", "wolpertinger"):
            cv2.line(
                img,
                head,
                (head[0] + int(r * 0.3), head[1] - int(r * 0.6)),
                (40, 60, 90),
                1,
                cv2.LINE_AA,
            )


def draw_gingerbread(img, cx: float, cy: float, h: float, colour=(42, 90, 155)) -> None:
    """A flat gingerbread man, ``h`` pixels tall, centred at (cx, cy)."""
    import cv2

    r = h / 6
    head = (int(cx), int(cy - h * 0.33))
    limbs = [
        ((cx, cy - h * 0.1), (cx - h * 0.32, cy - h * 0.18)),
        ((cx, cy - h * 0.1), (cx + h * 0.32, cy - h * 0.18)),
        ((cx, cy + h * 0.1), (cx - h * 0.22, cy + h * 0.45)),
        ((cx, cy + h * 0.1), (cx + h * 0.22, cy + h * 0.45)),
    ]
    for a, b in limbs:
        cv2.line(
            img,
            (int(a[0]), int(a[1])),
            (int(b[0]), int(b[1])),
            colour,
            max(2, int(r * 0.9)),
            cv2.LINE_AA,
        )
    cv2.ellipse(
        img, (int(cx), int(cy)), (int(r * 1.1), int(h * 0.2)), 0, 0, 360, colour, -1, cv2.LINE_AA
    )
    cv2.circle(img, head, int(r * 1.1), colour, -1, cv2.LINE_AA)
    for dy in (-0.05, 0.05):
        cv2.circle(
            img,
            (int(cx), int(cy + h * dy)),
            max(1, int(r * 0.18)),
            (240, 240, 245),
            -1,
            cv2.LINE_AA,
        )


def _draw_gingerbread_icon(img, kinds, rng, size) -> None:
    free = (kinds == g.FIELD) | (kinds == g.CITY)
    for x, y in _free_spots(free, rng, 0.09 * size, 1):
        draw_gingerbread(img, x, y, 0.16 * size)
