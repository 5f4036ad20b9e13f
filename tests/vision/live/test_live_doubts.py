"""Readings taken for now: a tile whose picture alone is in doubt goes in the game as read, is
read again as the table teaches more, and is asked about only if it stays in doubt."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from playing import apply

from meeplecam.engine import Game, Turn
from meeplecam.vision.live.observations import Amend, Commit, Kept, Question
from meeplecam.vision.live.reading import FOR_THE_REVIEW, SPOT_DOUBT
from meeplecam.vision.live.rectify import Rectifier
from meeplecam.vision.live.replay import compare, replay
from meeplecam.vision.live.tracker import Tracker, TrackerConfig


def _fresh(drawn_game) -> Game:
    g = drawn_game.game
    return Game.start(g.tileset, g.players, g.options)


def _played(tracker, frames) -> list:
    """Every observation of ``frames``, each applied to the tracker's game as it comes."""
    seen = []
    for frame in frames:
        for obs in tracker.feed(frame):
            seen.append(obs)
            apply(tracker.game, obs)
    return seen


def test_a_close_runner_up_is_read_for_now_and_not_asked_at_once(drawn_game, drawn_frames):
    # every reading's lead is "close" here: none is asked about as it is laid
    config = TrackerConfig(margin=100.0)
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image), config=config)
    first = next(obs for obs in _played(tracker, drawn_frames[:60]) if not isinstance(obs, Amend))
    assert isinstance(first, Commit)
    assert not first.sure
    assert any(why.startswith("the runner-up is close") for why in first.doubts)


def test_a_doubt_the_table_settles_later_asks_nothing(drawn_game, drawn_frames):
    # the drawn tiles' pictures are clear once read again: every doubt settles by itself,
    # and the game is read as well as when every reading was sure at once
    config = TrackerConfig(margin=100.0)
    game = _fresh(drawn_game)
    result = replay(drawn_frames, game, Rectifier(drawn_game.grid_to_image), config)
    right, total, diffs = compare(drawn_game.expected(), result.record())
    assert right >= total - 1, diffs
    # only what the picture cannot settle is asked (here, where a figure stands)
    picture = ("the runner-up is close", "the two best differ in")
    assert all(
        any(not why.startswith(picture) for why in doubts) for doubts in result.doubts.values()
    ), result.doubts
    assert result.questions == len(result.doubts) < total // 4


def test_a_reading_taken_for_now_that_the_table_settles_is_said_to_be_kept(
    drawn_game, drawn_frames
):
    # the page marks a reading taken for now until the tracker says it keeps it
    config = TrackerConfig(margin=100.0)
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image), config=config)
    seen = _played(tracker, drawn_frames)
    seen += tracker.settle_doubts()
    for_now, index = set(), 0
    for obs in seen:
        if isinstance(obs, Commit):
            if obs.doubts:
                for_now.add(index)
            index += 1
    kept = [obs.index for obs in seen if isinstance(obs, Kept)]
    assert kept and set(kept) <= for_now and len(set(kept)) == len(kept)
    changed = {obs.index for obs in seen if isinstance(obs, Amend)}
    changed |= {obs.turn for obs in seen if isinstance(obs, Question) and obs.turn is not None}
    assert for_now == set(kept) | changed  # every one is kept, amended or asked about
    assert not tracker.doubtful


def test_a_doubt_that_stays_is_asked_about_naming_its_turn(drawn_game, drawn_frames):
    # nothing ever leads by enough: each reading taken for now is asked about two turns on
    config = TrackerConfig(margin=100.0, defer_turns=2, defer_margin=100.0)
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image), config=config)
    seen = _played(tracker, drawn_frames)
    late = [obs for obs in seen if isinstance(obs, Question) and obs.turn is not None]
    assert late
    assert all(len(q.turns) >= 2 for q in late)  # a question always offers a choice
    question = late[0]
    read = tracker.game.log[question.turn]
    assert question.best == read  # the reading in the game comes first
    assert f"(turn {question.turn + 1})" in question.text
    commits = [obs for obs in seen if isinstance(obs, Commit)]
    asked_at = seen.index(question)
    assert sum(isinstance(o, Commit) for o in seen[:asked_at]) >= 3  # it waited two turns
    assert commits[0].turn == read


def test_the_last_doubts_are_asked_when_the_game_ends(drawn_game, drawn_frames):
    config = TrackerConfig(margin=100.0, defer_turns=1000, defer_margin=100.0)
    game = _fresh(drawn_game)
    result = replay(drawn_frames, game, Rectifier(drawn_game.grid_to_image), config)
    assert result.questions == sum(isinstance(e, Turn) for e in game.log)
    assert all(asked for _, asked in result.first_read)


