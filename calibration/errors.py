"""Domain exceptions of the calibration steps (each carries a reason a person can act on)."""

from __future__ import annotations


class CalibrationError(ValueError):
    """A calibration step could not be completed; the message says what to do."""


class MarkersNotFound(CalibrationError):
    """Fewer than the four table-corner markers were seen."""


class BoardNotFound(CalibrationError):
    """Too few ChArUco views or corners to compute the camera's intrinsics."""


class TileNotFound(CalibrationError):
    """No tile could be located to fix the scale."""


class NoFrame(CalibrationError):
    """The frame source gave no image."""
