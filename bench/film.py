"""A rendered game filmed as a webcam records one (``python bench/film.py --help``).

``meeplecam synth`` writes a few views per turn (and ``--video`` plays them at 10 frames a second,
which replay reads as a series of views). A webcam's recording is film: 30 frames a second, each
still moment held for many frames, every frame through the video codec. This writes a game
folder's frames as such a recording (each settled view held ``--settled`` seconds, each view with
hands ``--hands`` seconds, mp4v), to be read as a user reads a recording::

    python bench/film.py /tmp/e/c720a/game-09500 /tmp/film/09500.mp4
    meeplecam replay /tmp/film/09500.mp4 --players red,yellow --tileset base --json > read.json
    python bench/film.py --compare /tmp/e/c720a/game-09500 read.json

``--noise 6 --codec MJPG`` (write an ``.avi``) films it as a webcam in MJPG mode sends it:
every frame its own JPEG, with sensor noise of its own (mp4v's predicted frames carry none).

Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

FPS = 30


NOISE_POOL = 60  # noise fields drawn once and picked at random: two seconds of film apart


def film(
    game_dir: Path,
    out: Path,
    settled_s: float,
    hands_s: float,
    noise: float = 0.0,
    codec: str = "mp4v",
) -> int:
    """Write ``game_dir``'s frames to ``out`` at :data:`FPS` with ``codec`` (a fourcc: mp4v, or
    MJPG as a webcam sends each frame), each frame with sensor noise of standard deviation
    ``noise`` (grey levels, a field of its own from a pool of :data:`NOISE_POOL`); the number of
    frames written."""
    import cv2
    import numpy as np

    frames = sorted((game_dir / "frames").iterdir())
    first = cv2.imread(str(frames[0]))
    height, width = first.shape[:2]
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*codec), FPS, (width, height))
    if not writer.isOpened():
        raise SystemExit(f"cannot write {out} with the {codec} codec")
    rng = np.random.default_rng(0)  # the same film every time
    # as pairs of saturating steps up and down, which cost far less per frame than clipping
    grains = [rng.normal(0, noise, first.shape) for _ in range(NOISE_POOL if noise > 0 else 0)]
    pool = [
        (np.clip(g, 0, 255).astype(np.uint8), np.clip(-g, 0, 255).astype(np.uint8)) for g in grains
    ]
    written = 0
    try:
        for path in frames:
            truth = json.loads((game_dir / "truth" / f"{path.stem}.json").read_text())
            held = settled_s if truth["phase"] == "settled" else hands_s
            frame = cv2.imread(str(path))
            for _ in range(max(1, round(held * FPS))):
                shot = frame
                if pool:
                    up, down = pool[rng.integers(len(pool))]
                    shot = cv2.subtract(cv2.add(frame, up), down)
                writer.write(shot)
                written += 1
    finally:
        writer.release()
    return written


def compare(game_dir: Path, read: Path) -> dict:
    """Turns of ``read`` (``meeplecam replay --json`` output) exactly right against the game's
    ``record.json``, as the live benchmarks count them (``replay.compare``), and those that
    differ."""
    from meeplecam.engine import read_record_file
    from meeplecam.vision.live.replay import compare as turns_right

    got = json.loads(read.read_text())
    right, total, diffs = turns_right(read_record_file(game_dir / "record.json"), got)
    return {
        "game": game_dir.name,
        "right": right,
        "turns": total,
        "questions": got.get("questions"),
        "differences": diffs,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("game", type=Path, help="a game folder written by meeplecam synth")
    parser.add_argument(
        "out", type=Path, help="the video to write (or, with --compare, the replay's JSON to count)"
    )
    parser.add_argument("--compare", action="store_true", help="count the turns of a replay")
    parser.add_argument("--settled", type=float, default=1.0, help="seconds a settled view lasts")
    parser.add_argument(
        "--hands", type=float, default=1 / 3, help="seconds a view with hands lasts"
    )
    parser.add_argument(
        "--noise",
        type=float,
        default=0.0,
        help="a webcam's sensor noise: its standard deviation in grey levels, new every frame",
    )
    parser.add_argument(
        "--codec",
        default="mp4v",
        help="the video's fourcc: mp4v, or MJPG (an .avi) as webcams send",
    )
    args = parser.parse_args(argv)
    if args.compare:
        print(json.dumps(compare(args.game, args.out)))
        return 0
    written = film(args.game, args.out, args.settled, args.hands, args.noise, args.codec)
    print(json.dumps({"frames": written, "minutes": round(written / FPS / 60, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
