"""What changed between a game's log and the same game read over (diagnosis as data).

When the camera reads a finished game over (``Tracker.review``) it returns a whole new log:
turns read as another tile, at another rotation, with a follower more or less, and turns put in
that were never read. :func:`corrections` pairs the two logs up by cell (a cell holds one tile)
and lists each turn that differs, so that ``replay`` can print them and the live page can ask
the players before the log is rewritten (``Game.rewrite``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .game import Event, Turn


@dataclass(frozen=True)
class Correction:
    """Turn ``index`` (0-based) of the new log, and what it was in the old one (None: the turn
    was put in: the tile was laid but never read)."""

    index: int
    turn: Turn
    was: Turn | None

    def describe(self) -> str:
        """The change in words: its tile, its rotation or its follower, or a turn put in."""
        turn, was = self.turn, self.was
        if was is None:
            return f"{turn.describe()}, put in (the tile was seen but not read)"
        if turn.tile != was.tile:
            return f"{turn.describe()} (was {was.tile})"
        if turn.rotation != was.rotation:
            return f"{turn.describe()} (was rotation {was.rotation})"
        if turn.meeple is None:
            return f"{turn.describe()}, no follower (was one on {was.meeple})"
        return f"{turn.describe()}, follower on {turn.meeple} (was {was.meeple or 'none'})"


def corrections(log: Sequence[Event], read_over: Sequence[Event]) -> list[Correction]:
    """The turns of ``read_over`` that differ from ``log``, in the new log's order."""
    was = {event.cell: event for event in log if isinstance(event, Turn)}
    return [
        Correction(index, event, was.get(event.cell))
        for index, event in enumerate(read_over)
        if isinstance(event, Turn) and was.get(event.cell) != event
    ]


__all__ = ["Correction", "corrections"]
