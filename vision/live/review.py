"""Reading a game over at its end (a recording's, or the live page's when the game ends).

A misread tile takes a copy of another type, so a later tile of that type is misread in turn
(the bag has none left): by the end, mistakes come as tiles read as each other's types, two or a
ring of several, or as a chain that ends at a copy left in the bag (a tile never read). The
:class:`Review` scores every tile the camera read as every type on the last view that showed the
game, deals the tileset's copies out again to the cells, and applies each change the engine
accepts; then it checks the followers against the figures that view shows. It reads the
tracker (its scorer, how surely each cell was read, the tiles it saw and could not read) and
never changes it or the game: :meth:`Review.read_over` returns a log, which the caller applies
with ``Game.rewrite``.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import combinations

import numpy as np

from meeplecam.engine import Discard, Game, IllegalTurn, TileType, Turn
from meeplecam.vision.solve import Option, solve_board

from .appearance import CITY, PENNANT, TerrainScorer, trimmed_map
from .rectify import Board
from .seeing import neighbours
from .twins import (
    ShieldSpot,
    cities_of,
    has_pennant,
    laid_layout,
    layout,
    shield_margin,
    shield_view,
    spot_margin,
    spot_of,
    twins_of,
)

log = logging.getLogger(__name__)


@dataclass
class Looks:
    """What a laid tile looks like, read over at the game's end."""

    scores: dict[tuple[str, int], float]  # (type, rotation) -> score, every distinct rotation
    hidden: np.ndarray | None  # the crop pixels its figures hide


@dataclass(frozen=True)
class _Gap:
    """Where a tile that was never read belongs in the log, while the game is read over."""

    cell: tuple[int, int]


def _played(events: list) -> list:
    """A log being read over without its gaps (the tiles never read)."""
    return [event for event in events if not isinstance(event, _Gap)]


def _touching(cells) -> list[set]:
    """``cells`` in groups that touch on the board (side by side, through others of the
    group)."""
    left, groups = set(cells), []
    while left:
        group, edge = set(), [left.pop()]
        while edge:
            cell = edge.pop()
            group.add(cell)
            near = [c for c in neighbours(cell) if c in left]
            left.difference_update(near)
            edge += near
        groups.append(group)
    return groups


def city_of(tile: TileType, config) -> np.ndarray:
    """Where ``tile`` (north up, on a crop the scorer with ``config`` prepares) has its cities,
    and a pixel around them (a copy's art draws a city's edge its own way)."""
    import cv2

    kinds = trimmed_map(tile, 0, config.size, config.inset)[0]
    city = np.isin(kinds, (CITY, PENNANT)).astype(np.uint8)
    return cv2.dilate(city, np.ones((3, 3), np.uint8)).astype(bool)


@dataclass
class _Pair:
    """The tiles read as either type of a pair of pennant twins (``shielded``: the type with a
    shield; ``read``: the indices of the tiles read so) as the review weighs them: each one's
    :func:`twins.shield_view`, then those of the tiles the players decided (``held``: their
    indices with a shield); ``city``, where the art may draw the shield, and ``cities``, what
    the pairs drawn alike share (:func:`twins.cities_of`)."""

    shielded: str
    cells: list
    read: set[int]
    views: list
    held: set
    city: np.ndarray
    cities: tuple

    def splits(self) -> list[set[int]]:
        """Every choice of as many tiles as were read with a shield."""
        return [set(s) for s in combinations(range(len(self.cells)), len(self.read))]

    def margin(self, split: set[int], spot: ShieldSpot | None = None) -> float:
        """How clearly ``split`` shows the shield on its tiles and not on the others: anywhere
        on the city (:func:`twins.shield_margin`), or at ``spot`` (:func:`twins.spot_margin`)."""
        if spot is not None:
            return spot_margin(self.views, split | self.held, spot)
        return shield_margin(self.views, split | self.held, self.city)

    def best(self, spot: ShieldSpot | None = None) -> set[int]:
        """The split whose shields stand out most, anywhere on the city or at ``spot``."""
        if spot is None:
            return self.clearest
        return max(self.splits(), key=lambda split: self.margin(split, spot))

    @cached_property
    def clearest(self) -> set[int]:
        """The split whose shields stand out most anywhere on the city."""
        return max(self.splits(), key=self.margin)

    @cached_property
    def clarity(self) -> float:
        return self.margin(self.clearest)

    @cached_property
    def spot(self) -> ShieldSpot | None:
        """Where the clearest split shows its shield."""
        return spot_of(self.views, self.clearest | self.held, self.city)


