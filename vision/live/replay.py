"""Replay: the live pipeline over a recorded game, exactly as on a camera (FORMATS.md "Replay").

Where the live app would ask the players, replay takes the best-ranked option and counts a
question. A folder that holds one photo per turn (no two neighbouring frames alike) is read as
stills: each photo is shown to the tracker as a settled view.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from meeplecam.engine import (
    Correction,
    Game,
    IllegalTurn,
    Player,
    TileType,
    Turn,
    corrections,
    find_tileset,
    record_tileset,
    score_report,
    to_record,
)

from .heap import steady_heap
from .motion import settle_frames_at
from .observations import Amend, Commit, Drawn, Kept, PlayArea, PlayedOn, Question, Warning
from .rectify import Rectifier, from_detection, from_truth, profile_locator
from .sources import FolderSource, FrameSource, natural_key, open_source
from .tracker import Tracker, TrackerConfig

log = logging.getLogger(__name__)


@dataclass
class ReplayResult:
    game: Game
    questions: int = 0
    warnings: list[str] = field(default_factory=list)
    commits: int = 0
    amends: int = 0  # turns read again with a follower laid after the tile
    # turns corrected when the game was read over at its end (Tracker.review)
    reviewed: list[Correction] = field(default_factory=list)
    review_s: float = 0.0  # how long reading the game over took
    frames: int = 0
    latencies: list[float] = field(default_factory=list)
    # each turn as the camera first read it, in ``turns`` order (0-based), and whether it was
    # asked about: what players would have seen before any correction, repair or review
    first_read: list[tuple[Turn, bool]] = field(default_factory=list)
    # why each turn asked about was asked (the question's doubts), by its index in first_read
    doubts: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # each tile read on the drawn-tile spot, with the number of turns played when it was read
    drawn: list[tuple[int, str]] = field(default_factory=list)

    @property
    def asked(self) -> list[int]:
        """The 0-based indices (in ``turns``) of the turns asked about."""
        return [i for i, (_, asked) in enumerate(self.first_read) if asked]

    def record(self) -> dict:
        record = to_record(self.game)
        record["turns"] = [t for t in record["turns"] if "discard" not in t]
        record["scores"] = score_report(self.game)
        record["questions"] = self.questions
        record["warnings"] = list(self.warnings)
        return record


def frames_folder(path: Path) -> Path:
    """A game folder of the synthetic renderer holds its frames in ``frames/``."""
    return path / "frames" if (path / "frames").is_dir() else path


def truth_rectifier(folder: Path, cell_px: int = 48) -> Rectifier | None:
    """The table geometry from a ground-truth file beside the frames, if there is one (a stand-in
    for calibration: only the camera and grid are read, never what lies on the table):
    ``table.json`` or ``truth.json`` in the folder, else the *last* per-frame truth file of the
    synthetic renderer (``../truth/*.json``: all tiles laid, so the grid pitch is known)."""
    candidates = [folder / "table.json", folder / "truth.json"]
    for truth_dir in (folder / "truth", folder.parent / "truth"):
        if truth_dir.is_dir():
            files = sorted(truth_dir.glob("*.json"), key=lambda p: natural_key(p.name))
            candidates += files[-1:]
    for path in candidates:
        if not path.is_file() or path.name == "expected.json":
            continue
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            try:
                return from_truth(data, cell_px)
            except (KeyError, ValueError, TypeError):
                continue
    return None


def _stills(source: FolderSource, gate_config) -> bool:
    """Whether a folder holds one photo per turn rather than every frame of a video."""
    from .motion import MotionGate

    if len(source) > 400:
        return False
    gate = MotionGate(gate_config)
    still = 0
    for path in source.paths:
        import cv2

        frame = cv2.imread(str(path), 1)
        if frame is None:
            continue
        if gate.update(frame).value == "still" and gate.changed_fraction == 0:
            still += 1
    return still < 0.2 * len(source.paths)


def replay(
    frames: Iterable[np.ndarray] | FrameSource,
    game: Game,
    rectifier: Rectifier | None = None,
    config: TrackerConfig | None = None,
    stills: bool = False,
    on_observation: Callable | None = None,
    locate=None,
    colours: dict | None = None,
    reference=None,
    review: bool = True,
    progress: Callable[[ReplayResult, str], None] | None = None,
) -> ReplayResult:
    """Run the tracker over frames, applying every commit (and the best option of every
    question) to ``game``, then, with ``review``, the corrections of reading the game over at
    its end (:meth:`Tracker.review`). ``reference``: the appearance model of the tiles, when
    known. ``progress(result, stage)`` is called about once a second while reading ("reading")
    and once before the review ("reading over") and at the end ("done").

    Film (a source at camera rate: a webcam's recording) settles after ``motion.SETTLE_S`` of
    stillness, as live: a hand held still for two frames of 30 was read as a tile."""
    steady_heap()  # a recording may run for hours
    config = config or TrackerConfig()
    fps = float(getattr(frames, "fps", 0.0) or 0.0)
    settle = settle_frames_at(fps, config.motion.settle_frames)
    config = replace(config, motion=replace(config.motion, settle_frames=settle))
    tracker = Tracker(
        game,
        rectifier,
        config=config,
        locate=locate or from_detection,
        colours=colours,
        people_answer=False,
        reference=reference,
    )
    result = ReplayResult(game)
    repeat = config.motion.settle_frames + 1 if stills else 1
    reported = time.monotonic()
    for frame in frames:
        for _ in range(repeat):
            result.frames += 1
            for obs in tracker.feed(frame):
                if on_observation is not None:
                    on_observation(obs, tracker)
                _handle(obs, game, result)
        if progress is not None and time.monotonic() - reported >= 1.0:
            reported = time.monotonic()
            progress(result, "reading")
    tracker.sync()  # the recording may end on the last turn
    for obs in tracker.settle_doubts():  # readings taken for now and still in doubt: asked
        if on_observation is not None:
            on_observation(obs, tracker)
        _handle(obs, game, result)
    if review:
        if progress is not None:
            progress(result, "reading over")
        started = time.perf_counter()
        read_over = tracker.review()
        result.review_s = time.perf_counter() - started
        if read_over != game.log:
            result.reviewed = corrections(game.log, read_over)
            game.rewrite(read_over)  # the review kept the game legal
    result.latencies = tracker.latencies
    _explain_silence(tracker, result)
    if progress is not None:
        progress(result, "done")
    return result


def _explain_silence(tracker: Tracker, result: ReplayResult) -> None:
    """A replay that read nothing says why (the tracker's last status), so that an empty record
    is never mistaken for an empty game."""
    if result.frames == 0:
        result.warnings.append("the source held no frames")
    elif tracker.rectifier is None:
        result.warnings.append(
            f"the table or the start tile was never located ({tracker.status}): show the start "
            "tile alone on the table in the first still view, or give a calibration profile"
        )
    elif result.commits == 0 and result.questions == 0:
        result.warnings.append(f"no turn was read (last status: {tracker.status})")


def _handle(obs, game: Game, result: ReplayResult) -> None:
    if isinstance(obs, Kept):  # the game stays as it is
        return
    if isinstance(obs, PlayArea):
        try:
            game.set_table(obs.bounds)
        except IllegalTurn as exc:
            result.warnings.append(f"the table's edge leaves a tile off the table: {exc}")
        return
    if isinstance(obs, Drawn):
        if obs.tile is not None:
            result.drawn.append((len(game.log), obs.tile))
        return
    if isinstance(obs, Warning):
        result.warnings.append(obs.text)
        return
    if isinstance(obs, Amend):
        result.amends += 1
        try:
            game.replace(obs.index, obs.turn)
        except IllegalTurn as exc:
            result.warnings.append(f"the engine refused {obs.turn.describe()}: {exc}")
        return
    if isinstance(obs, Question) and obs.turn is not None:  # about a turn read for now
        result.questions += 1
        _asked_about(obs, game, result)
        return
    asked = isinstance(obs, Question)
    if asked:
        result.questions += 1
        choices = obs.turns
    elif isinstance(obs, PlayedOn):  # its question was counted when it was asked
        choices = [obs.turn]
    else:
        result.commits += 1
        choices = [obs.turn]
    for turn in choices:
        try:
            game.apply(turn)
            if isinstance(turn, Turn):
                result.first_read.append((turn, asked))
                if asked:
                    result.doubts[len(result.first_read) - 1] = obs.doubts
            return
        except IllegalTurn as exc:
            result.warnings.append(f"the engine refused {turn.describe()}: {exc}")


def _asked_about(question: Question, game: Game, result: ReplayResult) -> None:
    """A question about an earlier turn, read for now: that turn counts as asked about, and
    the question's best option replaces it (nobody answers)."""
    read = game.log[question.turn]
    first = sum(isinstance(e, Turn) for e in game.log[: question.turn])
    if first < len(result.first_read):
        result.first_read[first] = (result.first_read[first][0], True)
        result.doubts[first] = question.doubts
    if question.best != read:
        try:
            game.replace(question.turn, question.best)
        except IllegalTurn as exc:
            result.warnings.append(f"the engine refused {question.best.describe()}: {exc}")


def load_geometry(profile: str | None, cell_px: int = 48):
    """(rectifier, locate, colours) for the tracker from ``--profile``: a calibration profile
    (``meeplecam-profile/N``: the geometry is fitted to each source's frame size, and its follower
    colours are used), or a ground-truth JSON of the table geometry; all None without one."""
    if not profile:
        return None, None, None
    from meeplecam.vision.profile import ProfileError

    try:
        data = json.loads(Path(profile).read_text("utf-8"))
    except ValueError as exc:
        raise ProfileError(f"{profile}: not a readable profile (JSON: {exc})") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{profile}: a profile is a JSON object")
    if str(data.get("format", "")).startswith("meeplecam-profile/"):
        locate, colours = profile_locator(profile, cell_px)
        return None, locate, colours
    return from_truth(data.get("live", data), cell_px), None, None


def load_reference(profile: str | None, model: str | None = None):
    """The appearance model of the tiles: ``model`` (a model file of ``meeplecam model build``, or
    a profile holding one), else the one saved in the calibration profile; None without either
    (the tracker then learns the art during play)."""
    from meeplecam.vision.model import load_model, model_from_profile
    from meeplecam.vision.profile import profile_json

    if model:
        return load_model(model)
    if not profile:
        return None
    if profile_json(profile) is not None:  # else load_geometry names what is wrong with it
        return model_from_profile(profile)
    return None


def run_replay(
    source: str,
    players: list[str],
    tileset: str = "winter",
    profile: str | None = None,
    debug: str | None = None,
    config: TrackerConfig | None = None,
    model: str | None = None,
    own_tiles: dict[str, TileType] | None = None,
    review: bool = True,
    progress: Callable[[ReplayResult, str], None] | None = None,
) -> ReplayResult:
    """The live loop over a recording (see ``meeplecam replay``); ``own_tiles``: the player's
    tile file (types the set leaves to them, e.g. the Gingerbread Man tiles); ``review``: read
    the game over at its end (:meth:`Tracker.review`)."""
    config = config or TrackerConfig()
    game = Game.start(find_tileset(tileset, own_tiles), [Player(c, c) for c in players])
    path = Path(source)
    if path.is_dir():
        path = frames_folder(path)
        source = str(path)
    rectifier, locate, colours = load_geometry(profile, config.cell_px)
    reference = load_reference(profile, model)
    frames = open_source(source)
    stills = False
    if path.is_dir() and locate is None:
        rectifier = rectifier or truth_rectifier(path, config.cell_px)
        stills = _stills(frames, config.motion)  # type: ignore[arg-type]
    hook = _debug_writer(Path(debug)) if debug else None
    try:
        return replay(
            frames,
            game,
            rectifier,
            config,
            stills,
            hook,
            locate,
            colours,
            reference,
            review,
            progress,
        )
    finally:
        frames.close()


def _debug_writer(folder: Path):
    import cv2

    folder.mkdir(parents=True, exist_ok=True)
    counter = [0]

    def write(obs, tracker) -> None:
        counter[0] += 1
        kind = type(obs).__name__.lower()
        image = getattr(obs, "crop", None)
        if image is None:
            image = getattr(obs, "image", None)
        if image is not None:
            cv2.imwrite(str(folder / f"{counter[0]:03d}-{kind}.png"), image)
        with (folder / "observations.txt").open("a", encoding="utf-8") as f:
            if isinstance(obs, Commit):
                for_now = f" for now: {'; '.join(obs.doubts)}" if obs.doubts else ""
                f.write(f"{counter[0]} commit {obs.turn} conf={obs.confidence:.2f}{for_now}\n")
            elif isinstance(obs, Question):
                about = f" about turn {obs.turn + 1}" if obs.turn is not None else ""
                options = [(t.describe(), round(s, 3)) for t, s in obs.options]
                f.write(f"{counter[0]} question{about} {options}\n")
            elif isinstance(obs, Warning):
                f.write(f"{counter[0]} warning {obs.text}\n")
            elif isinstance(obs, Amend):
                f.write(f"{counter[0]} amend turn {obs.index + 1}: {obs.turn}\n")
            elif isinstance(obs, Drawn):
                f.write(f"{counter[0]} drawn {obs.tile}\n")
            else:
                f.write(f"{counter[0]} {kind} {obs}\n")

    return write


def compare(expected: dict, got: dict) -> tuple[int, int, list[str]]:
    """(right, total, differences) turn by turn (cell, tile, rotation as the engine places it,
    follower segment; the follower's colour follows from the turn order)."""
    ts = record_tileset(expected)
    exp = [t for t in expected["turns"] if "discard" not in t]
    out = [t for t in got["turns"] if "discard" not in t]
    right = 0
    diffs = []
    for i, e in enumerate(exp):
        g = out[i] if i < len(out) else None
        if g is not None and _same(ts, e, g):
            right += 1
        else:
            diffs.append(f"turn {i + 1}: expected {e}, got {g}")
    return right, len(exp), diffs


def compare_by_cell(expected: dict, got: dict) -> tuple[int, int]:
    """(right, total) matching turns by cell rather than by position in the log, so one missed
    or extra turn counts once instead of shifting every later turn (a diagnostic: the follower's
    owner still follows from the order, which only :func:`compare` checks)."""
    ts = record_tileset(expected)
    exp = [t for t in expected["turns"] if "discard" not in t]
    out = {(t["x"], t["y"]): t for t in got["turns"] if "discard" not in t}
    right = sum(1 for e in exp if (e["x"], e["y"]) in out and _same(ts, e, out[(e["x"], e["y"])]))
    return right, len(exp)


def _same(ts, a: dict, b: dict) -> bool:
    if (a["tile"], a["x"], a["y"]) != (b["tile"], b["x"], b["y"]):
        return False
    tile = ts[a["tile"]]
    if tile.canonical_rotation(a["rotation"]) != tile.canonical_rotation(b["rotation"]):
        return False
    if a.get("gingerbread") != b.get("gingerbread"):  # both name the city's tile and segment
        return False
    ma, mb = a.get("meeple"), b.get("meeple")
    if (ma is None) != (mb is None):
        return False
    if ma is not None:
        oa, ob = tile.oriented(a["rotation"]), tile.oriented(b["rotation"])
        try:
            if oa.position_name(oa.segment_at(ma["at"])) != ob.position_name(
                ob.segment_at(mb["at"])
            ):
                return False
        except KeyError:
            return False
    return True


__all__ = [
    "ReplayResult",
    "compare",
    "compare_by_cell",
    "load_reference",
    "replay",
    "run_replay",
    "truth_rectifier",
]
