"""Domain exceptions of the vision stages (each carries a reason a person can act on)."""

from __future__ import annotations


class VisionError(ValueError):
    """Something in an image could not be read as a Carcassonne table."""


class ImageUnreadable(VisionError):
    """The file is missing or is not an image OpenCV can decode."""


class TableNotLocated(VisionError):
    """No table surface (or nothing on it) could be told apart from the surroundings."""


class GridNotFound(VisionError):
    """No regular grid of square tiles was found on the table."""


class CameraCovered(VisionError):
    """The picture shows nothing: black, or one flat colour (a covered lens, a lens cap)."""


class NoTiles(VisionError):
    """The table was found but holds no tiles."""


class ModelError(VisionError):
    """An appearance model or profile file is missing, malformed or of the wrong version."""
