"""Playing a drawn game through a tracker in the tests, with nobody at the table to answer."""

from __future__ import annotations

from meeplecam.vision.live.observations import Commit, Warning


def watched(tracker, frames) -> list[str]:
    """``frames`` fed to ``tracker``, every commit and each question's best option applied to
    its game (nobody answering); returns the warnings' texts."""
    warnings = []
    for frame in frames:
        for obs in tracker.feed(frame):
            if isinstance(obs, Warning):
                warnings.append(obs.text)
            else:
                tracker.game.apply(obs.turn if isinstance(obs, Commit) else obs.best)
    return warnings
