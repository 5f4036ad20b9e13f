"""The profile data type: round trip, atomic save, versions, corrupt files give clear errors."""

import json

import numpy as np
import pytest

from meeplecam.vision import profile as pf
from meeplecam.vision.profile import Profile, ProfileError


def _full() -> Profile:
    return Profile(
        frame=pf.FrameInfo(1280, 720),
        table=pf.TableOutline([[0.05, 0.06], [0.95, 0.05], [0.96, 0.94], [0.04, 0.95]], "clicks"),
        scale=pf.Scale(
            [[1200.0, 10.0, -600.0], [5.0, 700.0, -350.0], [0.0, 0.01, 1.0]], 45.0, 44.2, 1
        ),
        camera=pf.Camera(
            [[1000.0, 0, 640], [0, 1000.0, 360], [0, 0, 1]],
            [-0.1, 0.01, 0, 0, 0],
            [1280, 720],
            0.31,
            9,
        ),
        followers=pf.FollowerColours(
            [
                pf.FollowerColour("red", [120.0, 185.0, 165.0], np.eye(3).tolist(), 300),
                pf.FollowerColour("blue", [80.0, 150.0, 85.0], (2 * np.eye(3)).tolist(), 280),
            ]
        ),
        appearance={"kind": "test-model", "weights": [1, 2, 3]},
        created="2026-11-22T04:00:00Z",
    )


def test_round_trip(tmp_path):
    path = _full().save(tmp_path / "table.json")
    data = json.loads(path.read_text())
    assert data["format"] == "meeplecam-profile/1"
    back = pf.load(path)
    assert back == _full()
    assert not list(tmp_path.glob(".*.tmp")), "temporary file left behind"


def test_fractions_follow_a_resolution_change():
    p = _full()
    small = p.table.pixels(1280, 720)
    big = p.table.pixels(1920, 1080)
    assert np.allclose(big, small * 1.5)
    h_small, h_big = p.scale.to_table(1280, 720), p.scale.to_table(1920, 1080)
    pt_small, pt_big = np.array([640.0, 360.0, 1.0]), np.array([960.0, 540.0, 1.0])
    a, b = h_small @ pt_small, h_big @ pt_big
    assert np.allclose(a / a[2], b / b[2])
    assert np.allclose(p.camera.matrix_for(1920, 1080)[0, 0], 1500)


def test_followers_classify_by_nearest_colour():
    p = _full()
    assert p.followers.classify([[118, 183, 166], [82, 151, 86]]) == ["red", "blue"]


# Follower colours as the calibration learned them on a rendered table (bench/colours.py, seed
# 1119): Lab mean and covariance of each.
SEED_1119 = {
    "red": ([47.9, 157.9, 143.1], [[96.8, 20.4, 22.2], [20.4, 48.2, 45.1], [22.2, 45.1, 65.1]]),
    "yellow": ([102.9, 118.9, 166.1], [[138.4, 1.9, 20.6], [1.9, 18.4, 14.9], [20.6, 14.9, 74.5]]),
    "green": (
        [66.4, 101.7, 147.3],
        [[81.9, -12.4, 18.5], [-12.4, 13.6, -17.3], [18.5, -17.3, 38.6]],
    ),
    "blue": ([41.2, 136.4, 98.8], [[46.0, -1.0, -5.9], [-1.0, 7.7, -4.0], [-5.9, -4.0, 10.8]]),
    "black": ([11.1, 127.6, 128.1], [[14.1, 0.5, 3.4], [0.5, 6.5, 3.2], [3.4, 3.2, 17.5]]),
}


def test_a_follower_greyed_by_the_tile_under_it_keeps_its_colour():
    """A small figure takes part of its chroma from what is around it (the camera keeps colour at
    half resolution): a blue one standing on a field is a greyer blue than the one calibrated,
    and was read black. Black figures, whose chroma is all borrowed, stay black."""
    model = pf.FollowerColours([pf.FollowerColour(n, m, c) for n, (m, c) in SEED_1119.items()])
    blue = [46, 126, 110]  # the rendered blue follower's median colour in play (seed 1119)
    blacks = [[16, 128, 132], [47, 118, 137], [17, 124, 134], [14, 122, 133]]  # same scene
    assert model.classify([blue, *blacks]) == ["blue"] + ["black"] * len(blacks)
    # The learned blue with a part BLEED of its chroma lost, as one on a grey tile in play.
    greyer = pf.shades_lab(pf.lab_to_bgr(SEED_1119["blue"][0]), [1.0], bleed=[pf.BLEED])
    assert model.classify(greyer) == ["blue"]


