"""Printable sheets, and the corner markers found again in a warped synthetic table."""

import re

import cv2
import numpy as np
import pytest

from meeplecam.calibration import markers
from meeplecam.calibration.errors import MarkersNotFound
from meeplecam.calibration.table import find_corner_markers
from meeplecam.cli import main


def test_corner_sheet_is_true_scale():
    sheet = markers.corner_sheet("A4", dpi=150)
    w_mm, h_mm = sheet.size_mm
    assert abs(w_mm - 210) < 0.5 and abs(h_mm - 297) < 0.5
    # The four markers decode from the sheet itself.
    found = cv2.aruco.ArucoDetector(markers.dictionary()).detectMarkers(sheet.image)[1]
    assert sorted(found.ravel().tolist()) == [0, 1, 2, 3]


def test_png_and_pdf_files(tmp_path):
    sheet = markers.charuco_sheet("A4", dpi=100)
    png = markers.write(sheet, tmp_path / "board.png").read_bytes()
    assert png.startswith(b"\x89PNG") and b"pHYs" in png
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_GRAYSCALE)
    assert img.shape == sheet.image.shape
    pdf = markers.write(sheet, tmp_path / "board.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    box = re.search(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)
    # A4 landscape is 841.9 x 595.3 pt; the page is the image, whole pixels at 100 dpi.
    assert abs(float(box[1]) - 841.9) < 1 and abs(float(box[2]) - 595.3) < 1


def test_markers_command_writes_a_file(tmp_path, capsys):
    out = tmp_path / "corners.png"
    assert main(["markers", str(out), "--dpi", "100"]) == 0
    assert out.stat().st_size > 1000
    assert "100 %" in capsys.readouterr().out
    assert main(["markers", str(tmp_path / "board.pdf"), "--charuco", "--dpi", "100"]) == 0
    assert (tmp_path / "board.pdf").read_bytes().startswith(b"%PDF")
    assert main(["markers", str(tmp_path / "x.png"), "--paper", "B9"]) == 2


_TABLE_MM = [[0, 0], [1000, 0], [1000, 700], [0, 700]]


def _table_with_markers(side_mm=60.0, margin_mm=5.0, px_per_mm=2.0):
    """A flat 1000 x 700 mm table with a corner marker (on white paper) in each corner, warped
    by a perspective; returns (image, true table corners in the image)."""
    w_mm, d_mm = 1000.0, 700.0
    top = np.full((round(d_mm * px_per_mm), round(w_mm * px_per_mm), 3), (60, 100, 150), np.uint8)
    paper = round((side_mm + 2 * margin_mm) * px_per_mm)
    side = round(side_mm * px_per_mm)
    m = round(margin_mm * px_per_mm)
    for marker_id, (cx, cy) in enumerate([(0, 0), (1, 0), (1, 1), (0, 1)]):
        sheet = np.full((paper, paper), 255, np.uint8)
        sheet[m : m + side, m : m + side] = cv2.aruco.generateImageMarker(
            markers.dictionary(), marker_id, side, borderBits=1
        )
        x0 = 0 if cx == 0 else top.shape[1] - paper
        y0 = 0 if cy == 0 else top.shape[0] - paper
        top[y0 : y0 + paper, x0 : x0 + paper] = sheet[..., None]
    h, w = top.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[260, 120], [1010, 140], [1180, 650], [110, 620]])
    hom = cv2.getPerspectiveTransform(src, dst)
    floor = np.full((720, 1280, 3), 90, np.uint8)
    img = cv2.warpPerspective(
        top, hom, (1280, 720), dst=floor, borderMode=cv2.BORDER_TRANSPARENT, flags=cv2.INTER_AREA
    )
    return img, dst.astype(float)


def test_corner_markers_found_in_a_warped_table():
    img, truth = _table_with_markers()
    found = find_corner_markers(img)
    assert found.ids == [0, 1, 2, 3]
    err = np.linalg.norm(found.corners - truth, axis=1).max()
    diag = np.linalg.norm(truth[2] - truth[0])
    assert err / diag < 0.005, err


def test_missing_marker_is_a_clear_error():
    img, _ = _table_with_markers()
    img[550:720, 0:400] = 90  # cover the bottom-left marker
    with pytest.raises(MarkersNotFound, match=r"\[3\] not seen"):
        find_corner_markers(img)


