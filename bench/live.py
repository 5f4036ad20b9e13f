"""Live-loop benchmarks (``python bench/live.py --help``).

- ``watch``: what one 1280x720 frame costs while the table is watched (motion gate + tracker step,
  no decoding): mean, p95 and max over ``--frames`` frames (target <= 15 ms).
- ``latency``: settled -> committed turn, per turn, over replayed games (target <= 250 ms): the
  time from the frame that makes the table settled to the observation (rectify, diff, rules,
  scoring, followers). Games are synthetic renderer folders (``--games DIR``, as written by
  ``meeplecam synth``) or drawn games (the default: cheap, generated here). It also reports how many
  turns were read right: ``--answers players`` has the people at the table answer and correct (the
  live app), ``--answers best`` takes each question's best option (``replay``); ``--model art``
  gives the tracker the art the games were drawn with, ``--model FILE`` a model file;
  ``--geometry find`` has the tracker find the table and start tile itself (no profile) instead
  of taking the renderer's geometry, ``--geometry calibrate`` calibrates on the first settled
  frame as ``meeplecam calibrate`` does and reads the game with that profile's geometry;
  ``--dump DIR`` (with ``--answers players``) writes every reading the players answered or
  corrected, with the cell's picture and each scorer term.
  What real tables do to a game, on rendered games: ``--bump DX,DY,DEG`` knocks the camera
  halfway through, ``--relight B,G,R`` changes the light there, ``--shadow D`` has a player's
  shadow (``D`` darker at its middle) lie still over the board from there for a third of the
  game, ``--thinking N`` has every
  player hold the drawn tile still over the board for N more frames. ``--drawn-spot`` (games
  rendered with ``synth --drawn-spot``) watches the spot where each drawn tile lies first and
  counts the drawn tiles read right there. With ``--answers best`` the questions are also
  counted by each doubt they gave (``questions_by_doubt``: asked, best option right).
  A set read as two halves side by side (a core each) is added up with
  ``python bench/merge_halves.py OUT A.json B.json``.
- ``memory``: RSS sampled while the synthetic demo table (generated, never pre-recorded; games
  follow one another) runs through one long-lived live feed for ``--minutes``; reported as the
  slope after warm-up (MB per 10 minutes; flat = < 1). ``--drawn``: drawn games instead, a new
  tracker per game (that also measures the drawing's allocations); ``--realtime``: the demo at
  camera rate, as ``serve --demo`` plays it, so ``--minutes 120`` is a 2-hour session.

Results print as JSON (``--out FILE`` writes them too). Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from report import emit

COUNTS = (
    "right",
    "questions",
    "wrong",
    "missed",
    "asked_right",
    "amends",
    "warnings",
)  # per game, summed


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _stats(values) -> dict:
    a = np.asarray(values, float) * 1000
    if len(a) == 0:
        return {"n": 0}
    return {
        "n": len(a),
        "mean_ms": round(float(a.mean()), 2),
        "p95_ms": round(float(np.percentile(a, 95)), 2),
        "max_ms": round(float(a.max()), 2),
    }


def bench_watch(frames: int) -> dict:
    from meeplecam.engine import Game
    from meeplecam.vision.live.drawn import DrawnGame
    from meeplecam.vision.live.rectify import Rectifier
    from meeplecam.vision.live.tracker import State, Tracker

    dg = DrawnGame(seed=11, max_turns=30)
    all_frames = [f for f, _ in dg.frames()]
    game = Game.start(dg.tileset, dg.game.players, dg.game.options)
    tracker = Tracker(game, Rectifier(dg.grid_to_image))
    for frame in all_frames[:4]:
        tracker.feed(frame)
    assert tracker.state is State.WATCHING
    still = all_frames[3]
    canvas = dg.canvas.copy()
    dg.lay(canvas, game.start_turn)
    noisy = [dg.photo(canvas) for _ in range(4)]  # fresh sensor noise each, like a camera
    times = []
    for i in range(frames):
        frame = still if i % 2 else noisy[i % 4]
        t = time.perf_counter()
        tracker.feed(frame)
        times.append(time.perf_counter() - t)
    gate_times = []
    for i in range(frames):
        t = time.perf_counter()
        tracker.gate.update(noisy[i % 4])
        gate_times.append(time.perf_counter() - t)
    return {"frame": [1280, 720], "tracker_feed": _stats(times), "motion_gate": _stats(gate_times)}


def _replay_games(games_dir: str | None, count: int, find_table: bool = False):
    """(name, frames iterator, game, rectifier, expected record, palette) per game; the
    rectifier is None with ``find_table`` (the tracker finds the table and the start tile)."""
    from meeplecam.engine import Game, Player, read_record_file, record_tileset
    from meeplecam.vision.live.rectify import Rectifier
    from meeplecam.vision.live.replay import truth_rectifier
    from meeplecam.vision.live.sources import FolderSource

    if games_dir:
        for folder in sorted(Path(games_dir).glob("game-*"))[:count]:
            record = read_record_file(folder / "record.json")
            players = [Player(p["colour"], p["colour"]) for p in record["players"]]
            game = Game.start(record_tileset(record), players)
            truth = min((folder / "truth").glob("*.json"), default=None)
            palette = json.loads(truth.read_text())["palette"] if truth else "winter"
            yield (
                folder.name,
                FolderSource(folder / "frames"),
                game,
                None if find_table else truth_rectifier(folder / "frames"),
                record,
                palette,
            )
        return
    from meeplecam.vision.live.drawn import DrawnGame

    for seed in range(count):
        dg = DrawnGame(seed=100 + seed)
        game = Game.start(dg.tileset, dg.game.players, dg.game.options)
        frames = [f for f, _ in dg.frames()]
        yield f"drawn-{100 + seed}", frames, game, Rectifier(dg.grid_to_image), dg.expected(), None


def _changed_from(frames, at: int, change):
    """``frames`` with every frame from ``at`` on passed through ``change``."""
    for index, frame in enumerate(frames):
        yield change(frame) if index >= at else frame


def _knocked(bump: tuple[float, float, float]):
    """The camera knocked: a frame turned by ``bump[2]`` degrees about its centre and shifted by
    ``bump[:2]`` pixels (a camera turned on its mount moves its picture by a homography; this
    is its in-plane part)."""
    import cv2

    dx, dy, degrees = bump

    def knock(frame):
        h, w = frame.shape[:2]
        matrix = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
        matrix[:, 2] += (dx, dy)
        return cv2.warpAffine(frame, matrix, (w, h), borderMode=cv2.BORDER_REPLICATE)

    return knock


def _phases(frames) -> list[str | None]:
    """The renderer's phase of each frame of a game folder (holding, laying, settled, ...)."""
    truth = Path(getattr(frames, "folder", "")).parent / "truth"
    phases = []
    for path in getattr(frames, "paths", []):
        view = truth / f"{path.stem}.json"
        phases.append(json.loads(view.read_text()).get("phase") if view.is_file() else None)
    return phases


