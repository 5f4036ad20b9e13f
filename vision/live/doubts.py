"""Readings taken for now: a tile whose picture alone cannot yet tell its best reading from the
runner-up (the table has taught the tracker little of its art so far, or a figure hides what
tells them apart), or that a tile the rules forbid there fits only a little better
(``unexplained_for_now``: as often the picture's doubt as an earlier reading's), is not asked
about at once. Its best reading goes in the game (a
:class:`~.observations.Commit` with ``doubts``) and is read again after every turn the tracker
learns from, on the newest view, against the readings its neighbours now allow: once the
picture tells them apart it is kept (and learned from) or read as the other (an
:class:`~.observations.Amend`); after ``defer_turns`` turns in doubt, or when the game ends, the
players are asked about that turn (a :class:`~.observations.Question` with ``turn``). A
follower that stood between two of the tile's spots waits with it: once the tile is sure, the
players are asked where it stands if the view still leaves that open (a figure does not move, so
a sure tile's spot in doubt is asked at once).

Of the 30 questions of seven snowy games with no profile (stop 46's code), 20 were such doubts;
read again six turns later, 8 of them had a clear best reading, every one right; the rest
(pennant twins whose shield a figure hides, mostly) are still asked. With no profile the 20
snowy games asked 44 questions instead of 78, the 20 Winter-scans games 120 instead of 164,
with the same turns right (docs/numbers.md, stop 47).

A doubt between pennant twins alone (the shield's spot in sight, every other reading far
behind) is not asked after ``defer_turns``: it waits for the game's end, where the reading over
sees every tile of the pair side by side and tells the shields apart by the spot the shielded
ones share (``Review._shields_again``; ``bench/shields.py``: the true split scores highest in
all 210 pairs of 50 games), which no one tile compared with the few pictures learned by then
can. With twins waiting for the end, the 20 snowy games asked 36 questions instead of 40, the
same turns right (stop 49). A twin doubt a figure hides (the tiles differ in fewer than
``min_evidence_px`` pixels in sight) waits too: the figure leaves when its city is scored, and
from then the shield's spot is in sight as above; one whose figure stands to the end is asked
then (side by side, that tile shows nothing either). Until its city is scored, a pennant
changes no score but the one the game would give if it ended now.

The same holds for any doubt between readings with the same sides (U and WI6, X and WI7 either
way round, A and WI8): no tile laid against it can tell them apart, only the picture read with
more of the art learned, or the bag running out of one of them. Such a doubt, still open after
``defer_turns``, waits for the game's end and is read once more then, asked about only if that
leaves it open. On the 20 Winter-scans games with no profile it took 13 of 72 questions away
(stop 58, docs/numbers.md): by the end every one was settled, and read right.

Likewise a doubt whose two best readings differ only where a figure stands (an R or a T, a Q or
an S, the road's stub under the follower; ``min_evidence_px``): twenty turns of the same view
teach nothing, while the figure leaving, a tile laid against the side they differ on, or the
bag running out of one of them settles it (stop 59: 5 such questions of the 40 games with no
profile).

In the game's last turns (``review_near`` tiles or fewer left in the bag), a tile the table
disagrees with however much (a tile the rules forbid there, or one whose copies are all played,
fits clearly better) is read for now too, marked :data:`~.reading.FOR_THE_REVIEW`: it is not
read again (the readings the rules allow say nothing of the one they forbid) and not asked
about at the end, where the reading over, a few turns on, reads every tile again and settles
which earlier turn was read wrong (stop 60: 21 such questions of the 40 games with no profile
came in the last 13 turns, 20 of them led by a wrong reading, and the reading over read all 21
right).

One concern of :class:`~.tracker.Tracker` (see :mod:`.figures`): the methods read the tracker's
``game``, ``scorer``, ``config`` and ``readings`` and keep ``doubtful``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

import numpy as np

from meeplecam.engine import Turn

from .observations import Amend, Kept, Observation, Question
from .reading import FOR_THE_REVIEW, SPOT_DOUBT
from .rectify import Board
from .twins import shield_twins

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Doubt:
    """A reading in the game for now: why it is in doubt, and how long the log was when it was
    taken (so how many turns it has waited)."""

    doubts: tuple[str, ...]
    since: int
    # between pennant twins alone, the shield's spot in sight: waits for the game's end, when
    # the reading over tells the pair apart side by side, and is not asked then (twins whose
    # shield a figure hides, and other readings with the same sides, wait unmarked, read again
    # each turn, and are asked at the end if still in doubt)
    twins: bool = False


class Doubts:
    """The tracker's readings taken for now (see the module)."""

    def _read_doubtful_again(self, board: Board, final: bool = False) -> list[Observation]:
        """Each reading taken for now read again on the settled view ``board``: kept and
        learned from once the picture clearly prefers it, amended once it clearly prefers
        another reading the rules allow there, asked about once it has waited ``defer_turns``
        turns (or at once with ``final``: the game is over). Returns the amends, the questions
        and a :class:`Kept` for each reading kept as it is, and forgets every doubt settled."""
        out: list[Observation] = []
        for cell, doubt in list(self.doubtful.items()):
            index = self._turn_index(cell)
            laid = self.game.log[index] if index is not None else None
            if laid is None or self.readings.get(cell) != laid or not board.contains(cell):
                del self.doubtful[cell]  # undone, or the players' word now, or out of view
                continue
            waited = len(self.game.log) - doubt.since
            if waited == 0 and not final:
                continue  # read on this very view
            settled, observation = self._read_again_for_now(
                board, cell, index, doubt, waited, final
            )
            if settled:
                del self.doubtful[cell]
            if observation is not None:
                out.append(observation)
            elif settled:
                out.append(Kept(index))
        return out

    def _read_again_for_now(
        self, board: Board, cell, index: int, doubt: Doubt, waited: int, final: bool
    ) -> tuple[bool, Observation | None]:
        """One reading taken for now (turn ``index``, at ``cell``) read again: whether that
        settles its doubt, and what goes out (an :class:`Amend` or a :class:`Question`; None
        when it is kept, or waits)."""
        if FOR_THE_REVIEW in doubt.doubts:
            # a tile the rules forbid fitted better: the readings they allow, compared again,
            # say nothing of that (one leading them is no reason to learn from it); the
            # reading over settles it at the end, and only its follower's spot may be asked
            if not final:
                return False, None
            return True, self._spot_question(board, cell, index, doubt)
        game = self.game
        cfg = self.config
        laid = game.log[index]
        pattern = game.board.required_sides(cell)
        readings = [
            (tile, r)
            for tile in game.tileset.types.values()
            if game.remaining.get(tile.id, 0) > 0 or tile.id == laid.tile
            for r in tile.rotations_fitting(pattern)
            if (tile.id, r) != (laid.tile, laid.rotation)
        ]
        current = (game.tileset[laid.tile], laid.rotation)
        if not readings or (final and doubt.twins):
            # the neighbours laid since allow nothing else: no question, but no sample either
            # (they were read against it; read again at the end, 3 of 20 such were wrong);
            # twins waiting for the end are the reading over's (Review._shields_again)
            return True, self._spot_question(board, cell, index, doubt)
        scores, crop, masks = self._score_copy(board, cell, laid, readings)
        options = [current, *readings]
        standing = self._figure_standing(index, crop, masks)
        if standing is not None:  # weighed as when it was first read (TileReading)
            foot, before = standing
            scores = np.array(
                [
                    s - self._spot_misfit(t, r, cell, foot, before)
                    for s, (t, r) in zip(scores, options, strict=True)
                ]
            )
        order = [int(i) for i in np.argsort(scores)[::-1]]
        lead = float(scores[order[0]] - scores[order[1]])
        visible = self._visible_difference(options, order, self._hidden_by(masks))
        clear = lead >= cfg.defer_margin and (
            visible >= cfg.min_evidence_px or lead >= cfg.evidence_margin
        )
        if clear and order[0] == 0:
            log.info("tracker: turn %d, read for now, is %s", index + 1, laid.describe())
            self._learn_laid(board, cell, laid, lead, crop, masks)
            scored = (float(scores[0]), crop, masks)
            return True, self._spot_question(board, cell, index, doubt, scored)
        if clear and cell not in self.repaired:  # a repair's reading is the table's: kept
            for turn, _ in self._readings_laid(cell, index, crop, masks, [options[order[0]]]):
                log.info("tracker: turn %d, read for now, read again as %s", index + 1, turn)
                self.readings[cell] = turn
                self._learn_laid(board, cell, turn, lead, crop, masks)
                return True, Amend(index, turn, self._crop_picture(board, cell))
        if not final and waited < cfg.defer_turns:
            return False, None
        alike = self._alike_in_doubt(options, order, scores)
        in_sight = visible >= cfg.min_evidence_px
        if not final and (alike or not in_sight):
            # no tile laid next can tell readings with the same sides apart: the picture,
            # learned from more turns, or the bag running out of one of them can. Twins in
            # sight: most of the pair's copies are still in the bag, and at the game's end
            # they all lie side by side, where the reading over tells the shields apart;
            # hidden: the figure over the shield leaves when its city is scored, and the
            # picture then tells (see the module). So does a figure over all two readings
            # with other sides differ in, unless a tile laid against it settles it first
            twins = len(alike) == 2 and shield_twins(*alike)
            self.doubtful[cell] = replace(doubt, twins=twins and in_sight)
            return False, None
        # the reading in the game first (it was read with the bag as a prior, and nothing
        # since has clearly overturned it), then the others the rules allow, likeliest first
        # (with the figure on each spot it may stand on, when that was in doubt too)
        spots = self._spots_of(cell, index, crop, masks) if SPOT_DOUBT in doubt.doubts else [laid]
        asked = _scored(spots, float(scores[0]))
        for i in [i for i in order if i != 0][: cfg.max_options - 1]:
            legal = self._readings_laid(cell, index, crop, masks, [options[i]])
            turn = next((t for t, _ in legal), None)
            if turn is not None:
                asked.append((turn, float(scores[i])))
        if len(asked) == 1:
            # every other reading would make the game played since illegal: the rules settle
            # it (snowy 07017's first tile, a WI6, was asked about with no other option)
            return True, None
        text = f"Still not sure about the tile at {cell} (turn {index + 1})"
        return True, Question(asked, self._crop_picture(board, cell), text, doubt.doubts, index)

    def _alike_in_doubt(self, options, order, scores) -> list:
        """The readings a reading's doubt lies between, when they all have its sides (its
        pennant twin; U and WI6; X and WI7 either way round; A and WI8): the two best and every
        other less than ``defer_margin`` behind the second; [] when one of them has other sides
        or the reading is not among them."""
        second = scores[order[1]]
        close = [
            i for i in order if i in order[:2] or second - scores[i] < self.config.defer_margin
        ]
        alike = [options[i] for i in close]
        if 0 not in close or any(_sides(o) != _sides(options[0]) for o in alike):
            return []
        return alike

    def _spot_question(self, board: Board, cell, index: int, doubt: Doubt, scored=None):
        """The tile read for now at ``cell`` (turn ``index``) is settled as laid: when its
        follower stood between two spots as it was laid (``doubt``), a :class:`Question` about
        that turn with the figure on each (the spot in the game first); None when it did not,
        the figure is gone (scored) or its spot is clear on this view. ``scored``: (the tile's
        score, the scorer crop, the figures' masks) of this view, when already worked out."""
        if SPOT_DOUBT not in doubt.doubts:
            return None
        if scored is None:
            scores, crop, masks = self._score_copy(board, cell, self.game.log[index], [])
            scored = (float(scores[0]), crop, masks)
        score, crop, masks = scored
        spots = self._spots_of(cell, index, crop, masks)
        if len(spots) < 2:
            return None
        text = f"Not sure about the follower's place at {cell} (turn {index + 1})"
        picture = self._crop_picture(board, cell)
        return Question(_scored(spots, score), picture, text, (SPOT_DOUBT,), index)

    def _spots_of(self, cell, index: int, crop, masks) -> list[Turn]:
        """Turn ``index`` (the tile at ``cell``, read for now) with its follower on each spot
        of its tile that the figure still standing there may be on (:meth:`_turns_for`: two
        when two are about as likely), the spot it was laid on first; just the turn when its
        figure is gone. ``masks``: the figures on the scorer ``crop`` by colour."""
        laid = self.game.log[index]
        standing = self._figure_standing(index, crop, masks)
        if standing is None:
            return [laid]
        foot, before = standing
        tile = self.game.tileset[laid.tile]
        spots = self._turns_for(tile, laid.rotation, cell, foot, game=before)
        others = [replace(laid, meeple=t.meeple) for t in spots if t.meeple != laid.meeple]
        return [laid, *others]

    def _learn_laid(self, board: Board, cell, laid: Turn, lead: float, crop, masks) -> None:
        """The reading taken for now at ``cell`` is sure now (``lead`` over the runner-up):
        learned from its scorer ``crop`` on ``board`` as a committed turn would have been, the
        figures on it (``masks``, by colour) kept out of the tile's terms; but for a reading an
        earlier repair put there (the rules chose it, so its look is no sample of the type:
        snowy game 07016 learned an R as a Q, and the reading over at the end no longer told
        them apart)."""
        self.certainty[cell] = lead
        if cell in self.repaired:
            return
        figures = np.logical_or.reduce(list(masks.values()))
        ignore = figures if figures.any() else None
        tile = self.game.tileset[laid.tile]
        self.scorer.learn(crop, tile, laid.rotation, ignore, board.cell(*cell), bare=ignore is None)

    def settle_doubts(self) -> list[Observation]:
        """The game is over: every reading still taken for now read once more on the last
        view of the table as the game has it, and asked about if still in doubt."""
        board = self.game_view if self.game_view is not None else self.anchor
        try:
            if board is not None and self.doubtful:
                return self._read_doubtful_again(board, final=True)
        except Exception:  # the game as read stands
            log.exception("tracker: reading the doubtful turns again at the end failed")
        self.doubtful.clear()
        return []


def _sides(reading) -> str:
    """The sides (N E S W letters) of a (tile, rotation) reading as it lies."""
    tile, rotation = reading
    return tile.oriented(rotation).sides


def _scored(spots: list[Turn], score: float) -> list[tuple[Turn, float]]:
    """A reading's turns with the figure on each of its ``spots`` (likeliest first) as a
    question's options: the reading's ``score``, a hair less for each later spot (as
    :meth:`~.reading.TileReading._ranked` ranks them)."""
    return [(turn, score - 1e-3 * j) for j, turn in enumerate(spots)]
