"""What the table says about earlier turns: when a new tile's picture says an earlier turn was
misread (its type's copies all played, a neighbour's side against it, a figure with no follower
left to lay), which turn is the suspect; with nobody at the table to ask (``replay``), that turn
read again (an :class:`~.observations.Amend`) and the new tile read in the game the amend leaves;
and what the table itself rules out, so that it raises no doubt.

One concern of :class:`~.tracker.Tracker` (see :mod:`.figures`): the methods read the tracker's
``game``, ``scorer``, ``config``, ``certainty`` and ``repaired``; only :meth:`Repairs._take` and
:meth:`Repairs._read_again` change the tracker (the amend goes out, and the new tile is read in
the amended game).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from meeplecam.engine import Game, IllegalTurn, TileType, Turn
from meeplecam.engine.tiles import NEIGHBOUR_OFFSETS

from .observations import Amend, Observation
from .rectify import Board

log = logging.getLogger(__name__)


class Repairs:
    """The tracker's reading of earlier turns again (see the module)."""

    def _read_again(self, board: Board, cell, amend: Amend, amended: Game) -> Observation:
        """Out with ``amend`` (see :meth:`_repair`), and the tile at ``cell`` read in the game
        as it stands once the amend is applied."""
        game = self.game
        self._take(amend)
        self.game, self.reading_again = amended, True
        try:
            return self._decode_tile(board, cell)
        finally:
            self.game, self.reading_again = game, False

    def _take(self, amend: Amend) -> None:
        """Out with ``amend``, a turn read again on the tracker's own say (never again)."""
        self.repaired.add(amend.turn.cell)
        self.certainty[amend.turn.cell] = 0.0
        self.readings[amend.turn.cell] = amend.turn
        self._out.append(amend)

    def _repair(
        self, board: Board, tile: TileType, gain: float, chain: bool = True
    ) -> tuple[Amend, Game] | None:
        """``tile`` explains the new tile's picture ``gain`` better than anything the bag still
        holds, but every copy of it is on the table: an earlier turn probably took a copy by
        mistake (with nobody at the table to correct it, as in ``replay``, every later copy of
        the type the mistake took is then read as something else). Of the copies the camera
        read, least sure first, the first that another tile left in the bag explains almost as
        well (its picture now, after all the table has taught since; within ``gain`` less
        ``repair_margin``) and that the rules allow there (with its follower on the likeliest
        spot of that tile, if the figure still stands there) is read as that tile: the amend,
        and the game as it stands once the amend is applied (the copy back in the bag), where
        the new tile is read again. Only when nobody answers: people at the table are asked,
        the question naming the suspect copy, since with every turn corrected a tile that
        looks like a played-out type is more likely the new tile misread.

        With ``chain``, where no copy can be read as a tile in the bag, a copy is read as
        another played-out type once one of that type's copies is read as a tile in the bag
        (:meth:`_repair` again, without ``chain``): two misreads in a chain, as a WI4 read as N
        took the last N, then an N read as M the last M (a scans game with the art's model). The
        first amend goes out at once; the second is returned.
        """
        game = self.game
        copies = [
            c
            for c in self._least_sure_first(tile.id)
            if c in self.certainty and c not in self.repaired and board.contains(c)
        ]
        for cell in copies:
            pattern = game.board.required_sides(cell)
            others = [
                (game.tileset[tid], r)
                for tid, n in sorted(game.remaining.items())
                if n > 0 and tid != tile.id
                for r in game.tileset[tid].rotations_fitting(pattern)
            ]
            repair = self._read_copy_again(board, cell, others, gain)
            if repair is not None:
                return repair
        if not chain:
            return None
        candidates = []  # (what reading the copy as the other type costs, copy, type, rotation)
        for cell in copies:
            laid = game.log[self._turn_index(cell)]
            pattern = game.board.required_sides(cell)
            spent = [
                (other, r) for other, r in self._played_out_fitting(pattern) if other.id != tile.id
            ]
            if not spent:
                continue
            scores, _, _ = self._score_copy(board, cell, laid, spent)
            candidates += [
                (scores[0] - s, cell, *read) for s, read in zip(scores[1:], spent, strict=True)
            ]
        # the copy whose picture fits the other type best goes first (how surely each copy
        # was committed does not tell them apart: in that scans game the less sure M was an M)
        for loss, cell, other, rotation in sorted(candidates, key=lambda c: c[0]):
            if loss > gain - self.config.repair_margin:
                break
            freed = self._repair(board, other, gain - loss, chain=False)
            if freed is None:
                continue
            self.game = freed[1]
            try:
                second = self._read_copy_again(board, cell, [(other, rotation)], gain)
            finally:
                self.game = game
            if second is not None:
                self._take(freed[0])
                return second
        return None

    def _ruled_out(self, board: Board, cell, others, other_scores, best: float):
        """Of ``others`` ((tile, rotation) read at ``cell`` with ``other_scores``) that fit
        better than the ``best`` option (by a margin that could raise a doubt), best first,
        those the table itself rules out, up to the first it does not: a type whose every copy
        is on the table (none discarded) and surely read as it, or a type the bag still holds
        that a neighbour whose side forbids it was surely read as what it is (the start tile
        is given). A tile is surely read when its own picture fits its reading better than
        anything else that could lie there (:meth:`_reading_lead`) by ``sure_reading`` and by
        more than the other reading gains here: else the earlier tile is the suspect. Returns
        them as a set of (tile id, rotation), and for those that only one neighbour forbids,
        what :meth:`_neighbour_against` found of it, for :meth:`_repair_neighbour`."""
        game = self.game
        cfg = self.config
        floor = best + min(cfg.unexplained, cfg.spent_margin)
        ruled_out: set[tuple[str, int]] = set()
        against: dict[tuple[str, int], tuple] = {}
        copy_leads: dict[str, float] = {}  # of played-out types (_least_copy_lead)
        neighbours: dict[tuple, tuple | None] = {}
        for i in np.argsort(other_scores)[::-1]:
            if other_scores[i] < floor:
                break
            tile, rotation = others[i]
            sure = max(cfg.sure_reading, other_scores[i] - best)
            if game.remaining.get(tile.id, 0) <= 0:
                if tile.id not in copy_leads:
                    copy_leads[tile.id] = self._least_copy_lead(board, tile.id)
                if copy_leads[tile.id] < sure:
                    break
            else:
                clashes = self._clashing_neighbours(cell, tile, rotation)
                for clash in clashes:
                    if clash not in neighbours:  # a neighbour's side forbids many readings
                        neighbours[clash] = self._neighbour_against(board, *clash)
                found = [neighbours[c] for c in clashes if neighbours[c] is not None]
                if len(clashes) == 1 and found:
                    against[(tile.id, rotation)] = found[0]
                if not any(lead >= sure for _, _, lead in found):
                    break
            ruled_out.add((tile.id, rotation))
        return ruled_out, against

    def _least_copy_lead(self, board: Board, tile_id: str) -> float:
        """The least :meth:`_reading_lead` of ``tile_id``'s copies, each against what else
        could lie there; minus infinity when a copy is not on the table (discarded) or out of
        view, and as soon as one falls short of ``sure_reading``."""
        copies = self._least_sure_first(tile_id)
        if len(copies) != self.game.tileset.counts().get(tile_id, 0):
            return -np.inf
        least = np.inf
        for cell in copies:
            if not board.contains(cell):
                return -np.inf
            least = min(
                least, self._reading_lead(board, cell, self.game.board.required_sides(cell))
            )
            if least < self.config.sure_reading:
                return -np.inf
        return least

    def _reading_lead(self, board: Board, cell, pattern: str) -> float:
        """How much better the tile at ``cell`` fits its reading than any other tile of the set
        whose sides meet ``pattern`` (N E S W, "." free) at any rotation: its own picture's
        word for what it was read as. Infinite for the start tile, which is given, and where
        there is no other reading."""
        index = self._turn_index(cell)
        if index is None:
            return float("inf")
        laid = self.game.log[index]
        readings = [
            (tile, r)
            for tile in self.game.tileset.types.values()
            for r in tile.rotations_fitting(pattern)
            if (tile.id, r) != (laid.tile, laid.rotation)
        ]
        if not readings:
            return float("inf")
        scores, _, _ = self._score_copy(board, cell, laid, readings)
        return float(scores[0] - max(scores[1:]))

    def _neighbour_against(self, board: Board, neighbour, facing: int, side: str):
        """A neighbour whose side ``facing`` forbids a tile that needs ``side`` there: its
        cell; the sides a reading of it must show to let that tile in (its other neighbours'
        and ``side`` at ``facing``, N E S W); and how much better its own picture fits its
        reading than any reading of any type with those sides (:meth:`_reading_lead`: a type
        the bag ran out of may be what lies there, its copy taken by another misread). None
        where the camera does not see it."""
        if not board.contains(neighbour):
            return None
        pattern = list(self.game.board.required_sides(neighbour))
        pattern[facing] = side
        pattern = "".join(pattern)
        return neighbour, pattern, self._reading_lead(board, neighbour, pattern)

    def _repair_neighbour(
        self, board: Board, cell, rival: TileType, turned: int, gain: float, against
    ) -> tuple[Amend, Game] | None:
        """``against`` (:meth:`_neighbour_against`): the one neighbour whose side forbids
        ``rival`` turned ``turned``, which explains the new tile's picture at ``cell`` ``gain``
        better than anything the rules allow there. That neighbour was probably read wrong
        (with nobody at the table to correct it, as in ``replay``, every tile laid against the
        wrong side is then read as something else, and asked about). It is read again as
        :meth:`_repair` reads a copy: as the reading whose side meets the rival's that explains
        its picture almost as well (within ``gain`` less ``repair_margin``), of a type the bag
        holds or its own, where the rules allow it and then the rival here."""
        neighbour, pattern, _ = against
        if neighbour not in self.certainty or neighbour in self.repaired:
            return None
        game = self.game
        laid = game.board.tiles[neighbour].tile.id
        readings = [
            (tile, r)
            for tile in game.tileset.types.values()
            if game.remaining.get(tile.id, 0) > 0 or tile.id == laid
            for r in tile.rotations_fitting(pattern)
        ]

        def allows_rival(amended: Game) -> bool:
            fits = rival.rotations_fitting(amended.board.required_sides(cell))
            return rival.canonical_rotation(turned) in fits

        return self._read_copy_again(board, neighbour, readings, gain, allows_rival)

    def _score_copy(self, board: Board, cell, laid: Turn, readings):
        """How well the tile at ``cell`` (laid as ``laid``) looks like its reading, then like
        each of ``readings`` ((tile, rotation)), the figures on it left out: the scores, the
        scorer's crop and the figures' masks by colour."""
        whole = board.cell(*cell)
        crop = self.scorer.prepare(whole)
        masks, ignore = self._figures(crop)
        current = (self.game.tileset[laid.tile], laid.rotation)
        return self.scorer.score(crop, [current, *readings], ignore, whole), crop, masks

    def _clashing_neighbours(self, cell, tile: TileType, rotation: int) -> list:
        """The laid neighbours whose sides forbid ``tile`` turned ``rotation`` at ``cell``, each
        as (its cell, its side facing ``cell`` (0-3, N E S W), what ``tile`` needs there)."""
        required = self.game.board.required_sides(cell)
        sides = tile.oriented(rotation).sides
        clashes = []
        for k, need in enumerate(required):
            if need not in (".", sides[k]):
                dx, dy = NEIGHBOUR_OFFSETS[k]
                clashes.append(((cell[0] + dx, cell[1] + dy), (k + 2) % 4, sides[k]))
        return clashes

    def _clashing_neighbour(self, cell, tile: TileType, rotation: int):
        """The one laid neighbour whose side forbids ``tile`` turned ``rotation`` at ``cell``
        (as :meth:`_clashing_neighbours` gives it), or None where no side or several do."""
        clashes = self._clashing_neighbours(cell, tile, rotation)
        return clashes[0] if len(clashes) == 1 else None

    def _read_copy_again(
        self, board: Board, cell, readings, gain: float, allows=None
    ) -> tuple[Amend, Game] | None:
        """The tile at ``cell`` read as the first of ``readings`` ((tile, rotation), those its
        picture fits best first) that costs its cell less than ``gain`` (by ``repair_margin``)
        and that the rules allow (``allows(game)`` too, when given), with its follower on the
        likeliest spot of that tile if the figure still stands there: the amend, and the game
        once it is applied. A turn that moved the Gingerbread Man is never read again."""
        game = self.game
        cfg = self.config
        index = self._turn_index(cell)
        laid = game.log[index]
        if laid.gingerbread is not None:
            # read as much from the figure's move as from the tile's picture (an icon tile and
            # the plain one drawn like it): the picture alone must not overturn it (a Gingerbread
            # icon tile whose road stub a figure hid was read as the plain tile, 0.003 worse)
            return None
        readings = [(t, r) for t, r in readings if (t.id, r) != (laid.tile, laid.rotation)]
        if not readings:
            return None
        scores, crop, masks = self._score_copy(board, cell, laid, readings)
        if scores[0] - max(scores[1:]) > gain - cfg.repair_margin:
            return None
        cheap = [
            readings[i]
            for i in np.argsort(scores[1:])[::-1]
            if scores[1 + i] >= scores[0] - gain + cfg.repair_margin
        ]
        for turn, amended in self._readings_laid(cell, index, crop, masks, cheap):
            if allows is not None and not allows(amended):
                continue
            log.info("tracker: turn %d read again as %s", index + 1, turn.describe())
            return Amend(index, turn, self._crop_picture(board, cell)), amended
        return None

    def _readings_laid(
        self, cell, index: int, crop, masks, readings
    ) -> Iterator[tuple[Turn, Game]]:
        """Turn ``index`` (the tile at ``cell``) as each of ``readings`` ((tile, rotation)) that
        the rules allow, in order: the turn, with the follower laid with it on the likeliest
        spot of that tile if the figure still stands there (a spot's name means another segment
        on another tile; ``masks``: the figures on ``crop`` by colour), and the game with it."""
        game = self.game
        laid = game.log[index]
        events = list(game.log)
        standing = self._figure_standing(index, crop, masks)
        for other, rotation in readings:
            turn = replace(laid, tile=other.id, rotation=rotation)
            if standing is not None:
                foot, before = standing
                spots = self._turns_for(other, rotation, cell, foot, game=before)
                turn = replace(turn, meeple=spots[0].meeple)
            events[index] = turn
            try:
                amended = game.replayed(events)
            except IllegalTurn:
                continue
            yield turn, amended

    def _figure_standing(self, index: int, crop, masks) -> tuple[np.ndarray, Game] | None:
        """Where the follower laid with turn ``index`` still stands on the scorer ``crop`` of
        its tile (its clear core; ``masks``: the figures on ``crop`` by colour), and the game
        before that turn, to lay it again on a spot of another reading; None when the turn laid
        none, or its figure is gone (scored)."""
        game = self.game
        laid = game.log[index]
        colour = game.players[game.results[index].player].colour
        figure = masks[colour] if laid.meeple else None
        if figure is None or not figure.any():
            return None
        foot = self.scorer.figure_core(crop, colour, figure)
        return foot, game.replayed(list(game.log[:index]))

    def _repair_follower(
        self, board: Board, crop: np.ndarray, colour: str, figure: np.ndarray, weakest
    ) -> tuple[Amend, Game] | None:
        """A clear figure of ``colour`` (``figure`` on the new tile's ``crop``) stands on the new
        tile, but its player has no follower left to lay: an earlier turn probably laid one by
        mistake (a red cloister roof read as a red monk, a shadow as a farmer), and every later
        follower of that player would go unread. The player's follower that their colour shows
        least (``weakest``, :meth:`_weakest_follower`) is taken off its turn when it shows less
        than ``follower_repair_share`` of the new figure's evidence and less than
        ``follower_repair_evidence``: the amend, and the game with the follower back in the
        supply (the new tile is then read again there). Only when nobody answers, as
        :meth:`_repair`."""
        cfg = self.config
        here = self._figure_evidence(crop, colour, figure)
        if weakest is None or weakest[0] >= min(
            cfg.follower_repair_share * here, cfg.follower_repair_evidence
        ):
            return None
        game = self.game
        index = self._turn_index(weakest[1])
        events = list(game.log)
        events[index] = replace(events[index], meeple=None, meeple_colour=None)
        try:
            amended = game.replayed(events)
        except IllegalTurn:
            return None
        log.info(
            "tracker: turn %d read again without its follower (%.1f shown there, %.1f here)",
            index + 1,
            weakest[0],
            here,
        )
        return Amend(index, events[index], self._crop_picture(board, weakest[1])), amended

    def _weakest_follower(self, board: Board, player: int) -> tuple[float, tuple] | None:
        """Of the followers of ``player`` that the camera placed and that still stand, the one
        their colour shows least on the settled view ``board``, and how much
        (:meth:`_figure_evidence`, 0 where none shows); None without one."""
        game = self.game
        colour = game.players[player].colour
        weakest = None
        for follower in game.board.followers():
            cell = follower.cell
            if (
                follower.player != player
                or cell not in self.certainty
                or cell in self.repaired
                or not board.contains(cell)
            ):
                continue
            crop = self.scorer.prepare(board.cell(*cell))
            mask, _ = self.scorer.follower_mask(crop, colour)
            shown = self._figure_evidence(crop, colour, mask) if mask.any() else 0.0
            if weakest is None or shown < weakest[0]:
                weakest = (shown, cell)
        return weakest

    def _suspect(self, tile_id: str) -> str:
        """Which earlier turn probably used up the last copy of ``tile_id``: the copy on the
        table whose reading was least sure (a tile entered by hand or the start tile counts as
        sure)."""
        cells = self._least_sure_first(tile_id)
        if not cells:
            return "check the earlier turns"
        return self._suspect_at(cells[0], "it may be another tile")

    def _suspect_at(self, cell, why: str) -> str:
        """What the players are asked to check of the tile laid at ``cell``: "check the
        <tile> at (x,y) (turn N): ``why``"."""
        index = self._turn_index(cell)
        when = f" (turn {index + 1})" if index is not None else ""
        tile_id = self.game.board.tiles[cell].tile.id
        return f"check the {tile_id} at ({cell[0]},{cell[1]}){when}: {why}"

    def _least_sure_first(self, tile_id: str) -> list[tuple[int, int]]:
        """The cells of ``tile_id``'s copies on the table, the least surely read first (a tile
        entered by hand or the start tile counts as sure)."""
        cells = [c for c, p in self.game.board.tiles.items() if p.tile.id == tile_id]
        return sorted(cells, key=lambda c: self.certainty.get(c, float("inf")))

    def _turn_index(self, cell: tuple[int, int]) -> int | None:
        """The index in the game's log of the turn that laid the tile at ``cell`` (None for
        the start tile)."""
        turns = (i for i, e in enumerate(self.game.log) if isinstance(e, Turn) and e.cell == cell)
        return next(turns, None)