def _thinking(frames, phases: list, repeats: int):
    """``frames`` with every player thinking before laying: each frame of a hand holding the
    drawn tile over the board (``phases``) is shown ``repeats`` more times, so the table
    settles with the hand still in view."""
    for frame, phase in zip(frames, phases, strict=True):
        yield frame
        if phase == "holding":
            for _ in range(repeats):
                yield frame


def _knock_at(phases: list, count: int) -> int:
    """Where a game's camera is knocked: the first frame from the middle on with a hand over
    the table (a knock comes with a reach; the renderer's few settled frames a turn would
    otherwise leave the tracker no still view of the tile laid just before it)."""
    middle = count // 2
    return next((i for i in range(middle, len(phases)) if phases[i] == "holding"), middle)


def _relit(gains: tuple[float, float, float]):
    """The light changed (a lamp switched, the curtains drawn): a frame's blue, green and red
    scaled by ``gains``."""
    scale = np.array(gains, np.float32)
    return lambda frame: np.clip(frame * scale, 0, 255).astype(np.uint8)


def _shadowed(frames, at: int, darker: float):
    """``frames`` with a player's shadow over the board from frame ``at`` for a third of the
    game: a soft disc three tiles wide around the start tile, ``darker`` at its middle (a
    person leaning over the table, still)."""
    import cv2

    truth = Path(getattr(frames, "folder", "")).parent / "truth"
    first = min(truth.glob("*.json"), default=None)
    if first is None:
        raise SystemExit("--shadow needs rendered games (--games DIR)")
    corners = np.asarray(json.loads(first.read_text())["tiles"][0]["corners"], float)
    centre, tile = corners.mean(axis=0), float(np.linalg.norm(corners[1] - corners[0]))
    shade = None
    until = at + len(getattr(frames, "paths", [])) // 3
    for index, frame in enumerate(frames):
        if not at <= index < until:
            yield frame
            continue
        if shade is None:
            h, w = frame.shape[:2]
            yy, xx = np.mgrid[0:h, 0:w]
            disc = np.clip(1.5 - np.hypot(xx - centre[0], yy - centre[1]) / (3 * tile), 0, 1)
            soft = cv2.GaussianBlur(disc.astype(np.float32), (0, 0), tile / 2)
            shade = (1 - darker * soft)[..., None]
        yield np.clip(frame * shade, 0, 255).astype(np.uint8)


