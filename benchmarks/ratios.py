"""Pair-by-pair ratios and their summary (median and spread), the statistics every table of the suite uses.

Runs of the tools are interleaved: repeat r runs every tool once, in an order rotated by r, so the
runs of one repeat share the machine's state (load, frequency, caches of other processes).  The
ratio of tool X to shockflow is formed *within* each repeat, ``rate_shockflow[r] / rate_X[r]``, and
then summarised, which cancels slow drifts of the machine that a ratio of medians would not.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    median: float
    low: float  # smallest value
    high: float  # largest value
    count: int

    def as_dict(self, digits: int = 4) -> dict:
        return {k: float(f"{v:.{digits}g}") if isinstance(v, float) else v for k, v in self.__dict__.items()}


def summarise(values) -> Summary:
    """Median, smallest and largest of a non-empty sequence of finite numbers."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("values: expected at least one number, found none")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"values: expected finite numbers, found {values}")
    return Summary(statistics.median(values), min(values), max(values), len(values))


def pairwise_ratios(numerator, denominator) -> list[float]:
    """``numerator[r] / denominator[r]`` for every repeat r (equal lengths, positive denominators)."""
    numerator, denominator = list(numerator), list(denominator)
    if len(numerator) != len(denominator):
        raise ValueError(f"numerator, denominator: expected one value per repeat each, found {len(numerator)} "
                         f"and {len(denominator)}")
    if any(d <= 0 for d in denominator):
        raise ValueError(f"denominator: expected positive values, found {denominator}")
    return [n / d for n, d in zip(numerator, denominator)]


def rotated(items: list, shift: int) -> list:
    """``items`` rotated left by ``shift`` (the run order of repeat ``shift``)."""
    if not items:
        return []
    k = shift % len(items)
    return items[k:] + items[:k]


def interpolate_loglog(x_values, y_values, x: float) -> float | None:
    """y at ``x`` by linear interpolation of log y against log x on the points given (None outside them).

    Used for "time at equal error": x is the L1 error, y the wall time of one tool's runs.
    """
    pts = sorted((float(a), float(b)) for a, b in zip(x_values, y_values) if a > 0 and b > 0)
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            if x1 == x0:
                return y0
            w = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
            return math.exp((1 - w) * math.log(y0) + w * math.log(y1))
    return None
