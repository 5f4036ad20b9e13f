"""The live scorer with an appearance model of the tiles (``vision.model``): the art itself tells
apart what the terrain cannot, such as the two tiles of a pennant pair, which differ by one small
shield."""

import cv2
import numpy as np
import pytest

from meeplecam.engine import find_tileset
from meeplecam.vision.live.appearance import ScorerConfig, TerrainScorer
from meeplecam.vision.model import build_from_art, features
from meeplecam.vision.synth import art

TILESET = find_tileset("winter")


def _ranked(scorer, cell, options, ignore=None) -> list[tuple[str, int]]:
    crop = scorer.prepare(cell)
    scores = scorer.score(crop, [(TILESET[t], r) for t, r in options], ignore, cell)
    return [options[i] for i in np.argsort(scores)[::-1]]


@pytest.mark.parametrize("palette", ["winter", "scans"])
@pytest.mark.parametrize("pair", [("M", "N"), ("F", "G"), ("O", "P"), ("Q", "R"), ("S", "T")])
def test_the_model_tells_a_pennant_pair_apart(palette, pair, art_cell):
    if palette == "scans" and not art.scans_available():
        pytest.skip("../shared/data/winter-tiles is absent")
    scorer = TerrainScorer(reference=build_from_art(TILESET, palette))
    for rotation in (0, 90, 180, 270):
        for laid in pair:
            cell = art_cell(laid, rotation, palette, seed=rotation)
            options = [(t, rotation) for t in pair]
            assert _ranked(scorer, cell, options)[0] == (laid, rotation), (laid, rotation)


@pytest.mark.parametrize("pair", [("M", "N"), ("O", "P")])
def test_a_far_cameras_blurred_shield_is_clearly_a_shield(pair):
    """A camera far from the table sees a tile 36 px across, softened: the shield is a blur of
    a few pixels. Against art blurred alike it still matches its own type far better than its
    twin (sharp art left the two about as near: a faint shield looked like none)."""
    model = build_from_art(TILESET, "winter")
    for rotation in (0, 90, 180, 270):
        for laid, twin in (pair, pair[::-1]):
            small = art.tile_art(TILESET[laid], rotation, "winter", 36)
            seen = cv2.GaussianBlur(cv2.resize(small, (46, 46)), (0, 0), 1.0)
            mine, theirs = model.twin_distances(
                features(seen, model.size), (laid, rotation), (twin, rotation)
            )
            assert (theirs - mine) / (theirs + mine) > 0.8, (laid, rotation)


def test_a_follower_over_the_art_is_left_out(art_cell):
    """A red figure covers part of the tile: the pixels under it are no evidence of the art."""
    scorer = TerrainScorer(reference=build_from_art(TILESET, "winter"))
    cell = art_cell("M", 90, "winter")
    cv2.circle(cell, (30, 30), 7, (30, 30, 200), -1)
    crop = scorer.prepare(cell)
    ignore = np.zeros(crop.shape[:2], bool)
    size = crop.shape[0]
    yy, xx = np.mgrid[0:size, 0:size]
    ignore[np.hypot(xx - 0.6 * size, yy - 0.6 * size) < 0.25 * size] = True
    options = [(TILESET["M"], 90), (TILESET["N"], 90), (TILESET["M"], 180)]
    scores = scorer.score(crop, options, ignore, cell)
    assert int(np.argmax(scores)) == 0


def test_distance_finds_the_rotation_of_a_sample():
    model = build_from_art(TILESET, "winter")
    turned = art.tile_art(TILESET["E"], 270, "winter", 200)
    feats = features(turned, model.size)
    distances = {r: model.distance(feats, "E", r) for r in (0, 90, 180, 270)}
    assert min(distances, key=distances.get) == 270
    assert distances[270] < 0.2 * min(distances[r] for r in (0, 90, 180))
    assert model.distance(feats, "no such tile", 0) is None


def test_a_model_of_the_art_holds_every_tile_type():
    model = build_from_art(TILESET, "winter")
    assert set(model.templates) == set(TILESET.types)


def test_a_model_of_the_art_knows_every_copy_drawn_differently():
    """The table draws one copy of each type with its trees elsewhere (or with animals): that
    copy's own picture is in the model, and a copy drawn alike is not counted twice."""
    model = build_from_art(TILESET, "winter")
    other_copy = art.tile_art(TILESET["R"], 0, "winter", 200, variant=1)
    assert model.distance(features(other_copy, model.size), "R", 0) < 1.0
    if art.scans_available():  # a scanned type without an animal copy has one picture
        assert len(build_from_art(TILESET, "scans").templates["R"]) == 1


def test_model_build_from_the_scans_says_when_they_are_missing(monkeypatch, tmp_path, capsys):
    from meeplecam.cli import main

    monkeypatch.setattr(art, "scans_available", lambda: False)
    out = tmp_path / "model.json"
    args = ["model", "build", "--art", "scans", "--tileset", "winter", "--out", str(out)]
    assert main(args) == 1
    assert "no tile scans" in capsys.readouterr().err
    assert not out.exists()


