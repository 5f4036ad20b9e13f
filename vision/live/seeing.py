"""What the camera shows against what the tracker knows: the board cut from a settled frame,
each cell's look against its baseline, the changes (a new tile, a follower, an arm reaching in),
and the table followed when its light, a shadow or the camera moved, or the grid drifted.

One concern of :class:`~.tracker.Tracker` (see :mod:`.figures`): the methods read the tracker's
``rectifier``, ``baseline`` and ``game``; :meth:`Seeing._set_baseline`, :meth:`Seeing._take_ring`,
the ``_follow_*`` methods and :meth:`Seeing._refine_grid` keep what they learn of the table (the
baseline, the light, the shade, the rectifier).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import numpy as np

from meeplecam.engine.tiles import NEIGHBOUR_OFFSETS

from .diff import (
    Look,
    board_looks,
    cell_changes,
    changed_pixels,
    light_change,
    relit,
    shade_field,
    shade_gains,
    unshaded,
)
from .rectify import Board, Rectifier, Window

log = logging.getLogger(__name__)

SHADE_MIN = 0.05  # the least change of light (gain off 1) that _follow_shade takes off


@dataclass
class Changes:
    """What changed on a settled view against the baseline, cell by cell."""

    new_tiles: list[tuple[int, int]]
    illegal: list[tuple[int, int]]  # empty cells that may not hold a tile, now holding one
    altered: list[tuple[int, int]]  # placed tiles that changed or left
    small: list[tuple[int, int]]  # follower-sized changes
    fractions: dict[tuple[int, int], float]
    spread: set = field(default_factory=set)  # small changes spread over the whole cell


def neighbours(cell: tuple[int, int]) -> list[tuple[int, int]]:
    """The four cells beside ``cell``, N E S W."""
    return [(cell[0] + dx, cell[1] + dy) for dx, dy in NEIGHBOUR_OFFSETS]


class Seeing:
    """The tracker's view of the table (see the module)."""

    def window(self) -> Window:
        """The cells watched: the board's, and the tiles on the table that could not be read
        (a tile laid beside one is still laid next to the board), ``window_pad`` around."""
        cells = [*self.game.board.tiles, *self.unread] or [(0, 0)]
        pad = self.config.window_pad
        xs = [c[0] for c in cells]
        ys = [c[1] for c in cells]
        return (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)

    def _board(self) -> Board:
        assert self.rectifier is not None and self._frame is not None
        return self._cut(self.rectifier, self._frame, self.window())

    def _cut(self, rectifier: Rectifier, frame: np.ndarray, window: Window) -> Board:
        """The top-down picture of ``window``, in the light the table was learned under, and
        without the shadow found on the view being read (``self.shade``)."""
        board = rectifier.board(frame, window)
        if self.light is not None:
            board = replace(board, image=relit(board.image, self.light))
        if self.shade is not None:
            board = unshaded(board, self.shade)
        return board

    def _look(self, board: Board, cell: tuple[int, int]) -> Look:
        """A cell's look on ``board`` (the looks of the board last diffed are kept)."""
        if self._looks is None or self._looks[0] is not board:
            self._looks = (board, board_looks(board, self.config.diff_inset))
        return self._looks[1][cell]

    def _visible(self, cell: tuple[int, int]) -> bool:
        """Whether the camera sees the cell (asked of the rectifier once per cell: with a lens
        model that is a projection, and every settled view asks it of every cell)."""
        rectifier = self.rectifier
        if rectifier is None:
            return True
        if self._visibility is None or self._visibility[0] is not rectifier:
            self._visibility = (rectifier, {})
        seen = self._visibility[1]
        if cell not in seen:
            seen[cell] = rectifier.visible(cell)
        return seen[cell]

    def _set_baseline(self, board: Board, keep=(), as_played: bool = True) -> None:
        """``board`` (the settled view) becomes what later views are compared with; unless
        it was taken as it is after an unexplained change (``as_played`` False: a tile gone,
        the players packing up), it is also the view the game is read over on at the end."""
        self.anchor = board
        if as_played:
            self.game_view = board
        for cell in board.cells():
            if cell not in keep and cell not in self.queued:
                self.baseline[cell] = self._look(board, cell)

    def _changes(self, board: Board) -> Changes:
        cfg = self.config
        placed = self.game.board.tiles
        frontier = self.game.board.frontier
        ch = Changes([], [], [], [], {})
        compared = []
        aside = self._spot_cells()
        for cell in board.cells():
            if cell in aside:
                continue
            before = self.baseline.get(cell)
            now = self._look(board, cell)
            if before is None or before.lab.shape != now.lab.shape:
                self.baseline[cell] = now
            elif self._visible(cell):
                compared.append((cell, before, now))
        changes = self._cell_changes([(b, n) for _, b, n in compared])
        for (cell, _, now), change in zip(compared, changes, strict=True):
            f = ch.fractions[cell] = change.fraction
            if change.spread or change.texture_ratio >= cfg.texture_ratio:
                ch.spread.add(cell)
            if cell in self.recheck and cell in frontier:
                if f >= cfg.tile_change:  # the undone tile was taken away: now empty
                    self.recheck.discard(cell)
                    self.baseline[cell] = now
                else:  # still there: read it again (and ask)
                    ch.new_tiles.append(cell)
                continue
            if cell in placed and cell in self.expected_vanish and f < cfg.vanish_change:
                # a follower the rules sent home: a standing figure seen at a slant covers a
                # good part of its cell, so its leaving may change as much as a tile would
                ch.small.append(cell)
            elif f >= cfg.tile_change:
                if cell in placed:
                    ch.altered.append(cell)
                elif cell in frontier or self._beside_unread(cell):
                    ch.new_tiles.append(cell)
                else:
                    ch.illegal.append(cell)
            elif f >= cfg.small_change:
                ch.small.append(cell)
        if not (ch.new_tiles or ch.altered or ch.illegal):
            # a tile that looks like the table (a city on honey-coloured wood) changes less of
            # its cell: the frontier cell that changed most is the new tile if it changed enough
            faint = [
                c
                for c in ch.small
                if c in frontier and (ch.fractions[c] >= cfg.faint_tile or c in ch.spread)
            ]
            faint += [c for c in ch.spread if c in frontier and c not in ch.small]
            if faint:
                ch.new_tiles.append(max(faint, key=ch.fractions.__getitem__))
        return ch

    def _beside_unread(self, cell: tuple[int, int]) -> bool:
        """Whether ``cell`` touches a tile that could not be read: the game does not have that
        tile, but the table does, so a tile laid next to it was laid next to the board."""
        return any(c in self.unread for c in neighbours(cell))

    def _ring(self, board: Board) -> list[tuple[int, int]]:
        """Where an arm reaching in crosses: the window's outermost ring, three cells from
        every tile, and where the camera's view ends inside the window, the cells along that
        edge that are off the board's frontier (no tile is laid on any of them)."""
        x0, y0, x1, y1 = board.window
        board_cells = (
            self.game.board.tiles.keys() | self.game.board.frontier.keys() | self.unread.keys()
        )

        def at_edge(c) -> bool:
            if c[0] in (x0, x1) or c[1] in (y0, y1):
                return True
            return c not in board_cells and not all(map(self._visible, neighbours(c)))

        aside = self._spot_cells()
        return [c for c in board.cells() if c not in aside and self._visible(c) and at_edge(c)]

    def _ring_crossed(self, board: Board, ch: Changes) -> tuple[int, list[tuple[int, int]]]:
        """(how many cells of the ring (:meth:`_ring`) were compared, those of them that
        changed by ``reach_change`` or more)."""
        seen = [c for c in self._ring(board) if c in ch.fractions]
        return len(seen), [c for c in seen if ch.fractions[c] >= self.config.reach_change]

    def _ring_changed(self, board: Board, ch: Changes) -> str:
        """How much of the ring (:meth:`_ring`) changed: "none", "some" or "most" (more than
        ``reach_share`` of it). No tile is laid there: some of it changed is an arm reaching
        in, most of it the light."""
        return self._how_much(*self._ring_crossed(board, ch))

    def _how_much(self, seen: int, crossed: list) -> str:
        if not crossed:
            return "none"
        return "most" if len(crossed) > self.config.reach_share * seen else "some"

    def _reaching_in(self, board: Board, ch: Changes) -> bool:
        """Whether something reaches in from beyond the watched cells and holds still: a
        player holding the drawn tile over the board while thinking, an arm resting across it
        (some of the window's outer ring changed, :meth:`_ring_changed`). The ring is taken as
        it is when the same cells look just as they did at the last reading, the table having
        moved in between (no arm comes back to the same pixels: a thing put down beyond the
        board, a score marker moved on a score board the window reaches), or after
        ``reach_patience`` such readings in a row (a baseline taken with a hand in it would
        otherwise hold the game up)."""
        seen, crossed = self._ring_crossed(board, ch)
        if self._how_much(seen, crossed) != "some":
            self.reaching_reads = 0
            self.reaching_looks = {}
            return False
        looks = {c: self._look(board, c) for c in crossed}
        lying = self._unmoved(self.reaching_looks, looks)
        self.reaching_reads += 1
        self.reaching_looks = looks
        if not lying and self.reaching_reads <= self.config.reach_patience:
            return True
        self.reaching_reads = 0
        self.reaching_looks = {}
        self._take_ring(board, ch)
        return False

    def _unmoved(
        self, before: dict[tuple[int, int], Look], now: dict[tuple[int, int], Look]
    ) -> bool:
        """Whether the same cells changed and each looks as it did (by less than a follower
        changes a cell)."""
        if not before or before.keys() != now.keys():
            return False
        pairs = [(before[c], now[c]) for c in now]
        small = self.config.small_change
        return all(change.fraction < small for change in self._cell_changes(pairs))

    def _changed_pixels(self, before: np.ndarray, now: np.ndarray) -> np.ndarray:
        """:func:`diff.changed_pixels` at this tracker's thresholds."""
        cfg = self.config
        return changed_pixels(before, now, cfg.diff_threshold, cfg.glare_threshold)

    def _cell_changes(self, pairs: list[tuple[Look, Look]]) -> list:
        """:func:`diff.cell_changes` at this tracker's thresholds."""
        cfg = self.config
        return cell_changes(pairs, cfg.diff_threshold, cfg.small_change, cfg.glare_threshold)

    def _take_ring(self, board: Board, changes: Changes) -> None:
        """The ring's looks on ``board`` become its baseline (no tile lies there), and it
        changed nothing."""
        ring = self._ring(board)
        for cell in ring:
            self.baseline[cell] = self._look(board, cell)
        changes.fractions.update(dict.fromkeys(ring, 0.0))
        taken = set(ring)
        changes.illegal[:] = [c for c in changes.illegal if c not in taken]
        changes.small[:] = [c for c in changes.small if c not in taken]
        changes.spread -= taken

    def _changed_share(self, ch: Changes) -> float:
        """The part of the cells seen that changed (by ``reach_change`` or more)."""
        seen = ch.fractions.values()
        return sum(f >= self.config.reach_change for f in seen) / max(1, len(seen))

    def _follow_light(self, board: Board, changes: Changes) -> tuple[Board, Changes]:
        """More than new tiles changed, and the camera did not move: if one change of light (a
        lamp, the curtains, the camera's exposure) explains it (``diff.light_change``: the
        changed part of the table at least halves, and none of the window's outer ring, where an
        arm would cross, is left changed), every view from now on is mapped back to
        the light the table was learned under (``self.light``) and the table diffed again, so
        a tile laid meanwhile is read like the others; otherwise the changes stand."""
        pairs = [(self.baseline[c], self._look(board, c)) for c in changes.fractions]
        change = light_change(pairs)
        if change is None:
            return board, changes
        saved = self.light
        self.light = np.linalg.inv(change) @ (np.eye(4) if saved is None else saved)
        board_now = self._board()
        changes_now = self._changes(board_now)
        if (
            self._changed_share(changes_now) > self._changed_share(changes) / 2
            or self._ring_changed(board_now, changes_now) != "none"
        ):
            self.light = saved  # not the light: an arm and its shadow, or the table changed
            return board, changes
        log.info("the light changed: views are mapped back to the light learned")
        return board_now, changes_now

    def _follow_shade(self, board: Board, changes: Changes) -> tuple[Board, Changes]:
        """More of the table changed than one new tile (looked at before the light over the
        whole table, :meth:`_follow_light`): if a shadow over part of the table explains it (a player
        leaning over it, a person between the lamp and the table; ``diff.shade_gains``: cells
        that look the same but darker or brighter, and a smooth field of those gains over the
        board), this view is read with the shadow taken off (``self.shade``), when that at
        least halves the part of the table that changed and leaves none of the window's outer
        ring changed; otherwise the changes stand. The baseline then keeps the table as it
        looks without the shadow."""
        pairs = [(c, self.baseline[c], self._look(board, c)) for c in changes.fractions]
        gains = shade_gains(pairs, self.config.diff_threshold)
        field = shade_field(gains, board.cells())
        if not gains or all(abs(g - 1.0) < SHADE_MIN for g in field.values()):
            return board, changes
        self.shade = field
        board_now = self._board()
        changes_now = self._changes(board_now)
        if (
            self._changed_share(changes_now) > self._changed_share(changes) / 2
            or self._ring_changed(board_now, changes_now) != "none"
        ):
            self.shade = None  # not a shadow: an arm, or the table changed
            return board, changes
        log.info(
            "a shadow on the table (its light %.0f to %.0f %% of what it was): read without it",
            100 * min(field.values()),
            100 * max(field.values()),
        )
        return board_now, changes_now

    def _follow_camera(self, board: Board, changes: Changes) -> tuple[Board, Changes]:
        """Laid tiles changed: if the camera moved (knocked, or its mount sagged), the grid
        follows it (``rectify.followed``) and the table is diffed again; a view that still
        shows the whole table changed is left as it was (the light changed, not the camera)."""
        from .rectify import followed

        assert self.rectifier is not None
        if self.anchor is None:
            return board, changes
        moved = followed(self.rectifier, self.anchor, board)
        if moved is None:
            return board, changes
        old, self.rectifier = self.rectifier, moved
        board_now = self._board()
        changes_now = self._changes(board_now)
        if self._whole_view_changed(changes_now) or len(changes_now.altered) >= len(
            changes.altered
        ):
            self.rectifier = old
            return board, changes
        log.info(
            "the camera moved: the grid followed it (%d laid tiles had changed)",
            len(changes.altered),
        )
        # the view's edge moved over the table: the ring is seen anew
        self._take_ring(board_now, changes_now)
        return board_now, changes_now

    def _laid_together(self, board: Board, ch: Changes) -> list[tuple[int, int]]:
        """New tiles the table showed at once (a turn that never settled before the next was
        laid), in the order they were most likely laid: on the frontier first (a tile beside
        only another new one came after it), and of those the one with the current player's
        figure, or without the next player's. Empty when a new tile lies apart from all."""
        frontier = self.game.board.frontier
        cells, apart = list(ch.new_tiles), list(ch.illegal)
        while beside := [c for c in apart if any(n in cells for n in neighbours(c))]:
            cells += beside  # next to a new tile: laid after it
            apart = [c for c in apart if c not in beside]
        first = [c for c in cells if c in frontier or self._beside_unread(c)]
        if apart or not first:
            return []
        earlier = self._laid_by_then(board, first)
        if earlier:  # a still moment between the two showed the first alone
            first = earlier
        if len(first) > 1:
            game = self.game
            nxt = game.players[(game.current + 1) % len(game.players)].colour

            masks = {c: self._figure_masks(self.scorer.prepare(board.cell(*c))) for c in first}
            own = [c for c in first if masks[c][game.players[game.current].colour].any()]
            theirs = [c for c in first if masks[c][nxt].any()]

            def laid_later(cell) -> tuple[bool, bool]:
                return (len(own) == 1 and cell not in own, cell in theirs)

            first.sort(key=laid_later)
        return [first[0]] + [c for c in cells if c != first[0]]

    def _laid_by_then(self, board: Board, cells: list) -> list:
        """Of ``cells`` (new tiles the settled ``board`` shows together), those that an earlier
        still moment (``self.quiet``) already showed as they lie now, from the earliest moment
        that showed some but not all of them; empty when none tells. A hand held still over a
        cell does not look like the tile that lies there now."""
        cfg = self.config
        now = [self._look(board, c) for c in cells]
        for frame in self.quiet:
            view = board_looks(self._cut(self.rectifier, frame, board.window), cfg.diff_inset)
            alike = self._cell_changes([(view[c], n) for c, n in zip(cells, now, strict=True)])
            laid = [
                c for c, a in zip(cells, alike, strict=True) if a.fraction < cfg.tile_change / 2
            ]
            if 0 < len(laid) < len(cells):
                return laid
        return []

    def _whole_view_changed(self, ch: Changes) -> bool:
        return len(ch.altered) >= max(3, len(self.game.board.tiles) // 2)

    def _unexplained(self, ch: Changes) -> str | None:
        def cells(cs):
            return ", ".join(f"({x},{y})" for x, y in cs)

        if self._whole_view_changed(ch):
            return "the whole view changed: was the camera moved, or the light changed?"
        if ch.altered:
            return f"a placed tile changed or was taken away at {cells(ch.altered)}"
        if ch.illegal:
            board = self.game.board
            off = [c for c in ch.illegal if not board.in_bounds(c)]
            if off and any(n in board.tiles for c in off for n in neighbours(c)):
                b = board.bounds
                return (
                    f"a tile at {cells(off)}, beyond the table's edge (the play area is columns "
                    f"{b.min_x} to {b.max_x}, rows {b.min_y} to {b.max_y}): if it lies on the "
                    "table, the host removes the play area in Setup"
                )
            return f"a tile at {cells(ch.illegal)}, where no tile may lie (not next to the board)"
        if len(ch.new_tiles) > 1:
            return f"{len(ch.new_tiles)} new tiles at once at {cells(ch.new_tiles)}: one per turn"
        return None

    def _refine_grid(self, frame: np.ndarray, board: Board) -> Board:
        """Found on the table, the grid came from the start tile alone (or a calibration from
        it): a few pixels of error there become many cells away. Every laid tile adds borders
        far apart, so the grid is re-fitted to them after each turn and the baseline is cut
        again with it. A refit is kept only when it fits the borders better (``refit``'s own
        test) and the laid tiles, cut with it, look more like the tiles the game says they are:
        where a tile's edge has the table's colour (a tan city on a wooden table) the strongest
        step near it is the city's wall, and a fit to those walls shrinks the grid. That check
        is waived for a refit that fits the borders far better (``refit_clear_gain``): the laid
        tiles were read, and learned, with the old grid, so the further off it was the more they
        favour it (a start tile's grid 8 px off on a far, tilted table was never corrected and
        the game was lost, its tiles read as whatever the off grid cut)."""
        from .rectify import refit

        assert self.rectifier is not None
        fit = refit(self.rectifier, frame, self.game.board.tiles)
        refined = fit.rectifier
        if refined is self.rectifier:
            return board
        window = self.window()
        refined_board = self._cut(refined, frame, window)
        if fit.gain < self.config.refit_clear_gain:
            cells = self._cells_moved_most(self.rectifier, refined)
            if not all(board.contains(cell) for cell in cells):  # a turn entered outside the
                # view it was read in: both grids are judged on the current view
                board = self._cut(self.rectifier, frame, window)
            if self._known_tiles_fit(refined_board, cells) < self._known_tiles_fit(board, cells):
                log.debug("grid refit kept out: the laid tiles fit their types worse with it")
                return board
        self.rectifier = refined
        return refined_board

    def _cells_moved_most(self, old: Rectifier, new: Rectifier) -> list[tuple[int, int]]:
        """The laid cells whose corners the two grids place furthest apart (where they can be
        told apart), at most ``refit_check_cells`` of them."""
        cells = list(self.game.board.tiles)
        moved = [np.abs(new.cell_corners(*c) - old.cell_corners(*c)).max() for c in cells]
        order = np.argsort(moved)[::-1][: self.config.refit_check_cells]
        return [cells[i] for i in order]

    def _known_tiles_fit(self, board: Board, cells) -> float:
        """How well the laid tiles at ``cells`` on ``board`` look like their known type and
        rotation (the scorer's mean log-likelihood per pixel)."""
        total = 0.0
        for cell in cells:
            placed = self.game.board.tiles[cell]
            whole = board.cell(*cell)
            crop = self.scorer.prepare(whole)
            total += self.scorer.score(crop, [(placed.tile, placed.rotation)], cell=whole)[0]
        return total / max(1, len(cells))
