"""The renderer's configuration (``config.toml`` beside this module): palettes, sizes, ranges."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

CONFIG_PATH = Path(__file__).with_name("config.toml")
SCANS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "winter-tiles"
COPY_SCANS_DIR = SCANS_DIR.parent / "real" / "scans"  # one physical copy, newest base-game art


@cache
def config() -> dict:
    with CONFIG_PATH.open("rb") as f:
        return tomllib.load(f)


def bgr(colour: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` as an OpenCV (b, g, r) tuple."""
    value = colour.lstrip("#")
    r, g, b = (int(value[i : i + 2], 16) for i in (0, 2, 4))
    return (b, g, r)


def palette(name: str) -> dict[str, tuple[int, int, int]]:
    """A named palette (``summer``, ``winter``) as BGR colours."""
    try:
        raw = config()["palettes"][name]
    except KeyError:
        raise ValueError(f"unknown palette {name!r}") from None
    return {key: bgr(value) for key, value in raw.items()}


def palette_names() -> list[str]:
    return sorted(config()["palettes"])


def uniform(rng, bounds) -> float:
    """A draw from ``[low, high]`` (or the number itself)."""
    if isinstance(bounds, int | float):
        return float(bounds)
    low, high = bounds
    return float(rng.uniform(low, high))