def _soft(cell: np.ndarray, keep: float, blur: float) -> np.ndarray:
    """The cell blurred more and with only ``keep`` of its contrast, as a soft camera shows
    fine art."""
    cell = cv2.GaussianBlur(cell, (0, 0), blur).astype(np.float64)
    mean = cell.reshape(-1, 3).mean(axis=0)
    return np.clip(mean + keep * (cell - mean), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("pair", [("M", "N"), ("F", "G"), ("O", "P"), ("Q", "R"), ("S", "T")])
def test_a_shield_seen_with_half_its_contrast_is_still_a_shield(pair, art_cell):
    """A camera keeps about two thirds of the art's contrast, less on a shield a few pixels
    wide: compared pixel by pixel with the scan, a faint shield looks more like no shield at
    all (8 of these 40 views were taken for their twin). The twin test scales the art to the
    view where the twins agree, then compares them where they differ."""
    if not art.scans_available():
        pytest.skip("../shared/data/winter-tiles is absent")
    model = build_from_art(TILESET, "scans")
    for rotation in (0, 90, 180, 270):
        for laid in pair:
            cell = _soft(art_cell(laid, rotation, "scans", seed=rotation), keep=0.5, blur=1.5)
            feats = features(cell[1:47, 1:47], model.size)
            found = model.twin_distances(feats, (pair[0], rotation), (pair[1], rotation))
            near = dict(zip(pair, found, strict=True))
            assert min(near, key=near.get) == laid, (laid, rotation, near)


def test_the_scorer_reports_each_term_and_scores_their_sum(art_cell):
    scorer = TerrainScorer(reference=build_from_art(TILESET, "winter"))
    cell = art_cell("M", 90, "winter")
    crop = scorer.prepare(cell)
    options = [(TILESET["M"], 90), (TILESET["N"], 90), (TILESET["E"], 0)]
    terms = scorer.terms(crop, options, None, cell)
    assert {"terrain", "reference", "reference twin", "sides", "roads"} <= set(terms)
    assert terms["reference twin"][0] == -terms["reference twin"][1] > 0  # M over N, E has none
    assert terms["reference twin"][2] == 0
    totals = np.sum(list(terms.values()), axis=0)
    assert np.allclose(scorer.score(crop, options, None, cell), totals)


def test_a_blob_the_tiles_own_art_explains_is_no_figure(art_cell):
    # the newer base game's cloister has red roofs: the follower detector sees a red blob
    # there, and the art of the tile says it is the building, where a red monk is not
    scorer = TerrainScorer(reference=build_from_art(TILESET, "winter"))
    cloister = TILESET["B"]
    cell = art_cell("B", 0, "winter")
    crop = scorer.prepare(cell)
    size = crop.shape[0]
    yy, xx = np.mgrid[0:size, 0:size]
    middle = np.hypot(xx - size / 2, yy - size / 2) < 0.15 * size
    assert scorer.art_explains(cell, middle, cloister, 0)
    monk = cell.copy()
    cv2.circle(monk, (24, 24), 6, (30, 30, 200), -1)
    assert not scorer.art_explains(monk, middle, cloister, 0)
    assert not TerrainScorer().art_explains(cell, middle, cloister, 0)  # no model: no say


def _glared(cell: np.ndarray, centre, sigma: float, strength: float) -> np.ndarray:
    """A lamp's glare spot on a cell picture: white light added, clipped at the sensor's top."""
    yy, xx = np.mgrid[0 : cell.shape[0], 0 : cell.shape[1]]
    spot = np.exp(-((xx - centre[0]) ** 2 + (yy - centre[1]) ** 2) / (2 * sigma**2))
    return np.clip(cell + 255 * strength * spot[..., None], 0, 255).astype(np.uint8)


def _every_option(model) -> list[tuple[str, int]]:
    return [(t, r) for t in TILESET.types if t in model.templates for r in (0, 90, 180, 270)]


@pytest.mark.parametrize("laid, spot", [(("W", 180), (24, 24)), (("WI7", 90), (24, 40))])
def test_a_road_washed_out_by_a_lamps_glare_is_read_through_it(laid, spot, art_cell):
    """A glare spot over a snowy tile: its roads fade into white, which looks like snow, and
    taken as it looks the tile reads as a curve (V). Seen as the art mixed with white light,
    it is read right among every type and rotation."""
    model = build_from_art(TILESET, "winter")
    cell = _glared(art_cell(*laid, "winter"), spot, 30, 0.6)
    options = _every_option(model)
    assert _ranked(TerrainScorer(reference=model), cell, options)[0] == laid
    as_it_looks = TerrainScorer(ScorerConfig(glare_suspect=0.0), reference=model)
    assert _ranked(as_it_looks, cell, options)[0][0] == "V"


def test_a_tile_in_even_light_is_not_taken_for_glare(art_cell):
    """Without a glare spot, every option scores as it would with no glare reading at all."""
    model = build_from_art(TILESET, "winter")
    options = [(TILESET[t], r) for t, r in _every_option(model)]
    seeing = TerrainScorer(reference=model)
    as_it_looks = TerrainScorer(ScorerConfig(glare_suspect=0.0), reference=model)
    for laid in ("A", "D", "E", "M", "U", "V", "W", "WI7"):
        cell = art_cell(laid, 90, "winter")
        crop = seeing.prepare(cell)
        assert seeing.score(crop, options, None, cell) == as_it_looks.score(
            crop, options, None, cell
        )


def test_a_figure_the_art_does_not_explain_is_disowned_and_the_art_itself_is_not(art_cell):
    """A dull yellow knight on a tan city (its colour barely tells it from the city): the
    model's art of the tile does not explain the blob, so something lies there. A blob over
    the city's own pixels, nothing on them, the art explains."""
    model = build_from_art(TILESET, "winter")
    scorer = TerrainScorer(reference=model)
    bare = art_cell("R", 180, "winter")
    crop = scorer.prepare(bare)
    blob = np.zeros(crop.shape[:2], bool)
    blob[18:26, 8:13] = True  # on the city, west of the middle
    assert not scorer.art_disowns(bare, blob, TILESET["R"], 180)
    knight = bare.copy()
    cv2.rectangle(knight, (11, 25), (17, 37), (40, 120, 130), -1)  # olive, over that spot
    assert scorer.art_disowns(knight, blob, TILESET["R"], 180)
    assert not scorer.art_explains(knight, blob, TILESET["R"], 180)
