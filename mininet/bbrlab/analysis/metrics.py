"""Pure metric functions on plain numbers and (t, value) series; no I/O.

This is the "metrics" arrow: parsers hand over numbers, claims and plots take
these results. Every function rejects input it cannot give a meaningful answer
for (empty, zero duration, negative rates) with a ValueError that says why,
instead of letting a ZeroDivisionError or a NaN leak into a figure.

Series are sequences of (t, value) pairs sorted by t, in seconds and bit/s.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from typing import Protocol

Series = Sequence[tuple[float, float]]


class IntervalLike(Protocol):
    """What throughput_series needs from an iperf3 interval (tool_output.Interval)."""

    start: float
    end: float
    bytes: int


# ---------------------------------------------------------------- distributions


def percentile(values: Sequence[float], q: float) -> float:
    """q-th percentile (0..100) with linear interpolation between order statistics.

    Same definition as numpy's default ("linear"), so numbers match other tools.
    """
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be within 0..100, got {q}")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summary(values: Sequence[float]) -> dict[str, float]:
    """n, mean, p5, p25, p50, p75, p95, p99, min, max: the fields every report table uses."""
    if not values:
        raise ValueError("summary of an empty sequence")
    out: dict[str, float] = {"n": len(values), "mean": statistics.fmean(values)}
    for q in (5, 25, 50, 75, 95, 99):
        out[f"p{q}"] = percentile(values, q)
    out["min"] = min(values)
    out["max"] = max(values)
    return out


# ---------------------------------------------------------------- throughput


def goodput_bps(nbytes: float, seconds: float) -> float:
    """Application bytes delivered over a duration, in bit/s."""
    if seconds <= 0:
        raise ValueError(f"goodput needs a positive duration, got {seconds} s")
    if nbytes < 0:
        raise ValueError(f"goodput needs a non-negative byte count, got {nbytes}")
    return 8.0 * nbytes / seconds


def _checked_spans(intervals: Sequence[IntervalLike]) -> list[tuple[float, float, float]]:
    """(start, end, bytes) of each interval; empty zero-length ones are dropped.

    iperf3 may close a test with a 0-second, 0-byte interval: nothing to report.
    Bytes in a zero-length interval would be an infinite rate: that is an error.
    """
    spans = []
    for i, iv in enumerate(intervals):
        if iv.end <= iv.start:
            if iv.bytes:
                raise ValueError(f"interval {i} has {iv.bytes} bytes but no duration")
            continue
        spans.append((float(iv.start), float(iv.end), float(iv.bytes)))
    return spans


def throughput_series(
    intervals: Sequence[IntervalLike], window: float | None = None
) -> list[tuple[float, float]]:
    """(t_mid, bit/s) per interval, or re-binned into `window`-second bins.

    Re-binning is byte-accurate: each interval's bytes are spread evenly over
    its span and split between the bins it overlaps, so intervals need not
    align with bins. Bins start at the first interval's start; the last bin is
    cut at the last interval's end (its rate uses the shorter width).
    """
    spans = _checked_spans(intervals)
    if not spans:
        raise ValueError("throughput_series needs at least one non-empty interval")
    if window is None:
        return [((s + e) / 2, 8 * b / (e - s)) for s, e, b in spans]
    if window <= 0:
        raise ValueError(f"window must be positive, got {window}")
    origin, finish = spans[0][0], max(e for _, e, _ in spans)
    nbins = max(1, math.ceil((finish - origin) / window - 1e-9))
    binned = [0.0] * nbins
    for s, e, b in spans:
        rate = b / (e - s)  # bytes per second within this interval
        first, last = int((s - origin) // window), int((e - origin) // window)
        for k in range(max(first, 0), min(last, nbins - 1) + 1):
            lo, hi = origin + k * window, origin + (k + 1) * window
            binned[k] += rate * max(0.0, min(e, hi) - max(s, lo))
    out = []
    for k, nbytes in enumerate(binned):
        lo, hi = origin + k * window, min(origin + (k + 1) * window, finish)
        out.append(((lo + hi) / 2, 8 * nbytes / (hi - lo)))
    return out


def utilization(total_bps: float, link_bps: float) -> float:
    """Share of the bottleneck used by all flows together (may exceed 1 with bursts)."""
    if link_bps <= 0:
        raise ValueError(f"link rate must be positive, got {link_bps}")
    return total_bps / link_bps


def ideal_goodput_bps(link_bps: float, loss: float) -> float:
    """Best goodput a loss-agnostic sender could get: link * (1 - loss)."""
    if not 0 <= loss <= 1:
        raise ValueError(f"loss must be a fraction within 0..1, got {loss}")
    if link_bps < 0:
        raise ValueError(f"link rate must be non-negative, got {link_bps}")
    return link_bps * (1.0 - loss)


def steady_goodput_bps(intervals: Sequence[IntervalLike], skip_s: float) -> float:
    """Goodput over the intervals that start skip_s seconds or more after the first one.

    Byte-weighted (bytes / seconds over those intervals), so a short final interval
    counts for its real length instead of as one sample like the others.
    """
    spans = _checked_spans(intervals)
    if not spans:
        raise ValueError("steady_goodput_bps needs at least one non-empty interval")
    cutoff = spans[0][0] + skip_s - 1e-9
    tail = [(s, e, b) for s, e, b in spans if s >= cutoff]
    if not tail:
        raise ValueError(f"no interval starts after {skip_s} s of startup")
    return 8 * sum(b for _, _, b in tail) / sum(e - s for s, e, _ in tail)


def aggregate_steady_goodput_bps(flows: Sequence[tuple[float, Sequence[IntervalLike]]], skip_s: float) -> float:
    """Goodput of all FLOWS together ((offset, intervals) each, offset placing a flow's
    intervals on a common clock) after skip_s seconds from the first flow's start.

    Bytes of every interval starting after that, over the time from the first such
    interval to the last one's end. Unlike a sum of per-flow rates this stays within
    the link when flows do not overlap fully (staggered starts, a handshake delayed
    behind a deep queue): each rate would count the time the others were idle.
    """
    spans = [(s + offset, e + offset, b) for offset, intervals in flows for s, e, b in _checked_spans(intervals)]
    if not spans:
        raise ValueError("aggregate_steady_goodput_bps needs at least one non-empty interval")
    cutoff = min(s for s, _, _ in spans) + skip_s - 1e-9
    tail = [(s, e, b) for s, e, b in spans if s >= cutoff]
    if not tail:
        raise ValueError(f"no interval starts after {skip_s} s of startup")
    return 8 * sum(b for _, _, b in tail) / (max(e for _, e, _ in tail) - min(s for s, _, _ in tail))


def _capacity_bits(rate_steps: Sequence[tuple[float, float]], t_a: float, t_b: float) -> float:
    """Bits a link with RATE_STEPS ((t, bit/s) from which each rate holds) can carry in [t_a, t_b]."""
    steps = sorted(rate_steps)
    bits = 0.0
    for i, (t, bps) in enumerate(steps):
        lo, hi = max(t, t_a), min(steps[i + 1][0] if i + 1 < len(steps) else t_b, t_b)
        bits += bps * max(0.0, hi - lo)
    return bits


def link_busy(counter: Sequence[tuple[float, int]], rate_steps: Sequence[tuple[float, float]],
              start: float, end: float) -> float:
    """Share of its capacity the bottleneck used between START and END (seconds).

    COUNTER: (t, bytes sent so far) samples of the bottleneck qdisc; RATE_STEPS: (t, bit/s)
    from which each configured rate holds. Measured at the link itself, this needs no
    assumption about when each flow's data started, and counts every frame the link sent.
    """
    inside = [(t, b) for t, b in counter if start <= t <= end]
    if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
        raise ValueError(f"fewer than two bottleneck samples between {start:g} s and {end:g} s")
    (t_a, b_a), (t_b, b_b) = inside[0], inside[-1]
    capacity = _capacity_bits(rate_steps, t_a, t_b)
    if capacity <= 0:
        raise ValueError("the bottleneck had no capacity in the window")
    return 8 * (b_b - b_a) / capacity


def backlogged_gaps(samples: Sequence[tuple[float, int, int]], capacity_bits, start: float, end: float,
                    skip=lambda t_a, t_b: False) -> tuple[float, float, float]:
    """Over the gaps between two SAMPLES (t, bytes sent so far, bytes queued) inside [START,
    END] whose queue at their start alone could fill all the link was to send in them
    (CAPACITY_BITS(t_a, t_b)), so that it surely had work to the end, whatever arrived
    meanwhile: (bits it sent, bits it was to send, seconds they cover). A queue of a few
    packets at both ends proves nothing: a sender that paces below the rate (BBR, a lossy
    flow) leaves the link idle in between. SKIP(t_a, t_b): a gap not to judge."""
    inside = [x for x in samples if start <= x[0] <= end]
    sent = capacity = covered = 0.0
    for (t_a, b_a, q_a), (t_b, b_b, _) in zip(inside, inside[1:]):
        bits = capacity_bits(t_a, t_b)
        if t_b > t_a and 8 * q_a >= bits > 0 and not skip(t_a, t_b):
            sent += 8 * (b_b - b_a)
            capacity += bits
            covered += t_b - t_a
    return sent, capacity, covered


def backlogged_delivery(samples: Sequence[tuple[float, int, int]], rate_steps: Sequence[tuple[float, float]],
                        start: float, end: float) -> tuple[float, float]:
    """How much of its configured rate the bottleneck delivered while it surely had work
    (backlogged_gaps; RATE_STEPS: (t, bit/s) from which each configured rate holds). Any
    shortfall there is the emulator's (a slow host, late timers, a CPU it shares).
    Returns (sent / capacity over the judged gaps, seconds they cover).
    """
    # A rate change takes effect a few hundred ms after its planned time (a tc process
    # starting): the second after one is not judged.
    changes = [t for t, _ in rate_steps if t > 0]
    sent, capacity, covered = backlogged_gaps(
        samples, lambda t_a, t_b: _capacity_bits(rate_steps, t_a, t_b), start, end,
        skip=lambda t_a, t_b: any(t_a < c + 1.0 and t_b > c for c in changes))
    if capacity <= 0:
        raise ValueError(f"the bottleneck's queue never held a whole sampling interval's worth "
                         f"between {start:g} s and {end:g} s")
    return sent / capacity, covered


def peak_window_bps(frames: Sequence[tuple[float, int]], window: float = 0.1) -> float:
    """The highest rate over any WINDOW seconds of FRAMES ((t, bytes) of each frame as it
    left the link, sorted by t).

    A frame's time marks the end of its transmission, so a window starting at one frame
    counts the frames after it up to WINDOW later: a link sending exactly at its rate never
    reads above it, one that releases a clump after a late timer does.
    """
    if window <= 0:
        raise ValueError(f"window must be positive, got {window}")
    if len(frames) < 2 or frames[-1][0] - frames[0][0] < window:
        raise ValueError(f"the frames span less than one {window:g} s window")
    best, inside, j = 0, 0, 0
    times = [t for t, _ in frames]
    for i, t in enumerate(times):
        if j <= i:
            j, inside = i + 1, 0
        while j < len(frames) and times[j] <= t + window:
            inside += frames[j][1]
            j += 1
        if t + window <= times[-1]:  # only whole windows
            best = max(best, inside)
        if j > i + 1:
            inside -= frames[i + 1][1]  # the next window starts at frame i+1, which it excludes
    return 8 * best / window


def peak_beyond_pause(peak_ratio: float, pause_s: float, window: float = 0.1) -> float:
    """The part of a link's peak rate over WINDOW (PEAK_RATIO, a share of its rate) beyond
    what its longest pause (PAUSE_S) held back: a shaper that catches up after a late timer
    sends the held frames at once, so that much of the peak is the timer's, the rest the
    shaper's own burst. A pause that held back more than the peak shows (the flow itself
    idle, as in BBR's ProbeRTT) leaves no burst: 0, never a share below zero."""
    return max(0.0, peak_ratio - pause_s / window)


