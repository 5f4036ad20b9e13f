"""Follower colours on screen: a CSS colour, a readable ink on it, and a letter for colour-blind
players (every colour is also written out as a word next to it)."""

from __future__ import annotations

import re

CSS = {
    "red": "#d32f2f",
    "yellow": "#fdd835",
    "green": "#388e3c",
    "blue": "#1976d2",
    "black": "#212121",
    "grey": "#9e9e9e",
    "gray": "#9e9e9e",
    "pink": "#f06292",
    "purple": "#7b1fa2",
    "orange": "#fb8c00",
    "white": "#fafafa",
    "brown": "#795548",
}
LIGHT = {"yellow", "white", "pink", "grey", "gray", "orange"}
COLOUR_CHOICES = ("red", "yellow", "green", "blue", "black", "grey", "pink", "purple", "orange")


def css_colour(name: str) -> str:
    if name in CSS:
        return CSS[name]
    return name if re.fullmatch(r"[a-z]{3,20}", name) else "#9e9e9e"


def ink_for(name: str) -> str:
    return "#000" if name in LIGHT else "#fff"


def letter(name: str) -> str:
    return (name[:1] or "?").upper()
