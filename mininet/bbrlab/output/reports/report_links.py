"""The report's tables for the link-timing experiments (aggregation, low-rtt-jitter).
Reads records only, like the rest of the report.

aggregation: per slotted direction and base RTT, each CC's goodput and median RTT, and
what the ACK-aggregation allowance bought BBR (bbr / bbr_noagg).
low-rtt-jitter: per base RTT and variation, each CC's goodput, the variation against the
smallest RTT measured, the reordering seen, and whether the variation is within the
emulator's own RTT noise (then no finding is read from the row).
"""

from __future__ import annotations

from ...verdicts import claims as claims_mod
from .cells import cell, mean
from ..figures.plots_links import slot_on, noise_floor_ms


def _rows(records: list[dict], key) -> dict:
    """key(record) -> cc -> [metrics of each repetition]."""
    out: dict = {}
    for group in claims_mod.grid_points(records):
        cc = group[0]["flow_plan"][0]["cc"]
        out.setdefault(key(group[0]), {})[cc] = [r["metrics"] for r in group]
    return out


def aggregation_table(exp, records: list[dict]) -> list[str]:
    if exp.plot_kind != "aggregation_goodput" or not records:
        return []
    rows = _rows(records, lambda r: (slot_on(r), r["link"]["rtt"]))
    ccs = sorted({cc for by_cc in rows.values() for cc in by_cc})
    head = (["slots on", "base RTT (ms)"] + [f"{cc} goodput (Mbit/s)" for cc in ccs]
            + [f"{cc} median RTT (ms)" for cc in ccs]
            + (["bbr / bbr_noagg goodput"] if {"bbr", "bbr_noagg"} <= set(ccs) else []))
    lines = ["", "Goodput after startup and median RTT, mean over repetitions:", "",
             "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for (on, rtt), by_cc in sorted(rows.items()):
        good = {cc: mean([m.get("steady_goodput_mbps") for m in by_cc.get(cc, [])]) for cc in ccs}
        rtts = {cc: mean([m.get("steady_rtt_p50_ms") for m in by_cc.get(cc, [])]) for cc in ccs}
        cells = [on, f"{rtt * 1e3:g}"] + [cell(good[cc], 1) for cc in ccs] + [cell(rtts[cc], 1) for cc in ccs]
        if {"bbr", "bbr_noagg"} <= set(ccs):
            cells.append(cell(good["bbr"] / good["bbr_noagg"], 2) if good["bbr"] and good["bbr_noagg"] else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def jitter_table(exp, records: list[dict]) -> list[str]:
    if exp.plot_kind != "jitter_goodput" or not records:
        return []
    rows = _rows(records, lambda r: (r["link"]["rtt"], r["link"]["delay_variation"]))
    ccs = sorted({cc for by_cc in rows.values() for cc in by_cc})
    head = (["base RTT (ms)", "variation (ms)", "smallest RTT measured (ms)", "variation / smallest RTT"]
            + [f"{cc} goodput (Mbit/s)" for cc in ccs] + ["reordering seen", "within the emulator's noise"])
    lines = ["", "Goodput after startup, mean over repetitions; the emulator's noise is the idle path's "
             "RTT spread (p90 - p10) at the same base RTT without variation:", "",
             "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for (rtt, variation), by_cc in sorted(rows.items()):
        every = [m for ms in by_cc.values() for m in ms]
        floor = noise_floor_ms([r for r in records if r["link"]["rtt"] == rtt])
        smallest = min((m["idle_rtt_min_ms"] for m in every if m.get("idle_rtt_min_ms") is not None), default=None)
        swamped = "–" if floor is None or not variation else ("yes" if variation * 1e3 <= floor else "no")
        cells = [f"{rtt * 1e3:g}", f"{variation * 1e3:g}", cell(smallest, 2),
                 cell(variation * 1e3 / smallest, 2) if smallest else "–"]
        cells += [cell(mean([m.get("steady_goodput_mbps") for m in by_cc.get(cc, [])]), 1) for cc in ccs]
        cells += [str(sum(m.get("reordering_events") or 0 for m in every)), swamped]
        lines.append("| " + " | ".join(cells) + " |")
    return lines