def _split(expected: dict, result, by_doubt: dict | None = None) -> tuple[int, int, int]:
    """(turns committed wrong as the camera read them, questions whose best option was the
    turn laid, questions whose turn is right in the record at the end): with nobody
    answering, a question's best option is what the page proposed, and a wrong commit what
    it showed until a repair or the reading over at the end put it right. ``by_doubt``, when
    given, counts the questions by each doubt they gave (:func:`_doubt_kind`): [asked, best
    option right]."""
    from meeplecam.engine import record_tileset
    from meeplecam.engine.record import event_to_dict
    from meeplecam.vision.live.replay import _same

    ts = record_tileset(expected)
    exp = [t for t in expected["turns"] if "discard" not in t]
    got = result.record()["turns"]
    wrong = best_right = right_at_end = 0
    for i, (turn, asked) in enumerate(result.first_read[: len(exp)]):
        ok = _same(ts, exp[i], event_to_dict(result.game, turn))
        if asked:
            best_right += ok
            right_at_end += i < len(got) and _same(ts, exp[i], got[i])
            for kind in (
                {_doubt_kind(d) for d in result.doubts.get(i, ())} if by_doubt is not None else ()
            ):
                tally = by_doubt.setdefault(kind, [0, 0])
                tally[0] += 1
                tally[1] += ok
        else:
            wrong += not ok
    return wrong, best_right, right_at_end


def _doubt_kind(doubt: str) -> str:
    """A question's doubt without its numbers and names: "the runner-up is close", "the two
    best differ in few pixels", "a reading the rules forbid here fits better", ..."""
    if "not allowed here" in doubt:
        return "a reading the rules forbid here fits better"
    if doubt.startswith("the two best differ in"):
        return "the two best differ in few pixels"
    return doubt.split(" (")[0]


def _reference(model: str | None, game, palette: str | None):
    """The appearance model for a game: ``art`` builds it from the tile art the game was
    rendered with (its palette), a path loads a model file; None learns the art during play."""
    from meeplecam.vision.model import build_from_art, load_model

    if not model:
        return None
    if model == "art":
        return build_from_art(game.tileset, palette) if palette else None
    return load_model(model)


def _calibrating_locate(cell_px: int = 48):
    """The tracker's ``locate`` as players who calibrate before the game: ``meeplecam
    calibrate`` on the first settled frame (the start tile alone on the table, no followers
    beside it), then that profile's geometry, warnings or not."""
    from meeplecam.calibration.wizard import Options, run
    from meeplecam.vision.live.rectify import ProfileRectifier

    def locate(frame):
        profile = run(frame, Options(followers=False), say=lambda line: None).profile
        h, w = frame.shape[:2]
        return ProfileRectifier(profile.scale, (w, h), cell_px)

    return locate


def _spot_config(games_dir: str | None, name: str):
    """The tracker watching the drawn-tile spot of a game rendered with ``--drawn-spot``."""
    from meeplecam.vision.live.tracker import TrackerConfig

    first = min((Path(games_dir) / name / "truth").glob("*.json"))
    spot = json.loads(first.read_text()).get("drawn_spot")
    if spot is None:
        raise SystemExit(f"{name}: rendered without --drawn-spot")
    return TrackerConfig(drawn_spot=tuple(spot))


