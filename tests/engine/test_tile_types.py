"""Tile sets load from data and match the published statistics of the real boxes."""

import pytest

from meeplecam.engine import HALVES, Kind, TileDefinitionError, TileSetError, TileType, find_tileset
from meeplecam.engine.tilesets import load_tile_file


def test_base_set_matches_published_edge_statistics():
    base = find_tileset("base")
    assert base.total == 72
    sides = "".join(t.sides * t.count for t in base.types.values())
    assert (sides.count("F"), sides.count("R"), sides.count("C")) == (115, 94, 79)
    pennants = sum(t.count for t in base.types.values() for s in t.segments if s.pennant)
    cloisters = sum(t.count for t in base.types.values() if t.has_cloister)
    assert (pennants, cloisters) == (10, 6)


def test_winter_adds_twelve_animal_tiles():
    winter, base = find_tileset("winter"), find_tileset("base")
    assert winter.total == 84
    assert {t: winter[t].count - base[t].count for t in "AWJK"} == dict.fromkeys("AWJK", 1)
    assert sorted(t for t in winter.types if t not in base.types) == [f"WI{i}" for i in range(1, 9)]


def test_gingerbread_set_needs_the_players_tiles():
    with pytest.raises(TileSetError, match="GB1, GB2, GB3, GB4, GB5, GB6"):
        find_tileset("winter+gingerbread")
    tiles = load_tile_file("engine/data/gingerbread-template.toml")
    assert find_tileset("winter+gingerbread", tiles).total == 90
    assert all(t.is_gingerbread for t in tiles.values())


def test_unknown_tileset_names_the_known_ones():
    with pytest.raises(TileSetError, match="known: base, winter, winter\\+gingerbread"):
        find_tileset("seasons")


@pytest.mark.parametrize("pair", [("U", "WI6"), ("X", "WI7"), ("A", "WI8")])
def test_tiles_whose_sides_alone_mislead(pair):
    first, second = (find_tileset("winter")[t] for t in pair)
    assert first.sides == second.sides
    assert all(
        first.oriented(r).signature != second.oriented(r2).signature
        for r in (0, 90, 180, 270)
        for r2 in (0, 90, 180, 270)
    )


def test_rotation_turns_sides_clockwise():
    d = find_tileset("base")["D"]
    assert d.oriented(0).sides == "CRFR"
    assert d.oriented(90).sides == "RCRF"  # city now faces east
    assert d.oriented(90).position_name(d.oriented(90).segment_at("E")) == "E"


def test_symmetric_tiles_keep_their_smallest_rotation():
    base = find_tileset("base")
    assert base["C"].distinct_rotations == (0,)
    assert base["B"].distinct_rotations == (0,)
    assert base["U"].distinct_rotations == (0, 90)
    assert base["H"].distinct_rotations == (0, 90)
    assert base["D"].distinct_rotations == (0, 90, 180, 270)
    assert base["U"].canonical_rotation(270) == 90


def test_field_names_follow_formats_md():
    u = find_tileset("base")["U"].oriented(0)
    south = u.segment_at("SSE")
    assert u.position_names(south) == ["ESE", "SSE", "SSW", "WSW"]
    assert u.position_name(u.segment_at("E")) == "E" == u.position_name(u.segment_at("W"))


def test_tile_definition_round_trips():
    for tile in find_tileset("winter").types.values():
        again = TileType.from_definition(tile.id, tile.to_definition())
        assert again == tile


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ({"sides": "CRFX"}, "four letters"),
        ({"sides": "CFFF", "cities": []}, "side N is city but no segment touches it"),
        ({"sides": "FFFF", "roads": ["N"]}, "side N is field in 'sides' but a road"),
        (
            {"sides": "FFFF", "fields": [{"halves": list(HALVES[:7])}]},
            "half-side WNW of a field side is in no field",
        ),
        (
            {"sides": "FFFF", "fields": [{"halves": list(HALVES)}, {"halves": ["NNW"]}]},
            "NNW belongs to two fields",
        ),
        (
            {"sides": "CFFF", "cities": [{"sides": "N"}], "fields": [{"halves": list(HALVES)}]},
            "NNW lies on a city side",
        ),
        (
            {
                "sides": "FFFF",
                "fields": [{"halves": list(HALVES), "borders": ["N"]}],
            },
            "borders 'N', which is no city side",
        ),
        ({"sides": "FFFF", "count": -1}, "'count' must be"),
    ],
)
def test_bad_tile_definitions_say_what_is_wrong(definition, message):
    with pytest.raises(TileDefinitionError, match="tile Z1: .*" + message.replace("(", "\\(")):
        TileType.from_definition("Z1", definition)


def test_every_field_half_is_covered_exactly_once():
    for tile in find_tileset("winter").types.values():
        halves = [p for s in tile.segments if s.kind is Kind.FIELD for p in s.ports]
        expected = [h for h in range(8) if tile.sides[h // 2] != "C"]
        assert sorted(halves) == expected, tile.id
