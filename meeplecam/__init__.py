"""meeplecam: a webcam keeps the score of a Carcassonne game on the table."""

__version__ = "0.1.0"
