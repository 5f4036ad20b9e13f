"""A picture of nothing: what a covered or capped camera sends (black, or one flat colour).

A real table, even bare, never looks so: it has a rim, the light falls off across it, and its
surroundings show. The live loop's motion gate takes such a frame as *covered* (never still), and
finding the table in one says so instead of "no tiles".
"""

from __future__ import annotations

import numpy as np

COVERED_SD = 6.0  # a picture flatter than this (sd of its grey levels) shows nothing
COVERED_MEAN = 12.0  # ... and so does one darker than this on average


def shows_nothing(grey: np.ndarray, flat: float = COVERED_SD, dark: float = COVERED_MEAN) -> bool:
    """Whether a grey picture is flatter than ``flat`` (sd of grey levels) or darker than
    ``dark`` on average."""
    return float(grey.std()) < flat or float(grey.mean()) < dark
