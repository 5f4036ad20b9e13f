"""The live tracker: an explicit state machine from frames to observations (STYLE.md, ScrabScrap).

States and what moves them on (``TRANSITIONS`` lists every allowed step; a handler that returns
anything else is logged and the state is kept, never a crash):

- WAITING_FOR_START: wait for a settled frame, find the grid if no rectifier was given, learn the
  start tile (known) as the first labelled sample, keep the table as the baseline -> WATCHING.
- WATCHING: the table is still and matches the baseline; motion -> SETTLING.
- SETTLING: hands over the table; nothing is read until ``settle_frames`` still frames -> DECODING.
- DECODING: diff the settled top-down board against the baseline cell by cell. Laid tiles that
  all moved (a knocked camera) -> the grid follows the view and the diff is taken again. Nothing
  new (a hand passed), or an arm still across the window's outer ring (a player holding the
  drawn tile while thinking) -> WATCHING; one new tile on the frontier -> decode it with the
  rules -> COMMITTED or ASKING; several laid together (a turn that never settled) -> the first
  of them the same way, the others read from the same view as soon as it is applied (or
  found unreadable: nothing left in the bag could be it, and a tile laid beside such a tile
  is kept unread too, for the review); anything
  the rules cannot explain -> WARNING. With nobody to ask (replay), when the
  tile looks most like one whose every copy is played and a copy read earlier looks nearly as
  much like a tile the bag still holds, that turn is read again first (an :class:`Amend`) and
  the tile read in the game as the amend leaves it.
- COMMITTED / ASKING: the observation is out; when the consumer has applied a turn to the game
  (the game log grew) the tracker learns from it and goes back to WATCHING. A question left
  open while the table settles with the next tile laid -> its best option, taken for now
  (:class:`PlayedOn`; nothing learned from it), and the next tile is read once it is applied.
- WARNING: re-read on every settle; when the table is right again (or shows one new tile) it
  recovers.

The tracker never changes the game: the consumer applies a :class:`Commit` (or the answer to a
:class:`Question`, or an :class:`Amend`, in the order they come) and the tracker follows the
game log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np

from meeplecam.engine import Discard, Game, IllegalTurn, Kind, Spot, TileType, Turn
from meeplecam.engine import hints as engine_hints
from meeplecam.engine.tiles import NEIGHBOUR_OFFSETS

from .appearance import GINGERBREAD, ScorerConfig, TerrainScorer, anchor_points, kind_map
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
from .motion import Motion, MotionConfig, MotionGate
from .observations import Amend, Commit, Drawn, Observation, PlayedOn, Question, Warning
from .rectify import Board, Rectifier, Window
from .spot import DrawnTileSpot, ranked_types
from .twins import laid_layout

log = logging.getLogger(__name__)


class State(StrEnum):
    WAITING_FOR_START = "waiting for start"
    WATCHING = "watching"
    SETTLING = "settling"
    DECODING = "decoding"
    COMMITTED = "committed"
    ASKING = "asking"
    WARNING = "warning"


S = State
TRANSITIONS: dict[State, frozenset[State]] = {
    S.WAITING_FOR_START: frozenset({S.WAITING_FOR_START, S.WATCHING}),
    S.WATCHING: frozenset({S.WATCHING, S.SETTLING, S.DECODING}),
    S.SETTLING: frozenset({S.SETTLING, S.DECODING}),
    S.DECODING: frozenset({S.WATCHING, S.COMMITTED, S.ASKING, S.WARNING, S.DECODING}),
    S.COMMITTED: frozenset({S.COMMITTED, S.WATCHING, S.SETTLING}),
    S.ASKING: frozenset({S.ASKING, S.WATCHING, S.SETTLING}),
    S.WARNING: frozenset({S.WARNING, S.DECODING, S.WATCHING}),
}


# each state's handler, by method name: bound methods kept on the tracker would make it a
# reference cycle, so a finished game's tracker (its frames and cell pictures, about 20 MB)
# would wait for a rare full collection and the live process would grow
HANDLERS = {
    S.WAITING_FOR_START: "_waiting_for_start",
    S.WATCHING: "_watching",
    S.SETTLING: "_settling",
    S.DECODING: "_decoding",
    S.COMMITTED: "_waiting_for_game",
    S.ASKING: "_asking",
    S.WARNING: "_warning",
}


LATE_FOLLOWER_CHANGED = 0.3  # of a follower's pixels on the last tile that changed, at least
SHADED_CELLS = 3  # cells changed a little that may be a shadow's (_follow_shade), at least
SHADE_REPAIR = 0.85  # a tile read under a shadow darker than this is not proof to repair on
QUIET_VIEWS = 4  # still moments too short to settle kept between readings (Tracker.quiet)
SHADE_MIN = 0.05  # the least change of light (gain off 1) that _follow_shade takes off


@dataclass
class TrackerConfig:
    motion: MotionConfig = field(default_factory=MotionConfig)
    scorer: ScorerConfig = field(default_factory=ScorerConfig)
    cell_px: int = 48  # top-down pixels per cell
    # the cell beside the board where the players put the tile just drawn, face up, before
    # laying it (vision.live.spot): read there for the hints; None: no such spot
    drawn_spot: tuple[int, int] | None = None
    # cells around the board that are watched: a tile lies at most one off the board, so the
    # outermost ring (three off) shows whether an arm reaches in (Tracker._reaching_in)
    window_pad: int = 3
    margin: float = 0.02  # best option must beat the runner-up by this (log-likelihood/pixel)
    diff_threshold: int = 20  # per-pixel change (|dL|/2 + |da| + |db| in Lab, blurred) that counts
    # ... where both views are clipped (diff.CLIPPED_L): a snowy tile laid in a lamp's glare
    # differs from the glared table by 2-10 (median 4), unchanged cells there by 0-2
    glare_threshold: int = 6
    diff_inset: float = 0.12
    tile_change: float = 0.35  # part of a cell that changes when a tile arrives or leaves
    small_change: float = 0.03  # part of a cell that changes when a follower comes or goes
    vanish_change: float = 0.7  # most of a cell a returning (standing) follower may change
    warning_patience: int = 3  # settled readings a warning waits for the table to be put right
    # an arm reaching in over the window's outer ring (Tracker._reaching_in): the part of a ring
    # cell it changes, the most of the ring it may cross (more is the light), and how many
    # settled readings in a row wait for it to leave
    reach_change: float = 0.1
    reach_share: float = 0.67
    reach_patience: int = 8
    refine_grid: bool = True  # re-fit a grid found on the table to the tiles after each turn
    refit_check_cells: int = 12  # laid tiles that must fit their types as well after a refit
    # ... unless it fits the borders this much better: chosen on the 50 evaluation games
    # (refits that led a grid away from the truth gained 8-21 %, ones that brought a grid 5-8 px
    # off back 30-50 %; 1.4 read as well)
    refit_clear_gain: float = 1.25
    drift_threshold: int = 10  # grey levels a thumbnail pixel must drift by ...
    drift_fraction: float = 0.00015  # ... on this part of the thumbnail to read again
    texture_ratio: float = 1.6  # busier (or calmer) by this factor: something lies there
    faint_tile: float = 0.1  # a frontier cell changed this much is a tile when nothing else is
    spot_ambiguity: float = 0.02  # follower spots closer than this (tile units) are asked about
    # a standing figure's foot: its blob's pixels nearest the camera, 100 - this percent of them
    foot_percentile: float = 50
    # a figure whose clear part covers less of its cell's crop than this stands (a lying one
    # shows its whole outline: on 10 snowy and 5 scans games, lying figures covered 0.034 and
    # up, standing ones 0.004 and up, 14 of 160 under 0.035)
    lying_min_share: float = 0.025
    max_options: int = 6  # options listed in a question
    min_evidence_px: int = 12  # visible pixels (of the scoring crop) where the two best differ
    # ... unless the best leads by this much: those few pixels spoke clearly (a pennant twin's
    # shield half under a follower, which the model's blurred twin test still reads)
    evidence_margin: float = 0.3
    follower_guard: int = 3  # pixels around a follower left out of tile scoring (dilation)
    unexplained: float = 0.03  # a tile the rules forbid here may fit better by at most this
    spent_margin: float = 0.02  # ... and a tile whose every copy is played, by at most this
    # ... unless the table rules it out: a tile read earlier counts as surely what it was read
    # as when its picture fits that better than anything else that could lie there by this
    # much (Tracker._ruled_out; stop 45, the 40 snowy and scans games with no profile: such a
    # tile's lead 0.16 to 0.44 where the new tile's best was right, 0.21 to 0.26 where wrong)
    sure_reading: float = 0.5
    # a played-out tile's copy read earlier is read again as another tile when that costs its
    # cell less than the spent tile gains here, by at least this (see Tracker._repair)
    repair_margin: float = 0.02
    # a player with no follower left whose colour shows a figure on the new tile: the follower
    # of theirs that their colour shows least is taken off its turn when it shows less than
    # this share of the new figure and less than this evidence (Tracker._figure_evidence;
    # the 10 copy games at 720p: a red roof and a cloister's roof taken for figures 17 and 25,
    # figures standing 75 to 1090; see Tracker._repair_follower)
    follower_repair_share: float = 0.25
    follower_repair_evidence: float = 40.0
    # at the end of a recording, tiles read as each other's types take them back when each
    # looks more like its new type, by this much together (see Tracker.review). The 40 snowy
    # and scans games read over from the same live readings: 0.05 1653 / 1654 right, 0.04
    # 1653 / 1656, 0.03 and 0.02 1655 / 1656 (an R and a Q whose shield a figure hides,
    # a U and a WI6 with figures on their roads, each exchange gaining 0.03 to 0.05); the copy
    # 708 at each
    review_margin: float = 0.03
    # ... when they change more than a shield (a road, a city side): the 40 snowy and scans
    # games and the 10 copy games at 1080p and 720p read over from the same readings (stop 40):
    # 0.01 1658 / 1654 / 708 / 692 right, as review_margin for these too 1655 / 1654 / 708 / 692
    # (a ring of Q, R and S in 07019 gaining 0.014); a swap of pennant twins O and P at 720p
    # gains 0.020, wrong
    review_margin_drawn: float = 0.01
    # the board solved all together (Review._solved), in this many seconds at most; a tile
    # read again there that looks less like its new type than like its reading loses that
    # difference this many times more (the 40 snowy and scans games read over from the same
    # readings, solved once: 0 1612 / 1594 turns right, 0.5 1612 / 1598, 1.0 1608 / 1598;
    # the copy 706 with each)
    review_solve_s: float = 20.0
    review_solve_doubt: float = 0.5
    # a tile in a lamp's glare counts in the review as much as it keeps of the table's
    # contrast (Review._contrast_left); False: every tile counts in full
    review_by_contrast: bool = True
    # a tile that kept less than this share of the contrast is read through the glare: the
    # white light the glare added taken off again (review._without_glare; the 40 games'
    # readings reviewed: 0.3 and 0.5 both 1649 snowy / 1651 scans, 0.7 1649 / 1649, without
    # 1646 / 1651: the three tiles of a glare on 07010 read right)
    review_glare_below: float = 0.5
    # there, a pixel this bright in every channel was clipped by the sensor: a road the glare
    # washed out with it is lost, so such a side's crossing says nothing against a road
    # (RoadCrossings.evidence; the 40 games' readings reviewed: 1655 snowy / 1658 scans, the
    # copy 708; 256, none clipped: 1655 / 1656, 708; scans at 245 1658, at 254 1656: JPEG
    # leaves clipped white a few levels short of 255)
    review_clipped: int = 250
    review_locked: int = 12  # exchanges refused alone tried two at a time, at most
    review_rounds: int = 5  # deals, each without the types the last one's cells could not take
    # tiles around an exchange that fits no rotation turned with it where they lie, at most
    review_turning: int = 10
    # pennant twins read again side by side: a split of them whose shields stand out by this
    # much more (Lab b, the spot's least blue shield against the bluest plain tile there) than
    # the one read (twins.shield_margin; bench/shields.py: the true split stands out by 7 or
    # more in every pair of the 50 evaluation games, and scores highest in all 210)
    review_shield_gain: float = 2.0
    # ... and a figure on a tile read without one is a follower when its colour covers this
    # part of the crop; under it a follower is doubtful: taken off when an exchange needs the
    # figure (the 139 figures standing at the end of the 10 copy games: 4.0-21 %; a red
    # cloister roof read as a monk: 3.0 %, as much as a figure on a road of snowy game
    # 07009); a follower where none of its colour shows is none while this part of the
    # game's followers show (not when the players cleared the table to count)
    review_figure_area: float = 0.05
    review_figures_shown: float = 0.75
    bag_prior: float = 0.0  # weight of log(copies left) in an option's score (off: hurt)
    # taken from an option that would not move the Gingerbread Man when the figure was seen to
    # move (the icon is a few pixels, the figure a clear blob), and from one that would move it
    # when it was not seen to (less: a small figure on a city of its colour may go unseen, and
    # players may move it after the table settled)
    gingerbread_moved: float = 1.0
    gingerbread_unmoved: float = 0.05
    gingerbread_close: int = 5  # the figure's arms and legs are a pixel or two: join them

    @classmethod
    def from_dict(cls, data: dict) -> TrackerConfig:
        cfg = cls()
        for key, value in data.items():
            if key == "motion":
                cfg.motion = MotionConfig(**value)
            elif key == "scorer":
                cfg.scorer = ScorerConfig(**value)
            elif hasattr(cfg, key):
                setattr(cfg, key, value)
            else:
                raise KeyError(f"unknown tracker setting {key!r}")
        return cfg


@dataclass(frozen=True)
class Figure:
    """A figure seen on the table: its cell and its pixels on that cell's scorer crop."""

    cell: tuple[int, int]
    mask: np.ndarray


