"""The vision layer as the session's turn source: camera frames -> live tracker -> the session.

:class:`~meeplecam.vision.live.feed.LiveFeed` does the work (capture separate from analysis, the
tracker following the session's log); this module only opens it for ``serve``: over a webcam, a
video or a folder of frames (:func:`open_tracker_feed`), or over the synthetic table
(:class:`DemoTableFeed`, ``serve --demo``), where the whole pipeline reads a game that the renderer
plays in front of a virtual camera.
"""

from __future__ import annotations

from meeplecam.vision.live.feed import LiveFeed


class TrackerFeed(LiveFeed):
    """A live feed that can take a new calibration profile while it runs (the calibration page).

    The switch waits for a quiet moment, so that no tile is lost: the tracker watching a still
    table (nothing being read, no question open) or still waiting for the start tile. Then a
    tracker on the new geometry replaces it, keeping what was learned of the tiles and the motion
    gate's view, and takes its baseline from the next still frame."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # (locate, colours, appearance model, drawn-tile spot, path) waiting for a quiet moment
        self.next_profile: tuple | None = None
        self.profile_path: str | None = None  # the profile in use, once switched

    def use_profile(self, path) -> None:
        """Read the profile now (ProfileError if it cannot be used); switch at a quiet moment."""
        from meeplecam.vision.live.rectify import profile_locator
        from meeplecam.vision.live.replay import load_reference
        from meeplecam.vision.live.spot import spot_for

        locate, colours = profile_locator(str(path), self.config.cell_px)
        spot = spot_for(None, str(path))  # a drawn-tile spot the profile marks, if any
        self.next_profile = (locate, colours, load_reference(str(path)), spot, str(path))

    def step(self, frame):
        if self.next_profile is not None:
            self._switch(frame)
        return super().step(frame)

    def _switch(self, frame) -> None:
        from meeplecam.vision.live.tracker import State, Tracker

        with self.sink.lock:
            old = self.tracker
            same_game = old is not None and old.game is self.sink.game
            if same_game and (
                old.state not in (State.WAITING_FOR_START, State.WATCHING)
                or old.pending is not None
                or self.sink.pending
            ):
                return  # a turn is being read or asked about: later
            locate, colours, model, spot, path = self.next_profile
            self.next_profile = None
            if spot is not None:
                self.config.drawn_spot = spot
            try:
                rectifier = locate(frame)
            except ValueError:
                rectifier = None  # the tracker locates it on its first settled frame
            scorer = old.scorer if old is not None else None
            if (
                scorer is not None
                and colours
                and isinstance(getattr(scorer, "colours", None), dict)
            ):
                scorer.colours.update(colours)
            if scorer is not None and model is not None and hasattr(scorer, "reference"):
                scorer.reference = model
            self.reference = model or self.reference
            tracker = Tracker(
                self.sink.game,
                rectifier,
                scorer=scorer,
                config=self.config,
                locate=locate,
                colours=colours,
                reference=self.reference,
            )
            if same_game:
                tracker.gate = old.gate  # already settled: the baseline is taken at once
            self.locate, self.colours, self.rectifier = locate, colours, None
            self.tracker = tracker
            self.profile_path = path


def open_tracker_feed(
    session,
    kind: str,
    target,
    profile: str | None = None,
    model: str | None = None,
    drawn_spot: tuple[int, int] | None = None,
) -> TrackerFeed:
    """A live feed over a camera index, video file or folder of frames. The table geometry comes
    from the profile when one is given, else from the table and grid found on the first settled
    frame (the start tile alone on the table); the tiles' appearance from ``model`` or the
    profile, else it is learned during play. ``drawn_spot``: the cell where the players put
    the tile just drawn (``vision.live.spot``)."""
    from meeplecam.vision.live.rectify import from_detection
    from meeplecam.vision.live.replay import load_geometry, load_reference
    from meeplecam.vision.live.sources import open_source
    from meeplecam.vision.live.tracker import TrackerConfig

    config = TrackerConfig(drawn_spot=drawn_spot)
    rectifier, locate, colours = load_geometry(profile, config.cell_px)
    reference = load_reference(profile, model)
    if rectifier is None and locate is None:
        locate = from_detection
    frames = open_source(int(target) if kind == "camera" else str(target))
    return TrackerFeed(
        session, frames, rectifier, config, locate=locate, colours=colours, reference=reference
    )


class DemoTableFeed(TrackerFeed):
    """``serve --demo``: the synthetic table (``meeplecam.vision.synth``) is the camera and the
    live pipeline reads it, exactly as it reads a webcam. The session plays the table's game (its
    players and tile set); when the table starts its next game, so does the session. While a
    question (or the game read over at its end) waits on the page the players at the virtual table
    wait too, as real ones would."""

    name = "demo table"

    def __init__(self, session, seed: int = 1, size=(1920, 1080), realtime: bool = True):
        from meeplecam.vision.live.sources import SyntheticSource
        from meeplecam.vision.model import build_from_art

        # each drawn tile lies on a spot beside the board first: the page hints where it fits
        source = SyntheticSource(seed=seed, size=size, realtime=realtime, drawn_spot=True)
        table = source.inner
        # the demo table's tiles are drawn from the engine's art: that is their appearance model,
        # as a calibration from scans or a photo of the tiles gives it for a real copy
        reference = build_from_art(table.game.tileset, table.palette)
        super().__init__(session, source, source.rectifier(), reference=reference)
        self.config.drawn_spot = table.spot
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
            self.config.drawn_spot = table.spot
            self.tracker = None
            self._start_session_game()
        table.paused = bool(self.sink.pending) or self.sink.read_over_open
        return super().step(frame)


def use_profile(feed, path) -> str:
    """Hand a newly saved profile to the live feed; a sentence for the page says what happens."""
    if not isinstance(feed, TrackerFeed):
        return (
            "the camera here has no live tracker: it will use the profile when serve is "
            f"started with --profile {path}"
        )
    feed.use_profile(path)
    note = " (until the demo table starts its next game)" if isinstance(feed, DemoTableFeed) else ""
    return (
        "the live tracker switches to it at the next quiet moment (nothing moving on the table, "
        "no question open)" + note
    )
