"""The synthetic table: realistic frames of a Carcassonne game with exact ground truth.

One module per concern: :mod:`geometry` (where each segment of a tile lies; label masks),
:mod:`art` (tile art in palettes, or the real Winter scans), :mod:`scene` (table, board layout,
score track, top-down canvas), :mod:`figures` (followers, Gingerbread Man, hands, held tiles),
:mod:`camera` (perspective, distortion, light, noise), :mod:`render` (a frame and its truth),
:mod:`sequence` (a game as frames on disk), :mod:`demo` (a live frame source) and
:mod:`commands` (``meeplecam synth``). Configuration is data: ``config.toml``.
"""

import importlib

# Exported names and their modules; imported on first use so that ``meeplecam score`` (which
# loads ``commands`` to register ``synth``) does not pay for numpy and OpenCV.
_EXPORTS = {
    "SyntheticTable": ("demo", "SyntheticTable"),
    "KIND_NAMES": ("geometry", "KIND_NAMES"),
    "anchors": ("geometry", "anchors"),
    "label_mask": ("geometry", "label_mask"),
    # ``render`` is also a submodule's name, so the function is exported as ``render_frame``
    "render_frame": ("render", "render"),
    "render_flat": ("render", "render_flat"),
    "render_labels": ("render", "render_labels"),
    "truth": ("render", "truth"),
    "Scene": ("scene", "Scene"),
    "TableState": ("scene", "TableState"),
    "table_states": ("sequence", "table_states"),
    "views": ("sequence", "views"),
    "write_game": ("sequence", "write_game"),
}


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _EXPORTS[name]
    return getattr(importlib.import_module(f".{module}", __name__), attr)


__all__ = [
    "KIND_NAMES",
    "Scene",
    "SyntheticTable",
    "TableState",
    "anchors",
    "label_mask",
    "render_flat",
    "render_frame",
    "render_labels",
    "table_states",
    "truth",
    "views",
    "write_game",
]
