"""A whole game as frames: the table after every event, with the hands that lay tiles and take
followers back in between, and the exact record and per-frame truth beside the frames.

Folder layout written by :func:`write_game`::

    record.json              the game (meeplecam-record/1), legal and scored by the engine
    frames/000000.jpg ...    the frames, in order
    truth/000000.json ...    per-frame ground truth (``render.truth``)
    video.mp4                optional
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np

from meeplecam.engine import Discard, Game, save_record, to_record
from meeplecam.engine.hints import gingerbread_at

from .config import config, uniform
from .render import Extras, Hand, Held, render, truth
from .scene import Scene, TableState

ENTRIES = ("south", "east", "west", "north", "south", "east", "west", "north")


def table_states(game: Game) -> Iterator[tuple[object, TableState, TableState]]:
    """(event, state before scored followers are taken back, state after) for the start (event
    ``None``) and each event of ``game``'s log, by replaying it."""
    g = Game.start(game.tileset, game.players, game.options, game.start_turn)
    tiles = [(game.start_turn.cell, game.start_turn.tile, game.start_turn.rotation)]
    start = TableState(tuple(tiles), (), gingerbread_at(g), tuple(g.totals), 0)
    yield None, start, start
    previous = g.totals
    for number, event in enumerate(game.log, 1):
        result = g.apply(event)
        if not isinstance(event, Discard):
            tiles.append((event.cell, event.tile, g.board.tiles[event.cell].rotation))
        after = tuple((f.player, f.cell, f.segment) for f in g.board.followers())
        returned = tuple((f.player, f.cell, f.segment) for f in result.returned)
        ginger = gingerbread_at(g)
        state_after = TableState(tuple(tiles), after, ginger, tuple(g.totals), number)
        state_before = TableState(tuple(tiles), after + returned, ginger, tuple(previous), number)
        previous = g.totals
        yield event, state_before, state_after


def views(
    scene: Scene, seed: int = 0, drawn_spot: tuple[int, int] | None = None
) -> Iterator[tuple[TableState, Extras]]:
    """Every view of the game in order: (what lies on the table, what is above it). With a
    ``drawn_spot`` (a grid cell, :meth:`Scene.drawn_spot`), each drawn tile is first put
    face up on that spot, turned anyhow, and the table settles with it there before the
    player picks it up and lays it."""
    cfg = config()["sequence"]
    rng = np.random.default_rng(seed)
    game = scene.game
    prev = None
    for event, before, after in table_states(game):
        if event is None:
            for _ in range(cfg["settled"]):
                yield after, _extras("settled", rng)
            prev = after
            continue
        player = _player_of(game, before.event)
        entry = ENTRIES[player % len(ENTRIES)]
        if isinstance(event, Discard):
            spot = _off_board(scene, rng)
        else:
            spot = scene.poses[event.cell].centre
        entry = _reach_from(scene, spot, entry)
        if isinstance(event, Discard):
            centre = _off_board(scene, rng)
            held = Held(event.tile, 0, centre, float(rng.uniform(-30, 30)), 80.0, None, after.event)
            for _ in range(cfg["discard"]):
                yield (
                    prev,
                    _extras("discard", rng, (Hand(_grip(centre, entry), 80.0, entry),), held),
                )
            for _ in range(cfg["settled"]):
                yield after, _extras("settled", rng)
            prev = after
            continue
        target = np.asarray(scene.poses[event.cell].centre)
        rotation = before.tiles[-1][2]
        if drawn_spot is not None:
            yield from _on_the_spot(scene, rng, drawn_spot, event.tile, before.event, prev, entry)
        for k in range(cfg["holding"]):
            f = (k + 1) / (cfg["holding"] + 1)
            height = uniform(rng, cfg["hold_height_mm"]) * (1.2 - f * 0.5)
            centre = target + rng.normal(0, 40 * (1 - f), 2)
            held = Held(
                event.tile,
                rotation,
                tuple(centre),
                float(rng.normal(0, 20 * (1 - f))),
                height,
                event.cell,
                before.event,
            )
            yield prev, _extras("holding", rng, (Hand(_grip(centre, entry), height, entry),), held)
        laying = TableState(
            before.tiles,
            prev.followers + _new_follower(before, prev),
            prev.gingerbread,
            prev.scores,
            before.event,
        )
        for _ in range(cfg["laying"]):
            yield laying, _extras("laying", rng, (Hand(_grip(target, entry), 15.0, entry),))
        moved = before.gingerbread is not None and before.gingerbread != prev.gingerbread
        if moved and rng.random() < cfg["gingerbread_late"]:
            # the tile lies, the table settles; then the player moves the figure
            waiting = replace(before, gingerbread=prev.gingerbread)
            for _ in range(cfg["settled"]):
                yield waiting, _extras("settled", rng)
            spot = tuple(scene.segment_mm(*before.gingerbread))
            for _ in range(cfg["moving"]):
                yield waiting, _extras("moving", rng, (Hand(spot, 25.0, entry),))
        for _ in range(cfg["settled"]):
            yield before, _extras("settled", rng)
        if before != after:
            gone = [f for f in before.followers if f not in after.followers]
            spot = scene.segment_mm(gone[0][1], gone[0][2]) if gone else target
            for _ in range(cfg["removing"]):
                yield before, _extras("removing", rng, (Hand(tuple(spot), 25.0, entry),))
            for _ in range(cfg["settled"]):
                yield after, _extras("settled", rng)
        prev = after


