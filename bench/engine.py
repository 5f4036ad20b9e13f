"""Engine benchmarks: legal placements, a whole random game, scoring a record, and growth.

Run: .venv/bin/python bench/engine.py [--repeat N] [--json OUT]
Numbers are medians of wall-clock time on this machine; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from meeplecam.engine import find_tileset, load_record, save_record, score_report, to_record
from meeplecam.engine.game import Game, Player
from meeplecam.engine.playout import play_tile, random_game, shuffled_bag


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def timed(func, *args) -> float:
    start = time.perf_counter()
    func(*args)
    return time.perf_counter() - start


def scaled_tileset(copies: int):
    """The winter set with every count multiplied: a synthetic large board."""
    winter = find_tileset("winter")
    types = {t: replace_count(tile, tile.count * copies) for t, tile in winter.types.items()}
    return winter.with_types(types)


def replace_count(tile, count):
    return replace(tile, count=count, _orientations={}, _fits={})


def game_with_tiles(tileset, tiles: int, seed: int) -> Game:
    rng = random.Random(seed)
    game = Game.start(tileset, [Player(c, c) for c in ("red", "yellow", "green")])
    for tile_id in shuffled_bag(game, rng):
        if len(game.board.tiles) >= tiles:
            break
        play_tile(game, tile_id, rng)
    return game


def legal_placements_ms(tileset, tiles: int, repeat: int) -> float:
    samples = []
    for seed in range(repeat):
        game = game_with_tiles(tileset, tiles, seed)
        for tile_id in ("U", "D", "V", "R", "WI7"):
            tile = game.tileset[tile_id]
            samples.append(timed(lambda b=game.board, t=tile: list(b.legal_placements(t))))
    return median_ms(samples)


def per_turn_ms(tileset, tiles: int, repeat: int) -> float:
    samples = []
    for seed in range(repeat):
        start = time.perf_counter()
        game = game_with_tiles(tileset, tiles, seed)
        samples.append((time.perf_counter() - start) / max(1, len(game.log)))
    return median_ms(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="games per measurement")
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON")
    args = parser.parse_args()
    winter = find_tileset("winter")
    results: dict[str, object] = {}

    results["legal_placements_84_tiles_ms"] = legal_placements_ms(winter, 84, args.repeat)
    results["random_full_game_84_tiles_ms"] = median_ms(
        [timed(random_game, winter, 3, seed) for seed in range(args.repeat)]
    )

    game = random_game(winter, 3, seed=1)
    record = to_record(game)
    results["score_84_turn_record_in_process_ms"] = median_ms(
        [timed(lambda: score_report(load_record(record))) for _ in range(args.repeat)]
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.json"
        save_record(record, path)
        cli = [sys.executable, "-m", "meeplecam.cli", "score", str(path), "--json"]
        bare = [sys.executable, "-c", "pass"]
        runs = max(5, args.repeat // 4)
        results["score_command_wall_ms"] = median_ms(
            [
                timed(lambda: subprocess.run(cli, capture_output=True, check=True))
                for _ in range(runs)
            ]
        )
        results["python_start_wall_ms"] = median_ms(
            [timed(lambda: subprocess.run(bare, check=True)) for _ in range(runs)]
        )

    big = scaled_tileset(6)  # 504 tiles
    growth = {}
    for tiles in (20, 84, 500):
        growth[tiles] = {
            "legal_placements_ms": legal_placements_ms(big, tiles, max(3, args.repeat // 4)),
            "per_turn_ms": per_turn_ms(big, tiles, max(3, args.repeat // 4)),
        }
    results["growth"] = growth

    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
