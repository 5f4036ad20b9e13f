"""A new tile read with the rules: the options the bag and the neighbours allow, scored on the
picture; what the rules do not allow but fits better (a doubt, or a repair of an earlier turn);
the follower's spot; then a :class:`~.observations.Commit` when nothing is in doubt, else a
:class:`~.observations.Question` with the ranked options.

One concern of :class:`~.tracker.Tracker` (see :mod:`.figures`): :meth:`TileReading._decode_tile`
sets the tracker's ``pending`` (the reading waiting for the game) and ``unexplained``, and
notes an unreadable cell in ``unread``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from meeplecam.engine import Kind, TileType, Turn

from .figures import Figure
from .observations import Commit, Observation, Question, Warning
from .rectify import Board
from .seeing import neighbours
from .twins import laid_layout

SHADE_REPAIR = 0.85  # a tile read under a shadow darker than this is not proof to repair on
SPOT_DOUBT = "the follower's spot"  # a doubt: two of the tile's spots are about as likely
# a doubt left to the reading over at the game's end, not asked then (TrackerConfig.review_near)
FOR_THE_REVIEW = "left to the reading over at the end"


@dataclass
class Pending:
    """A tile read and out as an observation, waiting for the game to take it."""

    board: Board
    cell: tuple[int, int]
    crop: np.ndarray
    follower: np.ndarray | None  # mask in the crop
    log_len: int
    frame: np.ndarray | None = None  # the settled view it was read on
    observation: Observation | None = None
    margin: float = 0.0  # how far the reading's best option led the runner-up
    # the view that showed the players had played on, the question unanswered (PlayedOn)
    played_on: np.ndarray | None = None


def confidence(scores: list[float], sharpness: float = 8.0) -> float:
    """The best of ``scores`` (best first) as a share of all, read as log-likelihoods."""
    if len(scores) < 2:
        return 1.0
    s = np.asarray(scores) * sharpness
    s = np.exp(s - s.max())
    return float(s[0] / s.sum())


@dataclass(frozen=True)
class FigureSeen:
    """The current player's figure on a new tile, as the reading takes it."""

    follower: np.ndarray | None  # its blob on the scorer crop (None: no figure)
    ignore: np.ndarray | None  # the pixels the tile terms leave out (figures, grown)
    foot: np.ndarray | None  # its clear core when it is laid with the tile (its spot)
    # a blob of the player's colour too faint to count, unless the copy's art disowns it
    faint: np.ndarray | None = None
    faint_foot: np.ndarray | None = None
    gingerbread: Figure | None = None  # where the Gingerbread Man stands if it moved


@dataclass
class FigureMemo:
    """What was found of the figure on one new tile while it is read, per reading: the cell
    and the blob as the appearance model reads them (``art``; ``faint``, for a faint blob), and
    each reading's :meth:`~.figures.Figures._spot_misfit` (``misfit``, keyed (tile id,
    rotation)), so the options and the rival readings share them."""

    art: dict = field(default_factory=dict)
    faint: dict = field(default_factory=dict)
    misfit: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Rival:
    """The reading the rules do not allow at a cell that fits its picture best, of those the
    table does not rule out (:meth:`~.repairs.Repairs._ruled_out`)."""

    gain: float  # how much better it fits than the best option (-inf: none)
    tile: TileType | None
    rotation: int
    # the best of them whose every copy is played and whose sides fit the cell: (how much
    # better it fits than the best option, tile, rotation), or None
    spent: tuple[float, TileType, int] | None
    # for readings that one neighbour alone forbids: what was found of it (_neighbour_against)
    against: dict


