"""Finding the current player's follower on a freshly laid tile (the live scorer)."""

import cv2
import numpy as np
from cameras import camera_view

from meeplecam.engine import Game, Player, find_tileset
from meeplecam.vision.live.appearance import CLOISTER, DEFAULT_COLOURS, ScorerConfig, TerrainScorer
from meeplecam.vision.live.rectify import Rectifier
from meeplecam.vision.live.tracker import Tracker


def _learned_scorer(config: ScorerConfig | None = None) -> TerrainScorer:
    """A scorer that has seen a snowy start tile (field, road, city) under this light."""
    ts = find_tileset("winter")
    scorer = TerrainScorer(config)
    scorer.players = ["red", "yellow"]
    tile = ts["D"]
    kinds = scorer._kinds(tile, 0)
    size = kinds.shape[0]
    rng = np.random.default_rng(1)
    crop = np.zeros((size, size, 3), np.uint8)
    for kind, colour in ((0, (235, 235, 230)), (1, (150, 150, 150)), (2, (120, 165, 205))):
        crop[kinds == kind] = colour
    crop = np.clip(crop + rng.normal(0, 4, crop.shape), 0, 255).astype(np.uint8)
    scorer.learn(crop, tile, 0)
    return scorer


def _snow_with_figure(lit_bgr, shaded_bgr) -> np.ndarray:
    """A snowy field with a standing figure: its lit half bright, its shaded half dim."""
    crop = np.full((32, 32, 3), (235, 235, 230), np.uint8)
    cv2.rectangle(crop, (12, 10), (15, 20), lit_bgr, -1)
    cv2.rectangle(crop, (16, 10), (19, 20), shaded_bgr, -1)
    return crop


def test_a_half_shaded_figure_is_found_whole():
    scorer = _learned_scorer()
    yellow = np.array(DEFAULT_COLOURS["yellow"], float)
    crop = _snow_with_figure(tuple(int(c) for c in yellow), tuple(int(c) for c in yellow * 0.45))
    mask, area = scorer.follower_mask(crop, "yellow")
    assert mask[10:21, 12:16].mean() > 0.9  # the lit half
    assert mask[10:21, 16:20].mean() > 0.5  # and the shaded half with it
    assert area >= scorer.config.follower_min_area


def test_no_figure_on_plain_snow_or_for_another_colour():
    scorer = _learned_scorer()
    plain = np.full((32, 32, 3), (235, 235, 230), np.uint8)
    assert scorer.follower_mask(plain, "red")[1] == 0.0
    red = DEFAULT_COLOURS["red"]
    crop = _snow_with_figure(red, red)
    assert scorer.follower_mask(crop, "yellow")[1] < scorer.config.follower_min_area
    assert scorer.follower_mask(crop, "red")[1] >= scorer.config.follower_min_area


def test_a_figure_seen_in_bits_on_a_city_of_its_colour_is_one_follower():
    """A yellow figure lying on a tan city: blurred, half its pixels look about as much like
    the city as like the figure, and the rest do not touch (every other pixel). Joined across
    one pixel, or grown into the colours it nearly explains, it is one follower; neither, no
    bit is large enough to count."""
    tile = find_tileset("winter")["E"]  # a city along the north side
    tan, snow, yellow, between = (110, 170, 210), (235, 230, 225), (40, 200, 230), (50, 222, 180)

    def scorer(close: int, grow: int) -> tuple[TerrainScorer, np.ndarray]:
        s = TerrainScorer(ScorerConfig(follower_close=close, follower_grow=grow))
        kinds = s._kinds(tile, 0)
        city = np.full((*kinds.shape, 3), snow, np.uint8)
        city[kinds != 0] = tan
        for _ in range(3):
            s.learn(city.copy(), tile, 0)
        figure = city.copy()
        for y in range(3, 11):
            for x in range(12, 20):
                figure[y, x] = yellow if (x + y) % 2 == 0 else between
        return s, figure

    for close, grow in ((3, 0), (1, 2)):
        joined, figure = scorer(close, grow)
        mask, _ = joined.follower_mask(figure, "yellow")
        assert mask[3:11, 12:20].mean() > 0.9
    apart, figure = scorer(close=1, grow=0)
    assert not apart.follower_mask(figure, "yellow")[0].any()


