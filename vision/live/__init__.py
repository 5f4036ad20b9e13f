"""The live loop: frames of a real table -> observations the engine decides on.

Steps (``ARCHITECTURE.md``): a frame **source** (``sources``) -> **rectify** to a top-down board
(``rectify``) -> **motion gate** (``motion``) -> **diff** against the known board and **decode**
with the rules (``tracker``, scoring options with ``appearance``) -> **observations**
(``observations``: Commit, Question, Warning) that the consumer applies to the game (``replay``
for ``meeplecam replay``, ``feed.LiveFeed`` for the web app).

    tracker = Tracker(game, rectifier)
    for frame in open_source("0"):
        for observation in tracker.feed(frame):
            ...  # commit / ask / warn
"""

from .observations import Commit, Observation, Question, Warning
from .tracker import State, Tracker, TrackerConfig

__all__ = ["Commit", "Observation", "Question", "State", "Tracker", "TrackerConfig", "Warning"]