def test_a_reading_taken_for_now_that_the_table_shows_wrong_is_amended(
    drawn_game, drawn_frames, monkeypatch
):
    # the first tile is read as its runner-up, just ahead (a picture the table had not yet
    # taught the tracker to read); read again after the next turn, it is the tile laid
    truth = next(e for e in drawn_game.game.log if isinstance(e, Turn))
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image))
    options = tracker.legal_options(truth.cell)
    real = tracker.scorer.score
    fooled = []

    def score(crop, scored, *args, **kwargs):
        scores = list(real(crop, scored, *args, **kwargs))
        if not fooled and scored == options:
            order = np.argsort(scores)[::-1]
            right, runner_up = (int(i) for i in order[:2])
            scores[runner_up] = scores[right] + 0.01  # ahead, but by less than ``margin``
            fooled.append(scored[runner_up])
        return scores

    monkeypatch.setattr(tracker.scorer, "score", score)
    seen = _played(tracker, drawn_frames)
    first = seen[0]
    assert isinstance(first, Commit) and not first.sure
    assert (first.turn.tile, first.turn.rotation) == (fooled[0][0].id, fooled[0][1])
    laid = _reading(tracker.game, truth)
    amends = [obs for obs in seen if isinstance(obs, Amend) and obs.index == 0]
    assert amends and _reading(tracker.game, amends[0].turn) == laid
    assert not any(isinstance(obs, Question) and obs.turn == 0 for obs in seen)
    assert _reading(tracker.game, tracker.game.log[0]) == laid


def _reading(game, turn: Turn) -> tuple[str, int]:
    tile = game.tileset[turn.tile]
    return tile.id, tile.canonical_rotation(turn.rotation)


def test_a_reading_an_earlier_repair_chose_is_never_learned_from(drawn_game, drawn_frames):
    # the rules chose it, not the picture: its look is no sample of the type, even once the
    # picture comes to prefer it (a pennant twin's shield read wrong would be learned so)
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image))
    _played(tracker, drawn_frames[:120])
    cell, laid = next(
        (t.cell, t) for t in tracker.game.log if isinstance(t, Turn) and t.cell in tracker.readings
    )
    learned = []
    tracker.scorer.learn = lambda *args, **kwargs: learned.append(args)
    board = tracker.anchor
    crop = tracker.scorer.prepare(board.cell(*cell))
    masks, _ = tracker._figures(crop)
    tracker._learn_laid(board, cell, laid, 0.5, crop, masks)
    assert len(learned) == 1  # an ordinary reading is
    tracker.repaired.add(cell)
    tracker._learn_laid(board, cell, laid, 0.5, crop, masks)
    assert len(learned) == 1
    assert tracker.certainty[cell] == 0.5


def test_a_failure_while_reading_a_doubt_again_does_not_stop_the_game(
    drawn_game, drawn_frames, monkeypatch
):
    def broken(self, *args, **kwargs):
        raise RuntimeError("scorer broke")

    monkeypatch.setattr(Tracker, "_read_doubtful_again", broken)
    config = TrackerConfig(margin=100.0)  # every reading taken for now
    game = _fresh(drawn_game)
    result = replay(drawn_frames, game, Rectifier(drawn_game.grid_to_image), config)
    right, total, diffs = compare(drawn_game.expected(), result.record())
    assert total == sum(isinstance(e, Turn) for e in drawn_game.game.log)
    assert right >= total - 1, diffs


def test_a_follower_between_two_spots_waits_for_its_tile_to_be_sure(drawn_game, drawn_frames):
    # every reading is close and every figure stands between two spots: no tile is asked
    # about as it is laid; once a tile is read clearly, its follower's place is asked about,
    # naming the turn, with the spot in the game first and the tile as read in every option
    config = TrackerConfig(margin=100.0, spot_ambiguity=100.0)
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image), config=config)
    seen = _played(tracker, drawn_frames)
    assert not [obs for obs in seen if isinstance(obs, Question) and obs.turn is None]
    places = [obs for obs in seen if isinstance(obs, Question) and "follower's place" in obs.text]
    assert places
    for question in places:
        read = tracker.game.log[question.turn]
        assert question.best == read
        assert f"(turn {question.turn + 1})" in question.text
        assert {(t.tile, t.rotation) for t in question.turns} == {(read.tile, read.rotation)}
        assert len({t.meeple for t in question.turns}) == len(question.turns) >= 2


def test_a_sure_tile_with_its_follower_between_two_spots_is_asked_at_once(drawn_game, drawn_frames):
    # the picture is clear, only the figure's place is not: waiting would teach nothing
    config = TrackerConfig(spot_ambiguity=100.0)
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image), config=config)
    seen = _played(tracker, drawn_frames)
    at_once = [obs for obs in seen if isinstance(obs, Question) and obs.turn is None]
    assert any(obs.doubts == ("the follower's spot",) for obs in at_once)


