"""The whole-table reading: table -> grid -> tiles -> joint decode -> followers -> scan result.

``Scanner(tileset, model).scan(image)`` returns the FORMATS "Scan result" dict. The scanner
loads its models once; ``debug_dir`` receives an annotated image of every stage.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import cv2
import numpy as np

from . import decode as joint
from . import followers, grid, table, terrain
from .config import settings
from .errors import ImageUnreadable
from .model import AppearanceModel
from .tiles import TileClassifier


def read_image(path: str | Path) -> np.ndarray:
    if Path(path).is_dir():
        raise ImageUnreadable(f"{path}: a folder, not a photo (replay reads a folder of frames)")
    if not Path(path).is_file():  # before OpenCV, which prints its own warning to stderr
        raise ImageUnreadable(f"{path}: no such file")
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise ImageUnreadable(f"{path}: not an image OpenCV can read")
    return img


class Scanner:
    def __init__(self, tileset, model: AppearanceModel | None = None, joint_decode: bool = True):
        self.tileset = tileset
        self.joint_decode = joint_decode
        self.classifier = TileClassifier(tileset, model)
        self.cfg = settings("tiles")
        self.decode_cfg = settings("decode")
        self.timings: dict[str, float] = {}

    def read(self, image: np.ndarray):
        """Table, grid, balanced image and decoded cells {(col, row): Candidate}."""
        t0 = time.perf_counter()
        tab = table.detect(image)
        t1 = time.perf_counter()
        grd = grid.detect(tab)
        t2 = time.perf_counter()
        gains = terrain.white_gains(tab.work[tab.tile_mask > 0])
        px = self.cfg["crop_px"]
        ranked = {}
        for c, r in grd.cells:
            crop = terrain.balance(grd.crop(image, c, r, px, self.cfg["inset"]), gains)
            ranked[(c, r)] = self.classifier.classify(crop)
        t3 = time.perf_counter()
        if self.joint_decode:
            chosen = joint.decode(ranked, self.tileset, self.decode_cfg)
        else:  # each cell on its own (for measuring what the joint decode adds)
            chosen = {c: lst[0] for c, lst in ranked.items()}
        t4 = time.perf_counter()
        self.timings = {"table": t1 - t0, "grid": t2 - t1, "tiles": t3 - t2, "decode": t4 - t3}
        return tab, grd, gains, ranked, chosen

    def scan(self, image: np.ndarray, debug_dir: str | Path | None = None) -> dict:
        tab, grd, gains, _, chosen = self.read(image)
        h, w = image.shape[:2]
        centres = {c: grd.to_image([[c[0] + 0.5, c[1] + 0.5]])[0] for c in chosen}
        origin = min(centres, key=lambda c: np.hypot(*(centres[c] - (w / 2, h / 2))))
        tiles = []
        placed = {}
        for (c, r), cand in sorted(chosen.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            x, y = c - origin[0], r - origin[1]
            tiles.append(
                {
                    "x": x,
                    "y": y,
                    "tile": cand.tile,
                    "rotation": cand.rotation,
                    "confidence": round(cand.prob, 3),
                }
            )
            placed[(c, r)] = (cand.tile, cand.rotation, x, y)
        found = followers.locate(image, grd, placed, self.tileset, gains)
        meeples = [entry for entry, _ in found]
        result = {
            "table": None if tab.corners is None else np.round(tab.corners).astype(int).tolist(),
            "tiles": tiles,
            "meeples": meeples,
            "gingerbread": None,
            "bounds": _bounds(tab, grd, origin, chosen),
        }
        if debug_dir:
            _debug(Path(debug_dir), image, tab, grd, chosen, result, gains, found)
        return result


def _bounds(tab, grd, origin, cells) -> dict | None:
    if tab.corners is None:
        return None
    xs = [c for c, _ in cells]
    ys = [r for _, r in cells]
    span = 40
    inside = []
    poly = tab.corners.astype(np.float32).reshape(-1, 1, 2)
    for r in range(min(ys) - span, max(ys) + span + 1):
        for c in range(min(xs) - span, max(xs) + span + 1):
            pts = grd.to_image([[c, r], [c + 1, r], [c + 1, r + 1], [c, r + 1]])
            if all(cv2.pointPolygonTest(poly, (float(a), float(b)), False) >= 0 for a, b in pts):
                inside.append((c, r))
    if not inside:
        return None
    cs = [c for c, _ in inside] + xs
    rs = [r for _, r in inside] + ys
    return {
        "min_x": min(cs) - origin[0],
        "max_x": max(cs) - origin[0],
        "min_y": min(rs) - origin[1],
        "max_y": max(rs) - origin[1],
    }


def _debug(folder: Path, image, tab, grd, chosen, result, gains, found) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    v = image.copy()
    lw = max(2, int(max(image.shape[:2]) / 800))
    if tab.corners is not None:
        cv2.polylines(v, [tab.corners.astype(np.int32)], True, (0, 0, 255), lw * 2)
    cv2.imwrite(str(folder / "1_table.jpg"), v)
    cv2.imwrite(str(folder / "1_tile_mask.png"), tab.tile_mask * 255)
    for (c, r), cand in chosen.items():
        q = grd.corners(c, r).astype(np.int32)
        cv2.polylines(v, [q], True, (255, 0, 0), lw)
        org = tuple(int(a) for a in q.mean(axis=0) - grd.pitch * 0.2)
        cv2.putText(
            v,
            f"{cand.tile}{cand.rotation}",
            org,
            cv2.FONT_HERSHEY_SIMPLEX,
            grd.pitch / 120,
            (0, 0, 0) if cand.prob > 0.5 else (0, 0, 255),
            lw,
        )
    for entry, (bx, by) in found:
        centre = (int(bx), int(by))
        cv2.circle(v, centre, int(grd.pitch * 0.12), (255, 0, 255), lw * 2)
        cv2.putText(
            v,
            f"{entry['colour']} {entry['at']}",
            centre,
            cv2.FONT_HERSHEY_SIMPLEX,
            grd.pitch / 160,
            (255, 0, 255),
            lw,
        )
    cv2.imwrite(str(folder / "2_grid_tiles.jpg"), v)
    cv2.imwrite(str(folder / "2_top_down.jpg"), grd.top_down(image, 96)[0])
    # terrain per cell, laid out on the grid: field green, city brown, road white, building grey
    palette = np.array([[40, 160, 40], [40, 100, 200], [255, 255, 255], [80, 80, 80]], np.uint8)
    cols = max(c for c, _ in chosen) + 1
    rows = max(r for _, r in chosen) + 1
    px = 48
    board = np.zeros((rows * px, cols * px * 2, 3), np.uint8)
    for c, r in chosen:
        crop = terrain.balance(grd.crop(image, c, r, px), gains)
        board[r * px : (r + 1) * px, c * px : (c + 1) * px] = crop
        cls = palette[terrain.classify(crop).argmax(-1)]
        board[r * px : (r + 1) * px, (cols + c) * px : (cols + c + 1) * px] = cls
    cv2.imwrite(str(folder / "3_cells_terrain.png"), board)
    (folder / "4_result.json").write_text(json.dumps(result, indent=1), "utf-8")
