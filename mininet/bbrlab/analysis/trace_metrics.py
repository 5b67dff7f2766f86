"""What a trace-driven link offered, what it delivered, and how late its schedule ran;
whether any point's link kept to its schedule (a trace's updates, link.changes' steps).

Reads the schedule executor's record (raw/link-schedule.txt, written by schedule.py:
"k due_s written_s skipped rate_bps" per update, seconds since the schedule's start) and the
bottleneck's own byte counter (the tc samples analysis already has). Pure functions
on plain numbers, plus one parser for that record.
"""

from __future__ import annotations

from typing import Sequence

from . import metrics as m
from ..errors import ParseError
from ..schema.metric_names import SCHEDULE_METRICS, TRACE_METRICS
from ..schema.traces import Schedule

SETTLE = 1.0  # seconds after the first flow's start not judged (the first updates, startup)
# what a trace point adds to metrics.json (metric_names.py), and the link's fidelity, which it
# judges against the schedule in place of the fixed rate's
METRICS = (*TRACE_METRICS, *SCHEDULE_METRICS, "link_delivery_by_rate", "link_delivery", "link_short", "link_busy")
# A link off its schedule cannot be trusted, as a CPU-bound emulator cannot: a rate change in
# force this late moves the step by half the 1 s a flow must hold its new rate to count as
# adapted (and adds itself to the adaptation time, measured from the planned time); a trace
# feeder that skipped this share of its updates did not replay the trace.
CHANGE_LATE_MAX = 0.5
SKIPPED_MAX = 0.01


def parse_log(text: str) -> list[tuple[int, float, float, int]]:
    """The schedule's record: (k, due_s, written_s, skipped) per update written."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("#") or not line.strip():
            continue
        try:
            k, due, written, skipped = line.split()[:4]  # a fifth field: the rate applied
            out.append((int(k), float(due), float(written), int(skipped)))
        except ValueError:
            raise ParseError(f"link-schedule.txt:{number}: cannot read {line[:60]!r}") from None
    return out


def lateness(records: Sequence[tuple[int, float, float, int]]) -> dict:
    """How many updates were written, how many were skipped, and how late they were (ms)."""
    if not records:
        return {"schedule_updates": 0}
    late = [max(0.0, w - d) * 1e3 for _, d, w, _ in records]
    return {"schedule_updates": len(records), "schedule_skipped": sum(r[3] for r in records),
            "schedule_late_p50_ms": round(m.percentile(late, 50), 3),
            "schedule_late_p99_ms": round(m.percentile(late, 99), 3),
            "schedule_late_max_ms": round(max(late), 3)}


def delivered(schedule: Schedule, counter: Sequence[tuple[float, int, int]], start: float, end: float) -> dict:
    """COUNTER: (t since the schedule's start, bytes the bottleneck sent so far, bytes
    queued). Between START and END: the rate the link delivered, the rate the schedule
    offered over the same samples, and, over the gaps in which the link surely had work
    (metrics.backlogged_gaps, as a fixed rate is judged), what it sent of what the
    schedule offered (1: it followed the trace)."""
    inside = [x for x in counter if start <= x[0] <= end]
    if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
        return {}
    (t_a, b_a, _), (t_b, b_b, _) = inside[0], inside[-1]
    out = {"trace_mbps": round(schedule.average / 1e6, 4),
           "trace_offered_mbps": round(schedule.capacity_bits(t_a, t_b) / (t_b - t_a) / 1e6, 4),
           "link_delivered_mbps": round(8 * (b_b - b_a) / (t_b - t_a) / 1e6, 4)}
    out["trace_delivery"] = round(out["link_delivered_mbps"] / out["trace_offered_mbps"], 4)
    sent, offered, covered = m.backlogged_gaps(inside, schedule.capacity_bits, start, end)
    out["trace_backlogged_delivery"] = round(sent / offered, 4) if offered > 0 else None
    out["trace_backlogged_s"] = round(covered, 3)
    return out


def summarize(schedule: Schedule, log_text: str, counter: Sequence[tuple[float, int, int]], start: float,
              end: float, run_end: float, delivery_min: float) -> tuple[dict, list]:
    """A trace point's metrics and its offered rate over time (100 ms windows, for plots).

    The link's fidelity is judged against the schedule, not against its average: the
    backlogged link's delivery replaces link_delivery (and link_short, below DELIVERY_MIN),
    what it sent of what was offered replaces link_busy."""
    out = lateness(parse_log(log_text))
    out.update(delivered(schedule, counter, max(start, SETTLE), end))
    backlogged = out.get("trace_backlogged_delivery")
    judged = backlogged if backlogged is not None and out.get("trace_backlogged_s", 0) >= 1.0 else None
    out["link_delivery_by_rate"] = ([{"from_s": 0.0, "rate_mbps": out["trace_mbps"], "delivery": judged}]
                                    if judged is not None else [])
    out["link_delivery"] = judged
    out["link_short"] = judged is not None and judged < delivery_min
    out["link_busy"] = out.get("trace_delivery")
    offered = [[round(t, 3), round(bps / 1e6, 4)] for t, bps in schedule.averaged(0.0, max(run_end, 0.1), 0.1)]
    return out, offered


def kept(events: Sequence[dict] | None, out: dict) -> None:
    """Into OUT: how late the configured rate changes came in force (EVENTS: the point's
    timings.events, "planned" and "at" in seconds from the first flow's start; None when
    its record has none), and whether the link kept its schedule, the trace's included
    (OUT's schedule_* counts, from summarize)."""
    late = [e["at"] - e["planned"] for e in events or () if e.get("at") is not None]
    if late:
        out["change_late_max_s"] = round(max(late), 4)
    due = out.get("schedule_updates", 0) + out.get("schedule_skipped", 0)
    out["off_schedule"] = bool((late and max(late) > CHANGE_LATE_MAX)
                               or (due and out.get("schedule_skipped", 0) >= SKIPPED_MAX * due))
