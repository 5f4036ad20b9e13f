"""What the live tracker reports: observations, never decisions (the engine decides).

A consumer (``meeplecam replay``, the web session) receives these from :meth:`Tracker.feed`:

- :class:`Commit`: a reading of one turn; the consumer applies ``turn`` to the game. With
  ``doubts`` it is taken for now: the tracker reads it again as the table teaches it more, and
  amends it or asks about it later (an :class:`Amend`, or a :class:`Question` with ``turn``).
- :class:`Question`: the reading is unsure; ``options`` are legal turns, best first, with scores.
  With ``turn`` it is about that earlier turn of the log, already in the game as read for now:
  the answer (or, with nobody to ask, the best option) replaces it.
- :class:`Warning`: something on the table that the rules cannot explain, with a picture.
- :class:`Amend`: a follower laid on the last tile after that tile was read; the consumer
  replaces turn ``index`` of the log with ``turn`` (the same tile, with the follower).
- :class:`Drawn`: the tile the player put on the drawn-tile spot, for the hints (the game does
  not change).
- :class:`Kept`: a turn taken for now (a :class:`Commit` with ``doubts``) stays as read: the
  tracker will neither amend it nor ask about it (the picture came to prefer it, the rules allow
  nothing else, or the reading over at the game's end decides it). Nothing changes in the game.
- :class:`PlayedOn`: the players laid another tile with a question still open; the consumer
  applies ``turn`` (the question's best option) for now, and keeps the question open as a
  correction of that turn.
- :class:`PlayArea`: the table's edge found, as cells: the consumer sets the game's play area
  (``Game.set_table``), unless the players set one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from meeplecam.engine import Bounds, Turn


@dataclass(frozen=True)
class Commit:
    """A turn read. ``confidence`` is 0-1 (the best option's share of the evidence);
    ``pose`` is ``standing``/``lying`` when a follower was seen; ``crop`` is the tile's
    top-down picture. ``doubts``: why the reading is only taken for now (the picture alone
    cannot yet tell it from the runner-up, while the table is still teaching the tracker its
    art); empty for a sure reading."""

    turn: Turn
    confidence: float
    pose: str | None = None
    crop: np.ndarray | None = field(default=None, repr=False, compare=False)
    doubts: tuple[str, ...] = ()

    @property
    def sure(self) -> bool:
        return not self.doubts


@dataclass(frozen=True)
class Question:
    """The camera is unsure: legal turns ranked best first, each with its score (higher
    better); ``doubts`` says why, one phrase per reason (the runner-up is close, ...)."""

    options: list[tuple[Turn, float]]
    crop: np.ndarray | None = field(default=None, repr=False, compare=False)
    text: str = ""
    doubts: tuple[str, ...] = ()
    # the earlier turn (0-based, in the game's log) it is about, read for now; None: the new tile
    turn: int | None = None

    @property
    def best(self) -> Turn:
        return self.options[0][0]

    @property
    def turns(self) -> list[Turn]:
        return [turn for turn, _ in self.options]


@dataclass(frozen=True)
class Warning:  # the name the web UI and the brief use (shadows the builtin: see TableWarning)
    """Something seen that the rules cannot explain (two tiles at once, a tile taken away...)."""

    text: str
    image: np.ndarray | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Amend:
    """Turn ``index`` (0-based, in the game's log) is ``turn``, read again: a follower laid on
    the last tile, or the Gingerbread Man moved, after the table had settled with the tile alone
    (a player thinking it over), with the follower on its likeliest legal spot or the figure's
    move (and the icon tile it implies); or an earlier tile read wrong, found out when the tile
    it was taken for turns up with no copy left (the tracker then reads the new tile in the game
    as it stands once this is applied: apply it first)."""

    index: int
    turn: Turn
    crop: np.ndarray | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Drawn:
    """The tile on the drawn-tile spot (:mod:`vision.live.spot`): ``tile`` its likeliest type,
    or None when the spot is empty again; ``options`` each type left in the bag with its score
    (higher better), best first."""

    tile: str | None
    options: list[tuple[str, float]] = field(default_factory=list)
    crop: np.ndarray | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class PlayedOn:
    """The players went on to the next turn without answering the open question: ``turn`` is
    its best option, taken for now so that the next tile can be read. The question stays open
    on the page, as a correction of that turn; the tracker learns nothing from it."""

    turn: Turn


@dataclass(frozen=True)
class Kept:
    """Turn ``index`` (0-based, in the game's log), taken for now, stays as read: the page
    stops marking it as not sure yet."""

    index: int


@dataclass(frozen=True)
class PlayArea:
    """The table's edge as the camera found it, in cells: the play area the rules should
    enforce (``engine.Bounds``), so that the hints name no cell off the table. Said once, when
    the table is found with the start tile and the game has no play area yet."""

    bounds: Bounds


TableWarning = Warning
Observation = Commit | Question | Warning | Amend | Drawn | PlayedOn | Kept | PlayArea

__all__ = [
    "Amend",
    "Commit",
    "Drawn",
    "Kept",
    "Observation",
    "PlayArea",
    "PlayedOn",
    "Question",
    "TableWarning",
    "Warning",
]
