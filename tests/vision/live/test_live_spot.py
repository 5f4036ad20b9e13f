"""The drawn-tile spot: the tile a player puts beside the board before laying it is found,
cut out square and read, so that the page can hint where it fits."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from meeplecam.engine import Game, Player, Turn, find_tileset
from meeplecam.vision.live.rectify import Board
from meeplecam.vision.live.spot import DrawnTileSpot, parse_spot

P = 48  # pixels per cell


def _table() -> np.ndarray:
    rng = np.random.default_rng(0)
    table = np.full((3 * P, 3 * P, 3), (205, 208, 212), np.float32)
    return np.clip(table + rng.normal(0, 2, table.shape), 0, 255).astype(np.uint8)


def _marked_tile() -> np.ndarray:
    """A tile whose picture is the same under no mirror: green, a road to the east and a red
    mark in the north-west corner."""
    tile = np.full((P, P, 3), (60, 150, 70), np.uint8)
    tile[20:28, 24:] = (220, 225, 230)
    tile[4:14, 4:14] = (40, 40, 200)
    return tile


def _laid(table: np.ndarray, tile: np.ndarray, angle: float, centre=(70.0, 75.0)) -> np.ndarray:
    """``table`` with ``tile`` put down at ``centre``, turned ``angle`` degrees."""
    out = table.copy()
    turn = cv2.getRotationMatrix2D((P / 2, P / 2), angle, 1.0)
    turn[:, 2] += np.asarray(centre) - P / 2
    placed = cv2.warpAffine(tile, turn, out.shape[1::-1])
    mask = cv2.warpAffine(np.full((P, P), 255, np.uint8), turn, out.shape[1::-1]) > 128
    out[mask] = placed[mask]
    return out


def _board(image: np.ndarray) -> Board:
    return Board(image, (4, -1, 6, 1), P)


def test_a_tile_put_down_askew_is_cut_out_square_and_unmirrored():
    spot = DrawnTileSpot((5, 0))
    table = _table()
    assert spot.look(_board(table)) is None  # the first view: the spot empty
    crop = spot.look(_board(_laid(table, _marked_tile(), 23.0)))
    assert crop is not None and crop.shape == (P, P, 3)
    # some quarter turn of the crop shows the tile as drawn: red mark in a corner, the road
    # leaving by the side clockwise after it (a mirrored cut would have it anticlockwise)
    found = []
    for k in range(4):
        view = np.rot90(crop, k)
        red = view[3:16, 3:16, 2].mean() > 120 and view[3:16, 3:16, 1].mean() < 110
        road = view[20:28, 36:46].mean() > 180
        found.append(red and road)
    assert any(found)


def test_a_tile_of_the_tables_hue_is_found_by_how_much_darker_it_is_and_a_shadow_is_not():
    """A grey winter tile on a white table differs in lightness only: far darker than a
    shadow, which only dims the table a little."""
    spot = DrawnTileSpot((5, 0))
    table = _table()
    spot.look(_board(table))
    grey = np.full((P, P, 3), (100, 103, 107), np.uint8)
    grey[20:28, 24:] = (70, 72, 75)
    assert spot.look(_board(_laid(table, grey, -12.0))) is not None
    shaded = (table * 0.8).astype(np.uint8)  # a cloud, a person leaning over the table
    spot = DrawnTileSpot((5, 0))
    spot.look(_board(table))
    assert spot.look(_board(shaded)) is None


def test_an_empty_spot_and_a_hand_are_no_tile():
    spot = DrawnTileSpot((5, 0))
    table = _table()
    spot.look(_board(table))
    assert spot.look(_board(table)) is None
    hand = table.copy()
    cv2.ellipse(hand, (72, 72), (70, 40), 30, 0, 360, (120, 150, 200), -1)  # larger than a tile
    assert spot.look(_board(hand)) is None


def test_the_spot_is_off_once_the_board_reaches_it():
    """Three cells from the board the spot is free; once a tile may be laid next to it, a
    tile there is a turn."""
    game = Game.start(find_tileset("base"), [Player("Ann", "red"), Player("Bo", "yellow")])
    spot = DrawnTileSpot((0, 3))  # the start tile at (0, 0): (0, 1) may take a tile
    assert spot.free(game.board)
    game.apply(Turn("B", 0, 1, 0))  # a cloister south of it: (0, 2) may take the next
    assert not spot.free(game.board)


@pytest.mark.parametrize("text, cell", [("-3,7", (-3, 7)), (" 2, -1", (2, -1))])
def test_the_spot_is_given_as_a_cell(text, cell):
    assert parse_spot(text) == cell


def test_a_spot_that_is_no_cell_says_how_to_write_one():
    with pytest.raises(ValueError, match="X,Y"):
        parse_spot("left of the board")


@pytest.fixture(scope="module")
def spot_game(tmp_path_factory):
    """Four turns on the synthetic table, each drawn tile put on a spot beside the board first."""
    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.sequence import write_game

    folder = tmp_path_factory.mktemp("spot")
    game = random_game(find_tileset("winter"), 2, seed=21, max_turns=4)
    write_game(folder, game, seed=21, palette="winter", size=(1280, 720), drawn_spot=True)
    return folder, game


def test_each_drawn_tile_is_read_on_the_spot_and_the_board_is_read_as_ever(spot_game):
    import json

    from meeplecam.engine import Game, Turn
    from meeplecam.vision.live.observations import Drawn
    from meeplecam.vision.live.rectify import from_truth
    from meeplecam.vision.live.replay import replay
    from meeplecam.vision.live.sources import FolderSource
    from meeplecam.vision.live.tracker import TrackerConfig
    from meeplecam.vision.model import build_from_art

    folder, played = spot_game
    truths = [json.loads(p.read_text()) for p in sorted((folder / "truth").glob("*.json"))]
    spot = tuple(truths[0]["drawn_spot"])
    game = Game.start(played.tileset, played.players, played.options)
    read: dict[int, str | None] = {}  # turn -> the type read on the spot

    def on(obs, tracker):
        if isinstance(obs, Drawn) and obs.tile is not None:  # None: the spot empty again
            read[len(tracker.game.log) + 1] = obs.tile

    replay(
        FolderSource(folder / "frames"),
        game,
        from_truth(truths[-1]),
        TrackerConfig(drawn_spot=spot),
        reference=build_from_art(played.tileset, "winter"),
        on_observation=on,
        review=False,
    )
    laid = [e for e in played.log if isinstance(e, Turn)]
    assert [(t.tile, t.cell) for t in game.log] == [(t.tile, t.cell) for t in laid]
    drawn = {n: t.tile for n, t in enumerate(laid, 1)}
    assert set(read) == set(drawn)  # each tile put on the spot was seen there
    assert sum(read[n] == drawn[n] for n in drawn) >= 3, (read, drawn)


def test_a_calibration_profile_marks_the_spot_and_the_command_line_overrides_it(tmp_path):
    import json

    from meeplecam.vision.live.spot import spot_for
    from meeplecam.vision.profile import FrameInfo, Profile, ProfileError

    marked = Profile(FrameInfo(1920, 1080), drawn_spot=[0, 8])
    path = marked.save(tmp_path / "table.json")
    assert spot_for(None, str(path)) == (0, 8)
    assert spot_for("-3,7", str(path)) == (-3, 7)
    assert spot_for(None, str(Profile(FrameInfo(1920, 1080)).save(tmp_path / "plain.json"))) is None
    bad = marked.to_json() | {"drawn_spot": [0.5, "south"]}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ProfileError, match="drawn_spot"):
        spot_for(None, str(tmp_path / "bad.json"))
