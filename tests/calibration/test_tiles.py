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


# --- a whole set in no order ---------------------------------------------------------------------

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
SHEETS = ROOT.parent / "shared" / "data" / "real" / "sheets"
SET12 = [("D", 0), ("E", 90), ("U", 90), ("V", 180), ("B", 0), ("A", 270)]
SET12 += [("K", 90), ("N", 180), ("R", 270), ("W", 0), ("X", 0), ("L", 180)]


def _sheet(tiles, gap=12, tile=150):
    """A scanner sheet: tiles drawn at their rotations in 3 columns on white paper."""
    from meeplecam.vision.model import rotate_cw

    ts = find_tileset("base")
    rows = -(-len(tiles) // 3)
    sheet = np.full((rows * (tile + gap) + 40, 3 * (tile + gap) + 40, 3), 250, np.uint8)
    for i, (tid, rot) in enumerate(tiles):
        r, c = divmod(i, 3)
        img = cv2.resize(art.canonical_art(ts[tid], "summer"), (tile, tile))
        y, x = 20 + r * (tile + gap), 20 + c * (tile + gap)
        sheet[y : y + tile, x : x + tile] = rotate_cw(img, rot)
    return sheet


def test_min_cost_assignment_is_least_total_cost():
    from itertools import permutations

    from meeplecam.calibration.tiles import min_cost_assignment

    rng = np.random.default_rng(3)
    for n, m in ((4, 4), (4, 6), (5, 5)):
        cost = rng.random((n, m)) * 10
        got = min_cost_assignment(cost)
        assert len(set(got.tolist())) == n
        best = min(sum(cost[i, p[i]] for i in range(n)) for p in permutations(range(m), n))
        assert cost[np.arange(n), got].sum() == pytest.approx(best)


def test_sheet_tiles_are_cut_out_in_reading_order():
    from meeplecam.calibration.tiles import on_light_background, sheet_crops

    sheet = _sheet(SET12)
    assert on_light_background(sheet)
    pieces = sheet_crops(sheet, size=64)
    assert len(pieces) == 12 and all(p.shape == (64, 64, 3) for p in pieces)


def test_a_set_in_no_order_is_labelled_by_shape_and_counts():
    from meeplecam.calibration.tiles import appearance_from_rows, label_whole_set, sheet_crops

    ts = find_tileset("base")
    labels = label_whole_set(sheet_crops(_sheet(SET12)), ts)
    right = sum(
        (t, ts[t].canonical_rotation(r)) == (tt, ts[tt].canonical_rotation(rr))
        for (t, r), (tt, rr) in zip(labels, SET12, strict=True)
    )
    assert right >= 11
    model = appearance_from_rows([_sheet(SET12[:6]), _sheet(SET12[6:])], ["whole-set"], ts)
    assert sum(len(v) for v in model.templates.values()) == 12


def test_more_tiles_than_the_set_is_a_clear_error():
    from meeplecam.calibration.tiles import label_whole_set

    ts = find_tileset("base")
    blank = [np.zeros((8, 8, 3), np.uint8)] * 73
    with pytest.raises(CalibrationError, match="73 tiles found but the set base has 72"):
        label_whole_set(blank, ts)


@pytest.mark.skipif(not SHEETS.is_dir(), reason="shared real data absent")
def test_a_real_first_edition_sheet_reads_by_shape():
    from meeplecam.calibration.tiles import label_whole_set, sheet_crops

    ts = find_tileset("base")
    # checked by eye
    eye = ["D180", "O90", "C0", "T90", "O90", "E180", "U0", "Q90", "E180", "X0", "D180", "G0"]
    labels = label_whole_set(sheet_crops(cv2.imread(str(SHEETS / "61to72.jpg"))), ts)
    right = sum(
        (t, ts[t].canonical_rotation(r)) == (w[0], ts[w[0]].canonical_rotation(int(w[1:])))
        for (t, r), w in zip(labels, eye, strict=True)
    )
    assert right >= 11  # X is read as W (T-junction) today
