"""Self-labelled first-edition sheets: build an appearance model from scans of a set in no order
and read the single tile photos with it; writes a results JSON and prints it.

    .venv/bin/python bench/sheets.py [--data ../shared/data] [--out bench/sheets-results.json]
                                     [--png /tmp/sheets-labels.png]

The sheets (real/sheets/*.jpg, no labels) are cut into tiles; a sheet that is a rescan of one
already read (same tiles, found by matching image features) is left out, since the labelling
counts each physical tile once. Every tile is read by the art-free model at every rotation and
letters are chosen jointly under the base set's counts (calibration.tiles.label_whole_set). The
appearance model built from those labels then reads real/tile-photos/ (31 photos, letter in the
file name), compared with the real/scans model (newest art) and the default model (no art).
``--png`` writes a contact sheet of the crops with the chosen letter and rotation (to check by
eye; it holds the publisher's art, so keep it out of the project).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each kept sheet's tiles in reading order as <letter><rotation>, checked by eye against
# ../TILES.md on contact sheets of the crops turned back to canonical orientation.
EYE = {
    "13to24.jpg": "P90 J90 U0 R90 L180 E90 V90 N90 H0 V90 V90 K180",
    "25to36.jpg": "U0 M90 A90 U0 I270 B0 W90 S90 B0 W90 D180 F90",
    "61to72.jpg": "D180 O90 C0 T90 O90 E180 U0 Q90 E180 X0 D180 G0",
}


def same_sheet(a, b, inliers: int = 400) -> bool:
    """Whether two sheet scans show the same tiles in the same places (at any turn)."""
    import cv2
    import numpy as np

    orb = cv2.ORB_create(3000)
    feats = []
    for img in (a, b):
        g = cv2.cvtColor(cv2.resize(img, None, fx=0.5, fy=0.5), cv2.COLOR_BGR2GRAY)
        feats.append(orb.detectAndCompute(g, None))
    (ka, da), (kb, db) = feats
    matches = cv2.BFMatcher(cv2.NORM_HAMMING, crossCheck=True).match(da, db)
    if len(matches) < 10:
        return False
    pa = np.float32([ka[m.queryIdx].pt for m in matches])
    pb = np.float32([kb[m.trainIdx].pt for m in matches])
    _, mask = cv2.findHomography(pa, pb, cv2.RANSAC, 5.0)
    return mask is not None and int(mask.sum()) >= inliers


def contact_sheet(pieces, labels, path: str, per_row: int = 12) -> None:
    import cv2
    import numpy as np

    tiles = []
    for img, (t, r) in zip(pieces, labels, strict=True):
        img = cv2.resize(img, (128, 128))
        cv2.rectangle(img, (0, 0), (58, 24), (255, 255, 255), -1)
        cv2.putText(img, f"{t}{r}", (2, 19), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 200), 2)
        tiles.append(img)
    while len(tiles) % per_row:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i : i + per_row]) for i in range(0, len(tiles), per_row)]
    cv2.imwrite(path, np.vstack(rows))


def read_photos(photos, classifier, px: int) -> dict:
    import cv2

    from meeplecam.vision import terrain
    from meeplecam.vision.scan import read_image

    right, wrong = 0, []
    for p in photos:  # as bench/scan.py: the whole photo is the tile (trimmed a little)
        img = read_image(p)
        h, w = img.shape[:2]
        crop = img[int(0.04 * h) : int(0.96 * h), int(0.04 * w) : int(0.96 * w)]
        crop = terrain.balance(crop, terrain.white_gains(crop))
        crop = cv2.resize(crop, (px, px), interpolation=cv2.INTER_AREA)
        top = classifier.classify(crop)[0]
        letter = p.name.split("_")[0]
        right += top.tile == letter
        if top.tile != letter:
            wrong.append(f"{p.name}->{top.tile}")
    return {"photos": len(photos), "type_right": right, "wrong": wrong}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "sheets-results.json"))
    ap.add_argument("--png", help="contact sheet of the labelled crops (outside the project)")
    args = ap.parse_args(argv)
    import cv2

    from meeplecam.calibration.tiles import (
        appearance_from_whole_set,
        model_from_labelled,
        sheet_crops,
    )
    from meeplecam.engine import find_tileset
    from meeplecam.vision.model import build_from_folder
    from meeplecam.vision.scan import Scanner

    real = Path(args.data) / "real"
    if not (real / "sheets").is_dir():
        print(f"no sheets at {real / 'sheets'}", file=sys.stderr)
        return 1
    ts = find_tileset("base")
    t0 = time.perf_counter()
    kept, left_out, seen = {}, {}, {}
    for path in sorted((real / "sheets").glob("*.jpg")):
        img = cv2.imread(str(path))
        twin = next((k for k, v in seen.items() if same_sheet(img, v)), None)
        if twin:
            left_out[path.name] = f"rescan of {twin}"
        else:
            kept[path.name] = img
        seen[path.name] = img
    t1 = time.perf_counter()
    model, labels = appearance_from_whole_set(list(kept.values()), ts)
    t2 = time.perf_counter()
    counts = Counter(t for t, _ in labels)
    results: dict = {
        "sheets_read": list(kept),
        "sheets_left_out": left_out,
        "tiles": len(labels),
        "letter_counts": dict(sorted(counts.items())),
        "labels": [f"{t}{r}" for t, r in labels],
        "seconds_dedupe": round(t1 - t0, 2),
        "seconds_label_and_build": round(t2 - t1, 2),
    }
    models = {"sheets_model": model, "scans_model": build_from_folder(real / "scans", ts)}
    truth = [w for name in kept for w in EYE.get(name, "").split()]
    if len(truth) == len(labels):
        canon = [(t, ts[t].canonical_rotation(r)) for t, r in labels]
        wrong = [
            f"{i}:{t}{r}!={w}"
            for i, ((t, r), w) in enumerate(zip(canon, truth, strict=True))
            if (t, r) != (w[0], ts[w[0]].canonical_rotation(int(w[1:])))
        ]
        results["self_labels_right_by_eye"] = len(labels) - len(wrong)
        results["self_labels_wrong"] = wrong
        pieces = [p for img in kept.values() for p in sheet_crops(img)]
        eye = [(w[0], int(w[1:])) for w in truth]
        models["sheets_model_eye_labels"] = model_from_labelled(pieces, eye, ts)
    if args.png:
        pieces = [p for img in kept.values() for p in sheet_crops(img)]
        contact_sheet(pieces, labels, args.png)
    photos = sorted((real / "tile-photos").glob("*.jpg"))
    models["default_model"] = None  # last, so the keys print in this order
    for name, m in models.items():
        sc = Scanner(ts, m)
        results[f"tile_photos_{name}"] = read_photos(photos, sc.classifier, sc.cfg["crop_px"])
    Path(args.out).write_text(json.dumps(results, indent=1), encoding="utf-8")
    for k, v in results.items():
        if k != "labels":
            print(k, v)
    return 0


if __name__ == "__main__":
    sys.exit(main())
