"""What the bottleneck's queue discipline did, from its own counters (tc -s): how long the
standing queue made packets wait, and how many packets an AQM marked with ECN's CE instead
of dropping. Computed for every point, so a FIFO and an AQM are compared on the same terms.
"""

from __future__ import annotations

from typing import Callable

from . import metrics as m
from .system_output import QdiscSample

# the metrics.json keys summarize() writes (units and meanings: schema/metric_names.py)
METRICS = ("queue_delay_p50_ms", "queue_delay_p95_ms", "aqm_ce_marks", "aqm_delay_p50_ms")


def ce_marks(sample: QdiscSample) -> int | None:
    """The qdisc's CE-mark counter, or None when it has none (a FIFO): fq_codel, codel, pie
    and fq_pie say ecn_mark, RED marked, CAKE one ecn_mark per tin."""
    x = sample.xstats
    if "tins" in x:
        return sum(int(tin.get("ecn_mark", 0)) for tin in x["tins"])
    for key in ("ecn_mark", "marked"):
        if key in x:
            return int(x[key])
    return None


def aqm_delay_ms(sample: QdiscSample) -> float | None:
    """The AQM's own reading of its queue's delay, where it reports one: CAKE's average
    sojourn (the busiest tin's), CoDel's last sojourn, PIE's current estimate."""
    x = sample.xstats
    if "tins" in x:
        tins = [t for t in x["tins"] if t.get("sent_packets")] or x["tins"]
        busiest = max(tins, key=lambda t: t.get("sent_packets", 0), default=None)
        return busiest["avg_delay_us"] / 1000 if busiest and "avg_delay_us" in busiest else None
    if "ldelay" in x:  # codel: microseconds as a number
        return float(x["ldelay"]) / 1000
    if "delay" in x and isinstance(x["delay"], (int, float)):  # pie: microseconds
        return float(x["delay"]) / 1000
    return None


def stepwise(steps: list[tuple[float, float]]) -> Callable[[float], float]:
    """The rate in force at a time, from STEPS: (time since t0, bit/s), the first from time zero."""
    def rate_at(t: float) -> float:
        return [bps for at, bps in steps if at <= t][-1] if t >= steps[0][0] else steps[0][1]
    return rate_at


def summarize(samples: list[QdiscSample], rate_at: Callable[[float], float], t0: float, startup: float,
              end: float, series: dict, out: dict) -> None:
    """queue_delay_p50/p95_ms (the backlog's bytes at the rate then configured, after
    startup), aqm_ce_marks and aqm_delay_p50_ms where the discipline counts them; the
    queue's delay over time into SERIES["queue_delay"]. RATE_AT: time since t0 -> bit/s (the
    configured steps, or a trace's schedule)."""
    if not samples:
        return
    delays = [(q.t - t0, q.backlog_bytes * 8 / rate_at(q.t - t0) * 1000) for q in samples]
    series["queue_delay"] = [[round(t, 3), round(d, 3)] for t, d in delays]
    steady = [d for t, d in delays if startup <= t <= end]
    if steady:
        out["queue_delay_p50_ms"] = round(m.percentile(steady, 50), 3)
        out["queue_delay_p95_ms"] = round(m.percentile(steady, 95), 3)
    first, last = ce_marks(samples[0]), ce_marks(samples[-1])
    if first is not None and last is not None:
        out["aqm_ce_marks"] = last - first
    own = [d for q in samples if startup <= q.t - t0 <= end and (d := aqm_delay_ms(q)) is not None]
    if own:
        out["aqm_delay_p50_ms"] = round(m.percentile(own, 50), 3)
