"""Flow completion times of short flows: per flow, per size bucket, per class. Pure.

A flow's FCT is its data phase as the sender sees it: from the connection being
established (its first byte written) to the sink's one-byte confirmation arriving, which
the sink sends when the last byte is in. That is one base RTT plus the transfer at best,
as a download's time from the request to its last byte; the handshake before it is kept
apart (connect_ms), and `total_ms` is the two together.

Slowdown = FCT / (base RTT of the flow's class + bytes on the wire x 8 / bottleneck rate),
floored at 1 (as in HPCC's analysis). Bytes on the wire: the object, the 8-byte length the
program sends first, and per segment of at most 1448 payload bytes (MSS with timestamps)
66 bytes of Ethernet, IP and TCP headers: a full segment is a 1514-byte frame, as
analysis.py's payload capacity counts it.

On a link that replays a trace, the rate is the trace's: the ideal sends the frames through
what the schedule offers from the moment the flow's connection was established
(traces.Schedule.capacity_bits), so a download that met a slow stretch of the trace is not
counted slow, and one that met a fast stretch is not counted fast.

Objects up to 3 MB are judged by FCT, larger ones by throughput (size x 8 / FCT), as the
CDN study did. Flows that did not complete are counted (flows_unfinished), never dropped;
their FCT is unknown, so the FCT and slowdown percentiles are of the completed flows.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from . import metrics as m
from ..schema.metric_names import FCT_BUCKETS, FCT_LISTS, FCT_METRICS, FCT_PERCENTILES
from ..schema.experiment import PAYLOAD_BYTES

# the metrics.json keys summarize() and programs() write (units and meanings: metric_names.py);
# per_class()'s entries go into the classes' `groups`
METRICS = (*FCT_METRICS, *FCT_LISTS)

HEADER_BYTES = 66  # Ethernet (14) + IPv4 (20) + TCP with timestamps (32) per segment
LENGTH_BYTES = 8  # the length the sending program writes before the object
CDF_POINTS = 200  # at most this many points per CDF in series.json


def wire_bytes(size: int) -> int:
    """Bytes a SIZE-byte object occupies on the wire (frames, headers included)."""
    payload = size + LENGTH_BYTES
    return payload + math.ceil(payload / PAYLOAD_BYTES) * HEADER_BYTES


def ideal_seconds(size: int, base_rtt: float, rate_bps: float) -> float:
    """The best FCT a flow of SIZE bytes can have: one base RTT and its frames at the rate."""
    if rate_bps <= 0 or base_rtt < 0:
        raise ValueError(f"ideal FCT needs a positive rate and a base RTT >= 0, got {rate_bps}, {base_rtt}")
    return base_rtt + wire_bytes(size) * 8 / rate_bps


def send_seconds(bits: float, start: float, capacity_bits: Callable[[float, float], float],
                 resolution: float = 1e-4) -> float:
    """Seconds from START until a link that may carry CAPACITY_BITS(a, b) bits between times
    a and b has carried BITS (a trace's schedule, which may pause): doubling, then bisection
    to RESOLUTION seconds."""
    if bits <= 0:
        return 0.0
    high = resolution
    while capacity_bits(start, start + high) < bits:
        high *= 2
        if high > 1e7:
            raise ValueError(f"the link offers less than {bits:.0f} bits in {high:.0f} s from {start:g} s")
    low = 0.0
    while high - low > resolution:
        mid = (low + high) / 2
        low, high = (mid, high) if capacity_bits(start, start + mid) < bits else (low, mid)
    return high


def slowdown(fct_s: float, size: int, base_rtt: float, rate_bps: float) -> float:
    """FCT over the ideal FCT, floored at 1."""
    return max(1.0, fct_s / ideal_seconds(size, base_rtt, rate_bps))


def trace_slowdown(fct_s: float, size: int, base_rtt: float, start: float,
                   capacity_bits: Callable[[float, float], float]) -> float:
    """FCT over the ideal FCT on a trace (one base RTT and the frames through what the
    schedule offers from START), floored at 1."""
    return max(1.0, fct_s / (base_rtt + send_seconds(wire_bytes(size) * 8, start, capacity_bits)))


def bucket(size: int) -> str:
    """The size bucket's name: to100k (<= 100 KB), to1m, to3m (<= 3 MB), over3m."""
    for name, upper in FCT_BUCKETS:
        if size <= upper:
            return name
    return FCT_BUCKETS[-1][0]


def rows(records: Sequence[dict], rtt_of: dict[int, float], rate_bps: float, t0: float,
         capacity_bits: Callable[[float, float], float] | None = None) -> list[dict]:
    """One row per flow record (tool_output.parse_shortflows): times in s since T0 or in ms,
    its bucket, and for a completed flow its FCT, slowdown and throughput. RTT_OF: group ->
    base RTT in seconds. CAPACITY_BITS: a trace's schedule (seconds since T0), which the
    slowdown is then judged against instead of RATE_BPS."""
    out = []
    for r in records:
        row = {"id": r["id"], "group": r["group"], "class": r["class"], "cc": r["cc"], "cc_set": r.get("cc_set"),
               "size": r["size"], "bucket": bucket(r["size"]), "completed": bool(r["completed"]),
               "bytes_acked": r.get("bytes_acked"), "retrans": r.get("retrans"), "error": r.get("error"),
               "start_s": None if r.get("start") is None else round(r["start"] - t0, 4),
               # against when it was due (a sequential flow: after the previous one), else its time
               "late_ms": None if r.get("start") is None else round(
                   (r["start"] - t0 - (r["at"] if r.get("due") is None else r["due"])) * 1e3, 3),
               "connect_ms": None, "fct_ms": None, "total_ms": None, "slowdown": None, "tput_mbps": None}
        if r.get("established") is not None and r.get("start") is not None:
            row["connect_ms"] = round((r["established"] - r["start"]) * 1e3, 3)
        if row["completed"] and r.get("end") is not None and r.get("established") is not None:
            fct = max(r["end"] - r["established"], 1e-6)
            row["fct_ms"] = round(fct * 1e3, 3)
            row["total_ms"] = round((r["end"] - r["start"]) * 1e3, 3)
            row["slowdown"] = round(
                slowdown(fct, r["size"], rtt_of[r["group"]], rate_bps) if capacity_bits is None
                else trace_slowdown(fct, r["size"], rtt_of[r["group"]], r["established"] - t0, capacity_bits), 4)
            row["tput_mbps"] = round(r["size"] * 8 / fct / 1e6, 4)
        out.append(row)
    return out


def cdf(values: Sequence[float], points: int = CDF_POINTS) -> list[list[float]]:
    """[[value, share of values <= it]] of the sorted values, at most POINTS of them (the
    largest value always kept)."""
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return []
    step = max(1, math.ceil(n / points))
    keep = list(range(step - 1, n, step))
    if keep[-1] != n - 1:
        keep.append(n - 1)
    return [[ordered[i], round((i + 1) / n, 4)] for i in keep]


def _percentiles(prefix: str, values: list[float], unit: str = "") -> dict:
    return {f"{prefix}_p{q}{unit}": (round(m.percentile(values, q), 4) if values else None)
            for q in FCT_PERCENTILES}


def summarize(flow_rows: Sequence[dict]) -> dict:
    """The FCT metrics (metric_names.FCT_METRICS) of FLOW_ROWS (one class, or all)."""
    done = [r for r in flow_rows if r["completed"] and r["fct_ms"] is not None]
    started = [r for r in flow_rows if r["start_s"] is not None]
    out = {"flows_planned": len(flow_rows), "flows_started": len(started), "flows_completed": len(done),
           "flows_unfinished": len(flow_rows) - len(done),
           "completed_share": round(len(done) / len(flow_rows), 4) if flow_rows else None}
    out.update(_percentiles("fct", [r["fct_ms"] for r in done], "_ms"))
    out.update(_percentiles("slowdown", [r["slowdown"] for r in done]))
    for name, _ in FCT_BUCKETS:
        mine = [r for r in done if r["bucket"] == name]
        out.update(_percentiles(f"fct_{name}", [r["fct_ms"] for r in mine], "_ms"))
        out.update(_percentiles(f"slowdown_{name}", [r["slowdown"] for r in mine]))
        out[f"flows_{name}"] = sum(r["bucket"] == name for r in flow_rows)
    big = [r["tput_mbps"] for r in done if r["bucket"] == FCT_BUCKETS[-1][0]]
    out["tput_over3m_p50_mbps"] = round(m.percentile(big, 50), 4) if big else None
    out["tput_over3m_mean_mbps"] = round(sum(big) / len(big), 4) if big else None
    return out


def per_class(flow_rows: Sequence[dict], classes: Sequence[tuple[int, str, str, float]]) -> list[dict]:
    """metrics.json's entries of the short-flow classes: CLASSES (group, name, cc, base RTT
    in seconds), each with its FCT metrics."""
    out = []
    for group, name, cc, rtt in classes:
        entry = {"group": group, "class": name, "cc": cc, "rtt_ms": round(rtt * 1e3, 3)}
        entry.update(summarize([r for r in flow_rows if r["group"] == group]))
        out.append(entry)
    return out


def cdfs(flow_rows: Sequence[dict]) -> dict:
    """class name -> {"cc", "all": FCT CDF (ms), bucket: its FCT CDF} of the completed flows."""
    out: dict = {}
    for r in flow_rows:
        entry = out.setdefault(r["class"], {"cc": r["cc"], "group": r["group"], "all": []})
        if r["fct_ms"] is not None:
            entry["all"].append(r["fct_ms"])
            entry.setdefault(r["bucket"], []).append(r["fct_ms"])
    return {name: {k: (cdf(v) if isinstance(v, list) else v) for k, v in entry.items()} for name, entry in out.items()}


def programs(summaries: Sequence[dict], flow_rows: Sequence[dict]) -> dict:
    """What the programs cost and how late they opened flows: their summaries as written, the
    99th percentile of the lateness and CPU seconds (senders and sinks) per flow."""
    late = [r["late_ms"] for r in flow_rows if r["late_ms"] is not None]
    cpu = sum(s.get("cpu_s") or 0.0 for s in summaries)
    return {"shortflow_programs": list(summaries),
            "shortflow_late_p99_ms": round(m.percentile(late, 99), 3) if late else None,
            "shortflow_cpu_s_per_flow": round(cpu / len(flow_rows), 6) if flow_rows else None}
