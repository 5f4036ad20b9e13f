"""Pennant twins told apart by the copy itself: the live scorer's twin term.

Some tile types differ only by a pennant (O and P, F and G, M and N, Q and R, S and T): the rules
let both lie wherever one may, and every edition draws them alike but for a shield on the city.
At camera scale that shield is a few blurred pixels; a blue spot on a city (the scorer's blot
test) is as often a shadow on a snowy roof. But once the players have confirmed one of a pair,
its picture shows exactly what the other must look like: the same city with the shield added (or
taken away) at one spot. So a later crop of the pair is compared with that picture, north up,
where the city is: a crop bluer than the picture at one spot has a shield the picture lacks; a
picture bluer than the crop at one spot had a shield the crop lacks; a crop like the picture is
its type.

The picture of a type with a shield also shows where this art draws it: until then a figure on
the city may stand on the shield, and the pennant tests read the rest of the city as they can;
after, a figure on that spot hides it (the players are asked) and one elsewhere does not. A pair
never confirmed takes the spot of a pair with the same cities (Q's from S's, M's from O's).

Measured on the cells of 8 Winter-scans games read with no profile (the shield in the city's
corner, 1920x1080): of 119 later crops of a twin pair, 87 right, 7 wrong, 25 unsure (the blot
test alone: 42, 22, 55).

At the game's end all the tiles of a pair lie side by side, confirmed or not: the split of them
whose shielded side is bluer at one spot of the city on every tile than every plain one there
(:func:`shield_view`, :func:`shield_margin`) is the review's (``Review._shields_again``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from meeplecam.engine import Kind, TileType
from meeplecam.vision.live.evidence import Samples, Split, robust_normal

MIN_PIXELS = 20  # of the city, seen in both the view and the picture, for a comparison
# How much a lighter spot counts against its blue, per art: snow on roofs and walls is pale
# blue, so in snowy art a lighter spot counts less (0.5); a shield's white half is the palest
# thing in a city of red roofs, so in such art it counts more (-0.3: on one copy's scanned art
# the blot test told 60 cities with a shield from 198 without at AUC 0.98, against 0.83 with
# 0.5; on the Winter scans 0.91 with 0.5, 0.80 with -0.3). The table picks one by the cities
# it has confirmed (choose_lightness); until then the scorer goes by its fields (snowy: the
# first; grass: the second, vision.live.appearance.TerrainScorer.lightness).
LIGHTNESS = (0.5, -0.3)
# Cities of each kind (with a shield, without) confirmed before the table's own choice
# replaces the fields' guess: with fewer, one shield hidden in shade or one bluish roof
# decides it (a game of the copy on a white table chose 0.5 after 3 and 4 cities, where the
# blot test tells that copy's 73 shields from 85 plain cities at AUC 0.69, against 0.997 with
# the fields' choice -0.3)
CHOOSE_AFTER = 6


@cache
def layout(tile: TileType) -> tuple:
    """What a type looks like to the rules but for its decorations, pennants and icons (twins
    share it): its sides and its segments' kinds and ports."""
    return tile.sides, tuple((g.kind, g.ports) for g in tile.segments)


@cache
def has_pennant(tile: TileType) -> bool:
    return any(g.pennant for g in tile.segments)


@cache
def laid_layout(tile: TileType, rotation: int) -> tuple:
    """The :func:`layout` of a type as it lies turned by ``rotation``: two types drawn alike
    but for decorations may be defined turned differently (a player's Gingerbread Man tile
    is defined with its icon upright), yet lie alike."""
    turned = tile.oriented(rotation)
    segments = sorted(
        (g.kind.value, tuple(sorted(turned.segment_ports[i]))) for i, g in enumerate(tile.segments)
    )
    return turned.sides, tuple(segments)


def shield_twins(a: tuple[TileType, int], b: tuple[TileType, int]) -> bool:
    """Whether two (tile, rotation) options lie alike but for a shield (O and P)."""
    return has_pennant(a[0]) != has_pennant(b[0]) and laid_layout(*a) == laid_layout(*b)


def drawn_twins(options) -> dict[tuple[str, int], tuple[tuple[TileType, int], ...]]:
    """Each (tile, rotation) option's twins among the options ((id, rotation) -> the twin
    options): they lie alike (:func:`laid_layout`), told apart only by a shield or an icon (M
    and N; E and a Gingerbread Man tile drawn like it)."""
    alike: dict[tuple, list[tuple[TileType, int]]] = {}
    for tile, rotation in options:
        alike.setdefault(laid_layout(tile, rotation), []).append((tile, rotation))
    return {
        (tile.id, rotation): tuple(o for o in group if o[0] is not tile)
        for group in alike.values()
        if len(group) > 1
        for tile, rotation in group
    }


