"""Thresholds of the calibration steps, kept as data in ``calibration/data/calibration.json``."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def _load() -> dict:
    text = resources.files(__package__).joinpath("data", "calibration.json").read_text("utf-8")
    return json.loads(text)


def settings(step: str) -> dict:
    """The settings of one step (``markers``, ``charuco``, ``colours``, ``table``, ``check``)."""
    return dict(_load()[step])
