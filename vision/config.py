"""Thresholds of every stage, kept as data in ``vision/data/scan.json`` (chesscog style)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def _load() -> dict:
    text = resources.files(__package__).joinpath("data", "scan.json").read_text("utf-8")
    return json.loads(text)


def settings(stage: str) -> dict:
    """The settings of one stage (``table``, ``grid``, ``terrain``, ``tiles``, ``decode`` …)."""
    return dict(_load()[stage])


def work_width() -> int:
    return int(_load()["work_width"])
