"""Playing a drawn game through a tracker in the tests, with nobody at the table to answer."""

from __future__ import annotations

from meeplecam.vision.live.observations import Amend, Commit, Kept, PlayArea, Question, Warning


def watched(tracker, frames) -> list[str]:
    """``frames`` fed to ``tracker``, every commit and each question's best option applied to
    its game (nobody answering; a question about an earlier turn read for now, and an amend,
    replace that turn); returns the warnings' texts."""
    warnings = []
    for frame in frames:
        for obs in tracker.feed(frame):
            apply(tracker.game, obs, warnings)
    return warnings


def apply(game, obs, warnings: list[str] | None = None) -> None:
    """One observation applied to ``game`` as nobody answering would."""
    if isinstance(obs, Warning):
        if warnings is not None:
            warnings.append(obs.text)
    elif isinstance(obs, Kept):
        return  # the game stays as it is
    elif isinstance(obs, PlayArea):
        game.set_table(obs.bounds)
    elif isinstance(obs, Amend):
        game.replace(obs.index, obs.turn)
    elif isinstance(obs, Question) and obs.turn is not None:
        if game.log[obs.turn] != obs.best:
            game.replace(obs.turn, obs.best)
    else:
        game.apply(obs.turn if isinstance(obs, Commit) else obs.best)