def test_a_dull_figure_in_shade_counts_by_its_evidence_in_all():
    """A dull olive knight in shade: yellow explains each of its pixels only a little better
    than the snow, none clearly, but a figure's worth of them add up. A speck of that olive
    smaller than a figure does not."""
    scorer = _learned_scorer()
    olive = (60, 130, 150)
    crop = _snow_with_figure(olive, olive)
    assert scorer.follower_ratio(crop, "yellow")[10:21, 12:20].max() < 1.0
    mask, _ = scorer.follower_mask(crop, "yellow")
    assert mask[10:21, 12:20].mean() > 0.9
    only_cores = _learned_scorer(ScorerConfig(follower_evidence=float("inf")))
    assert not only_cores.follower_mask(crop, "yellow")[0].any()
    speck = np.full((32, 32, 3), (235, 235, 230), np.uint8)
    cv2.rectangle(speck, (12, 10), (15, 13), olive, -1)
    assert not scorer.follower_mask(speck, "yellow")[0].any()


def test_only_a_figure_with_a_clear_core_is_clear():
    """The dull olive blob counts as a figure in shade, but no pixel of it is clearly yellow:
    where the rules leave the player no follower to lay, it is taken for the art (a village, a
    shaded roof). A lit yellow figure is clear."""
    scorer = _learned_scorer()
    olive = _snow_with_figure((60, 130, 150), (60, 130, 150))
    mask, _ = scorer.follower_mask(olive, "yellow")
    assert mask.any() and not scorer.figure_clear(olive, "yellow", mask)
    yellow = tuple(int(c) for c in DEFAULT_COLOURS["yellow"])
    lit = _snow_with_figure(yellow, yellow)
    mask, _ = scorer.follower_mask(lit, "yellow")
    assert scorer.figure_clear(lit, "yellow", mask)


def test_a_figure_the_players_pointed_out_teaches_its_colour_under_this_light():
    """An olive figure under a dim lamp: yellow explains it better than the snow, but not as
    clearly as a figure must be explained to be found. Once the players say it is there, its
    pixels are learned as yellow, and the next such figure is found (counting only a clear
    core, not a blob's evidence in all)."""
    scorer = _learned_scorer(ScorerConfig(follower_ratio=4.0, follower_evidence=float("inf")))
    olive = (60, 140, 180)
    crop = _snow_with_figure(olive, olive)
    assert not scorer.follower_mask(crop, "yellow")[0].any()
    mask, _ = scorer.follower_mask(crop, "yellow", known=True)
    assert mask[10:21, 12:20].mean() > 0.9
    scorer.learn_follower(crop, "yellow", mask)
    assert scorer.follower_mask(crop, "yellow")[0][10:21, 12:20].mean() > 0.9


def test_a_colour_that_explains_a_whole_tile_is_not_learned_as_the_figure():
    """The players say a yellow figure is on a tile whose art yellow explains everywhere: the
    blob is the art, not the figure, and nothing is learned from it."""
    scorer = _learned_scorer(ScorerConfig(follower_ratio=4.0))
    olive = np.full((32, 32, 3), (60, 140, 180), np.uint8)
    mask, area = scorer.follower_mask(olive, "yellow", known=True)
    assert area > scorer.config.follower_max_known
    assert not mask.any()


def test_red_roofs_the_players_said_are_no_monk_are_learned_as_the_cloister():
    """A cloister of red roofs on grass, the red player's turn: the roofs look like a red monk.
    Once the players say no figure stands on the tile, the roofs are learned as the
    cloister's own colours and the next such cloister shows no monk. Learned as a tile that
    may hide a figure, a colour of the players' is left out, and the monk stays."""
    tile = find_tileset("base")["B"]
    grass, wall, red = (60, 150, 70), (170, 180, 185), DEFAULT_COLOURS["red"]

    def scorer() -> tuple[TerrainScorer, np.ndarray]:
        s = TerrainScorer()
        s.players = ["red", "yellow"]
        kinds = s._kinds(tile, 0)
        plain = np.full((*kinds.shape, 3), grass, np.uint8)
        plain[kinds == CLOISTER] = wall
        for _ in range(3):  # cloisters of grey walls: both kinds learned
            s.learn(plain.copy(), tile, 0)
        roofs = plain.copy()
        roofs[14:20, 13:19] = red
        return s, roofs

    kept_out, roofs = scorer()
    assert kept_out.follower_mask(roofs, "red")[0].any()
    for _ in range(3):
        kept_out.learn(roofs, tile, 0)
    assert kept_out.follower_mask(roofs, "red")[0].any()

    bare, roofs = scorer()
    for _ in range(3):
        bare.learn(roofs, tile, 0, bare=True)
    assert not bare.follower_mask(roofs, "red")[0].any()