class Review:
    """One reading over of ``game`` (usually ``tracker.game``, or a copy of it) by ``tracker``."""

    def __init__(self, tracker, game: Game):
        self.tracker = tracker
        self.game = game
        self.config = tracker.config
        self.scorer = tracker.scorer
        self._seen: dict = {}  # (cell, colour) -> the cell's crop on the last view, the mask
        self._contrast: dict = {}  # cell -> how much of the contrast it kept (_contrast_left)
        self._hidden: dict = {}  # cell -> the figures' pixels on its last-view crop (_hidden_at)

    def read_over(self) -> list[Turn | Discard]:
        """The game's log read over (equal to it when nothing changed).

        Every tile the camera read is scored again as every type, and the types are dealt out
        again to those cells (:meth:`_deal`): the deal that looks most like the table,
        the tileset's copies each used once, where a cell takes another type only if it looks
        more like it (or cannot tell, a figure hiding all the two differ in). The deal's
        changes come apart into rings and chains (:meth:`_exchanges`); each that gains
        ``review_margin`` at rotations its neighbours allow, with a follower on the likeliest
        spot of its new tile, is applied while the game stays legal, the clearest first. A
        misread also forces its neighbours' readings (a road it added must go on next door),
        so two exchanges can lock each other: those refused alone are tried two at a time.
        When no rotation lets a cell of a refused exchange fit, the read tiles around it are
        turned with it where they lie (:meth:`_with_neighbours_turned`: neighbours read at
        the rotations the misread made fit); else its neighbours may yield (take a type they
        look a little less like, only together with the exchange beside them); otherwise the
        type a cell could not take (no rotation fits, or the least gain of a refused exchange)
        is left out, and the rest dealt again, ``review_rounds`` times at most. A type is
        weighed against the tile's own type at its best rotation, not against its reading
        (a tile read at the wrong rotation looks more like almost any type than like that).
        A tile that was never read (nothing left in the bag could be it) takes part too, as a
        cell that must take a type: when a copy comes free, its turn is put in where it was
        played. Pennant twins are then told apart all together, side by side
        (:meth:`_shields_again`); if that changed any, the types are dealt again with each twin
        looking as much like its pair's other type (a ring that mixed twins with other types
        comes apart by what else the tiles show) and the shields read again. The followers are checked against the figures the table shows
        (:meth:`_figures_again`) first (a follower read where none stands may hold the figure
        an exchange needs: its player would run out) and last; then each follower the camera
        saw laid goes on the likeliest spot under its figure that is free in the game as read
        over (:meth:`_spots_again`).
        """
        board = self.tracker.game_view
        game = self.game
        if board is None:
            return list(game.log)
        # the log with a gap where each tile never read was laid, those laid between the same
        # two turns in the order they were laid (one beside the other)
        missed = sorted(
            (
                (at, cell)
                for cell, at in self.tracker.unread.items()
                if cell not in game.board.tiles
                and board.contains(cell)
                and self.tracker._visible(cell)
            ),
            key=lambda missing: missing[0],
        )
        events: list = list(game.log)
        for at, cell in reversed(missed):
            events.insert(at, _Gap(cell))
        read = {
            event.cell: index
            for index, event in enumerate(events)
            if isinstance(event, _Gap)
            or (
                isinstance(event, Turn)
                and self.tracker.readings.get(event.cell) == event
                and event.gingerbread is None
                and board.contains(event.cell)
                and self.tracker._visible(event.cell)
            )
        }
        self._contrast = self._contrast_left(board, read)
        looks = {cell: self._looks_like(board, cell) for cell in read}
        # the tiles read first, then with the gaps: a gap that cannot be filled (its
        # neighbours still misread) would hold back the exchange that holds it
        read_only = {c: i for c, i in read.items() if not isinstance(events[i], _Gap)}
        # a follower read where none stands may hold the figure an exchange needs: first
        events = self._figures_again(events, read, board)
        events = self._solved(events, read, looks, board)
        # what the table taught during play includes every misread committed: learned again
        # from the board as solved, the tiles are weighed again and the board solved again
        looks = self._looks_learned_again(events, read, board)
        events = self._solved(events, read, looks, board)
        for cells in (read_only, read) if len(read_only) < len(read) else (read_only,):
            events = self._deal_rounds(events, cells, looks, board)
        shielded = self._shields_again(events, read, looks, board)
        if shielded != events:
            # the twins side by side knew better than each tile alone: dealt again with every
            # twin looking as much like its pair's other type, a ring that mixed twins with
            # other types (T read R, R read Q, Q read S, S read T) comes apart by the rest
            twins_alike = {cell: self._twins_alike(looks[cell]) for cell in looks}
            for cells in (read_only, read) if len(read_only) < len(read) else (read_only,):
                shielded = self._deal_rounds(shielded, cells, twins_alike, board)
            shielded = self._shields_again(shielded, read, looks, board)
        events = self._figures_again(shielded, read, board)
        events = self._spots_again(events, read)
        return [e for e in events if not isinstance(e, _Gap)]

    def _spots_again(self, events: list, read: dict) -> list:
        """``events`` with each follower the camera saw laid put again on the likeliest spot
        under where its figure stood (``Tracker.figures_read``), among the spots free in the
        game as read over: read live, an earlier misread may have claimed the field or city the
        figure lay on, and the follower went on the road beside it."""
        for cell, index in sorted(read.items(), key=lambda item: item[1]):
            turn = events[index]
            foot = self.tracker.figures_read.get(cell)
            if not isinstance(turn, Turn) or turn.meeple is None or foot is None:
                continue
            try:
                spot = self._spot_at(events, index, foot)
            except IllegalTurn:
                continue
            if spot is None or spot == turn.meeple:
                continue
            trial = self._with_turn(events, index, replace(turn, meeple=spot))
            if trial is None:
                continue
            log.info("review: %s follower %s (was %s)", turn.describe(), spot, turn.meeple)
            events = trial[0]
        return events

    def _margin(self, readings) -> float:
        """What reading tiles again must gain in all, ``readings`` being each tile's (type,
        rotation) before and after: ``review_margin`` when each keeps its layout and changes
        only its shield (pennant twins: a few pixels' word, which the shields read side by side
        weigh on their own, :meth:`_shields_again`), ``review_margin_drawn`` when a road or a city
        side changes too (many pixels say so)."""
        tileset = self.game.tileset
        shields_only = all(
            laid_layout(tileset[a], ra) == laid_layout(tileset[b], rb)
            for (a, ra), (b, rb) in readings
        )
        return self.config.review_margin if shields_only else self.config.review_margin_drawn

    def _solved(self, events: list, read: dict, looks: dict, board: Board) -> list:
        """``events`` with the read cells' types and rotations solved all together
        (:func:`vision.solve.solve_board`): the board that looks most like the table of those
        whose every side matches its neighbour's, the tileset's copies (those on the read cells
        and those left in the bag) each used once, where a tile's loss (looking less like its
        new reading than like its own) counts ``1 + review_solve_doubt`` times. A misread
        early in a game forces its neighbours' readings, and theirs in turn: the cluster fits
        together, so no tile of it can be read again alone. The solution is applied if it
        gains ``review_margin`` and the game stays legal (followers again on the likeliest spot
        of each tile read again); else each group of touching tiles it changes on its own, the
        clearest first."""
        game = self.game
        final = game.replayed(_played(events))
        now = {}  # cell -> (type, rotation) read; a tile never read has none
        for cell, at in read.items():
            if isinstance(events[at], Turn):
                tile = game.tileset[events[at].tile]
                now[cell] = (tile.id, tile.canonical_rotation(events[at].rotation))
        held = Counter(tile_id for tile_id, _ in now.values())
        copies = {t: held[t] + final.remaining.get(t, 0) for t in game.tileset.types}
        options = {}
        doubt = self.config.review_solve_doubt
        for cell in read:
            scores = looks[cell].scores
            read_as = scores[now[cell]] if cell in now else -np.inf
            options[cell] = []
            for tile in game.tileset.types.values():
                if not copies[tile.id]:
                    continue
                for r in self._rotations_fitting(cell, tile, read, final.board.tiles):
                    score = scores[(tile.id, r)]
                    # forced by its neighbours or the counts, a tile may look less like its
                    # new reading than like its own: that loss counts more; where two look
                    # alike, the reading stays
                    score -= doubt * max(0.0, read_as - score)
                    if now.get(cell) == (tile.id, r):
                        score += 1e-4
                    options[cell].append(Option(tile.id, r, tile.oriented(r).sides, score))
        solved = solve_board(options, copies, self.config.review_solve_s)
        if solved is None:
            log.debug("review: the board has no solution")
            return events
        changed = {
            cell: (option.tile, option.rotation)
            for cell, option in solved.items()
            if (option.tile, option.rotation) != now.get(cell)
        }
        if not changed:
            return events
        groups = _touching(changed)

        def gained(group) -> float:
            return sum(
                looks[c].scores[changed[c]] - (looks[c].scores[now[c]] if c in now else 0.0)
                for c in group
            )

        tries = [
            set(changed),
            *(sorted(groups, key=gained, reverse=True) if len(groups) > 1 else ()),
        ]
        done: set = set()
        for group in tries:
            if group & done:
                continue
            fills = any(c not in now for c in group)
            margin = self._margin([(now[c], changed[c]) for c in group if c in now])
            if not fills and gained(group) < margin:
                continue
            trial = self._read_as(events, read, {c: changed[c] for c in group}, board)
            if trial is not None:
                log.info(
                    "review: solved %s (%+.3f)",
                    [trial[read[c]].describe() for c in sorted(group)],
                    gained(group),
                )
                events = trial
                done |= group
        return events

    def _read_as(self, events: list, read: dict, readings: dict, board: Board):
        """``events`` with the cells of ``readings`` read as (type, rotation) (a tile never
        read put in), each follower on the likeliest spot of its new tile, if the game stays
        legal; else None."""
        trial = list(events)
        for cell, (tile_id, rotation) in readings.items():
            was = events[read[cell]]
            trial[read[cell]] = (
                replace(was, tile=tile_id, rotation=rotation)
                if isinstance(was, Turn)
                else Turn(tile_id, *cell, rotation)
            )
        try:
            for at in sorted(read[cell] for cell in readings):
                if trial[at].meeple is not None:
                    trial[at] = self._follower_again(board, trial, at)
        except IllegalTurn as exc:
            log.debug("review: %s refused: %s", sorted(readings), exc)
            return None
        return self._legal(trial, read, set(readings), board)

    def _deal_rounds(self, events: list, read: dict, looks: dict, board: Board) -> list:
        """``events`` with the types of ``read``'s cells dealt out again (see :meth:`review`)."""
        barred: set = set()  # (cell, type) that cannot be dealt
        # cells that may take a type they look less like, next to an exchange that fits no
        # rotation without them (a misread's neighbour read to fit it), two exchanges together
        yielding: set = set()
        for _ in range(self.config.review_rounds):
            dealt = self._deal(read, looks, events, barred, yielding)
            exchanges = self._exchanges(read, events, dealt)
            log.debug("review: dealt %s", exchanges)
            refused = []
            for exchange in sorted(
                exchanges, key=lambda e: -self._deal_gain(events, read, looks, e)
            ):
                trial = self._exchanged(events, read, looks, exchange, board)
                if trial is None:
                    refused.append(exchange)
                else:
                    events = trial
            left = refused[: self.config.review_locked]
            for first, second in combinations(left, 2):
                if first in refused and second in refused:
                    both = first + second
                    cells = {cell for cell, _ in both}
                    near = {c for c in cells & yielding if cells & set(neighbours(c))}
                    trial = self._exchanged(events, read, looks, both, board, near)
                    if trial is not None:
                        events = trial
                        refused = [e for e in refused if e not in (first, second)]
            blame, more = set(), set()
            for exchange in refused:
                turned = self._with_neighbours_turned(events, read, looks, exchange, board)
                if turned is not None:
                    events = turned
                    continue
                cell, tile_id, fits = self._culprit(events, read, looks, exchange)
                around = {c for c in neighbours(cell) if c in read} - yielding
                if not fits and around:
                    more |= around
                else:
                    blame.add((cell, tile_id))
            if not blame - barred and not more:
                break
            barred |= blame
            yielding |= more
        return events

    def _figures_again(self, events: list, read: dict, board: Board) -> list:
        """``events`` with the followers the last settled view disagrees with read again: a
        figure of the player's colour clearly standing on a tile read without one (a figure
        the decode missed) is put on its likeliest legal spot; a follower the game still has
        on a tile where no figure of its colour shows is taken off (a red cloister roof read
        as a monk), unless many figures the game has on the board are gone (the players
        cleared the table for the final scoring). A follower taken off that the game read
        over then scores and returns (its city or road finished after all) is put back, on
        the segment under where the figure stood when its tile was read."""
        game = self.game
        final = game.replayed(_played(events))
        standing = {f.cell for f in final.board.followers()}  # only a tile's turn lays there
        seen: dict = {}  # cell -> (crop, mask, the laid player's colour)
        for cell, index in read.items():
            colour = game.players[self._player_at(events, index)].colour
            seen[cell] = (*self._figure(cell, colour, board), colour)
        claimed = [cell for cell in standing if cell in seen]
        shown = sum(1 for cell in claimed if seen[cell][1].any())
        clear = shown >= self.config.review_figures_shown * len(claimed)
        for cell, index in sorted(read.items(), key=lambda item: item[1]):
            turn = events[index]
            crop, mask, colour = seen[cell]
            if isinstance(turn, _Gap):
                continue  # never read
            returned = False  # the change holds only if the follower is scored and returned
            if turn.meeple is None and mask.mean() >= self.config.review_figure_area:
                foot = self.scorer.figure_core(crop, colour, mask)
            elif turn.meeple is None and not mask.any() and cell in self.tracker.figures_read:
                # read with a figure the last view no longer shows, taken off while the game
                # as read kept it on the board: as read over, it may be scored and returned
                foot, returned = self.tracker.figures_read[cell], True
            elif turn.meeple is not None and clear and not mask.any():
                if cell not in standing:
                    continue  # scored and returned: gone as it should be
                foot = None
            else:
                continue
            try:
                changed = replace(
                    turn, meeple=None if foot is None else self._spot_at(events, index, foot)
                )
            except IllegalTurn:
                continue
            if changed == turn:
                continue
            trial = self._with_turn(events, index, changed)
            if trial is None:
                continue
            trial, after = trial
            if returned and any(f.cell == cell for f in after.board.followers()):
                continue
            log.info(
                "review: %s follower %s (was %s)", changed.describe(), changed.meeple, turn.meeple
            )
            events = trial
        return events

    def _with_turn(self, events: list, index: int, turn: Turn) -> tuple[list, Game] | None:
        """``events`` with event ``index`` replaced by ``turn``, and the game they play, if it
        stays legal; else None."""
        trial = [*events[:index], turn, *events[index + 1 :]]
        try:
            return trial, self.game.replayed(_played(trial))
        except IllegalTurn:
            return None

    def _player_at(self, events: list, index: int) -> int:
        """Whose turn event ``index`` of a log being read over is (a discard keeps the turn)."""
        laid = sum(1 for event in events[:index] if not isinstance(event, Discard))
        return laid % len(self.game.players)

    def _gain(
        self, look: Looks, turn: Turn, tile: TileType, rotation: int, yielding: bool = False
    ) -> float | None:
        """How much more the tile read as ``turn`` looks like ``tile`` at ``rotation`` than its
        reading: None when it looks less like it and the camera can see the difference (unless
        it is ``yielding``, or a tile never read)."""
        if isinstance(turn, _Gap):
            return look.scores[(tile.id, rotation)] - max(look.scores.values())
        laid = self._reading(look, turn, tile)
        now = look.scores[(laid[0].id, laid[1])]
        score = look.scores[(tile.id, rotation)]
        if score > now or yielding:
            return score - now
        seen = self.scorer.visible_difference(laid, (tile, rotation), look.hidden)
        return 0.0 if seen < self.config.min_evidence_px else None

    def _reading(self, look: Looks, turn: Turn, tile: TileType) -> tuple[TileType, int]:
        """What reading the tile of ``turn`` as ``tile`` is weighed against: another type
        against the turn's own type at its best rotation (a tile read at the wrong rotation
        looks more like almost any type than like its reading, so another type must beat its
        own type, not the rotation); its own type at another rotation against its reading."""
        own = self.game.tileset[turn.tile]
        if own is not tile:
            return own, self._best_rotation(look, own)
        return own, own.canonical_rotation(turn.rotation)

    def _best_rotation(self, look: Looks, tile: TileType) -> int:
        return max(tile.distinct_rotations, key=lambda r: look.scores[(tile.id, r)])

    def _deal(self, read: dict, looks: dict, events: list, barred: set, yielding: set) -> dict:
        """The read cells' types dealt out again (a linear assignment of the tileset's copies,
        those on the read cells and those left in the bag, to the cells): the most gain in all,
        each cell keeping its type or taking one it looks more like at its best rotation (and
        not ``barred``; one ``yielding`` may take any). Returns the cells whose type changes,
        with their new type."""
        from scipy.optimize import linear_sum_assignment

        game = self.game
        cells = list(read)
        gaps = {cell for cell in cells if isinstance(events[read[cell]], _Gap)}
        held = Counter(events[read[cell]].tile for cell in cells if cell not in gaps)
        left = game.replayed(_played(events)).remaining
        copies = [
            tile_id
            for tile_id in sorted(game.tileset.types)
            for _ in range(held[tile_id] + left.get(tile_id, 0))
        ]
        columns: dict[str, list[int]] = {}
        for column, tile_id in enumerate(copies):
            columns.setdefault(tile_id, []).append(column)
        gains = np.full((len(cells), len(copies)), -1e6)  # not dealt
        for row, cell in enumerate(cells):
            turn = events[read[cell]]
            for tile_id, where in columns.items():
                if tile_id == getattr(turn, "tile", None):
                    gains[row, where] = 0.0
                    continue
                if (cell, tile_id) in barred:
                    continue
                tile = game.tileset[tile_id]
                rotation = self._best_rotation(looks[cell], tile)
                gain = self._gain(looks[cell], turn, tile, rotation, cell in yielding)
                if gain is not None:
                    # a cell that cannot tell keeps its reading; of two that cannot, the one
                    # read less surely changes
                    sure = min(self.tracker.certainty.get(cell, 0.0), 1.0)  # one option: inf
                    gains[row, where] = gain - 1e-6 * (1 + sure)
        rows, picked = linear_sum_assignment(gains, maximize=True)
        return {
            cells[row]: copies[column]
            for row, column in zip(rows, picked, strict=True)
            if copies[column] != getattr(events[read[cells[row]]], "tile", None)
        }

    def _exchanges(self, read: dict, events: list, dealt: dict) -> list[tuple]:
        """The deal's changes as exchanges of types, each a tuple of (cell, new type): a chain
        that starts where a type goes back to the bag and follows each cell to one that gives
        up the type it takes (ending at a copy the bag held), or a ring of cells that take
        each other's types."""
        old = {cell: getattr(events[read[cell]], "tile", None) for cell in dealt}
        givers: dict[str, list] = {}
        for cell in dealt:
            givers.setdefault(old[cell], []).append(cell)
        taken = Counter(dealt.values())
        left = dict(dealt)

        def walk(cell) -> tuple:
            chain = []
            while cell is not None:
                chain.append((cell, left.pop(cell)))
                cell = next((c for c in givers.get(chain[-1][1], ()) if c in left), None)
            return tuple(chain)

        heads = [c for c in dealt if len(givers[old[c]]) > taken[old[c]]]
        exchanges = [walk(cell) for cell in heads if cell in left]
        while left:
            exchanges.append(walk(next(iter(left))))
        return exchanges

    def _deal_gain(self, events: list, read: dict, looks: dict, exchange) -> float:
        """An exchange's gain with each cell at its new type's best rotation."""
        return sum(self._gain_as(looks[c], events[read[c]], t) for c, t in exchange)

    def _gain_as(self, look: Looks, turn: Turn, tile_id: str) -> float:
        """How much more a tile read as ``turn`` looks like ``tile_id`` at its best rotation."""
        tile = self.game.tileset[tile_id]
        gain = self._gain(look, turn, tile, self._best_rotation(look, tile), yielding=True)
        assert gain is not None  # a yielding gain is never refused
        return gain

    def _with_neighbours_turned(self, events: list, read: dict, looks: dict, exchange, board):
        """``events`` with ``exchange`` applied together with read tiles around it turned
        where they lie (each keeps its type, any rotation, at a loss if need be), or None.
        When no rotation lets a cell of the exchange fit, its neighbours may have been read at
        the rotations its misread made fit, and theirs in turn (two road junctions read at the
        wrong rotations beside a tile read with a road it lacks): the neighbours of the cells
        that cannot fit turn, and the neighbours of those that could then only lie as they
        are, up to ``review_turning`` cells."""
        game = self.game
        tiles = game.replayed(_played(events)).board.tiles
        moving = {cell for cell, _ in exchange}
        stuck = [
            cell
            for cell, tile_id in exchange
            if not self._rotations_fitting(cell, game.tileset[tile_id], moving, tiles)
        ]
        turnable = {c for c, index in read.items() if isinstance(events[index], Turn)} - moving
        turning: set = set()
        while stuck:
            more = {c for cell in stuck for c in neighbours(cell) if c in turnable} - turning
            if not more or len(turning | more) > self.config.review_turning:
                break
            turning |= more
            moved = moving | turning
            stuck = [
                cell
                for cell in more
                if len(self._rotations_fitting(cell, tiles[cell].tile, moved, tiles)) < 2
            ]
        if not turning:
            return None
        kept = tuple((c, events[read[c]].tile) for c in sorted(turning))
        return self._exchanged(events, read, looks, exchange + kept, board, turning)

    def _culprit(self, events: list, read: dict, looks: dict, exchange) -> tuple:
        """Why an exchange was refused: (cell, type, False) for a cell that no rotation lets
        fit the neighbours that stay, else (cell, type, True) for the one that gains least."""
        game = self.game
        moving = {cell for cell, _ in exchange}
        tiles = game.replayed(_played(events)).board.tiles
        for cell, tile_id in exchange:
            if not self._rotations_fitting(cell, game.tileset[tile_id], moving, tiles):
                return cell, tile_id, False
        cell, tile_id = min(
            exchange, key=lambda e: self._gain_as(looks[e[0]], events[read[e[0]]], e[1])
        )
        return cell, tile_id, True

    @staticmethod
    def _rotations_fitting(cell, tile: TileType, moving, tiles: dict) -> tuple[int, ...]:
        """The rotations of ``tile`` at ``cell`` that fit its neighbours on a board's ``tiles``,
        but for those ``moving`` (read again)."""
        pattern = "".join(
            tiles[other].orientation.sides[(side + 2) % 4]
            if other in tiles and other not in moving
            else "."
            for side, other in enumerate(neighbours(cell))
        )
        return tile.rotations_fitting(pattern)

    def _exchanged(
        self, events: list, read: dict, looks: dict, exchange, board: Board, yielding=frozenset()
    ):
        """``events`` with ``exchange`` applied, or None: each cell at the best rotation of its
        new type that its neighbours (as the exchange leaves them) allow, its follower on the
        likeliest spot of the new tile; refused unless every cell looks at least as much like
        its new reading (or cannot tell; or is ``yielding``), ``review_margin`` in all, and the
        game stays legal."""
        game = self.game
        tiles = game.replayed(_played(events)).board.tiles
        rotation = self._exchange_rotations(exchange, looks, tiles)
        if rotation is None:
            return None
        total = 0.0
        for cell, tile_id in exchange:
            turn = events[read[cell]]
            tile = game.tileset[tile_id]
            gain = self._gain(looks[cell], turn, tile, rotation[cell], cell in yielding)
            if gain is None:
                return None
            total += gain
        fills = any(isinstance(events[read[cell]], _Gap) for cell, _ in exchange)
        readings = [
            ((turn.tile, turn.rotation), (tile_id, rotation[cell]))
            for cell, tile_id in exchange
            if isinstance(turn := events[read[cell]], Turn)
        ]
        if not fills and total < self._margin(readings):
            return None  # a gap is filled with the likeliest tile the rules allow, at any gain
        trial = self._read_as(events, read, {c: (t, rotation[c]) for c, t in exchange}, board)
        if trial is None:
            return None  # no free spot for a figure, a claimed feature, a copy the bag lacks
        log.info(
            "review: %s read again (%+.3f)", [trial[read[c]].describe() for c, _ in exchange], total
        )
        return trial

    def _legal(self, trial: list, read: dict, moving: set, board: Board) -> list | None:
        """``trial`` if the game replays it legally; else, if that makes it legal, ``trial``
        without the doubtful followers (standing where their colour covers less than
        ``review_figure_area`` of the tile or shows no clear core, :meth:`_figure_clear`; the
        least first, two at most): a red cloister roof read as a monk keeps a figure in play
        that the exchange needs (its player would run out of followers); else None."""
        try:
            self.game.replayed(_played(trial))
            return trial
        except IllegalTurn as exc:
            refused = exc
        doubtful = sorted(
            (share, index)
            for index, event in enumerate(trial)
            if isinstance(event, Turn)
            and event.meeple is not None
            and event.cell in read
            and event.cell not in moving
            and (share := self._figure_share(trial, index, board)) > 0
            and (
                share < self.config.review_figure_area
                or not self._figure_clear(trial, index, board)
            )
        )
        for count in range(1, min(2, len(doubtful)) + 1):
            freed = list(trial)
            for _, index in doubtful[:count]:
                freed[index] = replace(freed[index], meeple=None)
            try:
                self.game.replayed(_played(freed))
            except IllegalTurn:
                continue
            log.info(
                "review: %s without a follower, so that the game stays legal (%s)",
                [freed[index].describe() for _, index in doubtful[:count]],
                refused,
            )
            return freed
        log.debug("review: refused: %s", refused)
        return None

    def _figure_share(self, events: list, index: int, board: Board) -> float:
        """How much of the tile that turn ``index`` of ``events`` lays its player's colour
        covers on the last view."""
        colour = self.game.players[self._player_at(events, index)].colour
        return float(self._figure(events[index].cell, colour, board)[1].mean())

    def _figure_clear(self, events: list, index: int, board: Board) -> bool:
        """Whether the colour of the player of turn ``index`` shows a figure with a clear core
        on its tile on the last view (a pixel it explains by ``follower_ratio``): a red roof's
        blob may cover as much of a tile as a figure, but it is only a little redder than a
        city anywhere."""
        colour = self.game.players[self._player_at(events, index)].colour
        crop, mask = self._figure(events[index].cell, colour, board)
        return self.scorer.figure_clear(crop, colour, mask)

    def _figure(self, cell, colour: str, board: Board) -> tuple[np.ndarray, np.ndarray]:
        """The scorer crop of ``cell`` on the last view and where ``colour`` shows a figure on
        it (worked out once: the followers are checked before and after the deal, and again
        when an exchange needs a figure)."""
        key = (cell, colour)
        if key not in self._seen:
            crop = self.scorer.prepare(board.cell(*cell))
            self._seen[key] = (crop, self.scorer.follower_mask(crop, colour)[0])
        return self._seen[key]

    def _exchange_rotations(self, exchange, looks: dict, tiles: dict) -> dict | None:
        """The rotations of an exchange's cells, as their new types, that fit their neighbours
        and each other (the exchange's cells may be neighbours) and look most like the table;
        None if none fit. A search cell by cell that drops a partial choice as soon as two
        touching cells disagree or it can no longer beat the best found."""
        tileset = self.game.tileset
        moving = {cell for cell, _ in exchange}
        cells = [cell for cell, _ in exchange]
        choices = [
            sorted(
                (
                    (looks[cell].scores[(tile_id, r)], r, tileset[tile_id].oriented(r).sides)
                    for r in self._rotations_fitting(cell, tileset[tile_id], moving, tiles)
                ),
                key=lambda choice: -choice[0],
            )
            for cell, tile_id in exchange
        ]
        if not all(choices):
            return None
        # each cell's sides facing a cell chosen before it: (that cell's index, the side)
        before = [
            [
                (cells.index(other), side)
                for side, other in enumerate(neighbours(cell))
                if other in cells[:i]
            ]
            for i, cell in enumerate(cells)
        ]
        # the most the cells from i on can add (each at its best rotation)
        tops = [options[0][0] for options in choices]
        reach = [sum(tops[i:]) for i in range(len(cells) + 1)]
        best: list = [None, -np.inf]
        chosen: list = []

        def search(i: int, score: float) -> None:
            if score + reach[i] <= best[1]:
                return
            if i == len(cells):
                best[:] = [[r for _, r, _ in chosen], score]
                return
            for option in choices[i]:
                sides = option[2]
                if all(sides[side] == chosen[j][2][(side + 2) % 4] for j, side in before[i]):
                    chosen.append(option)
                    search(i + 1, score + option[0])
                    chosen.pop()

        search(0, 0.0)
        if best[0] is None:
            return None
        return dict(zip(cells, best[0], strict=True))

    def _follower_again(self, board: Board, events: list, index: int) -> Turn:
        """Turn ``index`` of ``events``, read as another tile, with its follower on the
        likeliest spot of that tile (a spot's name means another segment on another tile), if
        the figure still stands there; raises IllegalTurn when the tile has no free spot."""
        turn = events[index]
        whole = board.cell(*turn.cell)
        crop = self.scorer.prepare(whole)
        colour = self.game.players[self._player_at(events, index)].colour
        figure = self.tracker._figure_masks(crop)[colour]
        if figure.any():
            foot = self.scorer.figure_core(crop, colour, figure)
        else:  # scored and returned: where the figure stood when the tile was read
            foot = self.tracker.figures_read.get(turn.cell)
            if foot is None:
                return turn  # the name is all there is to go by
        spot = self._spot_at(events, index, foot)
        if spot is None:
            raise IllegalTurn(index + 1, turn, "no free spot for its follower")
        return replace(turn, meeple=spot)

    def _spot_at(self, events: list, index: int, foot: np.ndarray) -> str | None:
        """The likeliest free spot, on the tile turn ``index`` of ``events`` reads, for a
        figure whose clear part is ``foot`` (a mask on the scorer's crop of its cell; None:
        none is free); raises IllegalTurn when the turns before it are not legal."""
        turn = events[index]
        before = self.game.replayed(_played(events[:index]))
        tile = self.game.tileset[turn.tile]
        return self.tracker._turns_for(tile, turn.rotation, turn.cell, foot, game=before)[0].meeple

    def _shields_again(self, events: list, read: dict, looks: dict, board: Board) -> list:
        """Pennant twins told apart all together: the tiles read as either type of a pair
        keep how many have a shield, but which ones is read again, as the split of them whose
        shielded side shows one bluer spot at the same place of the art on every tile, against
        none there on the others (:func:`twins.shield_margin`). Each tile alone could only be
        weighed against what its colours and the few pictures learned said of shields (on
        the Winter scans a snowy roof looks like one); side by side, a copy's shield stands out
        from its twins' same art. A split is taken when it stands out by
        ``review_shield_gain`` more than the one read, and the game stays legal. Where no
        split of a pair stands out by ``review_shield_clear`` (figures hide its shields), the
        splits are weighed at the spot where a pair with the same cities showed its shield
        clearly (:func:`twins.spot_margin`: the art draws them alike). With the
        art's model the live reading knew where each type's shield is drawn: the twins stay
        as read (the 20 snowy games with the art's model: two pairs read right were
        exchanged here)."""
        if self.scorer.reference is not None:
            return events
        tileset = self.game.tileset
        cells_of: dict[str, list] = {}  # the pair's type with a shield -> the cells read as either
        for cell, index in read.items():
            tile_id = getattr(events[index], "tile", None)
            if tile_id in self._twin_of:
                shielded = tile_id if has_pennant(tileset[tile_id]) else self._twin_of[tile_id]
                cells_of.setdefault(shielded, []).append(cell)
        pairs = []
        spots: dict[tuple, _Pair] = {}  # cities -> the pair that showed its shield most clearly
        for shielded_id, cells in cells_of.items():
            read_shielded = {k for k, c in enumerate(cells) if events[read[c]].tile == shielded_id}
            if not 0 < len(read_shielded) < len(cells):
                continue
            city = city_of(tileset[shielded_id], self.scorer.config)
            views = [
                shield_view(
                    self.scorer.prepare(board.cell(*c)),
                    events[read[c]].rotation,
                    looks[c].hidden,
                    city,
                )
                for c in cells
            ]
            # the twins the players decided stand where they said, beside the tiles read
            decided = self._decided_twins(events, read, shielded_id, board, city)
            held = {len(views) + k for k, (_, shield) in enumerate(decided) if shield}
            views += [view for view, _ in decided]
            cities = cities_of(layout(tileset[shielded_id]))
            pair = _Pair(shielded_id, cells, read_shielded, views, held, city, cities)
            pairs.append(pair)
            shown = spots.get(cities)
            if pair.clarity >= self.config.review_shield_clear and (
                shown is None or pair.clarity > shown.clarity
            ):
                spots[cities] = pair
        for pair in pairs:
            spot = None  # a pair that stands out is weighed on its own city
            if pair.clarity < self.config.review_shield_clear and pair.cities in spots:
                spot = spots[pair.cities].spot
            best = pair.best(spot)
            gain = pair.margin(best, spot) - pair.margin(pair.read, spot)
            if best == pair.read or not gain >= self.config.review_shield_gain:
                continue
            plain_id = self._twin_of[pair.shielded]
            trial = list(events)
            for k, c in enumerate(pair.cells):
                tile = pair.shielded if k in best else plain_id
                trial[read[c]] = replace(events[read[c]], tile=tile)
            try:
                self.game.replayed(_played(trial))
            except IllegalTurn:
                continue
            log.debug("review: shields read again among %s (%.1f clearer)", pair.cells, gain)
            events = trial
        return events

    @cached_property
    def _twin_of(self) -> dict[str, str]:
        return twins_of(self.game.tileset)

    def _twins_alike(self, looks: Looks) -> Looks:
        """``looks`` with each pennant twin scored as the better of its pair at each rotation."""
        scores = dict(looks.scores)
        for (tile_id, rotation), score in looks.scores.items():
            twin = (self._twin_of.get(tile_id), rotation)
            if twin in scores:
                scores[(tile_id, rotation)] = scores[twin] = max(score, scores[twin])
        return Looks(scores, looks.hidden)

    def _decided_twins(
        self, events: list, read: dict, shielded_id: str, board: Board, city: np.ndarray
    ) -> list:
        """(shield view, has a shield) of each tile of the pennant pair of ``shielded_id`` that
        the players decided (the camera's reading is not read over) and the view shows."""
        out = []
        for event in events:
            if (
                isinstance(event, Turn)
                and event.cell not in read
                and event.tile in (shielded_id, self._twin_of[shielded_id])
                and board.contains(event.cell)
                and self.tracker._visible(event.cell)
            ):
                crop = self.scorer.prepare(board.cell(*event.cell))
                view = shield_view(crop, event.rotation, self._hidden_at(event.cell, crop), city)
                out.append((view, event.tile == shielded_id))
        return out

    def _looks_learned_again(self, events: list, read: dict, board: Board) -> dict:
        """How every read tile looks to a scorer that learned the art again from the last
        view, every tile as ``events`` read it (the misreads committed during play, and read
        again since, out of what it knows). Without templates: on the view it is scored on,
        a type laid once would have the tile's own picture for one."""
        old = self.scorer
        scorer = TerrainScorer(replace(old.config, template_weight=0.0), old.colours, old.reference)
        scorer.players = list(old.players)
        scorer.follower_counts = {c: v.copy() for c, v in old.follower_counts.items()}
        for cell, placed in self.game.replayed(_played(events)).board.tiles.items():
            if board.contains(cell) and self.tracker._visible(cell):
                whole = board.cell(*cell)
                crop = scorer.prepare(whole)
                scorer.learn(crop, placed.tile, placed.rotation, self._hidden_at(cell, crop), whole)
        return {cell: self._looks_like(board, cell, scorer) for cell in read}

    def _looks_like(self, board: Board, cell, scorer=None) -> Looks:
        """How well the tile at ``cell`` looks like each type at each of its rotations (to
        ``scorer``, the tracker's by default)."""
        game = self.game
        scorer = scorer or self.scorer
        whole = board.cell(*cell)
        crop = scorer.prepare(whole)
        ignore = self._hidden_at(cell, crop)  # as seen: taking a glare off turns colours
        contrast = self._contrast.get(cell, 1.0)
        clipped = None
        if contrast < self.config.review_glare_below:  # read through the glare
            # where it clipped the picture to white, nothing is left to read through: a
            # road across a side there is gone (08009's D took WI3's road, curving away
            # from that side, and WI3 the D's)
            clipped = whole.min(axis=2) >= self.config.review_clipped
            whole = _without_glare(whole, contrast)
            crop = scorer.prepare(whole)
        options = [
            (tile, rotation)
            for tile in game.tileset.types.values()
            for rotation in tile.distinct_rotations
        ]
        scores = np.asarray(scorer.score(crop, options, ignore, whole, clipped))
        if self.config.review_by_contrast:
            scores *= contrast
        return Looks(
            {(tile.id, r): float(score) for score, (tile, r) in zip(scores, options, strict=True)},
            ignore,
        )

    def _hidden_at(self, cell, crop: np.ndarray) -> np.ndarray | None:
        """The pixels the players' figures hide on ``crop``, the last view's scorer crop of
        ``cell`` (None without any): worked out once, for the glare, the looks before and
        after the art is learned again, that learning and the shields."""
        if cell not in self._hidden:
            self._hidden[cell] = self.tracker._figures(crop)[1]
        return self._hidden[cell]

    def _contrast_left(self, board: Board, cells) -> dict:
        """How much of its contrast the last view left each tile at ``cells``, 0 to 1. A
        lamp's glare adds white light: it lifts a tile's darkest pixels towards white, and on
        snowy art a tile washed out so looks like snow, every option about as much as any
        other but by chance a little more like some, which no tile around can outweigh. The
        share of the span from a tile's dark floor (its 10th percentile of lightness, figures
        left out) to white that is left of the board's typical span; 1 at or above it."""
        import cv2

        floors = {}
        for cell in cells:
            crop = self.scorer.prepare(board.cell(*cell))
            lightness = cv2.cvtColor(crop, cv2.COLOR_BGR2Lab)[..., 0]
            hidden = self._hidden_at(cell, crop)
            shown = lightness if hidden is None or hidden.all() else lightness[~hidden]
            floors[cell] = float(np.percentile(shown, 10))
        if not floors:
            return {}
        span = max(1.0, 255.0 - float(np.median(list(floors.values()))))
        return {cell: min(1.0, max(0.0, (255.0 - floor) / span)) for cell, floor in floors.items()}


def _without_glare(picture: np.ndarray, contrast: float) -> np.ndarray:
    """A picture with a lamp's glare taken off: the glare adds white light, so each pixel
    keeps ``contrast`` of its distance from white (``Review._contrast_left``), and that
    distance is scaled back. The glare is taken as even over the tile (it is a broad spot)."""
    far = (255.0 - picture.astype(np.float32)) / max(contrast, 0.05)
    return np.clip(255.0 - far, 0, 255).astype(np.uint8)


__all__ = ["Looks", "Review", "city_of"]