def bench_latency(
    games_dir: str | None,
    count: int,
    answers: str = "best",
    model: str | None = None,
    geometry: str = "truth",
    dump: str | None = None,
    bump: tuple[float, float, float] | None = None,
    thinking: int = 0,
    relight: tuple[float, float, float] | None = None,
    review: bool = True,
    drawn_spot: bool = False,
    shadow: float = 0.0,
) -> dict:
    """``answers``: ``best`` takes every question's best option and leaves wrong readings
    uncorrected (``meeplecam replay``); ``players`` plays the people at the table, who answer
    every question with what they laid, correct a wrong reading at once (unless the tracker may
    still amend it: a Gingerbread Man moved after the table settled) and enter a missed turn
    by hand, so each turn is read against a true board (the live app). ``geometry``: ``truth``
    gives the tracker the renderer's table geometry (a stand-in for calibration), ``find`` has
    it find the table and the start tile on the first settled frame (no profile at all),
    ``calibrate`` calibrates on that frame (:func:`_calibrating_locate`).
    ``bump`` (dx, dy, degrees) knocks the camera halfway through each game (``_knocked``);
    ``thinking`` holds each drawn tile still over the board for that many more frames;
    ``relight`` (blue, green, red gains) changes the light where ``bump`` would knock;
    ``shadow`` (how much darker at its middle) lays a player's shadow over the board there
    for a third of the game (``_shadowed``);
    ``review``: with ``answers`` best, each game is read over at its end as ``replay`` does.
    ``drawn_spot``: games rendered with ``synth --drawn-spot``, read with the tracker watching
    that spot; counts the drawn tiles read right there (the last reading before each turn)."""
    from meeplecam.vision.live.replay import compare, compare_by_cell, replay

    latencies = []
    fits_better = []
    per_game = []
    totals = dict.fromkeys(("turns", *COUNTS), 0)
    no_question = by_cell = 0
    drawn_right = drawn_seen = 0
    by_doubt: dict[str, list[int]] = {}  # why questions were asked: [asked, best option right]
    games = _replay_games(games_dir, count, find_table=geometry != "truth")
    locate = _calibrating_locate() if geometry == "calibrate" else None
    if dump:  # a fresh census
        Path(dump).mkdir(parents=True, exist_ok=True)
        (Path(dump) / "mistakes.jsonl").write_text("")
    for name, frames, game, rectifier, expected, palette in games:
        reference = _reference(model, game, palette)
        phases = _phases(frames) if bump or thinking or relight or shadow else []
        at = _knock_at(phases, len(frames)) if bump or relight or shadow else 0
        if bump:
            frames = _changed_from(frames, at, _knocked(bump))
        if relight:
            frames = _changed_from(frames, at, _relit(relight))
        if shadow:
            frames = _shadowed(frames, at, shadow)
        if thinking:
            if not phases:
                raise SystemExit("--thinking needs rendered games (--games DIR)")
            frames = _thinking(frames, phases, thinking)
        if answers == "players":
            tally, lat = _play_with_players(
                frames,
                game,
                rectifier,
                expected,
                reference,
                Path(dump) if dump else None,
                name,
                locate=locate,
            )
        else:
            config = _spot_config(games_dir, name) if drawn_spot else None
            result = replay(
                frames, game, rectifier, config, locate=locate, reference=reference, review=review
            )
            if drawn_spot:
                laid = [t["tile"] for t in expected["turns"] if "discard" not in t]
                last = dict(result.drawn)  # turns played -> the last type read on the spot
                drawn_seen += len(last)
                drawn_right += sum(laid[n] == tile for n, tile in last.items() if n < len(laid))
            right, n, _ = compare(expected, result.record())
            wrong, asked_right, asked_right_at_end = _split(expected, result, by_doubt)
            by_cell += compare_by_cell(expected, result.record())[0]
            tally = {
                "right": right,
                "turns": n,
                "questions": result.questions,
                "wrong": wrong,
                "missed": 0,
                "asked_right": asked_right,
                "asked_right_at_end": asked_right_at_end,
                "amends": result.amends,
                "warnings": len(result.warnings),
                "reviewed": len(result.reviewed),
                "review_s": round(result.review_s, 2),
            }
            lat = result.latencies
        for key in totals:
            totals[key] += tally[key]
        no_question += tally["questions"] == 0
        latencies += lat
        fits_better += tally.pop("forbidden_fits_better", [])
        per_game.append({"game": name, **tally, **_stats(lat)})
    n = max(totals["turns"], 1)
    out = {
        "source": games_dir or "drawn games",
        "answers": answers,
        "model": model or "learned during play",
        "geometry": geometry,
        **({"bump": list(bump)} if bump else {}),
        **({"thinking_frames": thinking} if thinking else {}),
        **({"relight": list(relight)} if relight else {}),
        **({"shadow": shadow} if shadow else {}),
        **(
            {"drawn_tiles_read": drawn_seen, "drawn_tiles_right": drawn_right} if drawn_spot else {}
        ),
        "settled_to_observation": _stats(latencies),
        "turns_right": totals["right"],
        "turns": totals["turns"],
        "turns_right_pct": round(100 * totals["right"] / n, 2),
        "questions": totals["questions"],
        "questions_best_option_right": totals["asked_right"],
        "committed_wrong": totals["wrong"],
        "committed_wrong_pct": round(100 * totals["wrong"] / n, 2),
        "games_without_question": f"{no_question}/{len(per_game)}",
        "warnings": totals["warnings"],
        "games": per_game,
    }
    # earlier turns read again: a follower laid or the Gingerbread Man moved after the table
    # settled (none on the renderer's plain games), or, with nobody answering, a copy of a
    # played-out type that a later tile showed was read wrong (Tracker._repair)
    out["turns_read_again"] = totals["amends"]
    if answers == "best":  # and corrected when the game was read over at its end
        out["turns_reviewed"] = sum(game["reviewed"] for game in per_game)
        # the turns asked about that the record has right at the end (repaired or read over
        # where the best option was wrong)
        out["questions_right_at_end"] = sum(game["asked_right_at_end"] for game in per_game)
        # each doubt the questions gave (a question may give several), most asked first
        out["questions_by_doubt"] = {
            kind: {"asked": asked, "best_option_right": right}
            for kind, (asked, right) in sorted(by_doubt.items(), key=lambda item: -item[1][0])
        }
    if answers == "players":
        out["turns_missed"] = totals["missed"]
        # how much better than every legal option a tile the rules forbid at the cell fitted,
        # on the turns whose best reading was right (asked or not): what the tracker's
        # ``unexplained`` doubt must clear not to ask about them
        out["forbidden_fits_better_when_right"] = (
            {f"p{q}": round(float(np.percentile(fits_better, q)), 3) for q in (50, 95, 99, 100)}
            if fits_better
            else {}
        )
    else:
        out["turns_right_by_cell"] = by_cell
        out["turns_right_by_cell_pct"] = round(100 * by_cell / n, 2)
    return out


