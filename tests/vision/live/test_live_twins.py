"""Pennant twins (O and P: a diagonal city and a curved road, O with a shield) told apart by the
picture of the one the players confirmed: the copy's own art says where its shield is."""

import numpy as np
import pytest

from meeplecam.engine import find_tileset
from meeplecam.vision.live.appearance import CITY, FIELD, ROAD, TerrainScorer, kind_map

SIZE = 48
SHIELD = (150, 60, 30)  # BGR: a dark blue shield
BLUE_ROOF = (205, 160, 140)  # BGR: snow in a roof's shadow, blue enough for the blot test
COLOURS = {FIELD: (235, 230, 225), ROAD: (90, 100, 110), CITY: (110, 160, 200)}


def _cell(rotation: int, shield: bool, seed: int) -> np.ndarray:
    """A cell of the O/P art at ``rotation``: a tan city with a bluish roof in its middle, the
    shield in its corner when ``shield``, a little noise of its own."""
    rng = np.random.default_rng(seed)
    tile = find_tileset("winter")["P"]
    kinds, _ = kind_map(tile, 0, SIZE)
    cell = np.zeros((SIZE, SIZE, 3), np.float64)
    for kind, colour in COLOURS.items():
        cell[kinds == kind] = colour
    cell[12:16, 12:16] = BLUE_ROOF
    if shield:
        cell[4:8, 4:8] = SHIELD  # the Winter art puts it in the city's corner
    cell += rng.normal(0, 3, cell.shape)
    cell = np.clip(cell, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(np.rot90(cell, -(rotation // 90)))


def _read(scorer, rotation: int, shield: bool, seed: int) -> str:
    ts = find_tileset("winter")
    options = [(ts["O"], rotation), (ts["P"], rotation)]
    cell = _cell(rotation, shield, seed)
    scores = scorer.score(scorer.prepare(cell), options, cell=cell)
    return options[int(np.argmax(scores))][0].id


def _scorer_that_saw(tile_id: str, rotation: int) -> TerrainScorer:
    scorer = TerrainScorer()
    tile = find_tileset("winter")[tile_id]
    cell = _cell(rotation, tile_id == "O", seed=0)
    scorer.learn(scorer.prepare(cell), tile, rotation, cell=cell)
    return scorer


@pytest.mark.parametrize("confirmed", ["P", "O"])
@pytest.mark.parametrize("rotation", [0, 90, 270])
def test_the_confirmed_twin_tells_the_shield_from_a_blue_roof(confirmed, rotation):
    scorer = _scorer_that_saw(confirmed, 180)
    assert _read(scorer, rotation, shield=True, seed=1) == "O"
    assert _read(scorer, rotation, shield=False, seed=2) == "P"


def test_before_either_twin_is_confirmed_a_blue_roof_passes_for_a_shield():
    # what the twin pictures fix: the blot test alone reads the plain twin's roof as a shield
    assert _read(TerrainScorer(), 0, shield=False, seed=2) == "O"


def test_twins_are_found_as_they_lie_whichever_way_they_were_defined():
    """A player defines a Gingerbread Man tile with its icon upright: GB5 of the template is a
    city north-south, F and G (F with a pennant) are defined east-west. Turned a quarter, GB5
    lies like F and G unturned: the three are twins there, and only there."""
    from meeplecam.engine import load_tile_file
    from meeplecam.vision.live.twins import drawn_twins

    tiles = find_tileset(
        "winter+gingerbread", load_tile_file("engine/data/gingerbread-template.toml")
    )
    f, g, gb5 = tiles["F"], tiles["G"], tiles["GB5"]
    twins = drawn_twins([(f, 0), (g, 0), (gb5, 90), (gb5, 0)])
    assert {t.id for t, _ in twins["GB5", 90]} == {"F", "G"}
    assert twins["F", 0] == ((g, 0), (gb5, 90))
    assert ("GB5", 0) not in twins


def _figure(rows: slice, cols: slice, scorer: TerrainScorer, rotation: int) -> np.ndarray:
    """A figure standing on the cell (rows and columns of the 48-pixel cell at rotation 0,
    turned with it), as the mask of the scorer's crop that the tile terms leave out."""
    from meeplecam.vision.live.appearance import _trimmed

    cell = np.zeros((SIZE, SIZE), np.uint8)
    cell[rows, cols] = 255
    cell = np.ascontiguousarray(np.rot90(cell, -(rotation // 90)))
    return _trimmed(cell, scorer.config.inset, scorer.config.size) > 127


ON_THE_SHIELD = (slice(2, 10), slice(2, 10))
ELSEWHERE_ON_THE_CITY = (slice(20, 28), slice(6, 14))


def test_a_confirmed_shield_shows_where_this_art_draws_it():
    from meeplecam.vision.live.appearance import _city_inside, city_mask

    o = find_tileset("winter")["O"]
    for confirmed, spot in (("P", None), ("O", (5, 5))):
        scorer = _scorer_that_saw(confirmed, 90)
        cfg = scorer.twins.config
        city = _city_inside(city_mask(o, 0, cfg.size, cfg.inset))
        found = scorer.twins.shield_spot(o, city, scorer.lightness())
        if spot is None:
            assert found is None
        else:
            assert np.hypot(found[0] - spot[0], found[1] - spot[1]) <= 2


def test_a_pair_never_confirmed_has_its_shield_where_a_pair_with_the_same_city_had():
    """M and N (a corner city) were never confirmed, but an O (the same corner city, with a
    road) was: the art draws M's shield where it drew O's. F and G's city runs east-west: no
    spot for them yet."""
    from meeplecam.vision.live.appearance import _city_inside, city_mask

    ts = find_tileset("winter")
    scorer = _scorer_that_saw("O", 90)
    cfg = scorer.twins.config
    m, f = ts["M"], ts["F"]
    found = scorer.twins.shield_spot(
        m, _city_inside(city_mask(m, 0, cfg.size, cfg.inset)), scorer.lightness()
    )
    assert found is not None and np.hypot(found[0] - 5, found[1] - 5) <= 2
    city = _city_inside(city_mask(f, 0, cfg.size, cfg.inset))
    assert scorer.twins.shield_spot(f, city, scorer.lightness()) is None


@pytest.mark.parametrize("rotation", [0, 90])
def test_a_knight_on_the_city_hides_the_shield_only_where_this_art_draws_it(rotation):
    # the tracker asks when the two best readings differ in fewer than 12 pixels it can see
    ts = find_tileset("winter")
    options = [(ts["O"], rotation), (ts["P"], rotation)]
    before = TerrainScorer()
    scorer = _scorer_that_saw("O", 180)
    on_the_shield = _figure(*ON_THE_SHIELD, scorer, rotation)
    elsewhere = _figure(*ELSEWHERE_ON_THE_CITY, scorer, rotation)
    # before the table has shown its shields, the blot test looks on all the city it sees,
    # also past a knight over the rules' pennant region (each edition draws its own shield)
    over_the_region = before._kinds(*options[0]) != before._kinds(*options[1])
    assert before.visible_difference(*options, over_the_region) >= 12
    assert before.visible_difference(*options, on_the_shield) >= 12
    # then a knight on the shield's spot hides it, one elsewhere leaves it in sight
    assert scorer.visible_difference(*options, on_the_shield) == 0
    assert scorer.visible_difference(*options, elsewhere) >= 12
    plain = _cell(rotation, shield=False, seed=3)
    crop = scorer.prepare(plain)
    hidden = scorer.terms(crop, options, on_the_shield, plain)["pennant"]
    assert hidden[0] == hidden[1]  # nothing said
    seen = scorer.terms(crop, options, elsewhere, plain)["pennant"]
    assert seen[1] > seen[0]  # no shield where this art draws it: P


def _shield_views(tiles, hidden_at=None):
    """shield_view of O/P cells (``_cell``) given as (rotation, shield, seed); ``hidden_at``: the
    index of one whose shield corner a figure stands over."""
    from meeplecam.vision.live.twins import shield_view

    scorer = TerrainScorer()
    views = []
    for k, (rotation, shield, seed) in enumerate(tiles):
        crop = scorer.prepare(_cell(rotation, shield, seed))
        hidden = None
        if k == hidden_at:  # over the art's corner (north up), as the tile lies
            upright = np.zeros(crop.shape[:2], bool)
            upright[:10, :10] = True
            hidden = np.rot90(upright, -(rotation // 90))
        views.append(shield_view(crop, rotation, hidden))
    return views


def test_side_by_side_the_shielded_twins_stand_out_however_they_lie():
    """Two O and two P turned every way, each with the blue roof their art shares: the split
    that puts the two O together stands out far beyond every other (the roof is on all four
    and says nothing)."""
    from itertools import combinations

    from meeplecam.vision.live.twins import shield_margin

    views = _shield_views([(0, False, 1), (90, True, 2), (180, False, 3), (270, True, 4)])
    margins = {split: shield_margin(views, set(split)) for split in combinations(range(4), 2)}
    best = max(margins, key=margins.get)
    assert best == (1, 3)
    assert margins[best] > max(m for s, m in margins.items() if s != best) + 10


def test_a_figure_over_a_shield_takes_that_tile_out_of_the_spot_not_the_split():
    """A knight stands over one O's shield: that tile says nothing at the spot (it neither
    shows the shield nor lacks it), so the split still rests on the other O against the P."""
    from meeplecam.vision.live.twins import shield_margin

    views = _shield_views([(0, True, 1), (90, True, 2), (180, False, 3)], hidden_at=1)
    assert not views[1][1][:10, :10].any()  # north up, the corner is hidden
    right, wrong = shield_margin(views, {0, 1}), shield_margin(views, {0, 2})
    assert right > wrong + 10


def test_a_shield_every_figure_hides_is_found_where_the_pair_with_the_same_cities_shows_it():
    """Snowy game 07012: the one Q's shield lies under a figure, and one R has a bluish speck
    elsewhere on its city. Weighed over the whole city, the R with the speck stands out as the
    shielded one; at the spot where the pair with the same cities (here two clear O/P views)
    shows its shield, that R plainly has none, and the tile the figure hides is the Q."""
    from itertools import combinations

    from meeplecam.vision.live.twins import shield_margin, spot_margin, spot_of

    clear = _shield_views([(0, True, 11), (90, False, 12), (180, False, 13)])
    spot = spot_of(clear, {0}, np.ones(clear[0][0].shape, bool))
    assert spot is not None and spot.shield - spot.plain > 10
    hidden, speck = 0, 1
    views = _shield_views([(90, True, 21), (0, False, 22), (270, False, 23)], hidden_at=hidden)
    blue, seen = views[speck]
    blue = blue.copy()
    blue[14:16, 2:4] += 12  # north up, on the city's west side, away from the shield's corner
    views[speck] = (blue, seen)
    splits = [set(s) for s in combinations(range(3), 1)]
    over_the_city = max(splits, key=lambda s: shield_margin(views, s))
    at_the_spot = max(splits, key=lambda s: spot_margin(views, s, spot))
    assert over_the_city == {speck}
    assert at_the_spot == {hidden}