def test_a_thief_whose_shadow_falls_on_the_cloister_is_a_thief():
    """A cloister with its road south (A) below the start tile, seen by a camera north of the
    table: a yellow figure stands on the road and leans south in the top-down picture, and its
    shadow falls north onto the cloister. This light showed the yellow figures' shaded sides
    brownish grey, so the shadow joins the figure's blob, and the blob's north end lies on the
    cloister. The figure's foot is read from its clear part: a thief, not a monk."""
    yellow, shadow = DEFAULT_COLOURS["yellow"], (80, 98, 124)
    game = Game.start(find_tileset("winter"), [Player("Ann", "yellow"), Player("Bo", "red")])
    tracker = Tracker(
        game, Rectifier(camera_view((0.5, -14.0), 25.0, 0.0), frame_size=(1920, 1080))
    )
    tracker.scorer = _learned_scorer()
    inset = tracker.config.scorer.inset

    def px(t: float) -> int:  # tile units -> crop pixels
        return round((t - inset) / (1 - 2 * inset) * 32 - 0.5)

    seen = np.full((32, 32, 3), (235, 235, 230), np.uint8)  # a figure with a greyish shade
    seen[4:21, 13:19] = yellow
    seen[17:21, 13:19] = shadow
    tracker.scorer.learn_follower(seen, "yellow", seen[..., 0] < 200)

    crop = np.full((32, 32, 3), (235, 235, 230), np.uint8)
    crop[px(0.72) : px(0.95), px(0.45) : px(0.56)] = yellow  # the figure, foot at 0.72
    crop[px(0.45) : px(0.72), px(0.44) : px(0.57)] = shadow
    blob, _ = tracker.scorer.follower_mask(crop, "yellow")
    assert blob[px(0.5)].any()  # the shadow is part of the blob
    foot = tracker.scorer.figure_core(crop, "yellow", blob)
    assert not foot[px(0.5)].any()

    def spot(mask) -> str:
        (turn,) = tracker._turns_for(game.tileset["A"], 0, (0, 1), mask)
        return turn.meeple

    assert spot(foot) == "S"
    assert spot(blob) == "C"  # the whole blob's foot is on the cloister


def test_a_yellow_monk_on_orange_roofs_teaches_yellow_the_monk_not_the_roofs():
    """The blob of a yellow monk standing on a cloister grew over its orange roofs (larger
    than any figure): learned whole, yellow would explain the roofs, and every such cloister
    after it would show a yellow monk. Only the figure's clear part is learned."""
    scorer = _learned_scorer()
    yellow = tuple(int(c) for c in DEFAULT_COLOURS["yellow"])
    roofs = np.full((32, 32, 3), (235, 235, 230), np.uint8)
    cv2.rectangle(roofs, (6, 6), (25, 25), (50, 95, 190), -1)  # orange-brown, 0.39 of the crop
    assert not scorer.follower_mask(roofs, "yellow")[0].any()
    monk = roofs.copy()
    cv2.rectangle(monk, (14, 12), (18, 20), yellow, -1)
    grown = np.zeros((32, 32), bool)
    grown[6:26, 6:26] = True  # what the blob grew over
    assert grown.mean() > scorer.config.follower_max_known
    scorer.learn_follower(monk, "yellow", grown)
    assert not scorer.follower_mask(roofs, "yellow")[0].any()
    assert scorer.follower_mask(monk, "yellow")[0][12:21, 14:19].mean() > 0.9
