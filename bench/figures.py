"""Every follower blob the live tracker finds on a freshly laid tile of rendered games, and
whether a figure really stands there (``python bench/figures.py --help``).

Each game is played as ``bench/live.py latency --answers players`` plays it (no profile: the
tracker finds the table and learns the art and the colours during play; ``--model`` as with
``--model``). For each newly laid tile
the current player's colour is looked for as the tracker looks for it, but keeping every blob with
a clear core of at least one pixel; each blob's clear core (pixels the colour explains by
``ScorerConfig.follower_ratio``) and area are recorded with whether the game's truth has a figure
on that tile. Reported per folder: the figures and the art specks (blobs on a tile with no
figure: a cloister's red roofs) found, the smallest cores and areas of each, and how many of
each a clear core of ``follower_core_px`` or more and an area of ``follower_min_area`` or more
keep. Results print as JSON (``--out FILE`` writes
them too). Nothing here is a test.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from live import _play_with_players, _reference, _replay_games
from report import emit


def _blob_probe(found: list):
    """An ``inspect`` hook for :func:`live._play_with_players` that appends (tile cell, clear
    core pixels, area) to ``found`` for the largest blob of the current player's colour on
    each tile the tracker reads."""

    def inspect(tracker) -> None:
        decode = tracker._decode_tile

        def probing(board, cell):
            scorer, game = tracker.scorer, tracker.game
            colour = game.players[game.current].colour
            crop = scorer.prepare(board.cell(*cell))
            kept = scorer.config
            scorer.config = dataclasses.replace(kept, follower_core_px=1)
            try:
                mask, area = scorer.follower_mask(crop, colour)
            finally:
                scorer.config = kept
            if mask.any():
                ratio = scorer.follower_ratio(crop, colour)
                core = int((mask & (ratio > kept.follower_ratio)).sum())
                found.append((cell, core, round(area, 4)))
            return decode(board, cell)

        tracker._decode_tile = probing

    return inspect


def bench_folder(folder: str, count: int, model: str | None = None) -> dict:
    from meeplecam.vision.live.appearance import ScorerConfig

    figures: list[tuple[int, float]] = []  # (clear core pixels, area) of each blob
    specks: list[tuple[int, float]] = []
    games = _replay_games(folder, count, find_table=model is None)
    for name, frames, game, rectifier, expected, palette in games:
        found: list = []
        reference = _reference(model, game, palette)
        _play_with_players(frames, game, rectifier, expected, reference, inspect=_blob_probe(found))
        has_figure = {(t["x"], t["y"]): "meeple" in t for t in expected["turns"] if "x" in t}
        first = {}
        for cell, core, area in found:  # a tile read again (after a correction) counts once
            first.setdefault(cell, (core, area))
        for cell, blob in first.items():
            (figures if has_figure.get(cell) else specks).append(blob)
        print(f"{name}: {len(figures)} figures, {len(specks)} specks", file=sys.stderr, flush=True)
    config = ScorerConfig()
    least, smallest = config.follower_core_px, config.follower_min_area

    def kept(blobs):
        return sum(core >= least and area >= smallest for core, area in blobs)

    return {
        "figures": len(figures),
        "figures_smallest_cores": sorted(c for c, _ in figures)[:5],
        "figures_smallest_areas": sorted(a for _, a in figures)[:5],
        "art_specks": len(specks),
        "art_speck_cores": sorted(c for c, _ in specks),
        "art_speck_areas": sorted(a for _, a in specks),
        "follower_core_px": least,
        "follower_min_area": smallest,
        "figures_kept": kept(figures),
        "art_specks_kept": kept(specks),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", help="folders of synthetic games (game-* inside)")
    parser.add_argument("--count", type=int, default=10, help="games per folder")
    parser.add_argument(
        "--model",
        metavar="FILE|art",
        help="play with this appearance model and the renderer's table geometry, as "
        "bench/live.py latency --model does (default: no profile, the table found)",
    )
    parser.add_argument("--out", metavar="FILE", help="also write the results here (JSON)")
    args = parser.parse_args(argv)
    results = {folder: bench_folder(folder, args.count, args.model) for folder in args.folders}
    emit(results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