@dataclass(frozen=True)
class TwinConfig:
    size: int = 48  # the cell is compared at this size
    inset: float = 0.02  # part of the cell trimmed (the gap): the shield is often in a corner
    shift: int = 2  # pixels the picture may slide to line up with the crop (grid error)
    # how far a crop's blue spot differs from the picture's as a shield would (Lab, see
    # TwinPictures.difference): the prior threshold and scale until the table has shown both a
    # type like its picture and one unlike it, then what each looked like here (snowy art
    # differs more than the Winter scans: its copies vary and its shields are larger)
    split: Split = field(
        default_factory=lambda: Split(threshold=6.0, scale=4.0, sure_ratio=5.0, min_sd=2.0)
    )
    shield_radius: int = 3  # pixels around the shield's bluest spot that show the shield


def choose_lightness(seen: dict[float, tuple[list[float], list[float]]]) -> float | None:
    """The lightness weight (of :data:`LIGHTNESS`) whose measurements, on the cities confirmed
    with a pennant and without (``seen``: weight -> (with, without)), stand furthest apart in
    units of their spread; None until :data:`CHOOSE_AFTER` of each kind have been seen."""
    best, separation = None, -np.inf
    for lightness in LIGHTNESS:
        high, low = seen[lightness]
        if min(len(high), len(low)) < CHOOSE_AFTER:
            return None
        (hc, hs), (lc, ls) = robust_normal(high), robust_normal(low)
        s = (hc - lc) / np.hypot(hs, ls)
        if s > separation:
            best, separation = lightness, s
    return best


@dataclass(frozen=True)
class View:
    """A cell read for this test, north up: Lab less the city's median, where the city is, and
    where the tile is seen (no follower over it)."""

    lab: np.ndarray
    city: np.ndarray
    seen: np.ndarray


def north_up(lab: np.ndarray, city: np.ndarray, seen: np.ndarray, rotation: int) -> View | None:
    """The :class:`View` of a cell's Lab (at the config's size and inset) for a type lying at
    ``rotation`` with its cities at ``city``; None when too little of the city is seen."""
    where = city & seen
    if where.sum() < MIN_PIXELS:
        return None
    q = rotation // 90
    centred = lab - np.median(lab[where], axis=0)
    return View(np.rot90(centred, q), np.rot90(city, q), np.rot90(seen, q))


def cities_of(drawn: tuple) -> tuple:
    """The sides of each city of a :func:`layout` (unturned): pairs that share them (Q and R,
    S and T) have the same cities, and an art draws their shields alike."""
    return tuple(sorted(ports for kind, ports in drawn[1] if kind is Kind.CITY))


def pennant_pair(tile: TileType) -> tuple:
    """What pennant twins share: the layout, and an icon or none (a Gingerbread Man tile and the
    plain type drawn like it are twins too, but not of a shield)."""
    return layout(tile), tile.is_gingerbread


def twins_of(tileset) -> dict[str, str]:
    """Each pennant twin's pair's other type, by id (pairs of one type with a shield and one
    without; the tileset's other types are not in it)."""
    pairs: dict[tuple, list] = {}
    for tile in tileset.types.values():
        pairs.setdefault(pennant_pair(tile), []).append(tile)
    return {
        a.id: b.id
        for two in pairs.values()
        if len(two) == 2 and has_pennant(two[0]) != has_pennant(two[1])
        for a, b in (two, two[::-1])
    }