@dataclass
class Changes:
    new_tiles: list[tuple[int, int]]
    illegal: list[tuple[int, int]]  # empty cells that may not hold a tile, now holding one
    altered: list[tuple[int, int]]  # placed tiles that changed or left
    small: list[tuple[int, int]]  # follower-sized changes
    fractions: dict[tuple[int, int], float]
    spread: set = field(default_factory=set)  # small changes spread over the whole cell


@dataclass
class Pending:
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


class Tracker:
    """Frames in, observations out. ``feed(frame)`` returns the observations of that frame."""

    def __init__(
        self,
        game: Game,
        rectifier: Rectifier | None = None,
        scorer: TerrainScorer | None = None,
        config: TrackerConfig | None = None,
        locate=None,
        colours: dict | None = None,
        clock=time.perf_counter,
        people_answer: bool = True,
        reference=None,
    ):
        self.game = game
        # people at the table answer the questions and correct wrong readings (live), or
        # nobody does (replay takes each question's best option): an answered question is a
        # labelled sample only when people answered it, and an earlier turn is read again on
        # the tracker's own say (_repair) only when nobody is there to be asked
        self.people_answer = people_answer
        self.config = config or TrackerConfig()
        self.rectifier = rectifier
        self.located = False  # the geometry was found on the table (not given): refine it
        self.locate = locate  # frame -> Rectifier, when none is given (first settled frame)
        # reference: how this copy's tiles look (a vision.model.AppearanceModel), when known
        self.scorer = scorer or TerrainScorer(self.config.scorer, colours, reference)
        if hasattr(self.scorer, "players"):
            self.scorer.players = [p.colour for p in game.players]
        self.gate = MotionGate(self.config.motion)
        self.clock = clock
        self.state = State.WAITING_FOR_START
        self.status = "waiting for the start tile"
        self.baseline: dict[tuple[int, int], Look] = {}  # each cell as last settled
        # the view the baseline was last taken from: where the grid is known right, for
        # following a camera that moved (_follow_camera)
        self.anchor: Board | None = None
        # the last settled view that showed the table as the game has it: what the game is
        # read over on at the end (review), not a view taken as it is after a tile went
        self.game_view: Board | None = None
        # Lab map from the camera's light now to the light the table was learned under, once
        # the light changed (_follow_light)
        self.light: np.ndarray | None = None
        # cell -> gain of a shadow (or a pool of light) over part of the table on the view being
        # read, taken off it (_follow_shade); found again on each settled view
        self.shade: dict[tuple[int, int], float] | None = None
        self.expected_vanish: set[tuple[int, int]] = set()
        self.known_log = len(game.log)
        self.pending: Pending | None = None
        self.placed_cells = set(game.board.tiles)
        self.recheck: set[tuple[int, int]] = set()  # cells an undo emptied: read them again
        # cells holding a tile that nothing left in the bag could be (an earlier misread took
        # its copy), or laid beside such a tile, with where in the log each turn belongs, in
        # the order they were laid: taken into the baseline so later turns are read on their
        # own, read again when the game is corrected, and read over at the end (review)
        self.unread: dict[tuple[int, int], int] = {}
        # how sure each placed tile's reading was (best option's lead): the least sure copy of
        # a tile type is the suspect when the table shows one more of it than the bag allows
        self.certainty: dict[tuple[int, int], float] = {}
        # the turn the camera's reading put in the game at each cell: the review reads only
        # these over (a turn the players chose, entered or corrected is theirs)
        self.readings: dict[tuple[int, int], Turn] = {}
        # where the figure of each reading with a follower stood (its core on the scorer's
        # crop of the cell): the last view may no longer show it (scored and returned), and a
        # tile read over as another type puts it on the segment under that spot
        self.figures_read: dict[tuple[int, int], np.ndarray] = {}
        self.repaired: set[tuple[int, int]] = set()  # cells read again by _repair: never twice
        self.reading_again = False  # reading a tile in the game as an amend leaves it: no repair
        self.rebaseline = False
        # tiles laid together with the one read last: kept out of the baseline until read
        self.queued: set[tuple[int, int]] = set()
        self.ask_cells: set[tuple[int, int]] = set()
        self.last_warning: str | None = None
        self.last_changes: Changes | None = None
        self.warning_reads = 0
        self.reaching_reads = 0  # settled readings in a row with an arm reaching in
        self.reaching_looks: dict[tuple[int, int], Look] = {}  # the ring it changed, last read
        self.read_thumb: np.ndarray | None = None  # motion thumbnail of the last reading
        # frames of still moments since the last reading too short to settle, oldest first
        self.quiet: list[np.ndarray] = []
        self.settled_at: float | None = None
        self.latencies: list[float] = []  # settled -> observation, seconds
        self._out: list[Observation] = []
        self._frame: np.ndarray | None = None
        spot = self.config.drawn_spot
        self.spot = DrawnTileSpot(tuple(spot)) if spot is not None else None
        self.drawn: str | None = None  # the type last read on the drawn-tile spot
        self._spot_seen: tuple[int, np.ndarray] | None = None  # (turns played, crop) read last
        self._looks: tuple[Board, dict] | None = None  # the looks of the last board diffed
        self._visibility: tuple[Rectifier, dict] | None = None  # cells seen by the rectifier
        # how much better than every option a reading the rules forbid fits the last decoded
        # tile, before what the table rules out is left out (see _decode_tile; a diagnostic)
        self.unexplained = 0.0

    # --- the loop ---------------------------------------------------------------------------
    def feed(self, frame: np.ndarray | None) -> list[Observation]:
        self._out = []
        self._frame = frame
        motion = self.gate.update(frame)
        if motion is Motion.COVERED:
            self.status = "the camera is covered or sees nothing"
        self._sync_game()
        self._step(motion)
        return self._out

    def _step(self, motion: Motion) -> None:
        handler = getattr(self, HANDLERS[self.state])
        try:
            nxt = handler(motion)
        except Exception:  # analysis must never stop the live game
            log.exception("tracker: %s failed; staying", self.state)
            nxt = self.state
        if nxt not in TRANSITIONS[self.state]:
            log.warning("tracker: unexpected step %s -> %s ignored", self.state, nxt)
            return
        self.state = nxt
        if nxt is S.DECODING:
            self._step(motion)

    # --- handlers ---------------------------------------------------------------------------
    def _waiting_for_start(self, motion: Motion) -> State:
        if not self.gate.settled or self._frame is None:
            return S.WAITING_FOR_START
        if self.rectifier is None:
            if self.locate is None:
                self.status = "no table geometry: calibrate or give a profile"
                return S.WAITING_FOR_START
            try:
                self.rectifier = self.locate(self._frame)
                self.located = True
            except ValueError as exc:
                self.status = f"show the start tile: {exc}"
                return S.WAITING_FOR_START
        board = self._board()
        self._set_baseline(board)
        self._read_drawn_spot()  # its first look is the spot empty
        self.read_thumb = self.gate.previous
        for cell, placed in self.game.board.tiles.items():
            if board.contains(cell):
                whole = board.cell(*cell)
                crop = self.scorer.prepare(whole)
                self.scorer.learn(crop, placed.tile, placed.rotation, cell=whole)
        self.known_log = len(self.game.log)
        self.status = "watching"
        return S.WATCHING

    def _watching(self, motion: Motion) -> State:
        if motion is Motion.STILL:
            # a change too small or too quick for the motion gate (a tile laid between two
            # frames of a slow camera): read again when the view drifted from the last reading
            thumb = self.gate.previous
            if self.gate.settled and thumb is not None and self._drifted(thumb):
                self.settled_at = self.clock()
                return S.DECODING
            return S.WATCHING
        self.status = "hands over the table" if motion is Motion.MOVING else self.status
        return S.SETTLING

    def _drifted(self, thumb: np.ndarray) -> bool:
        import cv2

        if self.read_thumb is None or self.read_thumb.shape != thumb.shape:
            self.read_thumb = thumb
            return False
        diff = cv2.absdiff(thumb, self.read_thumb)
        changed = np.count_nonzero(diff > self.config.drift_threshold) / diff.size
        return changed > self.config.drift_fraction

    def _settling(self, motion: Motion) -> State:
        if self.gate.settled:
            self.settled_at = self.clock()
            return S.DECODING
        if motion is Motion.STILL and self.gate.still_run == 1:
            # a still moment too short to settle (the next hand came): kept, to tell in which
            # order tiles the table showed together were laid
            self.quiet = [*self.quiet, self._frame][-QUIET_VIEWS:]
        return S.SETTLING

    def _decoding(self, motion: Motion) -> State:
        self.read_thumb = self.gate.previous
        self.shade = None  # a shadow on the last view read may have gone
        board = self._board()
        self._read_drawn_spot()
        if self.rebaseline:  # the game changed under us (a turn entered by hand): trust it
            self._set_baseline(board)
            self.rebaseline = False
            return S.WATCHING
        changes = self._changes(board)
        if changes.altered:
            board, changes = self._follow_camera(board, changes)
        if (
            changes.altered
            or changes.illegal
            or len(changes.new_tiles) > 1
            or len(changes.small) >= SHADED_CELLS
        ):
            # a shadow over part of the table first: the light over all of it is kept from
            # then on, and a shadow would be taken for it, wrongly, once it had gone
            board, changes = self._follow_shade(board, changes)
        if changes.altered or changes.illegal or self._ring_changed(board, changes) != "none":
            board, changes = self._follow_light(board, changes)
        if self._reaching_in(board, changes):
            self.status = "hands over the table"
            return S.WATCHING  # still, but not clear: read when it next settles
        if len(changes.new_tiles) + len(changes.illegal) > 1 and not changes.altered:
            # a turn that never settled before the next tile was laid (quick players, a hand
            # that stayed over the board): read the tiles one at a time, the one laid first now
            together = self._laid_together(board, changes)
            if together:
                log.info("tiles laid together at %s: read one after the other", together)
                self.queued = set(together[1:])
                changes.new_tiles, changes.illegal = together[:1], []
        self.quiet = []
        self.last_changes = changes
        for cell in changes.small:
            if cell in self.expected_vanish:
                self.expected_vanish.discard(cell)
                self.baseline[cell] = self._look(board, cell)
        problem = self._unexplained(changes)
        if problem:
            if self.last_warning is None:  # patience counts from the first problem on, so a
                self.warning_reads = 0  # problem that changes as play goes on still runs out
            if problem != self.last_warning:
                self._out.append(Warning(problem, self._annotate(board, changes)))
                self.last_warning = problem
            self.warning_reads += 1
            if self.warning_reads > self.config.warning_patience:
                # nobody put the table right: take it as it is and watch on (the players can
                # still enter or correct the turn on the page)
                self._out.append(Warning(f"taking the table as it is after: {problem}"))
                self.last_warning = None
                self.status = "watching"
                # one new tile on the frontier is still this turn's tile: read it, or every
                # later turn would be one behind the table
                keep = changes.new_tiles if len(changes.new_tiles) == 1 else []
                self._set_baseline(board, keep=keep, as_played=False)
                if not keep:
                    return S.WATCHING
                changes.new_tiles = keep
            else:
                self.status = problem
                return S.WARNING
        else:
            self.last_warning = None
        if not changes.new_tiles:
            amend = self._late_follower(board, changes) or self._late_gingerbread(board)
            if amend is not None:
                self._emit(amend)
                for c in {amend.turn.cell, *changes.small}:  # the figures it explains
                    self.baseline[c] = self._look(board, c)
            self.status = "watching"
            return S.WATCHING
        (cell,) = changes.new_tiles
        observation = self._decode_tile(board, cell)
        self._emit(observation)
        if self.pending is not None:
            self.pending.observation = observation
        if isinstance(observation, Warning):
            if cell in self.unread:
                # nothing the bag holds can be laid there: keep the tile out of the diff (the
                # game goes on, one turn short, until the players correct the earlier turn)
                self.baseline[cell] = self._look(board, cell)
                # and read it over at the end on a view that shows it: the earlier misread that
                # took its copy is what the review is for
                self.game_view = board
                self.status = "watching"
                self.queued.discard(cell)
                # a tile laid together with it is read now, in this view, as after a turn
                return S.DECODING if self.queued else S.WATCHING
            self.last_warning = observation.text
            self.warning_reads = 0
            return S.WARNING
        return S.COMMITTED if isinstance(observation, Commit) else S.ASKING

    def _waiting_for_game(self, motion: Motion) -> State:
        # _sync_game moves on once the consumer has applied a turn; until then wait.
        return self.state

    def _asking(self, motion: Motion) -> State:
        """Wait for the answer; but when the table settles with another tile laid next to the
        board (the players played on, the question unanswered), the question's best option
        is taken for now (:class:`PlayedOn`, once): the next tile is read in a game that has
        the asked one, and the question stays open on the page."""
        pending = self.pending
        if (
            pending is None
            or pending.played_on is not None
            or not isinstance(pending.observation, Question)
            or motion is not Motion.STILL
            or self.gate.still_run != self.gate.config.settle_frames
        ):
            return S.ASKING
        board = self._board()
        changes = self._changes(board)
        if changes.altered or len(changes.new_tiles) + len(changes.illegal) > 2:
            board, changes = self._follow_shade(board, changes)  # a shadow is no tile
        frontier = self.game.board.frontier
        beyond = [
            c
            for c in changes.new_tiles + changes.illegal
            if c != pending.cell and (c in frontier or pending.cell in _neighbours(c))
        ]
        if beyond and not changes.altered:  # placed tiles changed: wait for a clear view
            log.info("tracker: a tile at %s laid with the question open: played on", beyond)
            pending.played_on = self._frame  # the next tile is read in it once applied
            self._emit(PlayedOn(pending.observation.best))
        return S.ASKING

    def _warning(self, motion: Motion) -> State:
        if motion is Motion.STILL and self.gate.still_run == self.gate.config.settle_frames:
            self.settled_at = self.clock()
            return S.DECODING
        return S.WARNING

    # --- following the game -----------------------------------------------------------------
    def _sync_game(self) -> None:
        n = len(self.game.log)
        if n == self.known_log or self.state is S.WAITING_FOR_START:
            return
        placed = set(self.game.board.tiles)
        together_view = None  # the view a tile laid together with the accepted one is in
        if n > self.known_log and self.pending is not None:
            try:
                self._accept(self.pending)
            except Exception:  # learning from a turn must never stop the live game
                log.exception("tracker: learning from the accepted turn failed")
                self._set_baseline(self.pending.board)  # the view it was read in
            if self.queued:
                together_view = self.pending.frame
            if self.pending.played_on is not None:
                together_view = self.pending.played_on
        else:  # an undo, a correction or a turn entered by hand: read the table again
            gone = self.placed_cells - placed
            self.recheck |= gone | set(self.unread)
            self.unread.clear()
            self.queued.clear()  # the players entered what was laid
            self.ask_cells |= gone
            if self.pending is not None:
                self.ask_cells.add(self.pending.cell)
            self.rebaseline = not gone
        self.placed_cells = placed
        self.known_log = n
        self.pending = None
        if self.state in (S.COMMITTED, S.ASKING, S.WARNING, S.WATCHING):
            # read again on the next settled frame: the table may have moved on meanwhile
            self.state = S.SETTLING
            self.gate.still_run = min(self.gate.still_run, self.gate.config.settle_frames - 1)
            if together_view is not None:
                # read it now, in the settled view that showed both: the table may not settle
                # again before the next tile is laid
                self._frame = together_view
                self.settled_at = self.clock()
                self.state = S.DECODING

    def _accept(self, pending: Pending) -> None:
        """The consumer applied a turn: learn from it and make its look the baseline."""
        event = self.game.log[-1]
        self.queued.discard(pending.cell)  # read: its look is the baseline now
        board = pending.board
        if self.located and self.config.refine_grid and pending.frame is not None:
            board = self._refine_grid(pending.frame, board)
        if board.window != self.window() and pending.frame is not None:
            # the cells the new tile brought into view get their baseline from the settled
            # view too, not from whatever view first shows them (a hand may be over them)
            board = self._cut(self.rectifier, pending.frame, self.window())
        self._set_baseline(board)
        obs = pending.observation
        result = self.game.results[-1]
        colour = self.game.players[result.player].colour  # who laid it
        seen = pending.follower is not None and pending.follower.any()
        # a figure on a tile laid when the game had none of the player's followers left: an
        # earlier turn is read wrong, and the review may give the figure its follower back
        back = sum(1 for f in result.returned if f.player == result.player)
        had = self.game.supply[result.player] - back  # before the turn's scoring returned some
        unlaid = seen and isinstance(event, Turn) and not event.meeple and had <= 0
        if (
            isinstance(event, Turn)
            and event.cell == pending.cell
            and (isinstance(obs, Commit) or not self.people_answer or pending.played_on is not None)
        ):
            self.certainty[pending.cell] = pending.margin if isinstance(obs, Commit) else 0.0
            self.readings[pending.cell] = event
            if (event.meeple or unlaid) and seen:
                core = self.scorer.figure_core(pending.crop, colour, pending.follower)
                self.figures_read[pending.cell] = core
            else:  # read again without one (an undo, the tile laid anew)
                self.figures_read.pop(pending.cell, None)
        # a question's best option taken while the players played on is no answer
        taken_unanswered = (
            pending.played_on is not None and isinstance(obs, Question) and event == obs.best
        )
        sure = not taken_unanswered and (
            isinstance(obs, Commit)
            or self.people_answer
            or (isinstance(obs, Question) and event != obs.best)
        )
        if sure and isinstance(event, Turn) and event.cell == pending.cell:
            tile = self.game.tileset[event.tile]
            whole = pending.board.cell(*pending.cell)
            # with no figure on the tile, what looked like one was its art (a cloister's red
            # roofs read as a red monk): learned as the tile's, so it is not read so again
            follower = pending.follower if event.meeple or unlaid else None
            if event.meeple and not seen:
                # the players put a figure there that its colour missed: this light shows the
                # colour duller than it was known, so learn it (and keep it out of the tile's)
                follower, _ = self.scorer.follower_mask(pending.crop, colour, known=True)
            self.scorer.learn(
                pending.crop,
                tile,
                event.rotation,
                follower,
                whole,
                bare=not (event.meeple or unlaid),
            )
            if event.meeple and follower is not None and follower.any():
                self.scorer.learn_follower(pending.crop, colour, follower)
        self.ask_cells.discard(pending.cell)
        self.recheck.discard(pending.cell)
        for follower in self.game.results[-1].returned:
            self.expected_vanish.add(follower.cell)
        self.status = "watching"

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

    # --- seeing ------------------------------------------------------------------------------
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
        return any(c in self.unread for c in _neighbours(cell))

    def _spot_cells(self) -> set[tuple[int, int]]:
        """The cells of the drawn-tile spot while it lies apart from the board and the cells a
        tile may be laid on (a tile there is the drawn one, no turn); else none."""
        spot = self.spot
        if spot is None or not spot.free(self.game.board):
            return set()
        return spot.cells

    def _read_drawn_spot(self) -> None:
        """Read the drawn-tile spot on the settled view: a :class:`Drawn` when what lies
        there changed (a tile put down, read as the types left in the bag at every rotation,
        or the spot empty again)."""
        if not self._spot_cells() or self.rectifier is None or self._frame is None:
            return
        region = self._cut(self.rectifier, self._frame, self.spot.window)
        crop = self.spot.look(region)
        if crop is None:
            self._spot_seen = None
            if self.drawn is not None:
                self.drawn = None
                self._out.append(Drawn(None))
            return
        game = self.game
        seen = self._spot_seen
        if seen is not None and seen[0] == len(game.log) and _alike(seen[1], crop):
            return  # the same tile lies there as at the last reading: read once
        self._spot_seen = (len(game.log), crop)
        options = [
            (tile, rotation)
            for tile_id, n in sorted(game.remaining.items())
            if n > 0
            for tile in [game.tileset[tile_id]]
            for rotation in tile.distinct_rotations
        ]
        if not options:
            return
        # in the light the board is seen in: the lamp lights the spot beside the board
        # otherwise, and the terrain colours were learned on the board
        table = self._table_colour()
        if table is not None and self.spot.table is not None:
            gain = table / np.maximum(self.spot.table, 1.0)
            crop = np.clip(crop * gain, 0, 255).astype(np.uint8)
        scores = self.scorer.score(self.scorer.prepare(crop), options, None, crop)
        ranked = ranked_types(self._with_bag_prior(scores, options), options)
        if ranked[0][0] != self.drawn:
            self.drawn = ranked[0][0]
            self._out.append(Drawn(self.drawn, ranked, crop))

    def _with_bag_prior(self, scores, options) -> list[float]:
        """``scores`` of (tile, rotation) ``options`` with the bag as a prior: of two readings
        the image cannot tell apart, the tile with more copies left is likelier to have been
        drawn (``bag_prior``)."""
        remaining = self.game.remaining
        return [
            s + self.config.bag_prior * float(np.log(remaining[tile.id]))
            for s, (tile, _) in zip(scores, options, strict=True)
        ]

    def _table_colour(self) -> np.ndarray | None:
        """The table's colour beside the board (BGR median of the empty cells next to it on
        the last settled view), or None before one."""
        board = self.anchor
        if board is None:
            return None
        frontier = self.game.board.frontier
        empty = [board.cell(*c) for c in frontier if board.contains(c) and self._visible(c)]
        if not empty:
            return None
        return np.median(np.concatenate([c.reshape(-1, 3) for c in empty]), axis=0)

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
            return c not in board_cells and not all(map(self._visible, _neighbours(c)))

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
        while beside := [c for c in apart if any(n in cells for n in _neighbours(c))]:
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
            return f"a tile at {cells(ch.illegal)}, where no tile may lie (not next to the board)"
        if len(ch.new_tiles) > 1:
            return f"{len(ch.new_tiles)} new tiles at once at {cells(ch.new_tiles)}: one per turn"
        return None

    # --- decoding one tile with the rules --------------------------------------------------
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

    def _decode_tile(self, board: Board, cell: tuple[int, int]) -> Observation:
        game = self.game
        cfg = self.config
        picture = self._crop_picture(board, cell)
        if cell not in game.board.frontier:  # laid beside a tile that could not be read
            beside = next(c for c in _neighbours(cell) if c in self.unread)
            self.unread.setdefault(cell, len(game.log))
            return Warning(
                f"a tile at ({cell[0]},{cell[1]}), laid beside the tile at "
                f"({beside[0]},{beside[1]}) that could not be read: it is read once that "
                "turn is corrected",
                picture,
            )
        pattern = game.board.frontier[cell]
        options = self.legal_options(cell)
        whole = board.cell(*cell)
        crop = self.scorer.prepare(whole)
        # tiles that would fit here but whose every copy is already on the table: when one of
        # them is the best reading, an earlier turn probably took its copy by mistake
        counts = game.tileset.counts()
        spent = [
            (tile, r)
            for tile in game.tileset.types.values()
            if game.remaining.get(tile.id, 0) <= 0 and counts.get(tile.id, 0) > 0
            for r in tile.rotations_fitting(pattern)
        ]
        # an earlier turn is read again on the tracker's own say only on a tile seen in full
        # light: under a shadow taken off, the tile's colours are a guess (SHADE_REPAIR)
        shaded = self.shade is not None and self.shade.get(cell, 1.0) < SHADE_REPAIR
        may_repair = not self.people_answer and not self.reading_again and not shaded
        if not options:
            text = f"a tile at ({cell[0]},{cell[1]}), but no tile left in the bag fits there"
            if spent:
                s = self.scorer.score(crop, spent, cell=whole)
                tile, r = spent[int(np.argmax(s))]
                # nothing in the bag fits: the least sure copy a bag tile may replace, at any cost
                repair = self._repair(board, tile, float("inf")) if may_repair else None
                if repair is not None:
                    return self._read_again(board, cell, *repair)
                text += f"; it looks like {tile.id} turned {r}: {self._suspect(tile.id)}"
            self.unread.setdefault(cell, len(game.log))
            return Warning(text, picture)
        follower, ignore = self.follower_on(crop)
        colour = game.players[game.current].colour
        free = game.supply[game.current] > 0  # a figure seen is laid only with one to lay
        if (
            follower is not None
            and not free
            and not self.scorer.figure_clear(crop, colour, follower)
        ):
            # with none left to lay, a faint blob (a village, a shaded roof) is taken for the
            # art: the rules make a figure unlikely, so only a clear one says an earlier turn
            # is wrong (its pixels are still left out of the tile terms, as any blob's)
            follower = None
        if follower is not None and not free:
            weakest = self._weakest_follower(board, game.current)
            if may_repair:
                repair = self._repair_follower(board, crop, colour, follower, weakest)
                if repair is not None:
                    return self._read_again(board, cell, *repair)
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
        foot = (
            None
            if follower is None or not free
            else self.scorer.figure_core(crop, colour, follower)
        )
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
        scores = self.scorer.score(crop, options, ignore, whole)
        if game.gingerbread_in_play:
            scores = [
                s - self._gingerbread_disagreement(Turn(t.id, *cell, r), figure)
                for s, (t, r) in zip(scores, options, strict=True)
            ]
        # what the picture looks like with the rules set aside: when some tile the rules do not
        # allow here fits far better than every option, the table disagrees with the game (an
        # earlier turn read wrong, a tile the bag no longer holds): ask rather than commit.
        # A pennant twin of an option (drawn alike but for the shield) is left out: the shield
        # is a few pixels, so a twin whose copies are all played "fitting better" is mostly
        # the pennant test's doubt, not the table's (half of such questions on 6 games were
        # twins of the tile laid)
        drawn_alike = {laid_layout(tile, r) for tile, r in options}
        others = [
            (t, r)
            for t in game.tileset.types.values()
            for r in t.distinct_rotations
            if laid_layout(t, r) not in drawn_alike  # the options themselves are drawn alike
        ]
        other_scores = self.scorer.score(crop, others, ignore, whole)
        self.unexplained = max(other_scores, default=-np.inf) - max(scores)
        # what the table itself rules out is left out (a played-out type whose every copy is
        # surely read as it; a type that a neighbour surely read forbids)
        ruled_out, against = self._ruled_out(board, cell, others, other_scores, max(scores))
        kept = [
            (s, t, r)
            for s, (t, r) in zip(other_scores, others, strict=True)
            if (t.id, r) not in ruled_out
        ]
        fits, rival, turned = max(kept, default=(-np.inf, None, 0), key=lambda x: x[0])
        unexplained = fits - max(scores)
        spent_ids = {t.id for t, _ in spent}
        spent_best = max(
            (
                (s, t, r)
                for s, t, r in kept
                if t.id in spent_ids
                and any(t.canonical_rotation(q) == r for q in t.rotations_fitting(pattern))
            ),
            default=None,
            key=lambda x: x[0],
        )
        # a tile the bag has run out of looks clearly better than anything it still holds: the
        # best legal option is probably not what lies there (ask, naming the turn)
        drifted = spent_best is not None and spent_best[0] > max(scores) + cfg.spent_margin
        if drifted and may_repair:
            repair = self._repair(board, spent_best[1], spent_best[0] - max(scores))
            if repair is not None:
                return self._read_again(board, cell, *repair)
        if unexplained >= cfg.unexplained and may_repair:
            clash = against.get((rival.id, turned))
            if clash is not None:
                repair = self._repair_neighbour(board, cell, rival, turned, unexplained, clash)
                if repair is not None:
                    return self._read_again(board, cell, *repair)
        scores = self._with_bag_prior(scores, options)
        order = sorted(range(len(options)), key=lambda i: -scores[i])
        ranked: list[tuple[Turn, float]] = []
        spot_doubt = False
        art_memo: dict = {}  # the cell and the blob as the appearance model reads them
        faint_memo: dict = {}  # the same for a faint figure
        for i in order[: cfg.max_options]:
            tile, rotation = options[i]
            on_tile = foot
            if foot is not None and self.scorer.art_explains(
                whole, follower, tile, rotation, art_memo
            ):
                on_tile = None  # the tile's own art (red roofs), not a figure
            elif faint is not None and self.scorer.art_disowns(
                whole, faint, tile, rotation, faint_memo
            ):
                on_tile = faint_foot  # a figure after all
            turns = self._turns_for(tile, rotation, cell, on_tile, figure=figure)
            if len(turns) > 1:
                spot_doubt = spot_doubt or i == order[0]
            for j, turn in enumerate(turns):
                ranked.append((turn, scores[i] - 1e-3 * j))
        ranked = [(t, s) for t, s in ranked if t is not None]
        if not ranked:
            return Warning(f"the tile at ({cell[0]},{cell[1]}) cannot be laid legally", picture)
        margin = scores[order[0]] - scores[order[1]] if len(order) > 1 else float("inf")
        self.pending = Pending(
            board, cell, crop, follower, len(game.log), frame=self._frame, margin=margin
        )
        seen = self._visible_difference(options, order, ignore)
        best = ranked[0][0]
        conf = _confidence([scores[i] for i in order])
        doubts: tuple[str, ...] = ()
        if margin < cfg.margin:
            doubts += (f"the runner-up is close ({margin:.3f})",)
        if seen < cfg.min_evidence_px and margin < cfg.evidence_margin:
            doubts += (f"the two best differ in {seen} px",)
        if unexplained >= cfg.unexplained:
            doubts += (
                f"{rival.id} turned {turned}, not allowed here, fits better ({unexplained:+.3f})",
            )
        if drifted:
            doubts += ("a tile already played fits better",)
        sure = not doubts
        if spot_doubt:
            doubts += ("the follower's spot",)
        if cell in self.ask_cells:
            doubts += ("the players corrected this cell",)
        if not doubts:
            pose = None
            if best.meeple is not None:
                seg = game.tileset[best.tile].oriented(best.rotation).segment_at(best.meeple)
                field_ = game.tileset[best.tile].segments[seg].kind is Kind.FIELD
                pose = "lying" if field_ else "standing"
            return Commit(best, conf, pose, picture)
        what = "the follower's place" if sure else "the tile"
        text = f"Not sure about {what} at {cell}"
        if drifted:
            _, tile, r = spent_best
            text += (
                f": it looks most like {tile.id} turned {r}, but every {tile.id} has been "
                f"played; {self._suspect(tile.id)}"
            )
        elif unexplained >= cfg.unexplained:
            clash = self._clashing_neighbour(cell, rival, turned)
            if clash is not None:
                text += f": it looks most like {rival.id} turned {turned}, " + self._suspect_at(
                    clash[0], "its side against it does not allow that"
                )
        return Question(ranked[: cfg.max_options], picture, text, doubts)

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
                (other, r)
                for other in game.tileset.types.values()
                if other.id != tile.id and game.remaining.get(other.id, 0) <= 0
                for r in other.rotations_fitting(pattern)
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
        events = list(game.log)
        # the follower laid with it, if it still stands there: on the likeliest spot of the
        # tile it is read as (a spot's name means another segment on another tile)
        colour = game.players[game.results[index].player].colour
        figure = masks[colour] if laid.meeple else None
        before = None
        if figure is not None and figure.any():
            foot = self.scorer.figure_core(crop, colour, figure)
            before = game.replayed(events[:index])
        for i in np.argsort(scores[1:])[::-1]:
            other, rotation = readings[i]
            if scores[1 + i] < scores[0] - gain + cfg.repair_margin:
                break
            turn = replace(laid, tile=other.id, rotation=rotation)
            if before is not None:
                spots = self._turns_for(other, rotation, cell, foot, game=before)
                turn = replace(turn, meeple=spots[0].meeple)
            events[index] = turn
            try:
                amended = game.replayed(events)
            except IllegalTurn:
                continue
            if allows is not None and not allows(amended):
                continue
            log.info("tracker: turn %d read again as %s", index + 1, turn.describe())
            return Amend(index, turn, self._crop_picture(board, cell)), amended
        return None

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

    def _figure_evidence(self, crop: np.ndarray, colour: str, mask: np.ndarray) -> float:
        """How clearly ``colour`` shows a figure on ``mask`` of a scorer crop: the log-likelihood
        ratios over terrain added up over the blob (what a faint blob must reach to count,
        ``follower_evidence``)."""
        ratio = self.scorer.follower_ratio(crop, colour)
        return float(np.clip(ratio[mask], 0, None).sum())

    def sync(self) -> None:
        """Take in what the consumer did with the last observations (a turn applied, an undo)
        without a new frame: each frame does this first, but a recording that ends on its last
        turn gives none after it, and that turn would stay unread (not learned from, and not
        read over by :meth:`review`, which takes a tile it has no reading of for the players'
        own entry)."""
        self._sync_game()

    def review(self, game: Game | None = None) -> list[Turn | Discard]:
        """The game read over at its end, with all the table has taught since the early turns
        were read (:class:`~.review.Review`): returns ``game``'s log (the tracker's game when
        None; a copy lets the live page go on while it is read) read over, equal to the log
        when nothing changed."""
        from .review import Review

        return Review(self, game or self.game).read_over()

    def _figures(self, crop: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
        """The figures of each player's colour on a laid tile's crop, and the pixels they
        hide from the tile's scoring (None without any)."""
        masks = self._figure_masks(crop)
        figures = np.logical_or.reduce(list(masks.values()))
        return masks, self._guarded(figures) if figures.any() else None

    def _figure_masks(self, crop: np.ndarray) -> dict[str, np.ndarray]:
        """Where each player's colour shows a figure on a crop, by colour."""
        return {p.colour: self.scorer.follower_mask(crop, p.colour)[0] for p in self.game.players}

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

    def _visible_difference(self, options, order, ignore) -> int:
        """Pixels where the two best readings differ that the camera can see: when their
        difference hides under a follower, the image cannot decide."""
        if len(order) < 2 or not hasattr(self.scorer, "visible_difference"):
            return 1 << 30
        return self.scorer.visible_difference(options[order[0]], options[order[1]], ignore)

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

    def _emit(self, observation: Observation) -> None:
        if isinstance(observation, Amend):
            self.readings[observation.turn.cell] = observation.turn
        if self.settled_at is not None:
            self.latencies.append(self.clock() - self.settled_at)
        self._out.append(observation)

    # --- pictures ---------------------------------------------------------------------------
    def _crop_picture(self, board: Board, cell) -> np.ndarray:
        import cv2

        crop = board.cell(*cell, margin=0.5)
        return cv2.resize(crop, None, fx=3, fy=3, interpolation=cv2.INTER_LINEAR)

    def _annotate(self, board: Board, ch: Changes) -> np.ndarray:
        import cv2

        image = board.image.copy()
        p = board.cell_px
        for colour, cells in (
            ((0, 0, 255), ch.altered + ch.illegal),
            ((0, 200, 255), ch.new_tiles),
        ):
            for x, y in cells:
                x0, y0 = (x - board.window[0]) * p, (y - board.window[1]) * p
                cv2.rectangle(image, (x0 + 1, y0 + 1), (x0 + p - 2, y0 + p - 2), colour, 2)
        return image


def _alike(a: np.ndarray, b: np.ndarray, levels: float = 6.0) -> bool:
    """Whether two pictures of one size differ by less than ``levels`` grey levels on
    average (sensor noise, not a tile turned or swapped)."""
    return float(np.abs(a.astype(np.int16) - b).mean()) < levels


def _neighbours(cell: tuple[int, int]) -> list[tuple[int, int]]:
    return [(cell[0] + dx, cell[1] + dy) for dx, dy in NEIGHBOUR_OFFSETS]


def _confidence(scores: list[float], sharpness: float = 8.0) -> float:
    if len(scores) < 2:
        return 1.0
    s = np.asarray(scores) * sharpness
    s = np.exp(s - s.max())
    return float(s[0] / s.sum())


__all__ = ["TRANSITIONS", "Changes", "State", "Tracker", "TrackerConfig"]
