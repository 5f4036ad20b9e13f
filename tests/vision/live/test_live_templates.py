"""Pictures of the tile types the players have confirmed (the live scorer's templates): a copy
never seen before teaches the tracker its art as the game goes on, so the second straight road
is read by what the first one looked like."""

import numpy as np
import pytest

from meeplecam.engine import find_tileset
from meeplecam.vision.live.appearance import ScorerConfig, TerrainScorer
from meeplecam.vision.synth import art

TILESET = find_tileset("winter")
U, W = TILESET["U"], TILESET["W"]


def _scorer(art_cell, weight: float) -> TerrainScorer:
    """A scorer that has seen the start tile and one straight road (U) confirmed."""
    scorer = TerrainScorer(ScorerConfig(template_weight=weight))
    for tile, seed in ((TILESET["D"], 0), (U, 1)):
        cell = art_cell(tile.id, 0, "scans", seed=seed)
        scorer.learn(scorer.prepare(cell), tile, 0, cell=cell)
    return scorer


def _scores(scorer, cell, options) -> list[float]:
    return scorer.score(scorer.prepare(cell), options, cell=cell)


@pytest.fixture
def scans():
    if not art.scans_available():
        pytest.skip("../shared/data/winter-tiles is absent")


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_a_type_seen_before_is_read_by_its_picture(scans, art_cell, rotation):
    """The Winter scans' straight road has a building at the edge of its snowfield, where a
    T-junction has its third road. Once one straight road is confirmed, the next one, at any
    rotation, leads the T-junctions that share its roads by more."""
    cell = art_cell("U", rotation, "scans", seed=2)
    roads = [i for i, side in enumerate(U.oriented(rotation).sides) if side == "R"]
    junctions = [r for r in (0, 90, 180, 270) if all(W.oriented(r).sides[i] == "R" for i in roads)]
    options = [(U, rotation)] + [(W, r) for r in junctions]
    without = _scores(_scorer(art_cell, 0.0), cell, options)
    with_pictures = _scores(_scorer(art_cell, ScorerConfig().template_weight), cell, options)
    lead = with_pictures[0] - max(with_pictures[1:])
    assert lead > 0
    assert lead > without[0] - max(without[1:]) + 0.5 * ScorerConfig().template_weight
    # a type never confirmed neither gains nor loses
    assert np.allclose(with_pictures[1:], without[1:])


def test_a_picture_does_not_pull_another_type_towards_it(scans, art_cell):
    """A T-junction laid after a straight road was confirmed: the straight road's picture does
    not look enough like it to lift the straight road's score."""
    cell = art_cell("W", 180, "scans", seed=3)
    options = [(W, 180), (U, 0)]
    without = _scores(_scorer(art_cell, 0.0), cell, options)
    with_pictures = _scores(_scorer(art_cell, ScorerConfig().template_weight), cell, options)
    assert np.allclose(with_pictures, without)


def test_a_pennant_twin_seen_before_gains_nothing_over_its_twin(scans, art_cell):
    """O and P are drawn alike but for P's pennant: O's picture looks like a P as much as like
    an O, so having confirmed an O says nothing about the next O-or-P."""
    o, p = TILESET["O"], TILESET["P"]
    scorers = []
    for weight in (0.0, ScorerConfig().template_weight):
        scorer = TerrainScorer(ScorerConfig(template_weight=weight))
        cell = art_cell("O", 0, "scans", seed=1)
        scorer.learn(scorer.prepare(cell), o, 0, cell=cell)
        scorers.append(scorer)
    cell = art_cell("P", 0, "scans", seed=4)
    without, with_pictures = (_scores(s, cell, [(o, 0), (p, 0)]) for s in scorers)
    assert np.allclose(with_pictures, without)
