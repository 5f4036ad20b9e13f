"""Calibration of one table: the guided way to make and check a profile (``vision.profile``).

``wizard.run(frame, Options())`` runs every step on one frame and returns the profile with the lines
to show; ``wizard.check(profile, frame)`` tells whether a view still matches. The steps live in
their own modules: ``surface`` and ``table`` (outline, corner markers; the sub-pixel edges and
the lens from the table's straight edges are vision's ``edges`` and ``lens``), ``scale``
(top-down homography from tiles), ``camera`` (ChArUco intrinsics), ``colours`` (followers),
``markers`` (printable sheets); thresholds are data in ``data/calibration.json``.
"""