class TileReading:
    """The tracker's reading of a new tile (see the module)."""

    def legal_options(self, cell: tuple[int, int]) -> list[tuple[TileType, int]]:
        """The (tile, rotation) readings the rules allow at a frontier cell, from the tiles
        left in the bag."""
        game = self.game
        pattern = game.board.frontier[cell]
        return [
            (game.tileset[tid], r)
            for tid, n in sorted(game.remaining.items())
            if n > 0
            for r in game.tileset[tid].rotations_fitting(pattern)
        ]

    def _decode_tile(self, board: Board, cell: tuple[int, int]) -> Observation:
        """The new tile at ``cell`` of the settled view ``board`` read with the rules: a
        :class:`Commit`, a :class:`Question`, a :class:`Warning` when nothing the rules allow
        can lie there, or (nobody answering) an earlier turn's :class:`Amend` and the tile read
        again in the game it leaves (:meth:`~.repairs.Repairs._read_again`)."""
        game = self.game
        cfg = self.config
        picture = self._crop_picture(board, cell)
        if cell not in game.board.frontier:
            return self._laid_beside_unread(cell, picture)
        options = self.legal_options(cell)
        whole = board.cell(*cell)
        crop = self.scorer.prepare(whole)
        spent = self._played_out_fitting(game.board.frontier[cell])
        # an earlier turn is read again on the tracker's own say only on a tile seen in full
        # light: under a shadow taken off, the tile's colours are a guess (SHADE_REPAIR)
        shaded = self.shade is not None and self.shade.get(cell, 1.0) < SHADE_REPAIR
        may_repair = not self.people_answer and not self.reading_again and not shaded
        if not options:
            return self._nothing_fits(board, cell, whole, crop, spent, may_repair, picture)
        follower, ignore = self.follower_on(crop)
        free = game.supply[game.current] > 0  # a figure seen is laid only with one to lay
        if follower is not None and not free:
            follower, repair = self._figure_with_none_left(
                board, cell, crop, follower, may_repair, picture
            )
            if repair is not None:
                return self._read_again(board, cell, *repair)
        seen = self._figure_seen(board, cell, crop, follower, ignore, free)
        scores = self.scorer.score(crop, options, seen.ignore, whole)
        if game.gingerbread_in_play:
            scores = [
                s - self._gingerbread_disagreement(Turn(t.id, *cell, r), seen.gingerbread)
                for s, (t, r) in zip(scores, options, strict=True)
            ]
        memo = FigureMemo()
        scores = self._with_spot_fit(cell, whole, options, scores, seen, memo)
        rival = self._rival(board, cell, whole, crop, options, max(scores), seen, spent, memo)
        # a tile the bag has run out of looks clearly better than anything it still holds: the
        # best legal option is probably not what lies there (ask, naming the turn)
        drifted = rival.spent is not None and rival.spent[0] > cfg.spent_margin
        if may_repair:
            repair = self._repair_for(board, cell, rival, drifted)
            if repair is not None:
                return self._read_again(board, cell, *repair)
        scores = self._with_bag_prior(scores, options)
        order = sorted(range(len(options)), key=lambda i: -scores[i])
        ranked, spot_doubt = self._ranked(cell, whole, options, scores, order, seen, memo)
        if not ranked:
            return Warning(f"the tile at ({cell[0]},{cell[1]}) cannot be laid legally", picture)
        margin = scores[order[0]] - scores[order[1]] if len(order) > 1 else float("inf")
        self.pending = Pending(
            board, cell, crop, follower, len(game.log), frame=self._frame, margin=margin
        )
        doubts: tuple[str, ...] = ()
        if margin < cfg.margin:
            doubts += (f"the runner-up is close ({margin:.3f})",)
        visible = self._visible_difference(options, order, seen.ignore)
        if visible < cfg.min_evidence_px and margin < cfg.evidence_margin:
            doubts += (f"the two best differ in {visible} px",)
        # what the picture alone leaves in doubt may be settled by what the table teaches next
        in_picture = doubts
        if rival.gain >= cfg.unexplained:
            doubts += (
                f"{rival.tile.id} turned {rival.rotation}, not allowed here, fits better "
                f"({rival.gain:+.3f})",
            )
        if drifted:
            doubts += ("a tile already played fits better",)
        if rival.gain < cfg.unexplained_for_now:
            # a little better only (a tile a neighbour forbids, or whose copies are all
            # played): as often the picture in doubt as an earlier reading wrong, and the
            # tiles laid next settle which
            in_picture = doubts
        elif doubts != in_picture and sum(game.remaining.values()) <= cfg.review_near:
            # the game ends in a few turns: the reading over then reads every tile again,
            # with all the table has taught, and settles which reading was wrong
            doubts += (FOR_THE_REVIEW,)
            in_picture = doubts
        sure = not doubts
        if spot_doubt:
            doubts += (SPOT_DOUBT,)
        if cell in self.ask_cells:
            doubts += ("the players corrected this cell",)
        # a tile the picture alone leaves in doubt is read for now, its follower's spot with it
        # (chosen again, or asked about, once the tile is sure: vision.live.doubts); a sure
        # tile's spot in doubt is asked at once (the figure will not move)
        for_now = bool(in_picture) and doubts in (in_picture, (*in_picture, SPOT_DOUBT))
        if not doubts or (for_now and cfg.defer_turns > 0):
            best = ranked[0][0]
            sureness = confidence([scores[i] for i in order])
            return Commit(best, sureness, self._pose(best), picture, doubts=doubts)
        what = "the follower's place" if sure else "the tile"
        text = f"Not sure about {what} at {cell}" + self._suspect_named(cell, rival, drifted)
        return Question(ranked[: cfg.max_options], picture, text, doubts)

    def _laid_beside_unread(self, cell: tuple[int, int], picture: np.ndarray) -> Warning:
        """A tile off the frontier, laid beside a tile that could not be read: kept unread
        until that turn is corrected."""
        beside = next(c for c in neighbours(cell) if c in self.unread)
        self.unread.setdefault(cell, len(self.game.log))
        return Warning(
            f"a tile at ({cell[0]},{cell[1]}), laid beside the tile at "
            f"({beside[0]},{beside[1]}) that could not be read: it is read once that "
            "turn is corrected",
            picture,
        )

    def _played_out_fitting(self, pattern: str) -> list[tuple[TileType, int]]:
        """Tiles whose sides meet ``pattern`` (N E S W, "." free) but whose every copy is
        already on the table: when one of them is the best reading of a cell, an earlier turn
        probably took its copy by mistake."""
        game = self.game
        counts = game.tileset.counts()
        return [
            (tile, r)
            for tile in game.tileset.types.values()
            if game.remaining.get(tile.id, 0) <= 0 and counts.get(tile.id, 0) > 0
            for r in tile.rotations_fitting(pattern)
        ]

    def _nothing_fits(
        self, board: Board, cell, whole, crop: np.ndarray, spent, may_repair: bool, picture
    ) -> Observation:
        """No tile left in the bag fits at ``cell``: a warning naming the played-out tile it
        looks like and the suspect copy, or (nobody answering) that copy read again as a tile
        of the bag, at any cost, and the tile read again."""
        game = self.game
        text = f"a tile at ({cell[0]},{cell[1]}), but no tile left in the bag fits there"
        if spent:
            s = self.scorer.score(crop, spent, cell=whole)
            tile, r = spent[int(np.argmax(s))]
            repair = self._repair(board, tile, float("inf")) if may_repair else None
            if repair is not None:
                return self._read_again(board, cell, *repair)
            text += f"; it looks like {tile.id} turned {r}: {self._suspect(tile.id)}"
        self.unread.setdefault(cell, len(game.log))
        return Warning(text, picture)

    def _figure_with_none_left(
        self, board: Board, cell, crop: np.ndarray, follower, may_repair: bool, picture
    ):
        """A figure of the current player's colour on the new tile, whose player has no
        follower left to lay: (the figure, or None when it is too faint to be more than art;
        the repair of the earlier turn that laid a follower by mistake, or None). A clear
        figure read without it raises a warning naming the follower to look at."""
        game = self.game
        colour = game.players[game.current].colour
        if not self.scorer.figure_clear(crop, colour, follower):
            # with none left to lay, a faint blob (a village, a shaded roof) is taken for the
            # art: the rules make a figure unlikely, so only a clear one says an earlier turn
            # is wrong (its pixels are still left out of the tile terms, as any blob's)
            return None, None
        weakest = self._weakest_follower(board, game.current)
        if may_repair:
            repair = self._repair_follower(board, crop, colour, follower, weakest)
            if repair is not None:
                return follower, repair
        # read without it (the rules allow no other): say which follower to look at
        check = "check the earlier turns"
        if weakest is not None:
            index = self._turn_index(weakest[1])
            check = f"is the {colour} follower at {weakest[1]} (turn {index + 1}) there?"
        self._out.append(
            Warning(
                f"a {colour} figure stands on the tile at {cell}, but {colour} has no "
                f"follower left: {check}",
                picture,
            )
        )
        return follower, None

    def _figure_seen(
        self, board: Board, cell, crop: np.ndarray, follower, ignore, free: bool
    ) -> FigureSeen:
        """What the reading takes of the figures on the new tile at ``cell``: the current
        player's (``follower``, laid with the tile when the player has one ``free``), a
        faint one the copy's art does not explain, and the Gingerbread Man's move."""
        game = self.game
        colour = game.players[game.current].colour
        foot = None
        if follower is not None and free:
            foot = self.scorer.figure_core(crop, colour, follower)
        # with the copy's art known, a figure its colour shows too faintly to count (the first
        # yellow knight on a tan city in shade) is a blob of the colour the art does not explain
        faint = faint_foot = None
        if follower is None and self.scorer.reference is not None and free:
            loose, _ = self.scorer.follower_mask(crop, colour, known=True)
            if loose.any():
                faint, faint_foot = loose, self.scorer.figure_core(crop, colour, loose)
        figure = self._gingerbread_seen(board, cell, ignore)
        if figure is not None and figure.cell == cell:  # it came to this tile: not the art
            hidden = self._guarded(figure.mask)
            ignore = hidden if ignore is None else ignore | hidden
        return FigureSeen(follower, ignore, foot, faint, faint_foot, figure)

    def _rival(
        self, board: Board, cell, whole, crop, options, best: float, seen: FigureSeen, spent, memo
    ) -> Rival:
        """What the picture looks like with the rules set aside: when some tile the rules do
        not allow here fits far better than every option (``best``), the table disagrees with
        the game (an earlier turn read wrong, a tile the bag no longer holds). A pennant twin
        of an option (drawn alike but for the shield) is left out: the shield is a few pixels,
        so a twin whose copies are all played "fitting better" is mostly the pennant test's
        doubt, not the table's (half of such questions on 6 games were twins of the tile
        laid); and so is what the table itself rules out (a played-out type whose every copy
        is surely read as it; a type that a neighbour surely read forbids). The options' twins
        still explain the picture: another tile fits better only by beating them too (else it
        gains only the shield the picture lacks or shows, as a T over the Q left in the bag
        where an R lies, its road a figure's tracks in the snow). Where the figure stands
        counts as it does for the options (``best``: theirs with it, :meth:`_with_spot_fit`)."""
        game = self.game
        drawn_alike = {laid_layout(tile, r) for tile, r in options}
        # the options are scored again with their twins: the twin tests weigh a pair together
        readings = [(t, r) for t in game.tileset.types.values() for r in t.distinct_rotations]
        twins, others, other_scores = [], [], []
        scores = self.scorer.score(crop, readings, seen.ignore, whole)
        scores = self._with_spot_fit(cell, whole, readings, scores, seen, memo, best)
        for read, score in zip(readings, scores, strict=True):
            if laid_layout(*read) in drawn_alike:
                twins.append(score)
            else:
                others.append(read)
                other_scores.append(score)
        best = max([best, *twins])
        self.unexplained = max(other_scores, default=-np.inf) - best
        ruled_out, against = self._ruled_out(board, cell, others, other_scores, best)
        kept = [
            (s, t, r)
            for s, (t, r) in zip(other_scores, others, strict=True)
            if (t.id, r) not in ruled_out
        ]
        fits, tile, rotation = max(kept, default=(-np.inf, None, 0), key=lambda x: x[0])
        pattern = game.board.frontier[cell]
        spent_ids = {t.id for t, _ in spent}
        spent_best = max(
            (
                (s - best, t, r)
                for s, t, r in kept
                if t.id in spent_ids
                and any(t.canonical_rotation(q) == r for q in t.rotations_fitting(pattern))
            ),
            default=None,
            key=lambda x: x[0],
        )
        return Rival(fits - best, tile, rotation, spent_best, against)

    def _repair_for(self, board: Board, cell, rival: Rival, drifted: bool):
        """With nobody to ask, the earlier turn ``rival`` says was misread, read again: a copy
        of the played-out type that fits better (when ``drifted``), else the one neighbour
        whose side forbids the rival. (the amend, the amended game), or None."""
        if drifted:
            repair = self._repair(board, rival.spent[1], rival.spent[0])
            if repair is not None:
                return repair
        if rival.gain < self.config.unexplained:
            return None
        clash = rival.against.get((rival.tile.id, rival.rotation))
        if clash is None:
            return None
        return self._repair_neighbour(board, cell, rival.tile, rival.rotation, rival.gain, clash)

    def _figure_on(self, whole, seen: FigureSeen, tile: TileType, rotation: int, memo):
        """The figure the reading (``tile`` at ``rotation``) has on the new tile, as the
        mask of its clear part (its spot): None where the figure is the tile's own art (red
        roofs) or there is none; a faint blob the art disowns is one (``memo``: a
        :class:`FigureMemo`)."""
        if seen.foot is not None:
            if self.scorer.art_explains(whole, seen.follower, tile, rotation, memo.art):
                return None
            return seen.foot
        if seen.faint is not None and self.scorer.art_disowns(
            whole, seen.faint, tile, rotation, memo.faint
        ):
            return seen.faint_foot
        return None

    def _with_spot_fit(
        self, cell, whole, options, scores, seen: FigureSeen, memo, best: float | None = None
    ) -> list:
        """``scores`` less each reading's :meth:`~.figures.Figures._spot_misfit` for the figure
        seen on the new tile, for the readings close enough to the best (``best``, else the
        best of ``scores``) for it to matter (``memo``: a :class:`FigureMemo`)."""
        if seen.foot is None and seen.faint is None:
            return scores
        cfg = self.config
        reach = (max(scores) if best is None else best) - cfg.spot_fit_weight * cfg.spot_fit_cap
        fitted = list(scores)
        for i, (tile, rotation) in enumerate(options):
            if scores[i] < reach:
                continue
            key = (tile.id, rotation)
            if key not in memo.misfit:
                on_tile = self._figure_on(whole, seen, tile, rotation, memo)
                misfit = (
                    0.0 if on_tile is None else self._spot_misfit(tile, rotation, cell, on_tile)
                )
                memo.misfit[key] = misfit
            fitted[i] -= memo.misfit[key]
        return fitted

    def _ranked(self, cell, whole, options, scores, order, seen: FigureSeen, memo):
        """The best ``options`` (in ``order``, at most ``max_options``) as turns, each with the
        figure on its likeliest spot (two turns where two spots are about as likely), with
        their scores; and whether the best option's spot is in doubt (the figure as
        :meth:`_figure_on` takes it, with its ``memo``)."""
        ranked: list[tuple[Turn, float]] = []
        spot_doubt = False
        for i in order[: self.config.max_options]:
            tile, rotation = options[i]
            on_tile = self._figure_on(whole, seen, tile, rotation, memo)
            turns = self._turns_for(tile, rotation, cell, on_tile, figure=seen.gingerbread)
            if len(turns) > 1:
                spot_doubt = spot_doubt or i == order[0]
            for j, turn in enumerate(turns):
                ranked.append((turn, scores[i] - 1e-3 * j))
        return [(t, s) for t, s in ranked if t is not None], spot_doubt

    def _pose(self, turn: Turn) -> str | None:
        """How the figure of ``turn`` lies: a farmer lies, every other figure stands."""
        if turn.meeple is None:
            return None
        tile = self.game.tileset[turn.tile]
        segment = tile.oriented(turn.rotation).segment_at(turn.meeple)
        return "lying" if tile.segments[segment].kind is Kind.FIELD else "standing"

    def _suspect_named(self, cell, rival: Rival, drifted: bool) -> str:
        """What a question about the tile at ``cell`` adds about the earlier turn the table
        suspects: the copy of a played-out type it looks like, or the one neighbour whose side
        forbids the rival ("" when none)."""
        if drifted:
            _, tile, r = rival.spent
            return (
                f": it looks most like {tile.id} turned {r}, but every {tile.id} has been "
                f"played; {self._suspect(tile.id)}"
            )
        if rival.gain >= self.config.unexplained:
            clash = self._clashing_neighbour(cell, rival.tile, rival.rotation)
            if clash is not None:
                return f": it looks most like {rival.tile.id} turned {rival.rotation}, " + (
                    self._suspect_at(clash[0], "its side against it does not allow that")
                )
        return ""

    def _visible_difference(self, options, order, ignore) -> int:
        """Pixels where the two best readings differ that the camera can see: when their
        difference hides under a follower, the image cannot decide."""
        if len(order) < 2 or not hasattr(self.scorer, "visible_difference"):
            return 1 << 30
        return self.scorer.visible_difference(options[order[0]], options[order[1]], ignore)

    def _with_bag_prior(self, scores, options) -> list[float]:
        """``scores`` of (tile, rotation) ``options`` with the bag as a prior: of two readings
        the image cannot tell apart, the tile with more copies left is likelier to have been
        drawn (``bag_prior`` times the log of the copies left, shared out over the crop's
        pixels as the scores are)."""
        remaining = self.game.remaining
        weight = self.config.bag_prior / self.config.scorer.size**2
        return [
            s + weight * float(np.log(remaining[tile.id]))
            for s, (tile, _) in zip(scores, options, strict=True)
        ]
