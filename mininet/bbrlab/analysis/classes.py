"""Metrics per traffic class of one point: per flow group and per congestion control.

A point may mix classes: flow groups with their own CC, count and RTT share the
bottleneck. Each class gets its goodput, its share of what all flows delivered, its
share of the link's payload capacity, its RTT percentiles (the senders' smoothed RTT from
ss, after each flow's startup) and its retransmits. metrics.json holds them as
"groups" (one entry per flow group, in spec order) and "by_cc" (one per CC), which
claims can address (`where: {group: 0}`, or `where: {cc: bbr}` inside a mixed point).

Pure: it reads the rows and series analysis has built, nothing else.
"""

from __future__ import annotations

from . import metrics as m
from ..schema.link import PAYLOAD_BYTES
from ..schema.metric_names import CLASS_LISTS, CLASS_METRICS, CLASS_SELECTORS, RTT_PERCENTILES  # noqa: F401

# The tables of what this module writes and what a claim may read of a class live with
# the other metric names (metric_names.py), which spec checks claims against.
METRICS = CLASS_LISTS
SELECTORS = CLASS_SELECTORS


def _class(rows: list[dict], srtts: list[float], total_steady: float, capacity_mbps: float) -> dict:
    steady = sum(r["steady_goodput_mbps"] for r in rows)
    out = {
        "flows": len(rows),
        "goodput_mbps": round(sum(r["goodput_mbps"] for r in rows), 4),
        "steady_goodput_mbps": round(steady, 4),
        # of what every flow delivered after startup: the classes' shares add up to 1
        "share": round(steady / total_steady, 4) if total_steady > 0 else None,
        # of what the link can carry as TCP payload
        "capacity_share": round(steady / capacity_mbps, 4) if capacity_mbps > 0 else None,
        "retransmits": sum(r["retransmits"] or 0 for r in rows),
        "retransmit_rate": m.retransmit_rate(rows, PAYLOAD_BYTES),
    }
    for q in RTT_PERCENTILES:
        out[f"srtt_p{q}_ms"] = round(m.percentile(srtts, q), 3) if srtts else None
    return out


def _srtts(flow_series: dict, row: dict, startup: float) -> list[float]:
    """The flow's ss srtt samples from its data start + STARTUP (all of them if none is)."""
    samples = flow_series.get(row["id"], {}).get("srtt_ms") or []
    after = [v for t, v in samples if t >= row["data_start_s"] + startup]
    return after or [v for _, v in samples]


def cc_key(row: dict) -> str:
    """A flow's CC as by_cc names it: a QUIC stack's by the stack's name too (picoquic's bbr
    is its BBRv3, never Linux's bbr), so one point can mix them without merging them."""
    tool = row.get("tool", "iperf3")
    return row["cc"] if tool == "iperf3" else f"{tool}-{row['cc']}"


def per_class(rows: list[dict], flow_series: dict, group_rtts: list[float], startup: float,
              capacity_mbps: float, names: list[str] | None = None) -> dict:
    """{"groups": [...], "by_cc": {...}} from analysis's flow ROWS (id, cc, group, goodput,
    steady goodput, retransmits, data start), FLOW_SERIES (id -> its series, with srtt_ms),
    each group's base RTT in seconds, the startup skipped, the payload capacity, and each
    group's name (`class`; default g1, g2, ...)."""
    total = sum(r["steady_goodput_mbps"] for r in rows)
    srtt = {r["id"]: _srtts(flow_series, r, startup) for r in rows}
    groups = []
    for g, rtt in enumerate(group_rtts):
        mine = [r for r in rows if r["group"] == g]
        if not mine:
            continue
        entry = {"group": g, "class": names[g] if names else f"g{g + 1}", "cc": mine[0]["cc"],
                 "rtt_ms": round(rtt * 1e3, 3)}
        entry.update(_class(mine, [v for r in mine for v in srtt[r["id"]]], total, capacity_mbps))
        groups.append(entry)
    by_cc = {}
    for cc in sorted({cc_key(r) for r in rows}):
        mine = [r for r in rows if cc_key(r) == cc]
        by_cc[cc] = _class(mine, [v for r in mine for v in srtt[r["id"]]], total, capacity_mbps)
    return {"groups": groups, "by_cc": by_cc}


def scope(metrics: dict, where: dict) -> dict:
    """The metrics a claim reads under WHERE: a group's own (`group: N`, or `class: NAME`
    by the group's name), or a CC's inside a point that mixes CCs (`cc: NAME`), each over
    the point's; else the point's."""
    if "class" in where:
        found = [g for g in metrics.get("groups") or () if g.get("class") == str(where["class"])]
        return {**metrics, **found[0]} if found else {}
    if "group" in where:
        try:
            index = int(where["group"])
        except (TypeError, ValueError):
            return {}
        found = [g for g in metrics.get("groups") or () if g["group"] == index]
        return {**metrics, **found[0]} if found else {}
    cc = where.get("cc")
    by_cc = metrics.get("by_cc") or {}
    if isinstance(cc, str) and len(by_cc) > 1 and cc in by_cc:
        return {**metrics, **by_cc[cc]}
    return metrics
