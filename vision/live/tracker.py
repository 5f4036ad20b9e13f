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
  (the game log grew) the tracker learns from it and goes back to WATCHING. A commit whose
  picture alone was in doubt (or that a tile the rules forbid fits only a little better) is
  taken for now: nothing is learned from it until it is read again, after each later turn,
  clearly (it is then learned from, or amended), and it becomes a question about that turn
  once it has waited ``defer_turns`` turns (a doubt between readings with the same sides,
  which no tile laid against it can settle, waits for the game's end instead: pennant twins,
  or the figure over the shield to leave when its city is scored; U and WI6, X and WI7; and,
  in the game's last turns, a tile the table disagrees with, left to the reading over; its
  follower, if it stood between two spots, is asked about once the tile is sure). A question
  left open while the table settles with the next tile laid -> its best option, taken for now
  (:class:`PlayedOn`; nothing learned from it), and the next tile is read once it is applied.
- WARNING: re-read on every settle; when the table is right again (or shows one new tile) it
  recovers.

The tracker never changes the game: the consumer applies a :class:`Commit` (or the answer to a
:class:`Question`, or an :class:`Amend`, in the order they come) and the tracker follows the
game log.

This module is the state machine, following the game and the drawn tile; the
tracker's other concerns are its bases, one module each: :mod:`.seeing` (the board cut from a
frame, what changed on it, the light, shade, camera and grid followed), :mod:`.reading` (a new
tile read with the rules: options, doubts, commit or question), :mod:`.doubts` (readings
taken for now, read again as the table teaches more), :mod:`.figures` (the figures and the
spots they claim) and :mod:`.repairs` (an earlier turn the table says was misread).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from meeplecam.engine import Discard, Game, Turn

from .appearance import ScorerConfig, TerrainScorer
from .diff import Look
from .doubts import Doubt, Doubts
from .figures import Figures
from .motion import Motion, MotionConfig, MotionGate
from .observations import (
    Amend,
    Commit,
    Drawn,
    Observation,
    PlayArea,
    PlayedOn,
    Question,
    Warning,
)
from .reading import Pending, TileReading
from .rectify import Board, Rectifier, play_area
from .repairs import Repairs
from .seeing import Changes, Seeing, neighbours
from .spot import DrawnTileSpot, ranked_types

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


SHADED_CELLS = 3  # cells changed a little that may be a shadow's (_follow_shade), at least
QUIET_VIEWS = 4  # still moments too short to settle kept between readings (Tracker.quiet)


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
    # players put a follower well inside its feature: a reading that leaves the figure's base
    # further than spot_fit_slack (tile units) from every spot it may claim is that much less
    # likely, spot_fit_weight per tile unit, at most spot_fit_cap of them (on 299 figure tiles of
    # 20 games the true reading's nearest spot lay 0.02 away at the median and under 0.04 in 95 %;
    # the wrong reading read first, at 0.05 to 0.7: 241 read right first, 265 with the fit)
    spot_fit_weight: float = 2.0
    spot_fit_slack: float = 0.04
    spot_fit_cap: float = 0.1
    # a figure whose clear part covers less of its cell's crop than this stands (a lying one
    # shows its whole outline: on 10 snowy and 5 scans games, lying figures covered 0.034 and
    # up, standing ones 0.004 and up, 14 of 160 under 0.035)
    lying_min_share: float = 0.025
    max_options: int = 6  # options listed in a question
    # a tile whose picture alone is in doubt (the runner-up close, or the two best differing in
    # few pixels) is read for now, read again after each turn the table teaches, and asked
    # about only when still in doubt this many turns later (vision.live.doubts; 0: ask at
    # once). It is settled when its best reading then leads by defer_margin: of 20 such doubts
    # of seven snowy games with no profile, read again 3 to 20 turns later, every reading that
    # led by 0.04 was right, and one that led by 0.02 was wrong. With no profile, 8 turns
    # asked 48 / 134 / 46 questions (snowy / scans / copy at 720p), 12 turns 44 / 120 / 40,
    # with as many turns right (the copy two more); stop 51: 20 turns for 12, see
    # docs/numbers.md (a near tie the next few tiles leave open is often settled by the ones
    # after: the picture learned from eight more turns)
    defer_turns: int = 20
    defer_margin: float = 0.04
    min_evidence_px: int = 12  # visible pixels (of the scoring crop) where the two best differ
    # ... unless the best leads by this much: those few pixels spoke clearly (a pennant twin's
    # shield half under a follower, which the model's blurred twin test still reads)
    evidence_margin: float = 0.3
    follower_guard: int = 3  # pixels around a follower left out of tile scoring (dilation)
    unexplained: float = 0.03  # a tile the rules forbid here may fit better by at most this
    # ... and up to this it is a doubt of the picture, read for now (vision.live.doubts): with
    # no profile, the 20 snowy and 20 Winter-scans games asked 20 / 87 questions with 0.1,
    # 24 / 99 with none (every such reading asked at once), as many turns right; 0.2 asked
    # 4 fewer on half the scans, with 3 more committed wrong (stop 50); a tile whose copies
    # are all played, the same (stop 54: the scans asked 72 for 84, as many turns right)
    unexplained_for_now: float = 0.1
    spent_margin: float = 0.02  # ... and a tile whose every copy is played, by at most this
    # ... unless the table rules it out: a tile read earlier counts as surely what it was read
    # as when its picture fits that better than anything else that could lie there by this
    # much (Tracker._ruled_out; stop 45, the 40 snowy and scans games with no profile: such a
    # tile's lead 0.16 to 0.44 where the new tile's best was right, 0.21 to 0.26 where wrong)
    sure_reading: float = 0.5
    # a played-out tile's copy read earlier is read again as another tile when that costs its
    # cell less than the spent tile gains here, by at least this (see Tracker._repair)
    repair_margin: float = 0.02
    # with this few tiles left in the bag, a tile the table disagrees with however much (a
    # tile the rules forbid, or one whose copies are all played, fits clearly better) is read
    # for now too, and left to the reading over at the game's end, a few turns on, instead of
    # asked about: of such questions on the 40 games with no profile, 21 were asked in the
    # last 13 turns, the reading over read all 21 right, and 20 of them led with a wrong
    # reading (stop 60). 0: asked at once, however late
    review_near: int = 12
    # a player with no follower left whose colour shows a figure on the new tile: the follower
    # of theirs that their colour shows least is taken off its turn when it shows less than
    # this share of the new figure and less than this evidence (Tracker._figure_evidence;
    # the 10 copy games at 720p: a red roof and a cloister's roof taken for figures 17 and 25,
    # figures standing 75 to 1090; at 1080p a cloister's roof taken for a red monk showed 48
    # against the new figure's 840, which 40 left standing and red's farmer unread; see
    # Tracker._repair_follower)
    follower_repair_share: float = 0.25
    follower_repair_evidence: float = 60.0
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
    # a pair whose best split stands out less (figures hide its shields) is weighed where a
    # pair with the same cities that stood out this much showed its shield (twins.spot_margin;
    # the 20 snowy games' clear pairs stand out by 20 to 44, those figures hide by 7 to 14)
    review_shield_clear: float = 18.0
    # ... and a figure on a tile read without one is a follower when its colour covers this
    # part of the crop; under it a follower is doubtful: taken off when an exchange needs the
    # figure (the 139 figures standing at the end of the 10 copy games: 4.0-21 %; a red
    # cloister roof read as a monk: 3.0 %, as much as a figure on a road of snowy game
    # 07009); a follower where none of its colour shows is none while this part of the
    # game's followers show (not when the players cleared the table to count)
    review_figure_area: float = 0.05
    review_figures_shown: float = 0.75
    # the copies left in the bag as a prior on what was drawn, counted once for the tile (its
    # log over the pixels of the scorer's crop: the terrain term is a mean per pixel), so that
    # it only decides between readings the picture cannot tell apart. Pennant twins whose
    # shield a figure hides scored within 0.0015 in 11 questions of 20 + 20 games with no
    # profile: the type with more copies left was right in 8, the first by name (before) in 3
    bag_prior: float = 1.0
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


