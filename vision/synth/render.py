"""One frame of a scene: the canvas through the camera, figures and hands, light and sensor; and
its exact ground truth."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from meeplecam.engine import Kind

from . import figures
from .art import tile_art
from .config import config
from .scene import GINGER_OFFSET, Scene, TableState


@dataclass(frozen=True)
class Hand:
    target_mm: tuple[float, float]
    height_mm: float
    entry: str = "south"  # side of the image the arm comes from


@dataclass(frozen=True)
class Held:
    """A drawn tile held above the table before it is laid (or shown and discarded)."""

    tile: str
    rotation: int
    centre_mm: tuple[float, float]
    angle: float
    height_mm: float
    cell: tuple[int, int] | None = None
    turn: int | None = None  # the record turn (1-based) this tile belongs to


@dataclass(frozen=True)
class Extras:
    """What is above the table in one frame."""

    hands: tuple[Hand, ...] = ()
    held: Held | None = None
    phase: str = "settled"
    seed: int = 0
    info: dict = field(default_factory=dict, compare=False, hash=False)


def warp(scene: Scene, canvas: np.ndarray, exact: bool = False) -> np.ndarray:
    """The canvas through the camera: bilinear, or (``exact``) nearest with float maps."""
    import cv2

    if exact:
        mx, my = scene.camera.canvas_maps_float(scene.canvas_origin, scene.scale)
        return cv2.remap(canvas, mx, my, cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT)
    m1, m2 = scene.camera.canvas_maps(scene.canvas_origin, scene.scale)
    return cv2.remap(canvas, m1, m2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def render(
    scene: Scene, state: TableState, extras: Extras = Extras(), effects: bool = True
) -> np.ndarray:
    """A BGR frame of ``state`` on the table with ``extras`` above it."""
    frame = warp(scene, scene.canvas(state))
    draw_above(scene, frame, state, extras)
    if effects:
        frame = scene.optics.apply(frame, np.random.default_rng(extras.seed))
    return frame


def draw_above(scene: Scene, frame: np.ndarray, state: TableState, extras: Extras) -> None:
    cam, light = scene.camera, scene.optics.light_dir
    fcfg = config()["followers"]
    standing = []
    for player, cell, segment in state.followers:
        if scene.follower_pose(cell, segment) == "standing":
            standing.append(
                (scene.segment_mm(cell, segment), scene.colours[player], fcfg["height_mm"], False)
            )
    if state.gingerbread is not None:
        base = scene.segment_mm(*state.gingerbread) + GINGER_OFFSET
        standing.append((base, (42, 90, 155), fcfg["gingerbread_height_mm"], True))
    for player, total in enumerate(state.scores):
        square = scene.score_marker_mm(player, total)
        standing.append((square, scene.colours[player], fcfg["height_mm"], False))
    standing.sort(key=lambda s: s[0][1])
    for base, colour, height, ginger in standing:
        figures.standing_figure(frame, cam, base, colour, height, light, gingerbread=ginger)
    rng = np.random.default_rng(extras.seed)
    if extras.held is not None:
        held = extras.held
        art = tile_art(scene.game.tileset[held.tile], held.rotation, scene.palette, scene.tile_px)
        figures.held_tile(
            frame, cam, scene.optics, art, held.centre_mm, held.angle, held.height_mm, scene.tile_mm
        )
    for h in extras.hands:
        figures.hand(
            frame,
            cam,
            scene.optics,
            rng,
            h.target_mm,
            h.height_mm,
            h.entry,
            (scene.table_w, scene.table_d),
        )


def render_flat(scene: Scene, state: TableState) -> tuple[np.ndarray, dict]:
    """The flat-colour pass (one colour per tile, a disc per follower base) through the camera."""
    canvas, legend = scene.flat_canvas(state)
    return warp(scene, canvas, exact=True), legend


def render_labels(scene: Scene, state: TableState) -> dict[str, np.ndarray]:
    """Per-pixel truth of a frame's table (figures and hands left out): ``tile`` (index into
    ``state.tiles``), ``segment`` (segment index of that tile's type; -1 on a village) and ``kind``
    (:data:`geometry.KIND_NAMES` index), each int16 with -1 where there is no tile."""
    out = warp(scene, scene.label_canvas(state), exact=True).astype(np.int16) - 1
    return {"tile": out[..., 0], "segment": out[..., 1], "kind": out[..., 2]}


def truth(scene: Scene, state: TableState, extras: Extras = Extras(), frame_index: int = 0) -> dict:
    """Exact ground truth of a frame (JSON-ready)."""
    cam = scene.camera
    game = scene.game
    tiles = []
    for cell, tid, rotation in state.tiles:
        corners_mm = scene.tile_corners_mm(cell)
        tiles.append({
            "x": cell[0], "y": cell[1], "tile": tid, "rotation": rotation,
            "variant": scene.poses[cell].variant,
            "corners": _r(cam.project(corners_mm)),
            "corners_mm": _r(corners_mm),
            "angle": round(scene.poses[cell].angle, 4),
        })  # fmt: skip
    followers = []
    for player, cell, segment in state.followers:
        placed = game.board.tiles[cell]
        base = scene.segment_mm(cell, segment)
        kind = placed.tile.segments[segment].kind
        followers.append({
            "x": cell[0], "y": cell[1], "player": player, "colour": game.players[player].colour,
            "at": placed.orientation.position_name(segment), "segment": segment, "kind": str(kind),
            "role": {Kind.CITY: "knight", Kind.ROAD: "thief", Kind.CLOISTER: "monk"}.get(kind, "farmer"),
            "pose": scene.follower_pose(cell, segment),
            "base": _r(cam.project([base])[0]), "base_mm": _r(base),
        })  # fmt: skip
    ginger = None
    if state.gingerbread is not None:
        cell, segment = state.gingerbread
        base = scene.segment_mm(cell, segment) + GINGER_OFFSET
        ginger = {
            "x": cell[0], "y": cell[1],
            "at": game.board.tiles[cell].orientation.position_name(segment),
            "base": _r(cam.project([base])[0]), "base_mm": _r(base),
        }  # fmt: skip
    out = {
        "frame": frame_index,
        "event": state.event,
        "phase": extras.phase,
        "image_size": list(scene.size),
        "table": _r(cam.project(scene.table_corners_mm())),
        "table_mm": [round(scene.table_w, 3), round(scene.table_d, 3)],
        "homography": (cam.homography).tolist(),
        "camera": cam.to_dict(),
        "tile_mm": scene.tile_mm,
        "tiles": tiles,
        "followers": followers,
        "gingerbread": ginger,
        "scores": list(state.scores),
        "score_markers": [
            {
                "player": p,
                "colour": game.players[p].colour,
                "square": total % 50,
                "base": _r(cam.project([scene.score_marker_mm(p, total)])[0]),
            }
            for p, total in enumerate(state.scores)
        ],
        "score_track": _r(cam.project(_track_corners(scene))),
        "hands": len(extras.hands),
        "held_tile": None,
        "palette": scene.palette,
    }
    if extras.held is not None:
        held = extras.held
        out["held_tile"] = {
            "tile": held.tile, "rotation": held.rotation, "height_mm": held.height_mm,
            "cell": list(held.cell) if held.cell else None, "turn": held.turn,
        }  # fmt: skip
    out.update(extras.info)
    return out


def _track_corners(scene: Scene) -> np.ndarray:
    x, y, w, d = scene.track
    return np.array([[x, y], [x + w, y], [x + w, y + d], [x, y + d]], float)


def _r(a) -> list:
    return np.round(np.asarray(a, float), 3).tolist()
