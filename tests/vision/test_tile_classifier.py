"""Geometry templates and the joint decode, without images."""

from __future__ import annotations

import numpy as np

from meeplecam.engine import find_tileset
from meeplecam.vision import geometry, terrain
from meeplecam.vision.decode import decode, side_conflicts
from meeplecam.vision.tiles import Candidate, TileClassifier


def test_expected_map_rotates_clockwise():
    ts = find_tileset("base")
    cls0, _ = geometry.expected(ts["E"], 0, 24)
    cls90, _ = geometry.expected(ts["E"], 90, 24)
    assert cls0[1, 12] == terrain.CITY and cls0[22, 12] == terrain.FIELD
    assert cls90[12, 22] == terrain.CITY and cls90[12, 1] == terrain.FIELD  # city faces east


def test_painted_tile_is_read_by_geometry():
    """A tile painted from its own class map (green/ochre/white) is read back with its rotation."""
    ts = find_tileset("base")
    colours = {
        terrain.FIELD: (40, 170, 60),
        terrain.CITY: (60, 120, 200),
        terrain.ROAD: (235, 235, 235),
        terrain.BUILDING: (50, 60, 170),
    }
    clf = TileClassifier(ts)
    for tile, rot in (("D", 90), ("V", 180), ("R", 270), ("B", 0)):
        cls, _ = geometry.expected(ts[tile], rot, 64)
        img = np.zeros((64, 64, 3), np.uint8)
        for k, c in colours.items():
            img[cls == k] = c
        top = clf.classify(img)[0]
        assert (top.tile, top.rotation) == (tile, rot)


def test_decode_prefers_matching_sides():
    ts = find_tileset("base")
    # left cell sure: U at 0 (road E); right cell unsure between B (field W) and U (road W)
    cells = {
        (0, 0): [Candidate("U", 0, 0, 0.99), Candidate("B", 0, 0, 0.01)],
        (1, 0): [Candidate("B", 0, 0, 0.55), Candidate("U", 0, 0, 0.45)],
    }
    out = decode(cells, ts, {"candidates": 5, "side_weight": 3, "count_weight": 1, "iterations": 5})
    assert out[(1, 0)].tile == "U"
    layout = {c: (x.tile, x.rotation) for c, x in out.items()}
    assert side_conflicts(layout, ts) == 0


def test_rank_restricts_to_allowed_and_learn_adds_samples():
    ts = find_tileset("base")
    colours = {
        terrain.FIELD: (40, 170, 60),
        terrain.CITY: (60, 120, 200),
        terrain.ROAD: (235, 235, 235),
        terrain.BUILDING: (50, 60, 170),
    }
    cls, _ = geometry.expected(ts["D"], 90, 64)
    img = np.zeros((64, 64, 3), np.uint8)
    for k, c in colours.items():
        img[cls == k] = c
    clf = TileClassifier(ts)
    ranked = clf.rank(img, [("E", 90), ("D", 90), ("D", 270)])
    assert {(c.tile, c.rotation) for c in ranked} == {("E", 90), ("D", 90), ("D", 270)}
    assert ranked[0].tile == "D" and ranked[0].rotation == 90
    assert abs(sum(c.prob for c in ranked) - 1) < 1e-6
    clf.learn(img, "D", 90)
    assert len(clf.model.templates["D"]) == 1
    assert clf.classify(img)[0].tile == "D"
