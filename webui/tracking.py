"""The vision layer as the session's turn source: camera frames -> live tracker -> the session.

:class:`~meeplecam.vision.live.feed.LiveFeed` does the work (capture separate from analysis, the
tracker following the session's log); this module only opens it for ``serve``: over a webcam, a
video or a folder of frames (:func:`open_tracker_feed`), or over the synthetic table
(:class:`DemoTableFeed`, ``serve --demo``), where the whole pipeline reads a game that the renderer
plays in front of a virtual camera.
"""

from __future__ import annotations

from meeplecam.vision.live.feed import LiveFeed


def open_tracker_feed(session, kind: str, target, profile: str | None = None) -> LiveFeed:
    """A live feed over a camera index, video file or folder of frames. The table geometry comes
    from the profile when one is given, else from the table and grid found on the first settled
    frame (the start tile alone on the table)."""
    from meeplecam.vision.live.rectify import from_detection
    from meeplecam.vision.live.replay import load_geometry
    from meeplecam.vision.live.sources import open_source
    from meeplecam.vision.live.tracker import TrackerConfig

    config = TrackerConfig()
    rectifier, locate, colours = load_geometry(profile, config.cell_px)
    if rectifier is None and locate is None:
        locate = from_detection
    frames = open_source(int(target) if kind == "camera" else str(target))
    return LiveFeed(session, frames, rectifier, config, locate=locate, colours=colours)


class DemoTableFeed(LiveFeed):
    """``serve --demo``: the synthetic table (``meeplecam.vision.synth``) is the camera and the
    live pipeline reads it, exactly as it reads a webcam. The session plays the table's game (its
    players and tile set); when the table starts its next game, so does the session. While a
    question waits on the page the players at the virtual table wait too, as real ones would."""

    name = "demo table"

    def __init__(self, session, seed: int = 1, size=(1280, 720), realtime: bool = True):
        from meeplecam.vision.live.sources import SyntheticSource

        source = SyntheticSource(seed=seed, size=size, realtime=realtime)
        super().__init__(session, source, source.rectifier())
        self._table_seed = source.inner.seed
        self._start_session_game()

    def _start_session_game(self) -> None:
        game = self.source.inner.game
        self.sink.new_game(game.tileset.name, game.players, game.options)

    def step(self, frame):
        table = self.source.inner
        if table.seed != self._table_seed:  # the table began its next game
            self._table_seed = table.seed
            self.rectifier = self.source.rectifier()
            self.tracker = None
            self._start_session_game()
        table.paused = bool(self.sink.pending)
        return super().step(frame)
