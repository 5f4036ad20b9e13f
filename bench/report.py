"""What every bench script does with its results: print them as JSON, and keep them in ``--out``."""

from __future__ import annotations

import json
from pathlib import Path


def emit(shown, out: str | None = None, saved=None, indent: int = 2) -> None:
    """Print ``shown``; with ``out``, write ``saved`` (``shown`` unless given) there too."""
    print(json.dumps(shown, indent=indent))
    if out:
        Path(out).write_text(json.dumps(shown if saved is None else saved, indent=indent) + "\n")