def test_chroma_is_scaled_about_the_grey_of_the_same_luma():
    bgr = np.array([[58.0, 139.0, 46.0], [32.0, 32.0, 32.0]])
    luma = bgr @ np.asarray(pf.LUMA)
    assert np.allclose(pf.with_chroma(bgr, 0.0), luma[:, None] * np.ones(3))
    assert np.allclose(pf.with_chroma(bgr, 0.5) @ np.asarray(pf.LUMA), luma)
    assert np.allclose(pf.with_chroma(bgr, 1.0), bgr)
    assert np.allclose(pf.with_chroma(bgr[1], 2.0), bgr[1])  # grey has no chroma to scale
    # shades_lab without bleed is what it was: (factors x glare) Lab colours
    assert pf.shades_lab(bgr[0], [1.0, 1.3], [0.0, 0.2]).shape == (4, 3)
    assert pf.shades_lab(bgr[0], [1.0, 1.3], [0.0, 0.2], [0.0, pf.BLEED]).shape == (8, 3)


def test_save_is_atomic_and_keeps_the_old_file_on_failure(tmp_path):
    path = _full().save(tmp_path / "table.json")
    before = path.read_text()
    broken = _full()
    broken.scale.tile_px = float("nan")
    with pytest.raises(ValueError):
        broken.save(path)
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.json"]


def test_minimal_profile_loads(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps({"format": "meeplecam-profile/1", "frame": {"width": 640, "height": 480}})
    )
    p = pf.load(path)
    assert p.table is None and p.scale is None and p.followers is None


def test_old_version_is_migrated(tmp_path, monkeypatch):
    def from_v0(data):  # an imagined v0 kept pixel corners and the frame size at the top level
        w, h = data.pop("width"), data.pop("height")
        corners = [[x / w, y / h] for x, y in data.pop("table_px")]
        return {
            "format": "meeplecam-profile/1",
            "frame": {"width": w, "height": h},
            "table": {"corners": corners, "source": "clicks"},
        }

    monkeypatch.setitem(pf.MIGRATIONS, 0, from_v0)
    path = tmp_path / "old.json"
    path.write_text(
        json.dumps(
            {
                "format": "meeplecam-profile/0",
                "width": 100,
                "height": 50,
                "table_px": [[10, 5], [90, 5], [90, 45], [10, 45]],
            }
        )
    )
    p = pf.load(path)
    assert p.table.corners[2] == [0.9, 0.9]


