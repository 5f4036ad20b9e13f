"""Tile appearance from a photo of tiles laid in rows, in a given order."""

import cv2
import numpy as np
import pytest

from meeplecam.calibration.errors import CalibrationError
from meeplecam.engine import find_tileset

art = pytest.importorskip("meeplecam.vision.synth.art")
ORDER = ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"]


def _photo(order, px_per_mm=3.0):
    ts = find_tileset("winter")
    w_mm, d_mm = 900.0, 600.0
    top = np.full(
        (round(d_mm * px_per_mm), round(w_mm * px_per_mm), 3), (90, 80, 60), np.uint8
    )  # a blue-grey cloth
    tile = round(45 * px_per_mm)
    for i, tid in enumerate(order):
        r, c = divmod(i, 5)
        x = round((250 + c * 60) * px_per_mm)
        y = round((220 + r * 60) * px_per_mm)
        img = art.canonical_art(ts[tid], "summer")
        top[y : y + tile, x : x + tile] = cv2.resize(
            img, (tile, tile), interpolation=cv2.INTER_AREA
        )
    h, w = top.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[240, 90], [1040, 100], [1200, 660], [80, 640]])
    floor = np.full((720, 1280, 3), (120, 120, 125), np.uint8)
    hom = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(top, hom, (1280, 720), dst=floor, borderMode=cv2.BORDER_TRANSPARENT)


def test_tiles_in_rows_become_templates_of_their_letters():
    from meeplecam.calibration.tiles import appearance_from_rows
    from meeplecam.vision.model import features
    from meeplecam.vision.terrain import balance, white_gains

    ts = find_tileset("winter")
    model = appearance_from_rows(_photo(ORDER), ORDER, ts)
    assert sorted(model.templates) == sorted(ORDER)

    def ref(tid):  # the art through the same inset and white balance as a scan
        img = art.canonical_art(ts[tid], "summer")
        k = int(0.04 * img.shape[0])
        img = img[k:-k, k:-k]
        return features(balance(img, white_gains(img)), model.size)

    refs = {t: ref(t) for t in ORDER}
    right = 0
    for tid in ORDER:
        got = model.templates[tid][0]
        nearest = min(refs, key=lambda t: float(np.abs(refs[t] - got).mean()))
        right += nearest == tid
    assert right == len(ORDER)


def test_wrong_count_is_a_clear_error():
    from meeplecam.calibration.tiles import appearance_from_rows

    with pytest.raises(CalibrationError, match="10 tiles found in the photo but 3 letters"):
        appearance_from_rows(_photo(ORDER), ["A", "B", "C"], find_tileset("winter"))
