"""Fairness and convergence over time: flows' series on one grid, Jain's index, and
how long shares take to settle; pure functions with no I/O, as in metrics.py.

Series are sequences of (t, value) pairs sorted by t, in seconds and bit/s.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .metrics import Series


@dataclass(frozen=True)
class AlignedSeries:
    """Several flows' series on one time grid.

    values[i][k] is flow k at times[i] (0.0 when inactive); active[i][k] says
    whether flow k had started and not yet ended then, so that Jain's index can
    leave out flows that are not running rather than count them as starved.
    """

    times: tuple[float, ...]
    values: tuple[tuple[float, ...], ...]
    active: tuple[tuple[bool, ...], ...]


def _interpolate(series: Series, t: float) -> float | None:
    """Linear interpolation of series at t; None outside its first..last sample."""
    eps = 1e-9
    if not series or t < series[0][0] - eps or t > series[-1][0] + eps:
        return None
    for (t0, v0), (t1, v1) in itertools.pairwise(series):
        if t0 - eps <= t <= t1 + eps:
            return v0 if t1 == t0 else v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    return series[-1][1]  # single-sample series at exactly its time


def align_series(series_list: Sequence[Series], step: float) -> AlignedSeries:
    """Resample flows onto a common grid of `step` seconds for fairness metrics.

    The grid runs from the earliest to the latest sample of any flow. A flow is
    active from its first to its last sample; inside that span its value is
    linearly interpolated, outside it is 0.0.
    """
    if step <= 0:
        raise ValueError(f"step must be positive, got {step}")
    if not series_list or not any(series_list):
        raise ValueError("align_series needs at least one non-empty series")
    start = min(s[0][0] for s in series_list if s)
    end = max(s[-1][0] for s in series_list if s)
    count = math.floor((end - start) / step + 1e-9) + 1
    times = tuple(start + i * step for i in range(count))
    values, active = [], []
    for t in times:
        row = [_interpolate(s, t) for s in series_list]
        values.append(tuple(0.0 if v is None else v for v in row))
        active.append(tuple(v is not None for v in row))
    return AlignedSeries(times, tuple(values), tuple(active))


def jain_index(xs: Sequence[float], mask: Sequence[bool] | None = None) -> float:
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 = equal, 1/n = one flow has all.

    mask selects the flows to count (inactive ones are left out, not zeros).
    All-zero input is defined as 1.0: nobody gets anything, which is equal;
    a stalled link is a utilization problem, not a fairness one.
    """
    if mask is not None:
        if len(mask) != len(xs):
            raise ValueError(f"mask has {len(mask)} entries for {len(xs)} values")
        xs = [x for x, keep in zip(xs, mask, strict=True) if keep]
    if not xs:
        raise ValueError("jain_index needs at least one (active) value")
    if any(x < 0 for x in xs):
        raise ValueError("jain_index is defined for non-negative values only")
    squares = sum(x * x for x in xs)
    if squares == 0:
        return 1.0
    return sum(xs) ** 2 / (len(xs) * squares)


def jain_over_time(
    aligned: AlignedSeries, active_mask: Sequence[Sequence[bool]] | None = None
) -> list[tuple[float, float]]:
    """(t, J) at each grid time that has at least one active flow.

    active_mask defaults to aligned.active; pass another one e.g. to ignore a
    flow's first seconds.
    """
    mask = aligned.active if active_mask is None else active_mask
    if len(mask) != len(aligned.times):
        raise ValueError(f"active_mask has {len(mask)} rows for {len(aligned.times)} times")
    return [
        (t, jain_index(row, keep))
        for t, row, keep in zip(aligned.times, aligned.values, mask, strict=True)
        if any(keep)
    ]


def _first_sustained(
    series: Series, ok: Callable[[float], bool], hold: float, after: float
) -> float | None:
    """First sample time >= after from which ok(value) holds for `hold` seconds.

    Samples later than t + hold are not looked at; a run of good samples that
    reaches the end of the series counts as sustained ("or until the end").
    """
    if hold < 0:
        raise ValueError(f"hold must be non-negative, got {hold}")
    candidate: float | None = None
    for t, v in series:
        if t < after:
            continue
        if not ok(v):
            candidate = None
            continue
        if candidate is None:
            candidate = t
        if t - candidate >= hold:
            return candidate
    return candidate


def convergence_time(
    jain_series: Series, threshold: float = 0.9, hold: float = 1.0
) -> float | None:
    """First time (series clock) after which J stays >= threshold for `hold` s.

    "Stays" also holds when the series ends before `hold` has passed; callers
    subtract the start of the competing flow to get a duration. None if never.
    """
    if not jain_series:
        raise ValueError("convergence_time of an empty series")
    return _first_sustained(jain_series, lambda j: j >= threshold, hold, jain_series[0][0])


def adaptation_time(
    series: Series,
    change_t: float,
    target_bps: float,
    frac: float = 0.9,
    hold: float = 1.0,
) -> float | None:
    """Seconds after change_t until the rate settles near target_bps for `hold` s.

    The direction comes from the last sample before change_t: if the target is
    above it (capacity rose) the rate must reach >= frac * target from below;
    otherwise (capacity fell) it must come down to <= (2 - frac) * target,
    i.e. the same relative band from above. None if it never settles.
    """
    if not 0 < frac <= 1:
        raise ValueError(f"frac must be within (0, 1], got {frac}")
    if target_bps <= 0:
        raise ValueError(f"target rate must be positive, got {target_bps}")
    before = [v for t, v in series if t < change_t]
    if not before:
        raise ValueError(f"no sample before the change at t={change_t} to tell its direction")
    if target_bps >= before[-1]:
        def ok(v: float) -> bool:
            return v >= frac * target_bps
    else:
        def ok(v: float) -> bool:
            return v <= (2 - frac) * target_bps
    settled = _first_sustained(series, ok, hold, change_t)
    return None if settled is None else settled - change_t