def _play_with_players(
    frames,
    game,
    rectifier,
    expected,
    reference,
    dump: Path | None = None,
    name: str = "game",
    inspect=None,
    locate=None,
) -> tuple[dict, list]:
    """The live loop with people at the table who know what they laid (see bench_latency):
    ``right`` counts turns committed right without a question; ``mistakes`` lists every other
    reading (what was laid, what was read, whether it was asked) for finding what to fix;
    with ``dump`` each of them is written there too (see :func:`_Dump`). ``inspect`` is
    called with the tracker before the first frame (another bench's probes)."""
    from meeplecam.engine import Discard, Turn
    from meeplecam.engine.record import event_to_dict, parse_event
    from meeplecam.vision.live.observations import Amend, Commit, PlayArea, Question, Warning
    from meeplecam.vision.live.rectify import from_detection
    from meeplecam.vision.live.replay import _same
    from meeplecam.vision.live.tracker import Tracker

    events = [parse_event(t, i + 1) for i, t in enumerate(expected["turns"])]
    tracker = Tracker(game, rectifier, reference=reference, locate=locate or from_detection)
    decoded = _Dump.watch(tracker) if dump else None
    if inspect is not None:
        inspect(tracker)
    tally = dict.fromkeys(COUNTS, 0)
    tally["turns"] = sum(isinstance(e, Turn) for e in events)
    mistakes = []
    fits_better = []  # of each turn read right: how much better a forbidden tile fitted
    done = 0  # events applied
    # a wrong commit the tracker may still amend (the Gingerbread Man moved after the table
    # settled): the app shows the reading until then, so the players leave it a moment
    awaiting: tuple[int, Turn, dict] | None = None  # (log index, the turn as laid, its mistake)
    for_now: dict[int, bool] = {}  # log index of each reading taken for now -> read right

    def players_correct() -> None:
        nonlocal awaiting
        if awaiting is not None:
            game.replace(awaiting[0], awaiting[1])
            awaiting = None

    def apply_until(index: int) -> None:  # discards and turns entered by hand, up to index
        nonlocal done
        while done < index:
            tally["missed"] += isinstance(events[done], Turn)
            game.apply(events[done])
            done += 1

    for frame in frames:
        for obs in tracker.feed(frame):
            while done < len(events) and isinstance(events[done], Discard):
                apply_until(done + 1)
            if isinstance(obs, Warning):
                tally["warnings"] += 1
                mistakes.append({"warning": obs.text})
                continue
            if isinstance(obs, PlayArea):  # the page sets the play area the table's edge gives
                game.set_table(obs.bounds)
                continue
            if isinstance(obs, Amend):
                tally["amends"] += 1
                if awaiting is not None and obs.index == awaiting[0]:
                    truth = awaiting[1]
                    fixed = _same(
                        game.tileset, *(event_to_dict(game, t) for t in (truth, obs.turn))
                    )
                    tally["wrong"] -= fixed
                    tally["right"] += fixed
                    awaiting[2]["amended right"] = bool(fixed)
                    players_correct()
                else:  # the players applied the turn as laid
                    mistakes.append({"amended": event_to_dict(game, obs.turn)})
                continue
            if isinstance(obs, Question) and obs.turn is not None:
                # an earlier turn read for now, asked about: the players answer with what they
                # laid (the log runs in step with the events); it counts as asked, not as read
                tally["questions"] += 1
                counted = for_now.pop(obs.turn, None)
                if counted is not None:
                    tally["right" if counted else "wrong"] -= 1
                    tally["asked_right"] += counted
                if game.log[obs.turn] != events[obs.turn]:
                    game.replace(obs.turn, events[obs.turn])
                continue
            if not isinstance(obs, Commit | Question) or done >= len(events):
                continue
            players_correct()
            read = obs.turn if isinstance(obs, Commit) else obs.best
            laid = next(
                (
                    i
                    for i in range(done, len(events))
                    if isinstance(events[i], Turn) and events[i].cell == read.cell
                ),
                done,
            )
            apply_until(laid)
            truth = events[laid]
            laid_dict, read_dict = event_to_dict(game, truth), event_to_dict(game, read)
            ok = _same(game.tileset, laid_dict, read_dict)
            if not ok or isinstance(obs, Question):
                mistakes.append(
                    {"laid": laid_dict, "read": read_dict, "asked": isinstance(obs, Question)}
                )
                if dump:
                    doubts = obs.doubts if isinstance(obs, Question) else ()
                    _Dump.write(
                        dump, f"{name}-{done + 1:03d}", tracker, decoded, truth, read, doubts
                    )
            if ok:
                fits_better.append(tracker.unexplained)
            if isinstance(obs, Question):
                tally["questions"] += 1
                tally["asked_right"] += ok
            else:
                tally["right" if ok else "wrong"] += 1
                if not obs.sure:  # read for now: the tracker may still ask about it
                    for_now[done] = ok
            if not ok and isinstance(obs, Commit) and _amendable(truth, read):
                game.apply(read)  # legal: the tracker read it in this game
                awaiting = (len(game.log) - 1, truth, mistakes[-1])
            else:
                game.apply(truth)
            done += 1
    players_correct()
    apply_until(len(events))
    tally["mistakes"] = mistakes
    tally["forbidden_fits_better"] = fits_better
    return tally, tracker.latencies


