"""``meeplecam synth`` writes a data set; the scans palette uses the real Winter scans."""

import json

import numpy as np
import pytest

from meeplecam.cli import main
from meeplecam.engine import find_tileset, load_record
from meeplecam.vision.synth import art
from meeplecam.vision.synth.geometry import label_mask


def test_synth_command_writes_games(tmp_path, capsys):
    code = main([
        "synth", str(tmp_path / "set"), "--games", "2", "--seed", "3", "--size", "160x96",
        "--turns", "3", "--palette", "summer",
    ])  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert "frames" in err
    games = sorted((tmp_path / "set").iterdir())
    assert [g.name for g in games] == ["game-00003", "game-00004"]
    for g in games:
        load_record(json.loads((g / "record.json").read_text()))
        assert len(list((g / "frames").glob("*.jpg"))) == len(list((g / "truth").glob("*.json")))


def test_synth_command_rejects_a_bad_size(tmp_path, capsys):
    assert main(["synth", str(tmp_path), "--size", "big"]) == 2
    assert "--size" in capsys.readouterr().err


@pytest.mark.skipif(not art.scans_available(), reason="../shared/data/winter-tiles is absent")
def test_scans_palette_uses_the_real_scans():
    ts = find_tileset("winter")
    d = ts.types["D"]
    scan = art.canonical_art(d, "scans", 0)
    drawn = art.canonical_art(d, "winter", 0)
    assert scan.shape == drawn.shape
    assert not np.array_equal(scan, drawn)
    # the scan's city (north) is brown and its field (south) is snow, as the geometry says
    _, kinds = label_mask(d, 0, scan.shape[0])
    s = scan.astype(float)
    assert s[kinds == 2].mean() < s[kinds == 0].mean() - 30
    assert art.canonical_art(ts.types["J"], "scans", 1) is not None


def test_package_exports_resolve():
    import meeplecam.vision.synth as synth
    import meeplecam.vision.synth.render  # noqa: F401  (a submodule import must not shadow them)

    for name in synth.__all__:
        assert getattr(synth, name) is not None
    assert callable(synth.render_frame)


def test_table_surface_can_be_chosen(tmp_path):
    # the hidden real recordings are of a white table: the renderer can draw one on request
    import cv2

    def table_lightness(surface):
        folder = tmp_path / surface
        code = main([
            "synth", str(folder), "--seed", "5", "--size", "320x180", "--turns", "1",
            "--table", surface,
        ])  # fmt: skip
        assert code == 0
        game = next(folder.iterdir())
        frame = cv2.imread(str(sorted((game / "frames").glob("*.jpg"))[0]))
        truth = json.loads(sorted((game / "truth").glob("*.json"))[0].read_text())
        outline = np.array(truth["table"])
        mask = np.zeros(frame.shape[:2], np.uint8)
        cv2.fillPoly(mask, [outline.astype(np.int32).reshape(-1, 2)], 1)
        lab = cv2.cvtColor(frame, cv2.COLOR_BGR2Lab)
        return float(np.median(lab[..., 0][mask > 0]))

    assert table_lightness("white") > table_lightness("wood") + 40