def test_old_version_without_migration_gives_a_clear_message(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": "meeplecam-profile/0", "frame": {}}))
    with pytest.raises(ProfileError, match=r"old\.json.*too old.*meeplecam calibrate"):
        pf.load(path)


def test_newer_version_gives_a_clear_message(tmp_path):
    path = tmp_path / "new.json"
    path.write_text(json.dumps({"format": "meeplecam-profile/7"}))
    with pytest.raises(ProfileError, match=r"new\.json.*newer meeplecam"):
        pf.load(path)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "not valid JSON"),
        ('{"format": "meeplecam-profile/1", "frame": {"width": 10', "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"format": "meeplecam-record/1"}', "not a meeplecam profile"),
        ('{"format": "meeplecam-profile/x"}', "unknown profile format"),
        ('{"format": "meeplecam-profile/1"}', "'frame'"),
        (
            '{"format": "meeplecam-profile/1", "frame": {"width": "wide", "height": 1}}',
            "frame.width",
        ),
        ('{"format": "meeplecam-profile/1", "frame": {"width": 0, "height": 1}}', "not positive"),
        (
            '{"format": "meeplecam-profile/1", "frame": {"width": 9, "height": 9}, '
            '"table": {"corners": [[0, 0], [1, 0], [1, 1]]}}',
            "table.corners",
        ),
        (
            '{"format": "meeplecam-profile/1", "frame": {"width": 9, "height": 9}, '
            '"table": {"corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "source": "magic"}}',
            "table.source",
        ),
        (
            '{"format": "meeplecam-profile/1", "frame": {"width": 9, "height": 9}, '
            '"table": {"corners": [[0, 0], [0, 0], [0, 0], [0, 0]]}}',
            "no area",
        ),
        (
            '{"format": "meeplecam-profile/1", "frame": {"width": 9, "height": 9}, '
            '"scale": {"homography": [[0, 0, 0], [0, 0, 0], [0, 0, 0]]}}',
            "singular",
        ),
        (
            '{"format": "meeplecam-profile/1", "frame": {"width": 9, "height": 9}, '
            '"scale": {"homography": [[1, 0, 0], [0, 1, 0], [0, 0, NaN]]}}',
            "finite",
        ),
        (
            '{"format": "meeplecam-profile/1", "frame": {"width": 9, "height": 9}, '
            '"followers": {"colours": [{"name": "red", "lab": [1, 2, 3], '
            '"cov": [[1, 0, 0], [0, -1, 0], [0, 0, 1]]}]}}',
            "positive definite",
        ),
        (
            '{"format": "meeplecam-profile/1", "frame": {"width": 9, "height": 9}, '
            '"camera": {"matrix": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "distortion": [0], '
            '"image_size": [9, 9]}}',
            "camera.distortion",
        ),
        (
            '{"format": "meeplecam-profile/1", "frame": {"width": 9, "height": 9}, "table": 3}',
            "'table' must be an object",
        ),
    ],
)
def test_corrupt_profile_gives_a_clear_error(tmp_path, text, problem):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ProfileError) as info:
        pf.load(path)
    message = str(info.value)
    assert str(path) in message and problem in message


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(ProfileError, match="no such profile"):
        pf.load(tmp_path / "nothing.json")
    bad = tmp_path / "bin.json"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ProfileError, match=r"bin\.json"):
        pf.load(bad)


# Follower colours as the calibration learned them on a rendered table (bench/colours.py, seed
# 1209: a green field under a warm light).
SEED_1209 = {
    "red": ([69.3, 164.8, 151.9], [[99.0, 6.5, -14.5], [6.5, 81.2, 45.7], [-14.5, 45.7, 49.8]]),
    "yellow": (
        [144.2, 118.7, 184.4],
        [[180.2, -20.4, 23.2], [-20.4, 15.0, 0.4], [23.2, 0.4, 10.3]],
    ),
    "green": (
        [85.7, 98.7, 149.8],
        [[162.7, -42.5, 31.0], [-42.5, 26.4, -20.1], [31.0, -20.1, 25.5]],
    ),
    "blue": ([63.0, 134.6, 98.4], [[104.6, -9.2, -5.2], [-9.2, 12.1, -11.1], [-5.2, -11.1, 33.3]]),
    "black": ([24.9, 124.6, 130.0], [[106.9, 2.0, -1.5], [2.0, 5.5, -0.7], [-1.5, -0.7, 6.4]]),
}


def test_a_black_farmer_on_a_green_field_is_black_given_the_field():
    """A black farmer lying on a green field shows a dark faint green (its chroma is all the
    field's): alone it is nearer the green figure, but with the field around it known, it is a
    black figure that took its part of the field's chroma."""
    model = pf.FollowerColours([pf.FollowerColour(n, m, c) for n, (m, c) in SEED_1209.items()])
    farmer, field = [65, 114, 143], [140, 117, 158]  # medians in play (seed 1209)
    assert model.classify([farmer]) == ["green"]
    assert model.classify([farmer], around=[field]) == ["black"]
    # a green figure on the same field stays green, a black one on a grey road stays black
    green = pf.shades_lab(pf.lab_to_bgr(SEED_1209["green"][0]), [1.0])
    assert model.classify(green, around=[field]) == ["green"]
    assert model.classify([[26, 127, 129]], around=[[120, 128, 128]]) == ["black"]