def _amendable(truth, read) -> bool:
    """Whether the tracker may still amend ``read`` into ``truth`` by itself: the Gingerbread
    Man's move was missed (it may come after the table settled), and the reading is legal."""
    return truth.gingerbread is not None and read.gingerbread != truth.gingerbread


class _Dump:
    """Every reading the players had to answer or correct, written for finding what to fix:
    the cell's picture (``NAME-TURN.png``, 4x) and a line of ``mistakes.jsonl`` with what was
    laid and read, why a question was asked (``Question.doubts``) and each scorer term
    (``TerrainScorer.terms``) of the best-scored options, the laid one always among them."""

    @staticmethod
    def watch(tracker) -> dict:
        """Keeps the board and cell of the tracker's latest tile decode (in the dict returned)."""
        seen: dict = {}
        decode = tracker._decode_tile

        def remembering(board, cell):
            seen.update(board=board, cell=cell)
            return decode(board, cell)

        tracker._decode_tile = remembering
        return seen

    @staticmethod
    def write(folder: Path, stem: str, tracker, decoded: dict, truth, read, doubts) -> None:
        import cv2

        if decoded.get("cell") != truth.cell:
            return  # the reading was not of a tile laid (a follower read late, a warning)
        folder.mkdir(parents=True, exist_ok=True)
        whole = decoded["board"].cell(*truth.cell)
        cv2.imwrite(str(folder / f"{stem}.png"), cv2.resize(whole, None, fx=4, fy=4))
        scorer = tracker.scorer
        crop = scorer.prepare(whole)
        options = tracker.legal_options(truth.cell)
        _, ignore = tracker.follower_on(crop)
        terms = scorer.terms(crop, options, ignore, whole)
        totals = np.sum(list(terms.values()), axis=0)
        laid_tile = tracker.game.tileset[truth.tile]
        laid = [
            i
            for i, (t, r) in enumerate(options)
            if t is laid_tile and t.canonical_rotation(r) == t.canonical_rotation(truth.rotation)
        ]
        shown = list(np.argsort(-totals)[:5])
        shown += [i for i in laid if i not in shown]
        line = {
            "picture": f"{stem}.png",
            "laid": _reading(truth),
            "read": _reading(read),
            "asked because": list(doubts),
            "options": [
                {
                    "option": f"{options[i][0].id} {options[i][1]}",
                    "total": round(float(totals[i]), 4),
                    **{k: round(v[i], 4) for k, v in terms.items()},
                }
                for i in shown
            ],
        }
        with open(folder / "mistakes.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")