def _looking_alike(tracker, monkeypatch, tile_id: str, twin_id: str, rotation: int) -> None:
    """Wherever the picture looks most like ``tile_id`` or ``twin_id`` (its pennant twin, or
    another type with its sides) turned ``rotation``, the two look just as much like it and
    everything else far less: the picture can never tell them apart."""
    real = tracker.scorer.score
    tileset = tracker.game.tileset
    tile, twin = (tileset[tile_id], rotation), (tileset[twin_id], rotation)

    def score(crop, scored, *args, **kwargs):
        scores = list(real(crop, scored, *args, **kwargs))
        best = scored[int(np.argmax(scores))] if scores else None
        if tile in scored and twin in scored and best in (tile, twin):
            level = scores[scored.index(tile)]
            scores = [level - 1.0] * len(scores)
            scores[scored.index(tile)], scores[scored.index(twin)] = level, level - 0.001
        return scores

    monkeypatch.setattr(tracker.scorer, "score", score)


def _twins_played(drawn_game, drawn_frames, monkeypatch, visible):
    """The drawn game played with its first tile, an S, looking just like its twin T
    (:func:`_looking_alike`), waiting two turns at most, and the two differing in ``visible(tracker)``
    pixels the camera sees: (the tracker, the first turn, every observation)."""
    first = drawn_game.game.log[0]
    assert first.tile == "S"
    config = TrackerConfig(defer_turns=2)
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image), config=config)
    _looking_alike(tracker, monkeypatch, "S", "T", first.rotation)
    monkeypatch.setattr(tracker, "_visible_difference", lambda *args: visible(tracker))
    return tracker, first, _played(tracker, drawn_frames)


def test_pennant_twins_in_sight_wait_for_the_game_s_end_to_be_told_apart(
    drawn_game, drawn_frames, monkeypatch
):
    # the shield's spot in sight: not asked two turns on, nor when the game ends (its pair's
    # tiles are then read side by side)
    tracker, first, seen = _twins_played(drawn_game, drawn_frames, monkeypatch, lambda t: 50)
    opened = seen[0]
    assert isinstance(opened, Commit) and not opened.sure
    assert opened.turn.tile in ("S", "T")
    assert tracker.doubtful[first.cell].twins
    seen += tracker.settle_doubts()
    assert not any(isinstance(obs, Question) and obs.turn == 0 for obs in seen)
    assert not tracker.doubtful


def test_pennant_twins_whose_shield_a_figure_hides_wait_for_it_and_are_asked_at_the_end(
    drawn_game, drawn_frames, monkeypatch
):
    # the figure over the shield may leave when its city is scored: no question during play,
    # one at the end if it never did, with the twin as the other option
    tracker, first, seen = _twins_played(drawn_game, drawn_frames, monkeypatch, lambda t: 0)
    assert not any(isinstance(obs, Question) and obs.turn == 0 for obs in seen)
    assert not tracker.doubtful[first.cell].twins
    asked = [obs for obs in tracker.settle_doubts() if isinstance(obs, Question) and obs.turn == 0]
    assert len(asked) == 1
    assert {t.tile for t in asked[0].turns[:2]} == {"S", "T"}


def test_pennant_twins_whose_figure_leaves_are_left_to_the_game_s_end_like_twins_in_sight(
    drawn_game, drawn_frames, monkeypatch
):
    # the figure over the shield goes (its city scored) six turns on: from then the shields'
    # difference is in sight, and the reading over at the end tells the pair apart
    def figure_gone_at_turn_6(tracker):
        return 0 if len(tracker.game.log) < 6 else 50

    tracker, first, seen = _twins_played(
        drawn_game, drawn_frames, monkeypatch, figure_gone_at_turn_6
    )
    assert tracker.doubtful[first.cell].twins
    seen += tracker.settle_doubts()
    assert not any(isinstance(obs, Question) and obs.turn == 0 for obs in seen)
    assert not tracker.doubtful


def test_readings_with_the_same_sides_wait_for_the_game_s_end_and_are_asked_then(
    drawn_game, drawn_frames, monkeypatch
):
    # a WI8 and an A (a village, a cloister) show the same sides: no tile laid against it can
    # tell them apart, so the doubt is not asked two turns on but read once more when the game
    # ends, the picture learned from every turn, and asked then if that leaves it open
    second = drawn_game.game.log[1]
    assert second.tile == "WI8"
    config = TrackerConfig(defer_turns=2)
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image), config=config)
    _looking_alike(tracker, monkeypatch, "WI8", "A", second.rotation)
    seen = _played(tracker, drawn_frames)
    assert not any(isinstance(obs, Question) and obs.turn == 1 for obs in seen)
    assert not tracker.doubtful[second.cell].twins  # no shields: the reading over does not decide
    asked = [obs for obs in tracker.settle_doubts() if isinstance(obs, Question) and obs.turn == 1]
    assert len(asked) == 1
    assert {t.tile for t in asked[0].turns[:2]} == {"WI8", "A"}