def steady_state(series: Series, skip_s: float) -> float:
    """Mean value after skipping the first skip_s seconds (startup) of the series."""
    if not series:
        raise ValueError("steady_state of an empty series")
    cutoff = series[0][0] + skip_s
    tail = [v for t, v in series if t >= cutoff]
    if not tail:
        raise ValueError(f"no samples left after skipping {skip_s} s of startup")
    return statistics.fmean(tail)


# ---------------------------------------------------------------- delay


def queue_delay_ms(
    rtt_samples_ms: Sequence[float], base_rtt_ms: float | None = None
) -> list[float]:
    """Queueing delay of each RTT sample: rtt - base, floored at 0.

    base_rtt_ms defaults to the smallest sample (the usual estimate of the
    propagation RTT when the configured one is not known).
    """
    if not rtt_samples_ms:
        raise ValueError("queue_delay_ms of an empty sequence")
    base = min(rtt_samples_ms) if base_rtt_ms is None else base_rtt_ms
    if base < 0:
        raise ValueError(f"base RTT must be non-negative, got {base}")
    return [max(0.0, rtt - base) for rtt in rtt_samples_ms]


# ---------------------------------------------------------------- BBR's own model

HELD_SAMPLES = 3  # consecutive ss samples with one bw estimate: BBR's long-term mode
BBR_STARTUP_GAIN = 2.0  # STARTUP paces at 2/ln2 = 2.885; every later state at 1.25 or less


