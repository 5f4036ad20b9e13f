"""Still-image recognition on the real photos (skipped when ../shared/data is absent)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from meeplecam import cli

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT.parent / "shared" / "data" / "real"
BOARD16 = REAL / "boards" / "primjer_igre_16.jpg"
needs_data = pytest.mark.skipif(not BOARD16.is_file(), reason="shared real data absent")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_scan", ROOT / "bench" / "scan.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def board16():
    import cv2

    return cv2.imread(str(BOARD16))


@needs_data
def test_table_and_grid_board16(board16):
    from meeplecam.vision import grid, table

    tab = table.detect(board16)
    assert tab.corners is not None and tab.corners.shape == (4, 2)
    c = tab.corners
    assert np.argmin(c[:, 0] + c[:, 1]) == 0  # starts nearest the top-left
    g = grid.detect(tab)
    assert len(g.cells) == 72
    assert 150 < g.pitch < 260


@needs_data
def test_scan_accuracy_board16_with_scans(board16):
    from meeplecam.engine import find_tileset
    from meeplecam.vision.model import build_from_folder
    from meeplecam.vision.scan import Scanner

    ts = find_tileset("base")
    res = Scanner(ts, build_from_folder(REAL / "scans", ts)).scan(board16)
    bench = _bench()
    truth = bench.labels16(REAL / "boards" / "primjer_igre_16_labels_draft.csv", ts)
    pred = {(t["x"], t["y"]): (t["tile"], t["rotation"]) for t in res["tiles"]}
    assert bench.compare(pred, truth, ts)["accuracy"] >= 0.97


@needs_data
def test_scan_json_contract(capsys, tmp_path):
    model = tmp_path / "model.json"
    assert cli.main(["model", "build", "--scans", str(REAL / "scans"), "--out", str(model)]) == 0
    capsys.readouterr()
    assert cli.main(["scan", str(BOARD16), "--json", "--model", str(model)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"table", "tiles", "meeples", "gingerbread", "bounds"}
    assert len(out["table"]) == 4 and all(len(p) == 2 for p in out["table"])
    assert {"x", "y", "tile", "rotation", "confidence"} <= set(out["tiles"][0])
    assert any(t["x"] == 0 and t["y"] == 0 for t in out["tiles"])
    assert all(t["rotation"] in (0, 90, 180, 270) for t in out["tiles"])
    assert all(0 <= t["confidence"] <= 1 for t in out["tiles"])
    b = out["bounds"]
    assert b["min_x"] <= min(t["x"] for t in out["tiles"]) <= max(t["x"] for t in out["tiles"])
    assert max(t["x"] for t in out["tiles"]) <= b["max_x"]
    assert out["gingerbread"] is None and isinstance(out["meeples"], list)


def test_missing_file_message(capsys, tmp_path):
    assert cli.main(["scan", str(tmp_path / "nope.jpg"), "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "no such file" in captured.err


def test_a_folder_is_not_a_photo(capsys, tmp_path):
    assert cli.main(["scan", str(tmp_path)]) == 1
    assert "a folder, not a photo" in capsys.readouterr().err


def test_not_an_image_message(capsys, tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_text("not a picture")
    assert cli.main(["scan", str(bad)]) == 1
    assert "not an image" in capsys.readouterr().err


def test_empty_table_message(capsys, tmp_path):
    import cv2

    blank = tmp_path / "blank.png"
    img = np.full((300, 400, 3), 235, np.uint8)
    img[:40] = 30
    cv2.imwrite(str(blank), img)
    assert cli.main(["scan", str(blank), "--json"]) == 1
    err = capsys.readouterr().err
    assert "empty table" in err and "no tiles" in err


@pytest.mark.parametrize("level", [0, 128], ids=["black", "one flat grey"])
def test_a_picture_of_nothing_is_a_covered_camera_not_an_empty_table(capsys, tmp_path, level):
    import cv2

    nothing = tmp_path / "nothing.png"
    cv2.imwrite(str(nothing), np.full((720, 1280, 3), level, np.uint8))
    assert cli.main(["scan", str(nothing)]) == 1
    err = capsys.readouterr().err
    assert str(nothing) in err and "camera covered" in err and "empty table" not in err


def test_bad_model_file(capsys, tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text('{"format": "something else"}')
    assert cli.main(["scan", str(tmp_path / "x.jpg"), "--model", str(bad)]) == 1
    assert "appearance model" in capsys.readouterr().err


@needs_data
def test_default_model_reads_board16_without_its_art(board16):
    """No images of this printing: geometry + terrain only (the hidden recordings' situation)."""
    from meeplecam.engine import find_tileset
    from meeplecam.vision.scan import Scanner

    ts = find_tileset("base")
    res = Scanner(ts).scan(board16)
    bench = _bench()
    truth = bench.labels16(REAL / "boards" / "primjer_igre_16_labels_draft.csv", ts)
    pred = {(t["x"], t["y"]): (t["tile"], t["rotation"]) for t in res["tiles"]}
    assert bench.compare(pred, truth, ts)["accuracy"] >= 0.85


@needs_data
def test_partial_board_grid():
    import cv2

    from meeplecam.vision import grid, table

    img = cv2.imread(str(REAL / "boards" / "20210614_191514.jpg"))
    assert len(grid.detect(table.detect(img)).cells) == 33


@needs_data
def test_model_round_trip(tmp_path):
    from meeplecam.engine import find_tileset
    from meeplecam.vision.model import build_from_folder, load_model, save_json

    ts = find_tileset("base")
    model = build_from_folder(REAL / "scans", ts)
    save_json(model.to_json(), tmp_path / "m.json")
    again = load_model(tmp_path / "m.json")
    assert set(again.templates) == set(model.templates) == set(ts.types)
    assert np.allclose(again.templates["D"][0], model.templates["D"][0], atol=0.06)


def test_labels_that_do_not_fit_are_refused(tmp_path):
    from meeplecam.engine import find_tileset
    from meeplecam.vision.errors import ModelError
    from meeplecam.vision.model import build_from_folder

    (tmp_path / "labels.csv").write_text("file,letter,sides\nx.jpg,D,FFFF\n")
    with pytest.raises(ModelError, match="do not fit"):
        build_from_folder(tmp_path, find_tileset("base"))


@needs_data
def test_top_down_board16(board16):
    from meeplecam.vision import grid, table

    g = grid.detect(table.detect(board16))
    img, (c0, r0) = g.top_down(board16, 32, margin=0)
    cols = max(c for c, _ in g.cells) - min(c for c, _ in g.cells) + 1
    rows = max(r for _, r in g.cells) - min(r for _, r in g.cells) + 1
    assert img.shape[:2] == (rows * 32, cols * 32)
    assert (c0, r0) == (min(c for c, _ in g.cells), min(r for _, r in g.cells))