class TwinPictures:
    """The mean north-up view of each type the players confirmed, and how a new view compares."""

    def __init__(self, config: TwinConfig | None = None):
        self.config = config or TwinConfig()
        self._pictures: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # id -> (Lab sum, count)
        self._alike: dict[tuple, dict[str, bool]] = {}  # layout -> {id: has a pennant}
        self._means: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # see _mean
        # per lightness weight, the differences (see difference) of confirmed views from
        # pictures of the other kind (a plain type from a picture with a pennant) and of their own
        self.seen: dict[float, tuple[Samples, Samples]] = {
            w: (Samples(), Samples()) for w in LIGHTNESS
        }

    def learn(self, tile: TileType, view: View) -> None:
        """Add a confirmed view of ``tile``; first, how it compares with the pictures of its
        twins (and its own) calibrates what "like" and "unlike" measure on this table."""
        pennant = has_pennant(tile)
        for tile_id, pictured in self.pictured_like(tile).items():
            for lightness, (unlike, alike) in self.seen.items():
                x = self.difference(view, tile_id, pictured, lightness)
                if x is not None:
                    (alike if pictured == pennant else unlike).append(x)
        weight = view.seen.astype(np.float64)
        total, n = self._pictures.get(tile.id, (0.0, 0.0))
        self._pictures[tile.id] = (total + view.lab * weight[..., None], n + weight)
        self._alike.setdefault(pennant_pair(tile), {})[tile.id] = pennant
        self._means.pop(tile.id, None)

    def pictured_like(self, tile: TileType) -> dict[str, bool]:
        """The types drawn like ``tile`` but for pennants (itself included) that have a
        picture: id -> whether it has a pennant."""
        return self._alike.get(pennant_pair(tile), {})

    def pennant_evidence(
        self, view: View, tile_id: str, pennant: bool, lightness: float
    ) -> float | None:
        """How much ``view`` says "a pennant", from -1 (surely none) to 1 (surely one), judged
        against the picture of ``tile_id`` (a type with a ``pennant`` or without); None when
        too little of the two can be compared."""
        x = self.difference(view, tile_id, pennant, lightness)
        if x is None:
            return None
        unlike = self.config.split.evidence(x, *self.seen[lightness])
        return -unlike if pennant else unlike

    def difference(self, view: View, tile_id: str, pennant: bool, lightness: float) -> float | None:
        """How much ``view`` differs from the picture of ``tile_id`` as its twin would: bluer at
        one spot than a plain picture (a shield added), or less blue at one spot than a picture
        with a pennant (its shield gone), less the other way round; a lighter spot counts
        ``lightness`` less blue (:data:`LIGHTNESS`)."""
        gain_loss = self._blue_difference(view, tile_id, lightness)
        if gain_loss is None:
            return None
        gain, loss = gain_loss
        return loss - gain if pennant else gain - loss

    def _blue_difference(
        self, view: View, tile_id: str, lightness: float
    ) -> tuple[float, float] | None:
        """(gain, loss): the most the view is bluer than the picture at one spot of the city,
        and the most the picture is bluer than the view, with the picture slid to where it
        differs least from the view (squared Lab difference over the city)."""
        import cv2

        cfg = self.config
        picture, seen = self._mean(tile_id)
        s = cfg.shift
        inner = (view.city & view.seen)[s:-s, s:-s]
        if inner.sum() < MIN_PIXELS:
            return None
        lab = np.ascontiguousarray(view.lab[s:-s, s:-s], np.float32)
        cost = cv2.matchTemplate(picture, lab, cv2.TM_SQDIFF, mask=inner.astype(np.uint8))
        dy, dx = np.unravel_index(int(np.argmin(cost)), cost.shape)
        h, w = inner.shape
        where = inner & seen[dy : dy + h, dx : dx + w]
        if where.sum() < MIN_PIXELS:
            return None
        d = lab[where] - picture[dy : dy + h, dx : dx + w][where]
        lighter = lightness * np.maximum(d[:, 0], 0)
        darker = lightness * np.maximum(-d[:, 0], 0)
        return float((-d[:, 2] - lighter).max()), float((d[:, 2] - darker).max())

    def shield_spot(
        self, tile: TileType, city: np.ndarray, lightness: float
    ) -> tuple[int, int] | None:
        """Where this table's art draws the shield of ``tile``'s pair, north up (row, column):
        the bluest spot on ``city`` (the pair's city, north up, where the test may look) of the
        picture of a type with a pennant, over the plain type's picture where that is known
        too (its blue roofs); None until a type of the pair with a pennant was confirmed.
        Until then, where the art drew the shield of a pair with the same cities (a Q's,
        one copy in the game, where the S's stood: the renderer's art and the Winter scans
        both draw them at one spot): without it, a Q whose shield a figure hides read as
        plain as the R beside it."""
        pictured = self.pictured_like(tile)
        if not any(pictured.values()):
            cities = cities_of(layout(tile))
            pictured = next(
                (
                    alike
                    for (drawn, icon), alike in self._alike.items()
                    if icon == tile.is_gingerbread
                    and cities_of(drawn) == cities
                    and any(alike.values())
                ),
                {},
            )
        shielded = [tile_id for tile_id, pennant in pictured.items() if pennant]
        if not shielded:
            return None

        def blueness(tile_id):
            picture, seen = self._mean(tile_id)
            return -picture[..., 2] - lightness * np.maximum(picture[..., 0], 0), seen

        blue, where = blueness(shielded[0])
        for tile_id in (t for t, pennant in pictured.items() if not pennant):
            plain, seen = blueness(tile_id)
            blue, where = blue - plain, where & seen
        where = where & city
        if not where.any():
            return None
        row, column = np.unravel_index(int(np.argmax(np.where(where, blue, -np.inf))), blue.shape)
        return int(row), int(column)

    def _mean(self, tile_id: str) -> tuple[np.ndarray, np.ndarray]:
        """A type's picture (mean view) and where it was seen, kept until it is learned again."""
        if tile_id not in self._means:
            total, n = self._pictures[tile_id]
            mean = (total / np.maximum(n, 1)[..., None]).astype(np.float32)
            self._means[tile_id] = (mean, n > 0)
        return self._means[tile_id]