def test_wizard_with_markers_measures_the_table():
    from meeplecam.calibration import wizard

    img, truth = _table_with_markers()
    result = wizard.run(img, wizard.Options(markers=True, followers=False), say=lambda line: None)
    p = result.profile
    assert p.table.source == "markers"
    mm = p.scale.to_table_points(truth, 1280, 720)
    width = (np.linalg.norm(mm[1] - mm[0]) + np.linalg.norm(mm[2] - mm[3])) / 2
    depth = (np.linalg.norm(mm[3] - mm[0]) + np.linalg.norm(mm[2] - mm[1])) / 2
    assert abs(width - 1000) < 5 and abs(depth - 700) < 5
    # the live grid starts at the start tile: without one the profile is not saved silently
    assert any("no start tile" in w for w in result.warnings)


def test_marker_squares_are_found_to_a_tenth_of_a_millimetre():
    # ArUco's own corners lie a few tenths of a pixel inside a blurred square (here the near
    # markers' sides measured 59.1-59.7 mm); found along their whole sides, the squares seen
    # large measure their printed 60 mm
    img, truth = _table_with_markers()
    img = cv2.GaussianBlur(img, (0, 0), 1.0)
    to_mm = cv2.getPerspectiveTransform(np.float32(truth), np.float32(_TABLE_MM))
    near = [
        square
        for square in find_corner_markers(img).squares
        if np.linalg.norm(square - np.roll(square, 1, axis=0), axis=1).min() > 50
    ]
    assert len(near) == 2
    for square in near:
        mm = cv2.perspectiveTransform(square.reshape(-1, 1, 2), to_mm).reshape(4, 2)
        sides = np.linalg.norm(mm - np.roll(mm, 1, axis=0), axis=1)
        assert np.abs(sides - 60.0).max() < 0.15, sides


def _rigid_rms(est: np.ndarray, truth: np.ndarray) -> float:
    """RMS distance after the best rotation and translation of ``est`` onto ``truth``."""
    ce, ct = est.mean(axis=0), truth.mean(axis=0)
    u, _, vt = np.linalg.svd((est - ce).T @ (truth - ct))
    if np.linalg.det(u @ vt) < 0:
        vt[-1] *= -1
    return float(np.sqrt((((est - ce) @ (u @ vt) + ct - truth) ** 2).sum(axis=1).mean()))


def test_markers_on_a_rendered_table_place_every_tile_within_a_millimetre():
    # the renderer's camera has a real lens (two radial terms) and the markers lie where it
    # bends most; every tile corner of the finished game, mapped to the table, is where it lies
    from meeplecam.calibration import wizard
    from meeplecam.calibration.demo import printed_corner_markers
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.render import render, truth
    from meeplecam.vision.synth.scene import Scene
    from meeplecam.vision.synth.sequence import table_states

    game = random_game(find_tileset("winter"), 2, seed=1001)
    scene = Scene(game, 1001, "summer", (1280, 720), markers=printed_corner_markers())
    states = [after for _, _, after in table_states(game)]
    frame = render(scene, states[0])
    result = wizard.run(frame, wizard.Options(markers=True, followers=False), say=lambda _: None)
    assert not result.warnings
    final = truth(scene, states[-1])
    px = np.concatenate([t["corners"] for t in final["tiles"]]).astype(float)
    mm = np.concatenate([t["corners_mm"] for t in final["tiles"]]).astype(float)
    assert _rigid_rms(result.profile.scale.to_table_points(px, 1280, 720), mm) < 1.0
    # the table's axes start at the start tile's north-west corner, as without markers
    start = np.asarray(truth(scene, states[0])["tiles"][0]["corners"], float)
    square = [[0, 0], [45, 0], [45, 45], [0, 45]]
    corners = result.profile.scale.to_table_points(start, 1280, 720)
    assert np.abs(corners - square).max() < 1.5, corners


def test_the_marker_sheets_are_no_followers():
    # white paper with a black square, lying on the table: the follower step had taken a
    # sheet's corner for a sixth, white follower on this table
    from meeplecam.calibration import wizard
    from meeplecam.calibration.demo import DEMO_COLOURS, demo_view

    frame, _ = demo_view(17, size=(1920, 1080), markers=True)
    result = wizard.run(frame, wizard.Options(markers=True), say=lambda _: None)
    assert result.profile.followers.names == list(DEMO_COLOURS)
    assert not result.warnings