class Tracker(TileReading, Doubts, Repairs, Figures, Seeing):
    """Frames in, observations out. ``feed(frame)`` returns the observations of that frame.

    The state machine is here; each base holds one concern of it and works on the state
    ``__init__`` sets up (see the module): :class:`~.reading.TileReading`,
    :class:`~.doubts.Doubts`, :class:`~.repairs.Repairs`, :class:`~.figures.Figures`,
    :class:`~.seeing.Seeing`."""

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
        # readings in the game for now, their picture in doubt: read again as the table
        # teaches more, and asked about if they stay in doubt (vision.live.doubts)
        self.doubtful: dict[tuple[int, int], Doubt] = {}
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
        area = self._play_area()
        if area is not None:
            self._out.append(PlayArea(area))
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

    def _play_area(self):
        """The play area the table's edge gives (found with the start tile, or known to the
        geometry given), when the game has none yet (the players may set one by hand):
        ``Bounds`` or None."""
        edge = self.rectifier.table_edge
        if edge is None or self.game.options.table is not None:
            return None
        return play_area(self.rectifier, edge, list(self.game.board.tiles))

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
            if c != pending.cell and (c in frontier or pending.cell in neighbours(c))
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
            if together_view is None and self.doubtful and self.anchor is not None:
                # the table taught one more turn: the readings in doubt, again (not when the
                # next tile is read at once: it must be read in the game as amended)
                try:
                    self._out += self._read_doubtful_again(self.anchor)
                except Exception:  # a reading taken for now stays so; the game goes on
                    log.exception("tracker: reading the doubtful turns again failed")
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
        # a reading taken for now is learned from once it is sure (vision.live.doubts)
        for_now = isinstance(obs, Commit) and not obs.sure and event == obs.turn
        sure = (
            not taken_unanswered
            and not for_now
            and (
                isinstance(obs, Commit)
                or self.people_answer
                or (isinstance(obs, Question) and event != obs.best)
            )
        )
        if for_now and event.cell == pending.cell:
            self.doubtful[pending.cell] = Doubt(obs.doubts, len(self.game.log))
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

    # --- the drawn tile ----------------------------------------------------------------------
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

    # --- in step with the consumer ----------------------------------------------------------
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


__all__ = ["TRANSITIONS", "Changes", "State", "Tracker", "TrackerConfig"]
