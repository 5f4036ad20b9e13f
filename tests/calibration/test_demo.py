"""What a new user sees first: ``meeplecam calibrate --demo`` on the synthetic tables finds the
start tile as one tile at its true size and every follower, named after its colour."""

import numpy as np
import pytest

pytest.importorskip("meeplecam.vision.synth.render")

FIVE = ["red", "yellow", "green", "blue", "black"]


@pytest.mark.parametrize("seed", [1, 3, 6, 12])
def test_demo_calibration_succeeds_and_finds_every_follower(seed):
    from meeplecam.calibration import wizard
    from meeplecam.calibration.demo import demo_view

    frame, truth = demo_view(seed)
    result = wizard.run(frame, wizard.Options(), say=lambda line: None)
    assert result.ok, result.warnings
    # The start tile alone, as one tile of its true size (not a follower taken for a tile).
    assert len(result.quads) == 1
    true_tile = np.asarray(truth["tiles"][0]["corners"])
    true_px = np.linalg.norm(true_tile - np.roll(true_tile, 1, axis=0), axis=1).mean()
    assert abs(result.profile.scale.tile_px / true_px - 1) < 0.03
    # Each follower found where it stands, with its colour's name (left to right).
    assert result.profile.followers.names == FIVE
    for (x, y, _), follower in zip(result.followers_px, truth["followers"], strict=True):
        assert np.hypot(x - follower["base"][0], y - follower["base"][1]) < 0.3 * true_px


def test_names_are_chosen_together_under_a_coloured_light():
    """Seen under a blue-green light on a blue table (demo seed 1): the yellow follower looks
    greenish, the green one bluish; naming them one at a time called the yellow one green."""
    from meeplecam.calibration.colours import guess_names

    seen = [[61, 152, 135], [125, 108, 165], [94, 97, 145], [67, 133, 96], [36, 123, 123]]
    assert guess_names(np.asarray(seen, float)) == FIVE