def bbr_model(samples: Sequence[tuple[float, float, float]], steady_from: float) -> dict[str, float | None]:
    """What BBR believed, from ss samples (t, pacing_gain, bw estimate in bit/s).

    Returns left_startup_by_s (the first sample that no longer paced at STARTUP's gain: BBR
    had decided the pipe was full by then, at most one sampling interval earlier),
    bw_at_startup_exit_bps (its bandwidth estimate then) and bw_p50_bps (the median estimate
    from steady_from on). A flow whose goodput falls far short of the link while BBR's own
    estimate is that low was limited by its model, not by the emulator's bottleneck.

    bw_held_share: the share of the steady samples in a run of at least HELD_SAMPLES
    samples with the same estimate to the bit. BBR's max filter moves with the delivery
    rate every few round trips, so an estimate held that long is Linux BBR's long-term
    ("policer") mode: having lost 20% or more in two intervals of 4+ round trips that
    delivered at about the same rate, it pins bw to their average for 48 round trips.
    """
    if not samples:
        raise ValueError("bbr_model of an empty sequence")
    left = next(((t, bw) for t, gain, bw in samples if gain < BBR_STARTUP_GAIN), None)
    steady = [bw for t, _, bw in samples if t >= steady_from]
    runs = [len(list(run)) for _, run in itertools.groupby(steady)]
    return {
        "left_startup_by_s": None if left is None else left[0],
        "bw_at_startup_exit_bps": None if left is None else left[1],
        "bw_p50_bps": percentile(steady, 50) if steady else None,
        "bw_held_share": (sum(n for n in runs if n >= HELD_SAMPLES) / len(steady)
                          if len(steady) >= HELD_SAMPLES else None),
    }


def retransmit_rate(rows: Sequence[dict], segment_bytes: int) -> float | None:
    """Retransmitted segments / segments sent (each flow's bytes sent in SEGMENT_BYTES
    segments, plus its retransmissions), over ROWS (flows with "retransmits" and
    "sent_bytes"); None when no flow says both."""
    known = [r for r in rows if r.get("retransmits") is not None and r.get("sent_bytes")]
    if not known:
        return None
    retrans = sum(r["retransmits"] for r in known)
    sent = sum(r["sent_bytes"] for r in known) / segment_bytes + retrans
    return round(retrans / sent, 6) if sent > 0 else None
