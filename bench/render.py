"""Benchmark: render one 1280x720 frame of a finished 84-tile Winter game.

    .venv/bin/python bench/render.py [--size 1280x720] [--repeat 20] [--palette winter] [--json]

Reports the first frame of the first scene (imports, tile art drawn, distortion maps built),
the first frame of another scene of the same game (new table, camera maps, all 84 tiles laid on a
fresh canvas; tile art cached), a settled frame (what every later frame costs: canvas, figures, camera, light, noise, JPEG) and a
frame with a hand holding a tile above the board. Times are medians in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="1280x720")
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--palette", default="winter")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    w, h = (int(v) for v in args.size.split("x"))

    from meeplecam.engine import find_tileset
    from meeplecam.engine.playout import random_game
    from meeplecam.vision.synth.render import render
    from meeplecam.vision.synth.scene import Scene
    from meeplecam.vision.synth.sequence import table_states, views

    game = random_game(find_tileset("winter"), 2, seed=args.seed)
    final = list(table_states(game))[-1][2]
    t0 = time.perf_counter()
    scene = Scene(game, args.seed, args.palette, (w, h))
    render(scene, final)
    first = (time.perf_counter() - t0) * 1000

    def timed(state, extras=None) -> float:
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            if extras is None:
                render(scene, state)
            else:
                render(scene, state, extras)
            times.append((time.perf_counter() - t) * 1000)
        return statistics.median(times)

    t0 = time.perf_counter()
    other = Scene(game, args.seed + 1000, args.palette, (w, h))  # new table, camera, light
    render(other, final)
    new_scene = (time.perf_counter() - t0) * 1000
    settled = timed(final)
    holding = next(v for v in reversed(list(views(scene, args.seed))) if v[1].phase == "holding")
    hand = timed(*holding)
    result = {
        "size": f"{w}x{h}",
        "tiles": len(final.tiles),
        "followers": len(final.followers),
        "first_frame_ms": round(first, 1),
        "new_scene_warm_art_ms": round(new_scene, 1),
        "settled_frame_ms": round(settled, 1),
        "hand_frame_ms": round(hand, 1),
    }
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:18} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
