"""The live loop: frames of a real table -> observations the engine decides on.

Steps (``ARCHITECTURE.md``): a frame **source** (``sources``) -> **rectify** to a top-down board
(``rectify``) -> **motion gate** (``motion``) -> **diff** against the known board (``diff``,
``seeing``; the state machine in ``tracker``) -> **decode** the new tile with the rules (``reading``,
scoring options with ``appearance``; the figures and their spots in ``figures``) -> **doubts**
(what the table rules out, or an earlier turn to read again: ``repairs``) -> **observations**
(``observations``: Commit, Question, Warning, Amend, Kept, ...) that the consumer applies to the
game (``replay`` for ``meeplecam replay``, ``feed.LiveFeed`` for the web app).

    tracker = Tracker(game, rectifier)
    for frame in open_source("0"):
        for observation in tracker.feed(frame):
            ...  # commit / ask / warn
"""

from .observations import Commit, Observation, Question, Warning
from .tracker import State, Tracker, TrackerConfig

__all__ = ["Commit", "Observation", "Question", "State", "Tracker", "TrackerConfig", "Warning"]
