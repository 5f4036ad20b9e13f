"""Reading a game over at its end: the rules the review keeps when it changes turns (the deal
of types over real views is in ``test_live_tracker.py``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from meeplecam.engine import IllegalTurn, Turn, find_tileset
from meeplecam.engine.hints import follower_spots
from meeplecam.engine.playout import random_game
from meeplecam.vision.live.appearance import ScorerConfig, TerrainScorer
from meeplecam.vision.live.review import Looks, Review
from meeplecam.vision.live.tracker import TrackerConfig

CLEAR, ROOF = 0.12, 0.03  # of a tile's crop: a figure standing on it, a red roof read as one


class _Table:
    """The last view, as far as the review's follower check looks at it: how much of each
    cell a colour covers (a figure everywhere a follower stands, unless given) and how clearly
    at its clearest (``ratios``: the colour's log-likelihood ratio over the terrain; a figure
    clearly, unless given)."""

    config = ScorerConfig()

    def __init__(self, shares: dict, ratios: dict | None = None):
        self.shares = shares
        self.ratios = ratios or {}

    def follower_ratio(self, cell, colour):
        return np.full(100, self.ratios.get(cell, 5.0))

    def cell(self, x: int, y: int):
        return (x, y)

    def prepare(self, crop):
        return crop

    def follower_mask(self, cell, colour):
        mask = np.zeros(100, bool)
        mask[: round(100 * self.shares.get(cell, CLEAR))] = True
        return mask, None

    figure_clear = TerrainScorer.figure_clear  # the scorer's own test, on these ratios


class _Tracker:
    def __init__(self, table: _Table):
        self.config = TrackerConfig()
        self.scorer = table


def _red_one_follower_short():
    """A base game where red always lays a follower, and an earlier red turn read with one
    more: the game the review would make, illegal because red runs out of followers. Returns
    (game, the log read again, the turn read again, red's first follower that stays)."""
    for seed in range(20):
        game = random_game(find_tileset("base"), 2, seed=seed, follower_chance=1.0)
        log = list(game.log)
        standing = {f.cell for f in game.board.followers() if f.player == 0}
        kept = [
            k for k, e in enumerate(log) if isinstance(e, Turn) and e.meeple and e.cell in standing
        ]
        for j, event in enumerate(log):
            before = game.replayed(log[:j])
            if not isinstance(event, Turn) or event.meeple or before.current != 0:
                continue
            spots = follower_spots(before, event)
            if not spots:
                continue
            trial = [*log[:j], replace(event, meeple=spots[0].at), *log[j + 1 :]]
            try:
                game.replayed(trial)
            except IllegalTurn:
                first = next((k for k in kept if k < j), None)
                if first is not None:
                    return game, trial, j, first
    raise AssertionError("no game leaves red one follower short")


def test_a_follower_the_table_barely_shows_gives_way_when_the_game_needs_its_figure():
    """A red cloister roof read as a monk keeps one of red's followers on the board: with an
    earlier turn read again with its figure, red runs out later in the game. The follower whose
    colour covers only 3 % of its tile is taken off, and the game is legal again."""
    game, trial, again, roof = _red_one_follower_short()
    read = {event.cell: index for index, event in enumerate(trial) if isinstance(event, Turn)}
    table = _Table({trial[roof].cell: ROOF})
    review = Review(_Tracker(table), game)
    legal = review._legal(trial, read, {trial[again].cell}, table)
    assert legal is not None
    assert legal[roof].meeple is None and legal[again].meeple is not None
    assert [k for k, (a, b) in enumerate(zip(trial, legal, strict=True)) if a != b] == [roof]


def test_a_red_roof_as_large_as_a_figure_but_nowhere_clearly_red_gives_way_too():
    """A red city's roofs read as a knight: the blob covers as much of the tile as a figure,
    but no pixel of it is clearly the figures' red rather than a roof's. It is taken off when
    the game needs the follower elsewhere."""
    game, trial, again, roof = _red_one_follower_short()
    read = {event.cell: index for index, event in enumerate(trial) if isinstance(event, Turn)}
    table = _Table({}, ratios={trial[roof].cell: 0.5})
    legal = Review(_Tracker(table), game)._legal(trial, read, {trial[again].cell}, table)
    assert legal is not None
    assert legal[roof].meeple is None and legal[again].meeple is not None


def test_a_follower_the_table_clearly_shows_stays_and_the_change_is_refused():
    game, trial, again, _ = _red_one_follower_short()
    read = {event.cell: index for index, event in enumerate(trial) if isinstance(event, Turn)}
    table = _Table({})
    assert Review(_Tracker(table), game)._legal(trial, read, {trial[again].cell}, table) is None


ART = np.random.default_rng(7).integers(60, 200, (40, 40, 3)).astype(np.uint8)  # O's and P's


def _twin_art(shield: bool, rotation: int, seed: int, roof: bool = False) -> np.ndarray:
    """A city corner of O or P as a copy draws it: the same art for both, with O's shield in
    the city's corner; the camera's own noise, the tile turned as it lies; ``roof``: a roof
    in the shade of a cloud (as blue as a shield, elsewhere)."""
    art = ART.astype(np.float64)
    art[3:8, 3:8] = (200, 70, 40) if shield else art[3:8, 3:8]  # BGR: a blue shield
    art[12:17, 10:15] = (200, 70, 40) if roof else art[12:17, 10:15]  # in the city too
    art += np.random.default_rng(seed).normal(0, 4, art.shape)
    art = np.clip(art, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(np.rot90(art, -(rotation // 90)))


class _TwinTable:
    config = ScorerConfig(size=40)  # the scorer's crops: the pictures as they are
    reference = None  # no appearance model of the art: the twins are learned side by side

    def __init__(self, pictures: dict):
        self.pictures = pictures

    def cell(self, x: int, y: int):
        return self.pictures[(x, y)]

    def prepare(self, crop):
        return crop

    def contains(self, cell) -> bool:
        return cell in self.pictures


class _TwinTracker(_Tracker):
    def _visible(self, cell) -> bool:
        return True

    def _figures(self, crop):
        return {}, None


def _twins_misread(roof: bool):
    """A winter game with two O and three P, pictured; an O and a P read as each other's
    types (the P, with ``roof``, under a cloud's shade): (game, table, the log read, the log
    misread, the O/P turns by index)."""
    game = random_game(find_tileset("winter"), 2, seed=0, follower_chance=0.3)
    log = list(game.log)
    twins = [k for k, e in enumerate(log) if isinstance(e, Turn) and e.tile in ("O", "P")]
    o, p = (next(k for k in twins if log[k].tile == tile) for tile in ("O", "P"))
    pictures = {
        log[k].cell: _twin_art(log[k].tile == "O", log[k].rotation, seed=k, roof=roof and k == p)
        for k in twins
    }
    misread = list(log)
    misread[o], misread[p] = replace(log[o], tile="P"), replace(log[p], tile="O")
    return game, _TwinTable(pictures), log, misread, twins, (o, p)


def test_pennant_twins_read_as_each_others_types_are_told_apart_side_by_side():
    """Two O (a shield in the city) and three P (none) lie turned every way; the camera read
    an O and a P as each other's types, each alone looking no more like one than the other.
    Read over side by side, the shield stands out at the same spot of the art on the two
    that have it, and the types go back to their tiles."""
    game, table, log, misread, twins, _ = _twins_misread(roof=False)
    review = Review(_TwinTracker(table), game)
    read = {log[k].cell: k for k in twins}
    looks = {cell: Looks({}, None) for cell in read}
    assert review._shields_again(misread, read, looks, table) == log
    assert review._shields_again(log, read, looks, table) == log  # read right: left as it is


def test_the_twins_the_players_decided_say_where_the_shield_is():
    """The misread P lies in a cloud's shade, one of its roofs as blue as a shield: the two
    misread tiles alone each show a blue spot the other lacks, and nothing says which is the
    shield. The twins the players decided (the other O and two P) stand beside them: the
    spot the decided O shares is the shield, and the types go back."""
    game, table, log, misread, _, (o, p) = _twins_misread(roof=True)
    read = {log[k].cell: k for k in (o, p)}  # the players decided the others
    looks = {cell: Looks({}, None) for cell in read}
    two = _TwinTable({cell: table.pictures[cell] for cell in read})  # the others out of view
    assert Review(_TwinTracker(two), game)._shields_again(misread, read, looks, two) == misread
    review = Review(_TwinTracker(table), game)
    assert review._shields_again(misread, read, looks, table) == log


def test_once_the_shields_decided_a_twin_looks_as_much_like_its_pair_s_other_type():
    """Dealt again after the shields were read side by side, a tile read as Q looks as much
    like an R as like a Q (the shields decide between them), and no more like anything else."""
    game = random_game(find_tileset("winter"), 2, seed=0, follower_chance=0.3)
    review = Review(_Tracker(_Table({})), game)
    looks = Looks(
        {("Q", 0): -1.0, ("R", 0): -3.0, ("Q", 90): -2.0, ("R", 90): -1.5, ("T", 0): -2.5}, None
    )
    alike = review._twins_alike(looks).scores
    assert alike[("Q", 0)] == alike[("R", 0)] == -1.0
    assert alike[("Q", 90)] == alike[("R", 90)] == -1.5
    assert alike[("T", 0)] == -2.5


def _figure_at(tile, rotation: int, segment: int, size: int, inset: float) -> np.ndarray:
    """A figure's clear part on the scorer's crop of its cell, at the spot where a follower is
    put on ``segment``."""
    from meeplecam.vision.live.appearance import anchor_points

    ax, ay = anchor_points(tile, rotation)[segment]
    col, row = (round((a - inset) / (1 - 2 * inset) * size - 0.5) for a in (ax, ay))
    mask = np.zeros((size, size), bool)
    mask[max(0, row - 2) : row + 1, max(0, col - 1) : col + 2] = True
    return mask


def _followers_taken_off(returned: bool):
    """A base game with a follower on a road or a city that is (``returned``) or is not
    scored and returned before the end, taken off as the review's first look at the figures
    does while the game as read keeps it on the board. Returns (game, the log without it,
    its turn's index, a tracker that saw the figure when the tile was read, the last view:
    a figure wherever a follower stands, none on that tile)."""
    from meeplecam.engine import Kind
    from meeplecam.vision.live.tracker import Tracker

    for seed in range(40):
        game = random_game(find_tileset("base"), 2, seed=seed, follower_chance=0.6)
        log, standing = list(game.log), {f.cell for f in game.board.followers()}
        for k, turn in enumerate(log):
            if not isinstance(turn, Turn) or not turn.meeple or (turn.cell in standing) == returned:
                continue
            before = game.replayed(log[:k])
            spot = next(
                s for s in follower_spots(before, replace(turn, meeple=None)) if s.at == turn.meeple
            )
            if spot.kind not in (Kind.ROAD, Kind.CITY):
                continue
            taken = [*log[:k], replace(turn, meeple=None), *log[k + 1 :]]
            still = {f.cell for f in game.replayed(taken).board.followers()}
            table = _Table(
                {e.cell: CLEAR if e.cell in still else 0.0 for e in taken if isinstance(e, Turn)}
            )
            tracker = Tracker(game, None)
            tracker.scorer = table
            size, inset = tracker.config.scorer.size, tracker.config.scorer.inset
            tile = game.tileset[turn.tile]
            tracker.figures_read[turn.cell] = _figure_at(
                tile, turn.rotation, spot.segment, size, inset
            )
            return game, taken, k, tracker, table
    raise AssertionError("no such follower")


def test_a_follower_taken_off_is_put_back_when_the_game_read_over_scores_and_returns_it():
    """The first look at the figures took a knight (or a thief) off: the game as read still
    had it in its city at the end, and no figure stands there. But the game read over
    finishes that city (its tiles read as other types), so the knight was scored and went
    back to its player: its absence is explained, and it is put back where the camera saw it
    when its tile was read."""
    game, taken, k, tracker, table = _followers_taken_off(returned=True)
    read = {e.cell: i for i, e in enumerate(taken) if isinstance(e, Turn)}
    again = Review(tracker, game)._figures_again(taken, read, table)
    assert again[k] == game.log[k]
    assert [i for i, (a, b) in enumerate(zip(taken, again, strict=True)) if a != b] == [k]


def test_a_follower_taken_off_stays_off_while_the_game_would_keep_it_on_the_board():
    game, taken, _, tracker, table = _followers_taken_off(returned=False)
    read = {e.cell: i for i, e in enumerate(taken) if isinstance(e, Turn)}
    assert Review(tracker, game)._figures_again(taken, read, table) == taken


def _follower_beside_its_figure():
    """A base game with a turn read with its follower on another free spot of its tile than
    the one its figure stood on. Returns (game, the log misread, the log, a tracker that saw
    the figure)."""
    from meeplecam.vision.live.tracker import Tracker

    for seed in range(40):
        game = random_game(find_tileset("base"), 2, seed=seed, follower_chance=0.6)
        log = list(game.log)
        for k, turn in enumerate(log):
            if not isinstance(turn, Turn) or not turn.meeple:
                continue
            spots = follower_spots(game.replayed(log[:k]), replace(turn, meeple=None))
            right = next(s for s in spots if s.at == turn.meeple)
            for other in (s for s in spots if s.segment != right.segment):
                misread = [*log[:k], replace(turn, meeple=other.at), *log[k + 1 :]]
                try:
                    game.replayed(misread)
                except IllegalTurn:
                    continue
                tracker = Tracker(game, None)
                size, inset = tracker.config.scorer.size, tracker.config.scorer.inset
                tile = game.tileset[turn.tile]
                tracker.figures_read[turn.cell] = _figure_at(
                    tile, turn.rotation, right.segment, size, inset
                )
                return game, misread, log, tracker
    raise AssertionError("no such follower")


def test_a_follower_read_beside_its_figure_goes_where_the_figure_stood_at_the_end():
    """Read live, the field (or road, or city) a figure stood on was claimed by an earlier
    misread, so its follower went on another spot of the tile. In the game as read over that
    spot is free: the follower is put on it, under where the figure stood."""
    game, misread, log, tracker = _follower_beside_its_figure()
    read = {e.cell: i for i, e in enumerate(misread) if isinstance(e, Turn)}
    assert Review(tracker, game)._spots_again(misread, read) == log


def test_a_tile_in_a_lamp_s_glare_counts_as_much_as_the_contrast_it_kept():
    """A glare adds white light: the washed-out tile's darkest pixels are lifted towards
    white, and what is left of its contrast is all its looks can say. The tiles in plain
    light count (about) in full."""
    rng = np.random.default_rng(3)
    pictures = {(x, 0): rng.integers(30, 230, (40, 40, 3)).astype(np.uint8) for x in range(5)}
    pictures[(2, 0)] = np.clip(pictures[(2, 0)].astype(int) + 170, 0, 255).astype(np.uint8)
    table = _TwinTable(pictures)
    game = random_game(find_tileset("base"), 2, seed=0)
    weights = Review(_TwinTracker(table), game)._contrast_left(table, list(pictures))
    assert all(weights[(x, 0)] > 0.95 for x in (0, 1, 3, 4))
    assert 0.0 < weights[(2, 0)] < 0.5


class _LearnedTracker(_TwinTracker):
    """A tracker whose scorer learned the Winter art of a few types in plain light."""

    def __init__(self, art_cell):
        self.config = TrackerConfig()
        self.scorer = TerrainScorer()
        tileset = find_tileset("winter")
        for k, tile_id in enumerate("DEUVWBKLJA"):
            for rotation in (0, 90):
                picture = art_cell(tile_id, rotation, "winter", seed=k)
                self.scorer.learn(
                    self.scorer.prepare(picture), tileset[tile_id], rotation, None, picture
                )


def test_a_tile_washed_out_by_a_lamp_s_glare_is_read_through_it(art_cell):
    """A T junction under a lamp: the glare left it a fifth of its contrast, and as it is seen
    it looks like a tile of snow, a cloister before anything else. The white light taken off
    again, it looks most like what it is."""
    game = random_game(find_tileset("winter"), 2, seed=0)
    tracker = _LearnedTracker(art_cell)
    pictures = {(x, 0): art_cell(t, 0, "winter", seed=50 + x) for x, t in enumerate("DEVK")}
    lit = art_cell("W", 180, "winter", seed=99).astype(float)
    pictures[(4, 0)] = np.clip(255 - (255 - lit) * 0.2, 0, 255).astype(np.uint8)
    table = _TwinTable(pictures)

    def best(review: Review) -> tuple[str, int]:
        review._contrast = review._contrast_left(table, list(pictures))
        scores = review._looks_like(table, (4, 0)).scores
        return max(scores, key=scores.get)

    assert best(Review(tracker, game)) == ("W", 180)
    tracker.config = replace(tracker.config, review_glare_below=0.0)
    assert best(Review(tracker, game)) != ("W", 180)


def test_with_the_art_s_model_the_twins_stay_as_the_live_reading_had_them():
    """The art's model knows where each type's shield is drawn, tile by tile: the shields
    side by side, for a copy whose art is learned during play, do not overrule it."""
    game, table, log, misread, twins, _ = _twins_misread(roof=False)
    table.reference = object()  # an appearance model of the copy's art
    review = Review(_TwinTracker(table), game)
    read = {log[k].cell: k for k in twins}
    looks = {cell: Looks({}, None) for cell in read}
    assert review._shields_again(misread, read, looks, table) == misread


def test_a_swap_of_pennant_twins_must_gain_more_than_one_that_moves_a_road():
    """Tiles read as each other's types take them back when they look more like them by a
    margin in all: larger for pennant twins swapping shields (a few pixels say so, and the
    shields are read side by side on their own) than for a ring that also moves a road or a
    city side (Q read R, S read Q, R read S)."""
    game = random_game(find_tileset("winter"), 2, seed=0, follower_chance=0.3)
    review = Review(_Tracker(_Table({})), game)
    config = review.config
    assert config.review_margin > config.review_margin_drawn
    assert review._margin([(("O", 90), ("P", 90)), (("P", 0), ("O", 0))]) == config.review_margin
    ring = [(("R", 180), ("Q", 180)), (("Q", 270), ("S", 270)), (("S", 270), ("R", 270))]
    assert review._margin(ring) == config.review_margin_drawn