def _on_the_spot(scene: Scene, rng, spot, tile: str, turn: int, state: TableState, entry: str):
    """The drawn tile put face up on the drawn-tile spot, and the table settled with it."""
    cfg = config()["sequence"]
    aim = scene.cell_centre_mm(spot)
    centre = tuple(aim + rng.uniform(-0.15, 0.15, 2) * scene.tile_mm)
    lying = Held(tile, int(rng.integers(4)) * 90, centre, float(rng.uniform(-25, 25)), 1.0,
                 None, turn)  # fmt: skip
    hand = (Hand(_grip(centre, entry), 12.0, entry),)
    yield state, _extras("drawing", rng, hand, replace(lying, height_mm=12.0))
    for _ in range(cfg["settled"]):
        yield state, _extras("drawn", rng, (), lying)


def _player_of(game: Game, event: int) -> int:
    """Index of the player who made event number ``event`` (1-based): discards do not pass."""
    player = 0
    for e in game.log[: event - 1]:
        if not isinstance(e, Discard):
            player = (player + 1) % len(game.players)
    return player


def _new_follower(before: TableState, prev: TableState) -> tuple:
    cell = before.tiles[-1][0]
    return tuple(f for f in before.followers if f[1] == cell and f not in prev.followers)


def _reach_from(scene: Scene, spot, entry: str) -> str:
    """The player's side if the spot is within reach from there, else the nearest table side."""
    gaps = {"north": spot[1], "south": scene.table_d - spot[1], "west": spot[0],
            "east": scene.table_w - spot[0]}  # fmt: skip
    return entry if gaps[entry] < 550 else min(gaps, key=gaps.get)


def _grip(centre, entry: str) -> tuple[float, float]:
    """Where the fingertips are: at the tile's edge on the player's side."""
    from .figures import REACH

    dx, dy = REACH[entry]
    return (float(centre[0]) + dx * 30.0, float(centre[1]) + dy * 30.0)


def _off_board(scene: Scene, rng) -> tuple[float, float]:
    return (scene.table_w * rng.uniform(0.3, 0.7), scene.table_d * 0.9)


def _extras(phase: str, rng, hands=(), held=None) -> Extras:
    return Extras(tuple(hands), held, phase, int(rng.integers(2**31)))


def write_game(
    out: str | Path,
    game: Game,
    seed: int,
    palette: str = "winter",
    size=(1280, 720),
    video: bool = False,
    progress: Callable[[int, int], None] | None = None,
    surface: str | None = None,
    drawn_spot: bool = False,
) -> int:
    """Render ``game`` into folder ``out``; returns the number of frames written. ``surface``:
    the table's (wood, cloth, white; default one of the first two at random); ``drawn_spot``:
    each drawn tile lies on a spot beside the board first (:func:`views`; the spot's cell is
    in every frame's truth as ``drawn_spot``)."""
    import cv2

    out = Path(out)
    (out / "frames").mkdir(parents=True, exist_ok=True)
    (out / "truth").mkdir(exist_ok=True)
    save_record(to_record(game), out / "record.json")
    scene = Scene(game, seed, palette, size, surface)
    writer = None
    if video:
        writer = cv2.VideoWriter(
            str(out / "video.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), 10, scene.size
        )
    count = 0
    spot = scene.drawn_spot() if drawn_spot else None
    if drawn_spot and spot is None:
        raise ValueError("the table has no room for a drawn-tile spot beside this board")
    planned = [
        (state, replace(extras, info={**extras.info, "drawn_spot": list(spot)}) if spot else extras)
        for state, extras in views(scene, seed, spot)
    ]
    for index, (state, extras) in enumerate(planned):
        frame = render(scene, state, extras)
        name = f"{index:06d}"
        cv2.imwrite(str(out / "frames" / f"{name}.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, 92])
        (out / "truth" / f"{name}.json").write_text(json.dumps(truth(scene, state, extras, index)))
        if writer is not None:
            writer.write(frame)
        count += 1
        if progress:
            progress(count, len(planned))
    if writer is not None:
        writer.release()
    return count