def _reading(turn) -> str:
    """A turn in a few words: ``"M 90"``, ``"M 90, follower N"``."""
    follower = f", follower {turn.meeple}" if turn.meeple else ""
    return f"{turn.tile} {turn.rotation}{follower}"


class _Session:
    """The web session's sink side, enough for the benchmark: applies what the camera reads."""

    def __init__(self, game):
        self.game = game
        self.warnings = 0

    def commit(self, event):
        self.game.apply(event)

    def ask(self, options, crop=None, text="", turn=None):
        if turn is None:
            self.game.apply(options[0])  # a person answers at once
        elif self.game.log[turn] != options[0]:
            self.game.replace(turn, options[0])  # an earlier turn, read for now
        return 1

    def warn(self, text, image=None):
        self.warnings += 1


def bench_memory(minutes: float, drawn: bool = False, realtime: bool = False) -> dict:
    """One long-lived live feed on the synthetic demo table (games follow one another, as in
    ``serve --demo``); RSS sampled about 60 times (at least once a minute). ``drawn``: drawn
    games instead; ``realtime``: the demo at camera rate, as ``serve --demo`` plays it (a
    2-hour run is a 2-hour session), instead of as fast as the feed takes frames."""
    from meeplecam.engine import Game
    from meeplecam.vision.live.feed import LiveFeed

    if drawn:
        return _memory_drawn(minutes)
    from meeplecam.vision.live.sources import SyntheticSource

    source = SyntheticSource(seed=900, realtime=realtime, size=(1280, 720))
    inner = source.inner

    def new_game():
        return Game.start(inner.game.tileset, inner.game.players, inner.game.options)

    session = _Session(new_game())
    feed = LiveFeed(session, source, source.rectifier())
    start = time.monotonic()
    samples = []
    next_sample = start
    frames = games = 0
    seed = inner.seed
    while time.monotonic() - start < minutes * 60:
        frame = source.read()
        if inner.seed != seed:  # the demo began its next game: so does the session
            seed, games = inner.seed, games + 1
            session.game = new_game()
            feed.rectifier = source.rectifier()
            feed.tracker = None
        feed.step(frame)
        frames += 1
        now = time.monotonic()
        if now >= next_sample:
            samples.append((now - start, rss_mb()))
            next_sample = now + _sample_every(minutes)
    what = "synthetic demo table, live feed" + (", camera rate" if realtime else "")
    return _memory_report(minutes, frames, games, samples, what)


def _memory_drawn(minutes: float) -> dict:
    from meeplecam.engine import Game
    from meeplecam.vision.live.drawn import DrawnGame
    from meeplecam.vision.live.rectify import Rectifier
    from meeplecam.vision.live.replay import ReplayResult, _handle
    from meeplecam.vision.live.tracker import Tracker

    start = time.monotonic()
    samples = []
    seed = 500
    frames_fed = games = 0
    next_sample = start
    while time.monotonic() - start < minutes * 60:
        dg = DrawnGame(seed=seed)
        game = Game.start(dg.tileset, dg.game.players, dg.game.options)
        tracker = Tracker(game, Rectifier(dg.grid_to_image), people_answer=False)
        result = ReplayResult(game)
        for frame, _ in dg.frames():
            for obs in tracker.feed(frame):
                _handle(obs, game, result)
            frames_fed += 1
            now = time.monotonic()
            if now >= next_sample:
                samples.append((now - start, rss_mb()))
                next_sample = now + _sample_every(minutes)
            if now - start >= minutes * 60:
                break
        seed += 1
        games += 1
    return _memory_report(minutes, frames_fed, games, samples, "drawn games, new tracker each")


def _sample_every(minutes: float) -> float:
    """Seconds between RSS samples: about 60 per run, at least one a minute."""
    return min(60.0, max(1.0, minutes))


def _memory_report(minutes, frames, games, samples, what) -> dict:
    t = np.array([s[0] for s in samples])
    m = np.array([s[1] for s in samples])
    warm = t >= t[-1] * 0.25 if len(t) else t
    slope = float(np.polyfit(t[warm], m[warm], 1)[0]) * 600 if warm.sum() >= 3 else float("nan")
    return {
        "run": what,
        "minutes": minutes,
        "frames": frames,
        "games": games,
        "rss_first_mb": round(float(m[0]), 1) if len(m) else None,
        "rss_after_warmup_mb": round(float(m[warm][0]), 1) if warm.any() else None,
        "rss_last_mb": round(float(m[-1]), 1) if len(m) else None,
        "slope_mb_per_10min_after_warmup": round(slope, 2),
        "samples_s_mb": [[round(float(a)), round(float(b), 1)] for a, b in zip(t, m, strict=True)],
    }