def shield_view(
    crop: np.ndarray, rotation: int, hidden: np.ndarray | None, city: np.ndarray | None = None
) -> tuple:
    """(blueness, seen) of a laid tile's crop (BGR, the scorer's), turned back north up to its
    type's art (the tile lies turned by ``rotation``): how much bluer each pixel is than the
    median of the tile's ``city`` (north up; the whole tile without: half snow and half city,
    a median jumps between the two), softened over a shield's few pixels, and where no
    figure hides it (nor tints it: two pixels around the figure)."""
    import cv2

    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2Lab).astype(np.float32)
    b = cv2.GaussianBlur(lab[..., 2], (3, 3), 0)
    seen = np.ones(b.shape, bool)
    if hidden is not None:  # and around it, where the blur spreads the figure's colour
        seen = ~cv2.dilate(hidden.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    q = (rotation // 90) % 4
    b, seen = np.rot90(b, q), np.rot90(seen, q)
    level = seen if city is None else seen & city
    return (np.median(b[level]) if level.any() else np.median(b)) - b, seen


def shield_margin(views: list[tuple], shielded: set[int], where: np.ndarray | None = None) -> float:
    """How clearly the views at indices ``shielded`` (of :func:`shield_view`s of tiles drawn
    alike but for a shield) show one the others lack: at the spot where the least blue of them
    is bluest against the bluest of the others, by how much. Pennant twins share their art
    but the shield, at the same spot on every copy, so the right split stands out there.
    Only spots ``where`` count (the city, where every art draws its shield: a snowfield in a
    cloud's shade may be bluer on two plain tiles side by side); -inf where no spot is seen on
    at least one tile of each side."""
    least, most = _sides_of_split(views, shielded)
    valid = np.isfinite(least) & np.isfinite(most)
    if where is not None:
        valid &= where
    return float(np.where(valid, least - most, -np.inf).max())


def _sides_of_split(views: list[tuple], shielded: set[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel, the least blue of the :func:`shield_view` s at indices ``shielded`` where
    they are seen (inf where none is) and the bluest of the others (-inf where none is)."""
    blue = np.stack([b for b, _ in views])
    seen = np.stack([s for _, s in views])
    inside = np.zeros(len(views), bool)
    inside[list(shielded)] = True
    least = np.where(seen[inside], blue[inside], np.inf).min(axis=0)
    most = np.where(seen[~inside], blue[~inside], -np.inf).max(axis=0)
    return least, most


@dataclass(frozen=True)
class ShieldSpot:
    """Where one copy's art draws the shield of pennant twins with certain cities (north up,
    on :func:`shield_view`'s grid), found where a pair's split stood out (:func:`spot_of`), and
    how blue a shield and the bluest plain tile were there."""

    at: tuple[int, int]
    shield: float
    plain: float


SPOT_RADIUS = 2  # pixels around a spot that may show its shield (the grid is a pixel or two off)


def spot_of(views: list[tuple], shielded: set[int], where: np.ndarray) -> ShieldSpot | None:
    """The :class:`ShieldSpot` of a split of :func:`shield_view` s (``shielded``: the indices
    with a shield) where it stands out most (as :func:`shield_margin` measures) on ``where``;
    None where no spot is seen on a tile of each side."""
    least, most = _sides_of_split(views, shielded)
    margin = np.where(np.isfinite(least) & np.isfinite(most) & where, least - most, -np.inf)
    if not np.isfinite(margin.max()):
        return None
    row, column = np.unravel_index(int(np.argmax(margin)), margin.shape)
    return ShieldSpot((int(row), int(column)), float(least[row, column]), float(most[row, column]))


def spot_margin(views: list[tuple], shielded: set[int], spot: ShieldSpot) -> float:
    """How well a split of :func:`shield_view` s (``shielded``: the indices with a shield)
    agrees with where the art draws the shield (``spot``, from a pair drawn with the same
    cities): the least blue of the shielded tiles there against the bluest of the others,
    each tile at its bluest within :data:`SPOT_RADIUS`. A tile whose spot a figure hides says
    nothing: where it hides every tile of one side, that side is taken to look as the spot's
    pair did. So a figure standing on the one Q's shield no longer makes the plain R beside it,
    a hair bluer somewhere else on its city, the Q (snowy game 07012)."""
    row, column = spot.at
    r = SPOT_RADIUS
    window = (slice(max(0, row - r), row + r + 1), slice(max(0, column - r), column + r + 1))
    core = (slice(max(0, row - 1), row + 2), slice(max(0, column - 1), column + 2))
    shield, plain = [], []
    for k, (blue, seen) in enumerate(views):
        if not seen[core].all():
            continue  # hidden at the spot
        value = float(np.where(seen[window], blue[window], -np.inf).max())
        (shield if k in shielded else plain).append(value)
    least = min(shield) if shield else spot.shield
    most = max(plain) if plain else spot.plain
    return least - most
