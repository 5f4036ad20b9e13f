import numpy as np

from meeplecam.vision.live.motion import Motion, MotionConfig, MotionGate


def _table(seed=0):
    rng = np.random.default_rng(seed)
    base = np.full((720, 1280, 3), 120, np.uint8)
    base[200:500, 300:900] = (40, 110, 60)
    base[250:300, 350:400] = (200, 220, 230)
    return np.clip(base + rng.normal(0, 2, base.shape), 0, 255).astype(np.uint8)


def test_still_frames_settle_after_several():
    gate = MotionGate(MotionConfig(settle_frames=3))
    table = _table()
    states = [gate.update(table.copy()) for _ in range(5)]
    assert states[0] is Motion.MOVING  # nothing to compare with yet
    assert states[1:] == [Motion.STILL] * 4
    assert gate.settled


def test_a_hand_moving_over_the_table_is_motion_and_resets_settling():
    gate = MotionGate(MotionConfig(settle_frames=2))
    table = _table()
    for _ in range(3):
        gate.update(table)
    assert gate.settled
    hand = table.copy()
    hand[300:450, 500:650] = (120, 160, 215)
    assert gate.update(hand) is Motion.MOVING
    assert not gate.settled
    assert gate.update(table) is Motion.MOVING  # the hand left: that is a change too
    gate.update(table)
    gate.update(table)
    assert gate.settled


def test_sensor_noise_is_not_motion():
    gate = MotionGate()
    gate.update(_table(1))
    assert gate.update(_table(2)) is Motion.STILL


def test_covered_or_empty_frames():
    gate = MotionGate()
    assert gate.update(np.zeros((720, 1280, 3), np.uint8)) is Motion.COVERED
    assert gate.update(np.full((720, 1280, 3), 200, np.uint8)) is Motion.COVERED
    assert gate.update(None) is Motion.COVERED
    assert gate.update(np.zeros((0, 0, 3), np.uint8)) is Motion.COVERED
    assert not gate.settled
