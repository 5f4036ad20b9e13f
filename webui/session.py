"""The live game: one :class:`GameSession` owns the engine game, its record file, the questions
the camera asked, and the event bus the phones listen to. Everything goes through its lock.

The turn source (the vision tracker, or :class:`~meeplecam.webui.feed.DemoFeed`) talks to the
session through the sink methods ``drawn``, ``commit``, ``ask`` and ``warn``; the page talks to it
through the host methods (``answer``, ``correct``, ``undo``, ``new_game``, ...). Every change
rewrites the record atomically, then publishes one ``state`` event stamped with its commit time.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from meeplecam.engine import (
    Correction,
    Discard,
    Game,
    IllegalTurn,
    Options,
    Player,
    RecordError,
    Turn,
    corrections,
    find_tileset,
    hints,
    load_record,
    read_record_file,
    save_record,
    score_report,
    to_record,
)
from meeplecam.engine.game import Event
from meeplecam.engine.record import event_to_dict
from meeplecam.engine.report import laps

from .events import EventBus, format_event


class Phase(StrEnum):
    PLAYING = "playing"
    FINISHED = "finished"  # the host ended the game, or the bag is empty


class SessionError(ValueError):
    """A request the game cannot honour (no such question, nothing to undo, ...)."""


@dataclass
class Question:
    """The camera is unsure: ranked options (best first), each a whole turn, and the crop it saw."""

    id: int
    options: list[Event]
    crop: bytes | None = None  # JPEG
    text: str = ""
    asked: float = field(default_factory=time.time)
    # the turn (0-based) it is about once the players played on without answering, or when
    # the camera asks about an earlier turn it read for now: the best option (or the reading)
    # is in the game for now, and an answer corrects that turn
    turn: int | None = None


@dataclass
class ReadOver:
    """The camera read the finished game over (``Tracker.review``): the log it proposes and
    what that changes, read from ``based_on`` (stale once the game is no longer that log). The
    players take it or keep the game as they played it."""

    id: int
    based_on: list[Event]
    log: list[Event]
    changes: list[Correction]
    totals: list[int]  # each player's score (final scoring included) if it is taken


@dataclass
class Notice:
    """Something the camera saw that the rules cannot explain, or a line of the recognition log."""

    id: int
    text: str
    kind: str  # "warning", "commit", "question", "correction"
    image: bytes | None = None
    time: float = field(default_factory=time.time)


def encode_image(image) -> bytes | None:
    """JPEG bytes of a crop given as JPEG bytes or a BGR numpy array (cv2 imported lazily)."""
    if image is None or isinstance(image, bytes | bytearray):
        return bytes(image) if image is not None else None
    import cv2

    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])
    return buffer.tobytes() if ok else None


def describe(game: Game, event: Event) -> str:
    """A turn in words for the page, e.g. ``U at (1,0) turned 90°, follower on E``."""
    if isinstance(event, Discard):
        return f"{event.tile} discarded (fits nowhere)"
    text = f"{event.tile} at ({event.x},{event.y})"
    if event.rotation:
        text += f" turned {event.rotation}°"
    if event.meeple:
        text += f", follower on {event.meeple}"
    if event.gingerbread:
        g = event.gingerbread
        text += f", Gingerbread Man to ({g.x},{g.y}) {g.at}"
    return text


class GameSession:
    def __init__(
        self,
        game: Game,
        record_path: str | Path | None = None,
        extra_types: Mapping | None = None,
        history: list | None = None,
        finished: bool = False,
        clock: Callable[[], float] = time.time,
    ):
        self.lock = threading.RLock()
        self.game = game
        self.record_path = Path(record_path) if record_path else None
        self.extra_types = dict(extra_types or {})
        self.history: list = list(history or [])
        self.phase = Phase.FINISHED if finished or game.is_over else Phase.PLAYING
        self.clock = clock
        self.bus = EventBus()
        self.questions: dict[int, Question] = {}
        self.notices: deque[Notice] = deque(maxlen=30)
        self.drawn_tile: str | None = None
        self.drawn_spot: tuple[int, int] | None = None  # where the camera reads the drawn tile
        self.read_over: ReadOver | None = None
        # turns the camera took for now (0-based -> why): marked on the page until it keeps
        # them, or they are corrected
        self.for_now: dict[int, tuple[str, ...]] = {}
        self.version = 0
        self.committed = clock()
        self.fragments: Callable[[dict], dict] | None = None  # set by the app: state -> HTML parts
        self._ids = itertools.count(1)
        self._event_cache: tuple[int, str] | None = None
        self.changed = threading.Condition(self.lock)

    # --- making one -------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        record_path: str | Path | None,
        players: Sequence[Player] | None = None,
        tileset: str = "winter",
        options: Options | None = None,
        extra_types: Mapping | None = None,
    ) -> GameSession:
        """Resume the game saved at ``record_path`` if it exists, else start a new one."""
        if record_path and Path(record_path).exists():
            record = read_record_file(record_path)
            game = load_record(record, extra_types)
            return cls(
                game,
                record_path,
                extra_types,
                history=record.get("history") if isinstance(record.get("history"), list) else [],
                finished=bool(record.get("finished")),
            )
        players = players or [Player("Ann", "red"), Player("Bo", "yellow")]
        game = Game.start(find_tileset(tileset, extra_types), players, options)
        session = cls(game, record_path, extra_types)
        session._save()
        return session

    # --- the turn source's side (the sink) ----------------------------------------------------
    def drawn(self, tile: str | None) -> None:
        """The tile the current player holds (shown to the camera), for the hints."""
        with self.lock:
            if tile is not None and tile not in self.game.tileset:
                raise SessionError(f"unknown tile type {tile!r}")
            self.drawn_tile = tile
            self._changed(save=False)

    def watch_spot(self, cell: tuple[int, int] | None) -> None:
        """The cell beside the board where the camera reads the tile just drawn (None: no
        spot), for the page to show the players where to put it."""
        with self.lock:
            if cell != self.drawn_spot:
                self.drawn_spot = cell
                self._changed(save=False)

    @property
    def spot_in_use(self) -> tuple[int, int] | None:
        """The drawn-tile spot while the camera reads it: once the board grows into it, a
        tile there is a turn (``vision.live.spot``), and the page no longer shows it."""
        from meeplecam.vision.live.spot import DrawnTileSpot

        with self.lock:
            cell = self.drawn_spot
            return cell if cell is not None and DrawnTileSpot(cell).free(self.game.board) else None

    def commit(self, event: Event, source: str = "camera") -> None:
        """A turn read for sure. Raises IllegalTurn (game unchanged) if the rules refuse it."""
        with self.lock:
            self._playing()
            self.game.apply(event)
            self.drawn_tile = None
            self._note("commit", f"turn {len(self.game.log)}: {describe(self.game, event)}")
            if source != "camera":
                self._history("entered", len(self.game.log), event)
            if self.game.is_over:
                self.phase = Phase.FINISHED
            self._changed()

    def ask(
        self, options: Sequence[Event], crop=None, text: str = "", turn: int | None = None
    ) -> int:
        """The camera is unsure: queue a question with ranked options; returns its id. With
        ``turn`` it is about that earlier turn (0-based), in the game as the camera read it for
        now: the answer corrects it."""
        if not options:
            raise SessionError("a question needs at least one option")
        with self.lock:
            question = Question(next(self._ids), list(options), encode_image(crop), text, turn=turn)
            self.questions[question.id] = question
            self._note("question", text or f"which of {len(options)} readings is right?")
            self._changed(save=False)
            return question.id

    def taken_for_now(self, index: int, doubts: Sequence[str]) -> None:
        """Turn ``index`` (0-based) is in the game as the camera read it for now (``doubts``:
        why it is not sure yet): the page marks it until :meth:`kept` or a correction."""
        with self.lock:
            if 0 <= index < len(self.game.log):
                self.for_now[index] = tuple(doubts)
                self._changed(save=False)

    def kept(self, index: int) -> None:
        """The camera is sure of turn ``index`` (or leaves it to the reading over): unmarked."""
        with self.lock:
            if self.for_now.pop(index, None) is not None:
                self._changed(save=False)

    def play_on(self, event: Event) -> None:
        """The players laid the next tile with the camera's question still open: ``event``
        (its best option) is applied for now, and the question stays open as a correction of
        that turn. Raises IllegalTurn (game unchanged) if the rules refuse it."""
        with self.lock:
            self.commit(event)
            asked = [q for q in self.questions.values() if q.turn is None and event in q.options]
            if asked:
                asked[-1].turn = len(self.game.log) - 1
                self._changed(save=False)

    def play_area(self, bounds) -> None:
        """The camera found the table's edge: the game's play area (``Bounds``), unless the
        players set one. Raises IllegalTurn (game unchanged) if a tile laid lies outside."""
        with self.lock:
            if self.game.options.table is None:
                self._set_play_area(
                    bounds,
                    f"the play area is the table: columns {bounds.min_x} to {bounds.max_x}, "
                    f"rows {bounds.min_y} to {bounds.max_y}",
                )

    def clear_play_area(self) -> None:
        """The host says the play area is wrong (a tile that lies on the table was refused as
        beyond its edge): the game goes on with none."""
        with self.lock:
            if self.game.options.table is not None:
                self._set_play_area(None, "the play area is removed: tiles may lie anywhere")

    def _set_play_area(self, bounds, note: str) -> None:
        self.game.set_table(bounds)
        self._note("table", note)
        self._changed()

    def warn(self, text: str, image=None) -> None:
        with self.lock:
            self.notices.append(Notice(next(self._ids), text, "warning", encode_image(image)))
            self._changed(save=False)

    def propose_read_over(self, based_on: Sequence[Event], log: Sequence[Event]) -> int | None:
        """The camera read the finished game (whose log was ``based_on``) over as ``log``: kept
        for the players to take or leave when it changes a turn and the game is still as it
        was read; returns its id. Raises IllegalTurn (nothing kept) if ``log`` is not legal."""
        with self.lock:
            if list(based_on) != self.game.log:
                return None  # corrected meanwhile: the players' word stands
            changes = corrections(self.game.log, log)
            if not changes:
                self._note("commit", "the camera read the game over: nothing to correct")
                self._changed(save=False)
                return None
            after = score_report(self.game.replayed(log))
            totals = [player["score"] for player in after["players"]]
            self.read_over = ReadOver(next(self._ids), list(based_on), list(log), changes, totals)
            self._note(
                "question", f"the camera read the game over: {len(changes)} turn(s) to correct"
            )
            self._changed(save=False)
            return self.read_over.id

    @property
    def read_over_open(self) -> bool:
        """The camera's reading over waits for the host (take it or keep the game)."""
        with self.lock:
            return self._current_read_over() is not None

    @property
    def pending(self) -> int:
        with self.lock:
            return len(self.questions)

    # --- the host's side ----------------------------------------------------------------------
    def answer(self, question_id: int, choice: int | Event) -> None:
        """Answer a question with one of its options (index) or a turn entered by hand."""
        with self.lock:
            question = self.questions.get(question_id)
            if question is None:
                raise SessionError(f"there is no open question {question_id}")
            if isinstance(choice, int):
                if not 0 <= choice < len(question.options):
                    raise SessionError(f"question {question_id} has no option {choice + 1}")
                event = question.options[choice]
            else:
                event = choice
            if question.turn is not None:  # play went on: the answer corrects that turn
                self._answer_played(question, event)
                return
            self._playing()
            self.game.apply(event)  # IllegalTurn leaves the question open
            del self.questions[question_id]
            self.drawn_tile = None
            self._note("commit", f"turn {len(self.game.log)}: {describe(self.game, event)}")
            if self.game.is_over:
                self.phase = Phase.FINISHED
            self._changed()

    def _answer_played(self, question: Question, event: Event) -> None:
        """The answer to a question whose best option was taken while play went on: a
        correction of that turn, when it differs."""
        if question.turn >= len(self.game.log):
            raise SessionError(f"turn {question.turn + 1} was undone: dismiss the question")
        if event != self.game.log[question.turn]:
            self.correct(question.turn, event)  # IllegalTurn leaves the question open
        self.for_now.pop(question.turn, None)  # the players' word
        del self.questions[question.id]
        self._changed(save=False)

    def _turn_removed(self, index: int) -> None:
        """Turn ``index`` left the log: a question about it goes, and those about later turns
        follow their turns."""
        for question in list(self.questions.values()):
            if question.turn == index:
                del self.questions[question.id]
            elif question.turn is not None and question.turn > index:
                question.turn -= 1
        self.for_now = {i - (i > index): why for i, why in self.for_now.items() if i != index}

    def take_read_over(self, read_over_id: int) -> None:
        """Correct the game as the camera read it over (one history entry per turn it changes,
        with what the turn was)."""
        with self.lock:
            proposal = self._open_read_over(read_over_id)
            was = {c.index: event_to_dict(self.game, c.was) for c in proposal.changes if c.was}
            self.game.rewrite(proposal.log)
            self.for_now.clear()
            for change in proposal.changes:
                if change.was is None:
                    self._history("put in", change.index + 1, change.turn)
                else:
                    self._history("read over", change.index + 1, change.turn, was[change.index])
            self.read_over = None
            self._note("correction", f"{len(proposal.changes)} turn(s) corrected as read over")
            self.phase = Phase.FINISHED if self.game.is_over else self.phase
            self._changed()

    def keep_as_played(self, read_over_id: int) -> None:
        """Leave the game as it was played: the camera's reading over is dropped."""
        with self.lock:
            self._open_read_over(read_over_id)
            self.read_over = None
            self._note("correction", "the game kept as played")
            self._changed(save=False)

    def dismiss(self, question_id: int) -> None:
        with self.lock:
            if self.questions.pop(question_id, None) is None:
                raise SessionError(f"there is no open question {question_id}")
            self._changed(save=False)

    def correct(self, index: int, event: Event | None) -> None:
        """Replace (or delete, with None) turn ``index`` (0-based); scores recompute from the log."""
        with self.lock:
            if not 0 <= index < len(self.game.log):
                raise SessionError(f"there is no turn {index + 1}")
            old = self.game.log[index]
            was = event_to_dict(self.game, old)
            self.game.replace(index, event)
            self.for_now.pop(index, None)
            if event is None:
                self._turn_removed(index)
            self._history("deleted" if event is None else "corrected", index + 1, old, was)
            what = "deleted" if event is None else f"is now {describe(self.game, event)}"
            self._note("correction", f"turn {index + 1} {what}")
            self.phase = Phase.FINISHED if self.game.is_over else Phase.PLAYING
            self._changed()

    def undo(self) -> None:
        with self.lock:
            if not self.game.log:
                raise SessionError("there is no turn to undo")
            was = event_to_dict(self.game, self.game.log[-1])
            event = self.game.undo()
            self._turn_removed(len(self.game.log))
            self._history("undone", len(self.game.log) + 1, event, was)
            self._note("correction", f"turn {len(self.game.log) + 1} undone")
            self.phase = Phase.PLAYING
            self._changed()

    def new_game(
        self, tileset: str, players: Sequence[Player], options: Options | None = None
    ) -> None:
        with self.lock:
            game = Game.start(find_tileset(tileset, self.extra_types), players, options)
            self._replace_game(game, [])

    def load(self, record: Mapping) -> None:
        """Resume a game from a record (an upload); RecordError if it is not a legal game."""
        with self.lock:
            game = load_record(record, self.extra_types)
            history = record.get("history")
            self._replace_game(game, history if isinstance(history, list) else [])
            if record.get("finished"):
                self.phase = Phase.FINISHED
                self._changed()

    def end_game(self) -> None:
        with self.lock:
            self.phase = Phase.FINISHED
            self.questions.clear()
            self._history("ended", len(self.game.log), None)
            self._changed()

    def reopen(self) -> None:
        with self.lock:
            if self.game.is_over:
                raise SessionError("the bag is empty: the game is over")
            self.phase = Phase.PLAYING
            self._changed()

    # --- reading ------------------------------------------------------------------------------
    def record(self) -> dict:
        with self.lock:
            record = to_record(self.game)
            if self.history:
                record["history"] = list(self.history)
            if self.phase is Phase.FINISHED:
                record["finished"] = True
            return record

    def state(self) -> dict:
        """Everything the pages show, as plain data (the scoreboard, turns and questions)."""
        with self.lock:
            game = self.game
            report = score_report(game)
            projected = hints.projected_scores(game)
            players = []
            for i, p in enumerate(game.players):
                total = game.totals[i]
                lap, square = laps(total)
                players.append(
                    {
                        "name": p.name,
                        "colour": p.colour,
                        "total": total,
                        "laps": lap,
                        "square": square,
                        "breakdown": dict(game.scores[i]),
                        "final_breakdown": report["players"][i]["breakdown"],
                        "supply": game.supply[i],
                        "projected": projected[p.colour],
                        "current": i == game.current and self.phase is Phase.PLAYING,
                    }
                )
            turns = []
            for i, (event, result) in enumerate(zip(game.log, game.results, strict=True)):
                turns.append(
                    {
                        "index": i,
                        "player": game.players[result.player].colour,
                        "text": describe(game, event),
                        "record": event_to_dict(game, event),
                        "points": sum(s.points for s in result.scores),
                        "for_now": list(self.for_now.get(i, ())),
                    }
                )
            return {
                "version": self.version,
                "committed": self.committed,
                "phase": str(self.phase),
                "tileset": game.tileset.name,
                "tile_ids": sorted(game.tileset.types),
                "gingerbread": game.gingerbread_in_play,
                "options": {
                    "farm_scoring": str(game.options.farm_scoring),
                    "small_city": game.options.small_city,
                    "table": game.board.bounds.to_dict() if game.board.bounds else None,
                    "table_edge_closes": game.options.table_edge_closes,
                },
                "players": players,
                "current": game.current,
                "history": [list(t) for t in game.history],
                "turns": turns,
                "tiles_left": game.tiles_left,
                "drawn": self.drawn_tile,
                "drawn_spot": list(spot) if (spot := self.spot_in_use) else None,
                "questions": [
                    {
                        "id": q.id,
                        "text": q.text,
                        "turn": None if q.turn is None else q.turn + 1,
                        "has_crop": q.crop is not None,
                        "options": [
                            {"index": n, "text": describe(game, e), "record": _event_dict(game, e)}
                            for n, e in enumerate(q.options)
                        ],
                    }
                    for q in self.questions.values()
                ],
                "notices": [
                    {"id": n.id, "kind": n.kind, "text": n.text, "has_image": n.image is not None}
                    for n in reversed(self.notices)
                ],
                "report": report,
                "read_over": self._read_over_state(game, report),
            }

    def event_text(self) -> str:
        """The current ``state`` event as SSE text (cached per version, sent to new clients)."""
        with self.lock:
            if self._event_cache is None or self._event_cache[0] != self.version:
                self._event_cache = (self.version, format_event("state", self._payload()))
            return self._event_cache[1]

    def _payload(self) -> dict:
        state = self.state()
        payload = {
            "version": state["version"],
            "committed": state["committed"],
            "phase": state["phase"],
            "current": state["current"],
            "drawn": state["drawn"],
            "turns": len(state["turns"]),
            "totals": {p["colour"]: p["total"] for p in state["players"]},
            "projected": {p["colour"]: p["projected"] for p in state["players"]},
            "questions": [q["id"] for q in state["questions"]],
            "read_over": state["read_over"]["id"] if state["read_over"] else None,
        }
        if self.fragments is not None:
            payload["html"] = self.fragments(state)
        return payload

    def wait_for_change(self, version: int, timeout: float) -> int:
        """Block until the version passes ``version`` (or timeout); returns the version."""
        with self.changed:
            self.changed.wait_for(lambda: self.version > version, timeout)
            return self.version

    # --- internals ----------------------------------------------------------------------------
    def _read_over_state(self, game: Game, report: dict) -> dict | None:
        proposal = self._current_read_over()
        if proposal is None:
            return None
        return {
            "id": proposal.id,
            "changes": [
                {"turn": c.index + 1, "text": c.describe(), "put_in": c.was is None}
                for c in proposal.changes
            ],
            "totals": [
                {"name": p.name, "colour": p.colour, "now": now["score"], "after": after}
                for p, now, after in zip(
                    game.players, report["players"], proposal.totals, strict=True
                )
            ],
        }

    def _open_read_over(self, read_over_id: int) -> ReadOver:
        proposal = self._current_read_over()
        if proposal is None or proposal.id != read_over_id:
            raise SessionError(
                f"there is no reading over {read_over_id} to take: the game changed since the "
                "camera read it, or it was taken or left already"
            )
        return proposal

    def _current_read_over(self) -> ReadOver | None:
        """The camera's reading over, while the game is still the one it read."""
        proposal = self.read_over
        return proposal if proposal is not None and proposal.based_on == self.game.log else None

    def _playing(self) -> None:
        if self.phase is Phase.FINISHED:
            raise SessionError("the game has ended; reopen it or start a new one")

    def _replace_game(self, game: Game, history: list) -> None:
        self.game = game
        self.history = list(history)
        self.questions.clear()
        self.for_now.clear()
        self.drawn_tile = None
        self.read_over = None
        self.phase = Phase.FINISHED if game.is_over else Phase.PLAYING
        self._note("correction", f"game of {len(game.players)} players, set {game.tileset.name}")
        self._changed()

    def _note(self, kind: str, text: str) -> None:
        self.notices.append(Notice(next(self._ids), text, kind))

    def _history(self, action: str, turn: int, event: Event | None, was: dict | None = None):
        entry: dict = {"time": round(self.clock(), 3), "action": action, "turn": turn}
        if was is not None:
            entry["was"] = was
        elif event is not None and action in ("entered", "put in"):
            entry["turn_record"] = event_to_dict(self.game, event)
        self.history.append(entry)

    def _save(self) -> None:
        if self.record_path is not None:
            save_record(self.record(), self.record_path)

    def _changed(self, save: bool = True) -> None:
        """Call with the lock held: save, bump the version, publish the new state."""
        if save:
            self._save()
        self.committed = self.clock()
        self.version += 1
        text = format_event("state", self._payload())
        self._event_cache = (self.version, text)
        self.bus.publish_text(text)
        self.changed.notify_all()


def _event_dict(game: Game, event: Event) -> dict:
    """A turn as a record entry, without needing it to be on the board (question options)."""
    if isinstance(event, Discard):
        return {"discard": event.tile}
    out: dict = {"tile": event.tile, "x": event.x, "y": event.y, "rotation": event.rotation}
    if event.meeple:
        out["meeple"] = {"at": event.meeple}
    if event.gingerbread:
        g = event.gingerbread
        out["gingerbread"] = {"x": g.x, "y": g.y, "at": g.at}
    return out


__all__ = [
    "GameSession",
    "IllegalTurn",
    "Notice",
    "Phase",
    "Question",
    "ReadOver",
    "RecordError",
    "SessionError",
    "Turn",
    "describe",
    "encode_image",
]
