"""Evidence from one measurement that tells two things apart, self-calibrated during play.

The scorer's pennant tests measure a number (how blue a city's bluest spot is; how much bluer a
crop is than its twin's picture) that is high for one thing and low for the other, but how high
depends on the art and the light. Before the table has shown both, a prior threshold decides;
after, the log-likelihood ratio of the number under what each looked like here, so that a number
where the two overlap says little and the players are asked rather than told.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def robust_normal(samples: list[float], min_sd: float = 2.0) -> tuple[float, float]:
    """(centre, spread) of ``samples``: the median, and 1.4826 times the median absolute
    deviation (the standard deviation of a normal), at least ``min_sd``."""
    values = np.asarray(samples, np.float64)
    centre = float(np.median(values))
    return centre, max(min_sd, 1.4826 * float(np.median(np.abs(values - centre))))


class Samples(list):
    """Measurements of one class seen during play (append only), with their robust normal
    kept: every option of every reading weighs a number against them, and a median each time
    was a tenth of a reading's time."""

    def __init__(self, values=()):
        super().__init__(values)
        self._fitted_at = -1  # the number of samples the fits are of
        self._fits: dict[float, tuple[float, float]] = {}

    def normal(self, min_sd: float = 2.0) -> tuple[float, float]:
        """:func:`robust_normal` of the samples, fitted again only once one was added."""
        if self._fitted_at != len(self):
            self._fitted_at, self._fits = len(self), {}
        if min_sd not in self._fits:
            self._fits[min_sd] = robust_normal(self, min_sd)
        return self._fits[min_sd]


def class_log_pdf(
    x: float, samples: list[float], min_sd: float = 2.0, dof: float = math.inf
) -> float:
    """Log density (up to a constant) of ``x`` under a normal fitted robustly to ``samples``,
    or with finite ``dof`` a Student's t of that centre and spread, whose tails are as heavy
    as a class's few odd samples make them (a field side with a cluster of dark specks in it
    crosses like the faintest roads, where a normal puts no field side at all)."""
    if isinstance(samples, Samples):
        centre, sd = samples.normal(min_sd)
    else:
        centre, sd = robust_normal(samples, min_sd)
    z = (x - centre) / sd
    if math.isinf(dof):
        return -0.5 * z * z - math.log(sd)
    return -0.5 * (dof + 1) * math.log1p(z * z / dof) - math.log(sd)


@dataclass(frozen=True)
class Split:
    threshold: float  # the measurement that says neither, before any sample
    scale: float  # how far beyond the threshold counts as sure, before enough samples
    sure_ratio: float  # log-likelihood ratio that counts as sure, after
    min_sd: float  # spread of a learned class at least
    min_high: int = 2  # samples of each class before they replace the prior
    min_low: int = 3
    dof: float = math.inf  # the learned classes' tails: normal, or Student's t (class_log_pdf)

    def evidence(self, x: float, high: list[float], low: list[float]) -> float:
        """How much ``x`` says "the high class", from -1 (surely the low one) to 1, given the
        measurements seen of each."""
        if len(high) < self.min_high or len(low) < self.min_low:
            return float(np.clip((x - self.threshold) / self.scale, -1, 1))
        ratio = class_log_pdf(x, high, self.min_sd, self.dof) - class_log_pdf(
            x, low, self.min_sd, self.dof
        )
        return float(np.clip(ratio / self.sure_ratio, -1, 1))
