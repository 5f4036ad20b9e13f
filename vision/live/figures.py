"""Where the figures stand: the current player's follower on a new tile and the spot it claims
(standing on its foot, lying on its middle), the Gingerbread Man's move, and a follower laid
after its tile settled.

One concern of :class:`~.tracker.Tracker`, kept apart as python-chess keeps ``BaseBoard`` apart
from ``Board``: the methods read the tracker's ``game``, ``scorer``, ``config``, ``rectifier``,
``baseline`` and ``last_changes`` and change none of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from meeplecam.engine import Game, IllegalTurn, Kind, Spot, Turn
from meeplecam.engine import hints as engine_hints

from .appearance import GINGERBREAD, anchor_points, kind_map
from .observations import Amend
from .rectify import Board
from .twins import laid_layout

if TYPE_CHECKING:
    from .seeing import Changes

LATE_FOLLOWER_CHANGED = 0.3  # of a follower's pixels on the last tile that changed, at least


@dataclass(frozen=True)
class Figure:
    """A figure seen on the table: its cell and its pixels on that cell's scorer crop."""

    cell: tuple[int, int]
    mask: np.ndarray


class Figures:
    """The tracker's reading of figures (see the module)."""

    def follower_on(self, crop: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The current player's figure on a scorer crop (a mask, or None when there is none)
        and the pixels the tile terms leave out for it (the mask grown by ``follower_guard``).
        Looked for even when the game has none of the player's followers left: then an earlier
        turn was read with a follower it did not have, or one scored and returned was kept,
        and the figure is still not the tile's art."""
        game = self.game
        mask, _ = self.scorer.follower_mask(crop, game.players[game.current].colour)
        if not mask.any():
            return None, None
        return mask, self._guarded(mask)

    def _guarded(self, mask: np.ndarray) -> np.ndarray:
        """A figure's pixels grown by ``follower_guard``: what the tile terms leave out."""
        import cv2

        k = self.config.follower_guard
        return cv2.dilate(mask.astype(np.uint8), np.ones((k, k), np.uint8)) > 0

    def _changed_on_crop(self, board: Board, cell: tuple[int, int]) -> np.ndarray:
        """Where a cell changed since its baseline, on its scorer crop (the diff's inset ring,
        which the diff does not see, counts as changed)."""
        cfg = self.config
        before, now = self.baseline[cell], self._look(board, cell)
        p, d = board.cell_px, round(board.cell_px * cfg.diff_inset)
        full = np.ones((p, p), np.uint8)
        full[d : p - d, d : p - d] = self._changed_pixels(before.lab, now.lab)
        return self.scorer.prepare(full) > 0

    def _gingerbread_disagreement(self, turn: Turn, figure: Figure | None) -> float:
        """What an option loses when its Gingerbread Man move (or none) disagrees with the
        figure seen (or not seen) to move (see ``gingerbread_moved``)."""
        moves = engine_hints.gingerbread_moves(self.game, turn)
        if figure is not None:
            return 0.0 if moves else self.config.gingerbread_moved
        return self.config.gingerbread_unmoved if moves else 0.0

    def _gingerbread_seen(
        self, board: Board, cell: tuple[int, int] | None, follower: np.ndarray | None
    ) -> Figure | None:
        """Where the Gingerbread Man figure stands now if it moved this turn: of the cells that
        changed (the new tile's at ``cell``, if any, less its ``follower``'s pixels, and placed
        tiles' that changed a little), the one that shows most of the figure's colour; the cell
        it stood on is left out (it left there). None when it did not move, or in a game
        without it."""
        game = self.game
        if not game.gingerbread_in_play:
            return None
        stood = engine_hints.gingerbread_at(game)
        changed = self.last_changes.small if self.last_changes is not None else []
        colours = [p.colour for p in game.players]
        cfg = self.config
        best: tuple[float, Figure] | None = None
        for c in dict.fromkeys([cell, *changed] if cell is not None else changed):
            if (stood is not None and c == stood[0]) or (c != cell and c not in game.board.tiles):
                continue
            crop = self.scorer.prepare(board.cell(*c))
            # on a placed tile only what changed: houses on a city are about its colour
            if c == cell:
                within = None if follower is None else ~follower
            else:
                within = self._changed_on_crop(board, c)
            mask, area = self.scorer.follower_mask(
                crop, GINGERBREAD, colours, within, cfg.gingerbread_close
            )
            if mask.any() and (best is None or area > best[0]):
                best = (area, Figure(c, mask))
        return None if best is None else best[1]

    def _late_follower(self, board: Board, changes: Changes) -> Amend | None:
        """A follower laid on the last tile after the table settled with the tile alone: the
        tile's cell changed a little, where a figure of its player's colour now stands, and the
        turn had none. The turn is read again with the follower (on its likeliest legal spot,
        as the rules stood before the turn)."""
        import cv2

        game = self.game
        last = game.log[-1] if game.log else None
        if not isinstance(last, Turn) or last.meeple is not None or last.cell not in changes.small:
            return None
        before = game.replayed(game.log[:-1])
        if before.supply[before.current] <= 0:
            return None
        whole = board.cell(*last.cell)
        crop = self.scorer.prepare(whole)
        colour = game.players[before.current].colour
        follower, _ = self.scorer.follower_mask(crop, colour)
        baseline = self.baseline.get(last.cell)
        if not follower.any() or baseline is None:
            return None
        # the figure stands where the cell changed (not in art of the player's colour)
        now = self._look(board, last.cell).lab
        changed = self._changed_pixels(baseline.lab, now).astype(np.uint8)
        changed = cv2.resize(changed, follower.shape[::-1], interpolation=cv2.INTER_NEAREST)
        if changed[follower].mean() < LATE_FOLLOWER_CHANGED:
            return None
        tile = game.tileset[last.tile]
        foot = self.scorer.figure_core(crop, colour, follower)
        turn = self._turns_for(tile, last.rotation, last.cell, foot, before)[0]
        if turn.meeple is None:
            return None
        turn = Turn(turn.tile, turn.x, turn.y, turn.rotation, turn.meeple, None, last.gingerbread)
        try:
            before.apply(turn)
        except IllegalTurn:
            return None
        return Amend(len(game.log) - 1, turn, self._crop_picture(board, last.cell))

    def _late_gingerbread(self, board: Board) -> Amend | None:
        """The Gingerbread Man moved after the table settled with the last tile: the figure
        now stands in another city (on a placed tile that changed a little). The last turn is
        read again with the move, its tile or the icon tile that lies like it (the icon is a
        few pixels; the figure's move says the tile had one), whichever the rules let move it."""
        game = self.game
        last = game.log[-1] if game.log else None
        if not game.gingerbread_in_play or not isinstance(last, Turn):
            return None
        figure = self._gingerbread_seen(board, None, None)
        if figure is None:
            return None
        before = game.replayed(game.log[:-1])
        lies = laid_layout(game.tileset[last.tile], last.rotation)
        readings = [(last.tile, last.rotation)] + [
            (tile.id, r)
            for tile in game.tileset.types.values()
            if tile.id != last.tile and before.remaining.get(tile.id, 0) > 0
            for r in tile.distinct_rotations
            if laid_layout(tile, r) == lies
        ]
        for tile_id, rotation in readings:
            turn = Turn(tile_id, last.x, last.y, rotation, last.meeple)
            if not engine_hints.gingerbread_moves(before, turn):
                continue
            moved = self._with_gingerbread(before, turn, figure)
            if moved == last:
                return None
            if moved.gingerbread is not None:
                return Amend(len(game.log) - 1, moved, self._crop_picture(board, figure.cell))
        return None

    def _figures(self, crop: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
        """The figures of each player's colour on a laid tile's crop, and the pixels they
        hide from the tile's scoring (None without any)."""
        masks = self._figure_masks(crop)
        return masks, self._hidden_by(masks)

    def _hidden_by(self, masks: dict[str, np.ndarray]) -> np.ndarray | None:
        """The pixels figures (``masks`` by colour) hide from a tile's scoring, grown; None
        without any."""
        figures = np.logical_or.reduce(list(masks.values()))
        return self._guarded(figures) if figures.any() else None

    def _figure_masks(self, crop: np.ndarray) -> dict[str, np.ndarray]:
        """Where each player's colour shows a figure on a crop, by colour."""
        return {p.colour: self.scorer.follower_mask(crop, p.colour)[0] for p in self.game.players}

    def _figure_evidence(self, crop: np.ndarray, colour: str, mask: np.ndarray) -> float:
        """How clearly ``colour`` shows a figure on ``mask`` of a scorer crop: the log-likelihood
        ratios over terrain added up over the blob (what a faint blob must reach to count,
        ``follower_evidence``)."""
        ratio = self.scorer.follower_ratio(crop, colour)
        return float(np.clip(ratio[mask], 0, None).sum())

    def _turns_for(
        self, tile, rotation, cell, follower, game: Game | None = None, figure: Figure | None = None
    ) -> list[Turn]:
        """The turn(s) an option stands for: with the follower on the likeliest legal spot (two
        turns when two spots are about as likely), plus a Gingerbread Man move when one is due
        (to the city under the ``figure`` seen, when it was). ``game``: the game the turn is
        laid in (the tracker's, unless a turn is read again)."""
        game = game or self.game
        x, y = cell
        base = Turn(tile.id, x, y, rotation)
        spots = engine_hints.follower_spots(game, base) if follower is not None else []
        if not spots:
            return [self._with_gingerbread(game, base, figure)]
        costs = self._segment_costs(tile, rotation, follower, [s.segment for s in spots], cell)
        order = sorted(range(len(spots)), key=lambda i: costs[i])
        close = len(order) > 1 and costs[order[1]] - costs[order[0]] < self.config.spot_ambiguity
        if close and np.count_nonzero(follower) < self.config.lying_min_share * follower.size:
            # of a field and another spot about as likely: too small a figure to lie on its
            # back stands, so not on the field
            standing = [
                i for i in order[:2] if tile.segments[spots[i].segment].kind is not Kind.FIELD
            ]
            if len(standing) == 1:
                order, close = standing, False
        return [
            self._with_gingerbread(game, Turn(tile.id, x, y, rotation, spots[i].at), figure)
            for i in order[: 2 if close else 1]
        ]

    def _spot_misfit(self, tile, rotation, cell, follower, game: Game | None = None) -> float:
        """How much less likely the reading (``tile`` at ``rotation`` on ``cell``) is for where
        its figure stands (``follower``: its clear part on the scorer crop): players put a
        follower well inside its feature, so a base point further than ``spot_fit_slack`` from
        every spot the reading leaves free (on a border, or on a feature another follower
        holds) counts against it, in the scores' units (``spot_fit_weight`` per tile unit, at
        most ``spot_fit_cap`` of them). ``game``: the game the tile is laid in (the
        tracker's, unless a turn is read again)."""
        cfg = self.config
        spots = engine_hints.follower_spots(game or self.game, Turn(tile.id, *cell, rotation))
        segments = [s.segment for s in spots]
        nearest = min(self._segment_costs(tile, rotation, follower, segments, cell), default=np.inf)
        return cfg.spot_fit_weight * min(max(0.0, nearest - cfg.spot_fit_slack), cfg.spot_fit_cap)

    def _segment_costs(self, tile, rotation, mask: np.ndarray, segments, cell) -> list[float]:
        """How far a figure (``mask`` on the scorer crop of ``cell``: the blob's clear part,
        ``TerrainScorer.figure_core``) stands from each of
        ``segments`` of ``tile`` at ``rotation``, in tile units: from its base point to the
        segment's region, plus a little to the segment's anchor (where a figure is put on it).
        Farmers lie, every other figure stands, so each segment is measured from the base point
        the figure would have there: a lying figure's middle; a standing one's foot, the end of
        the blob nearest the camera (it leans away from the camera in the top-down picture)."""
        ys, xs = np.nonzero(mask)
        size = mask.shape[0]
        inset = self.config.scorer.inset

        def tile_units(px: np.ndarray) -> float:
            return (px.mean() + 0.5) / size * (1 - 2 * inset) + inset

        dx, dy = self.rectifier.lean(cell) if self.rectifier is not None else (0.0, -1.0)
        along = xs * dx + ys * dy
        foot = along <= np.percentile(along, 100 - self.config.foot_percentile)
        bases = {
            True: (tile_units(xs), tile_units(ys)),  # lying: the middle
            False: (tile_units(xs[foot]), tile_units(ys[foot])),  # standing: the foot
        }
        full = 48
        _, labels = kind_map(tile, rotation, full)
        anchors = anchor_points(tile, rotation)
        costs = []
        for segment in segments:
            bx, by = bases[tile.segments[segment].kind is Kind.FIELD]
            region = np.argwhere(labels == segment)
            if len(region):
                pts = (region[:, ::-1] + 0.5) / full
                d_region = float(np.min(np.hypot(pts[:, 0] - bx, pts[:, 1] - by)))
            else:
                d_region = 1.0
            ax, ay = anchors.get(segment, (0.5, 0.5))
            costs.append(d_region + 0.3 * float(np.hypot(ax - bx, ay - by)))
        return costs

    def _with_gingerbread(self, game: Game, turn: Turn, figure: Figure | None) -> Turn:
        """``turn`` (to be laid in ``game``) with the Gingerbread Man's move when one is due:
        to the city under the ``figure`` seen (the nearest city of its cell the rules allow),
        else the first unfinished city the rules allow (the players correct it on the page)."""
        if not engine_hints.gingerbread_moves(game, turn):
            return turn
        trial = game.replayed(game.log)
        try:
            trial.apply(turn)  # no city left for it to go to: it stays
            return turn
        except IllegalTurn:
            pass
        for candidate in self._gingerbread_targets(game, turn, figure):
            try:
                trial.apply(candidate)
                return candidate
            except IllegalTurn:
                continue
        return turn

    def _gingerbread_targets(self, game: Game, turn: Turn, figure: Figure | None) -> Iterator[Turn]:
        """``turn`` with each city spot the Gingerbread Man could be moved to: those of the
        cell the ``figure`` stands on first, nearest first; then every other city."""
        tiles = {cell: (p.tile, p.rotation) for cell, p in game.board.tiles.items()}
        tiles[turn.cell] = (game.tileset[turn.tile], turn.rotation)
        first: list[tuple[tuple[int, int], int]] = []
        if figure is not None:
            tile, rotation = tiles[figure.cell]
            cities = [i for i, g in enumerate(tile.segments) if g.kind is Kind.CITY]
            costs = (
                self._segment_costs(tile, rotation, figure.mask, cities, figure.cell)
                if cities
                else []
            )
            first = [(figure.cell, cities[i]) for i in np.argsort(costs)]
        rest = [
            (cell, index)
            for cell, (tile, _) in tiles.items()
            for index, seg in enumerate(tile.segments)
            if seg.kind is Kind.CITY and (cell, index) not in first
        ]
        for cell, index in first + rest:
            tile, rotation = tiles[cell]
            at = tile.oriented(rotation).position_name(index)
            yield Turn(turn.tile, turn.x, turn.y, turn.rotation, turn.meeple, None, Spot(*cell, at))