def _numbers(names: str, example: str):
    """An argparse type: as many comma-separated numbers as ``names`` has."""

    def parse(text: str) -> tuple[float, ...]:
        try:
            values = tuple(float(v) for v in text.split(","))
        except ValueError:
            values = ()
        if len(values) != len(names.split(",")):
            raise argparse.ArgumentTypeError(f"{text!r}: give {names}, e.g. {example}")
        return values

    return parse


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "what",
        nargs="*",
        default=["watch", "latency", "memory"],
        choices=["watch", "latency", "memory"],
    )
    parser.add_argument("--frames", type=int, default=300, help="frames for the watch cost")
    parser.add_argument("--games", metavar="DIR", help="synthetic games (meeplecam synth output)")
    parser.add_argument("--count", type=int, default=3, help="games for the latency run")
    parser.add_argument(
        "--answers",
        choices=["best", "players"],
        default="best",
        help="latency run: take each question's best option (replay) or play the people at "
        "the table who answer and correct (the live app)",
    )
    parser.add_argument(
        "--model",
        metavar="FILE|art",
        help="appearance model for the latency run: a model file, or 'art' for the art the "
        "games were rendered with (default: none, learned during play)",
    )
    parser.add_argument(
        "--geometry",
        choices=["truth", "find", "calibrate"],
        default="truth",
        help="latency run: the renderer's table geometry (a stand-in for calibration), find "
        "the table and the start tile as with no profile, or calibrate on the first settled "
        "frame (meeplecam calibrate with the start tile alone) and use that profile's geometry",
    )
    parser.add_argument(
        "--dump",
        metavar="DIR",
        help="latency run with --answers players: write every reading the players answered or "
        "corrected there (the cell's picture, and each scorer term of the best options in "
        "mistakes.jsonl)",
    )
    parser.add_argument(
        "--bump",
        metavar="DX,DY,DEG",
        type=_numbers("DX,DY,DEG", "12,-8,0.8"),
        help="latency run: knock the camera halfway through each game (the picture turns DEG "
        "degrees about its centre and shifts DX, DY pixels), e.g. 12,-8,0.8",
    )
    parser.add_argument(
        "--thinking",
        metavar="N",
        type=int,
        default=0,
        help="latency run: every player holds the drawn tile still over the board for N more "
        "frames before laying it (the table settles with the hand in view)",
    )
    parser.add_argument(
        "--relight",
        metavar="B,G,R",
        type=_numbers("B,G,R", "0.8,0.85,0.9"),
        help="latency run: change the light halfway through each game (every frame's blue, "
        "green and red scaled by these), e.g. 0.8,0.85,0.9",
    )
    parser.add_argument(
        "--shadow",
        metavar="D",
        type=float,
        default=0.0,
        help="latency run: a player's shadow, D darker at its middle (e.g. 0.35), lies still "
        "over the board from halfway through each game for a third of it",
    )
    parser.add_argument(
        "--no-review",
        dest="review",
        action="store_false",
        help="latency run with --answers best: keep every turn as read during play (no reading "
        "over at the end, as replay does)",
    )
    parser.add_argument(
        "--drawn-spot",
        action="store_true",
        help="latency run with --answers best on games rendered with synth --drawn-spot: the "
        "tracker watches the spot and the drawn tiles read right there are counted",
    )
    parser.add_argument("--minutes", type=float, default=3.0, help="length of the memory run")
    parser.add_argument(
        "--drawn", action="store_true", help="memory run on drawn games (no synthetic renderer)"
    )
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="memory run with the demo at camera rate (as serve --demo), not as fast as it goes",
    )
    parser.add_argument("--out", metavar="FILE", help="also write the results here (JSON)")
    args = parser.parse_args(argv)
    if args.dump and args.answers != "players":
        parser.error("--dump needs --answers players (only the players know what was laid)")
    if args.drawn_spot and (args.answers != "best" or not args.games):
        parser.error("--drawn-spot needs --answers best and --games DIR (rendered with it)")
    import cv2

    results = {"cpus": os.cpu_count(), "opencv_threads": cv2.getNumThreads()}
    if "watch" in args.what:
        results["watch"] = bench_watch(args.frames)
    if "latency" in args.what:
        results["latency"] = bench_latency(
            args.games,
            args.count,
            args.answers,
            args.model,
            args.geometry,
            args.dump,
            args.bump,
            args.thinking,
            args.relight,
            args.review,
            args.drawn_spot,
            args.shadow,
        )
    if "memory" in args.what:
        results["memory"] = bench_memory(args.minutes, args.drawn, args.realtime)
    emit(results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
