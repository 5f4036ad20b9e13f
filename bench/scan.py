"""Measure the still-image recognition on the real photos; writes a results JSON and prints it.

    .venv/bin/python bench/scan.py [--data ../shared/data] [--out bench/scan-results.json]

Board 16 is compared with its labels draft up to a board shift and a quarter turn, once with the
appearance model built from real/scans (same copy) and once with the default geometry+terrain model
(no images of the art). Board 20 and the partial boards have no labels: side conflicts and type
counts against the base set are reported. Single tile photos: type accuracy of the best candidate.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def labels16(path: Path, ts) -> dict[tuple[int, int], tuple[str, int]]:
    out = {}
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            letter = row["AX_letter"]
            sides = row["edges_N_E_S_W (image frame; C=city R=road F=field)"]
            out[(int(row["col"]), int(row["row"]))] = (
                letter,
                ts[letter].rotations_fitting(sides)[0],
            )
    return out


def eye_labels() -> dict[str, dict]:
    """Boards labelled by eye for this bench: bench/labels/<photo stem>.csv (col,row,tile,rotation)."""
    out = {}
    for path in sorted((ROOT / "bench" / "labels").glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as fh:
            out[path.stem + ".jpg"] = {
                (int(r["col"]), int(r["row"])): (r["tile"], int(r["rotation"]))
                for r in csv.DictReader(fh)
            }
    return out


def turn(layout: dict, quarter: int, ts) -> dict:
    """The layout turned clockwise by ``quarter`` quarter turns (cells and rotations)."""
    out = {}
    for (x, y), (t, r) in layout.items():
        for _ in range(quarter):
            x, y = -y, x
        out[(x, y)] = (t, ts[t].canonical_rotation((r + 90 * quarter) % 360))
    return out


def compare(pred: dict, truth: dict, ts) -> dict:
    """Best agreement over quarter turns and shifts: (tile, rotation) right, type right."""
    best = {"right": -1}
    for q in range(4):
        p = turn(pred, q, ts)
        shifts = Counter((tx - px, ty - py) for px, py in p for tx, ty in truth)
        for (dx, dy), _ in shifts.most_common(6):
            right = types = 0
            for (x, y), (t, r) in p.items():
                tt = truth.get((x + dx, y + dy))
                if tt:
                    types += tt[0] == t
                    right += tt == (t, ts[t].canonical_rotation(r))
            if right > best["right"]:
                best = {"right": right, "type_right": types, "quarter": q, "shift": [dx, dy]}
    best["truth_tiles"] = len(truth)
    best["read_tiles"] = len(pred)
    best["accuracy"] = round(best["right"] / len(truth), 4)
    return best


def run_board(scanner, path: Path) -> tuple[dict, dict]:
    from meeplecam.vision.decode import side_conflicts
    from meeplecam.vision.scan import read_image

    times = []
    for _ in range(3):  # image read + scan, best and median of three
        t0 = time.perf_counter()
        res = scanner.scan(read_image(path))
        times.append(time.perf_counter() - t0)
    dt = sorted(times)[1]
    layout = {(t["x"], t["y"]): (t["tile"], t["rotation"]) for t in res["tiles"]}
    counts = Counter(t for t, _ in layout.values())
    over = {
        t: n - scanner.tileset[t].count for t, n in counts.items() if n > scanner.tileset[t].count
    }
    info = {
        "tiles": len(layout),
        "seconds": round(dt, 3),
        "stage_seconds": {k: round(v, 3) for k, v in scanner.timings.items()},
        "side_conflicts": side_conflicts(layout, scanner.tileset),
        "over_count_types": over,
        "table": res["table"],
    }
    return layout, info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "scan-results.json"))
    args = ap.parse_args(argv)
    import cv2

    from meeplecam.engine import find_tileset
    from meeplecam.vision import terrain
    from meeplecam.vision.model import build_from_folder
    from meeplecam.vision.scan import Scanner, read_image

    real = Path(args.data) / "real"
    if not real.is_dir():
        print(f"no data at {real}", file=sys.stderr)
        return 1
    ts = find_tileset("base")
    model = build_from_folder(real / "scans", ts)
    with_scans, default = Scanner(ts, model), Scanner(ts, None)
    truth = labels16(real / "boards" / "primjer_igre_16_labels_draft.csv", ts)
    results: dict = {}
    cellwise = (
        ("scans_model_no_joint_decode", Scanner(ts, model, joint_decode=False)),
        ("default_model_no_joint_decode", Scanner(ts, None, joint_decode=False)),
    )
    for name, sc in (("scans_model", with_scans), ("default_model", default), *cellwise):
        layout, info = run_board(sc, real / "boards" / "primjer_igre_16.jpg")
        info.update(compare(layout, truth, ts))
        results[f"board16_{name}"] = info
    eye = eye_labels()
    for b in ("primjer_igre_20.jpg", "20210614_191514.jpg", "20210614_191721.jpg"):
        layouts = {}
        for name, sc in (("scans_model", with_scans), ("default_model", default)):
            try:
                layout, info = run_board(sc, real / "boards" / b)
            except ValueError as exc:
                info = {"error": str(exc)}
            else:
                layouts[name] = layout
                if b in eye:  # labelled by eye for this bench (see bench/labels/)
                    info.update(compare(layout, eye[b], ts))
            results[f"{b}_{name}"] = info
        if len(layouts) == 2:  # how often the two models agree (no labels needed)
            a, d = layouts["scans_model"], layouts["default_model"]
            same = sum(1 for c in a if d.get(c) == a[c])
            results[f"{b}_default_model"]["agrees_with_scans_model"] = f"{same}/{len(a)}"
    # single tile photos: the whole photo is the tile (trimmed a little)
    photos = sorted((real / "tile-photos").glob("*.jpg"))
    for name, sc in (("scans_model", with_scans), ("default_model", default)):
        right = 0
        wrong = []
        for p in photos:
            img = read_image(p)
            h, w = img.shape[:2]
            crop = img[int(0.04 * h) : int(0.96 * h), int(0.04 * w) : int(0.96 * w)]
            crop = terrain.balance(crop, terrain.white_gains(crop))
            px = sc.cfg["crop_px"]
            crop = cv2.resize(crop, (px, px), interpolation=cv2.INTER_AREA)
            top = sc.classifier.classify(crop)[0]
            letter = p.name.split("_")[0]
            right += top.tile == letter
            if top.tile != letter:
                wrong.append(f"{p.name}->{top.tile}")
        results[f"tile_photos_{name}"] = {
            "photos": len(photos),
            "type_right": right,
            "accuracy": round(right / max(1, len(photos)), 4),
            "wrong": wrong,
        }
    Path(args.out).write_text(json.dumps(results, indent=1), encoding="utf-8")
    for k, v in results.items():
        keys = (
            "accuracy",
            "right",
            "type_right",
            "tiles",
            "read_tiles",
            "side_conflicts",
            "seconds",
            "over_count_types",
            "agrees_with_scans_model",
            "error",
        )
        print(k, {kk: v[kk] for kk in keys if kk in v})
    return 0


if __name__ == "__main__":
    sys.exit(main())