def _first_read_with_a_rival(drawn_game, frames, monkeypatch, config, gain, played_out):
    """The first tile's reading where a tile the rules forbid at the cell (or, ``played_out``,
    one whose every copy is played) fits its picture ``gain`` better than any they allow; and
    the tracker."""
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image), config=config)
    real = tracker._rival

    def rival(*args):
        found = real(*args)
        tile = found.tile or tracker.game.tileset["A"]
        spent = (gain, tile, found.rotation) if played_out else None
        return dataclasses.replace(found, gain=gain, tile=tile, spent=spent)

    monkeypatch.setattr(tracker, "_rival", rival)
    first = next(obs for obs in _played(tracker, frames[:60]) if not isinstance(obs, Amend))
    return first, tracker


@pytest.mark.parametrize("played_out", [False, True], ids=["forbidden", "played out"])
@pytest.mark.parametrize(("between", "read_for_now"), [(0.5, True), (1.5, False)])
def test_a_tile_the_rules_forbid_fitting_a_little_better_is_read_for_now(
    drawn_game, drawn_frames, monkeypatch, between, read_for_now, played_out
):
    # a tile the rules forbid at the cell (a neighbour's side, or every copy played) fits its
    # picture a little better than any they allow: the picture may be in doubt as much as an
    # earlier reading, so the best legal one is read for now; fitting far better, the table
    # and the game disagree: asked at once
    config = TrackerConfig()
    gain = config.unexplained + between * (config.unexplained_for_now - config.unexplained)
    first, _ = _first_read_with_a_rival(
        drawn_game, drawn_frames, monkeypatch, config, gain, played_out
    )
    forbidden = [why for why in first.doubts if "not allowed here, fits better" in why]
    assert forbidden
    assert ("a tile already played fits better" in first.doubts) == played_out
    if read_for_now:
        assert isinstance(first, Commit) and not first.sure
    else:
        assert isinstance(first, Question) and first.turn is None


@pytest.mark.parametrize("played_out", [False, True], ids=["forbidden", "played out"])
def test_in_the_game_s_last_turns_a_tile_the_table_disagrees_with_is_left_to_the_reading_over(
    drawn_game, drawn_frames, monkeypatch, played_out
):
    # a tile the rules forbid (or one whose every copy is played) fits far better than any they
    # allow, with the bag almost empty: the best legal reading goes in the game for now, is not
    # asked about when the game ends, and the reading over settles which turn was read wrong
    config = TrackerConfig(review_near=1000)  # every tile of this short game is "near the end"
    first, tracker = _first_read_with_a_rival(
        drawn_game, drawn_frames, monkeypatch, config, 2 * config.unexplained_for_now, played_out
    )
    assert isinstance(first, Commit) and FOR_THE_REVIEW in first.doubts
    assert first.turn.cell in tracker.doubtful  # still in doubt when the game ends
    index = tracker.game.log.index(first.turn)
    asked = [q for q in tracker.settle_doubts() if isinstance(q, Question) and q.turn == index]
    assert all(q.doubts == (SPOT_DOUBT,) for q in asked)  # its follower's spot, at most


def test_readings_whose_difference_a_figure_hides_wait_for_the_game_s_end(
    drawn_game, drawn_frames, monkeypatch
):
    # an S or a Q: a city on three sides, with a road on the fourth or not, and the road's
    # stub under the follower (Winter scans 07015: an R or a T). The picture cannot tell them
    # apart until the figure leaves, and its open side may still be settled by a tile laid
    # against it: not asked two turns on, but once more at the game's end
    first = drawn_game.game.log[0]
    config = TrackerConfig(defer_turns=2)
    tracker = Tracker(_fresh(drawn_game), Rectifier(drawn_game.grid_to_image), config=config)
    _looking_alike(tracker, monkeypatch, "S", "Q", first.rotation)
    monkeypatch.setattr(tracker, "_visible_difference", lambda *args: 0)
    seen = _played(tracker, drawn_frames)
    assert not any(isinstance(obs, Question) and obs.turn == 0 for obs in seen)
    assert not tracker.doubtful[first.cell].twins
    asked = [obs for obs in tracker.settle_doubts() if isinstance(obs, Question) and obs.turn == 0]
    assert len(asked) == 1
    assert {t.tile for t in asked[0].turns[:2]} == {"S", "Q"}
