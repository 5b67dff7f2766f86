"""Statistics for verdicts: how sure a handful of repetitions lets us be.

A claim's bound is checked against a confidence interval of the mean over repetitions,
not against the mean alone: with three runs of 79.4, 81.1 and 80.2 ms against an 80 ms
bound, the honest answer is "cannot tell yet", not whichever side the mean fell on.
The interval is Student's t (few repetitions, unknown spread), from scipy.stats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..errors import BbrlabError

HOLDS, FAILS, INCONCLUSIVE = "holds", "fails", "inconclusive"


@dataclass(frozen=True)
class Interval:
    """A mean and its two-sided confidence interval over N values."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    @property
    def single(self) -> bool:
        """One run only: the interval is that value (nothing says how much it varies)."""
        return self.n == 1


def interval(values: Sequence[float], confidence: float = 0.95) -> Interval:
    """Student-t confidence interval of the mean of VALUES (one value: just that value)."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("interval: no values")
    if not 0 < confidence < 1:
        raise ValueError(f"interval: confidence must be between 0 and 1, got {confidence!r}")
    n = len(values)
    mean = math.fsum(values) / n
    if n == 1:
        return Interval(mean, mean, mean, 1, confidence)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = _t_quantile((1 + confidence) / 2, n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n, confidence)


def _t_quantile(q: float, dof: int) -> float:
    """Student's t quantile Q with DOF degrees of freedom. scipy.stats is imported here, on
    the first interval over several runs: importing it costs 4.4 s of a run's start in the
    testbed's TCG guest, and a run of one repetition per point never needs it."""
    try:
        from scipy import stats
    except ImportError:
        raise BbrlabError("scipy is missing (confidence intervals): apt-get install python3-scipy "
                          "(or provision with sudo ./setup.sh)") from None
    return float(stats.t.ppf(q, dof))


def classify(iv: Interval, low: float | None = None, high: float | None = None) -> str:
    """Where interval IV lies against the bounds (LOW: value >= low passes; HIGH: value
    <= high passes; both already scaled): HOLDS when all of it is on the passing side,
    FAILS when all of it is on the failing side, else INCONCLUSIVE (it straddles a bound)."""
    if low is None and high is None:
        raise ValueError("classify: give a low or a high bound")
    if (low is None or iv.low >= low) and (high is None or iv.high <= high):
        return HOLDS
    if (low is not None and iv.high < low) or (high is not None and iv.low > high):
        return FAILS
    return INCONCLUSIVE
