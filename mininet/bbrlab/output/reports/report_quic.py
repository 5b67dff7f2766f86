"""The report's table for quic-jitter's question (quic-jitter, quic-unlimited, and
quic-jitter-tcp, its points with kernel TCP), with the numbers of the post it follows
beside the measured ones. Reads records only.

Per base RTT and delay variation, per CC: the connections' mean, lowest and highest rate
(bytes over duration, as the post's figure 1) and the point's total goodput. For picoquic's
connections also the median of their median RTT samples, the CPU they used (in cores:
their server and client processes over the point's duration) and the share of their
packet trains that pacing held back (picoquic's performance log; the post's diagnosis).
For kernel TCP's flows the point's median RTT after startup, its retransmission rate and
when BBR left STARTUP (median over flows). Then each BBR's mean rate over CUBIC's, and
whether the point was CPU-bound (then no finding is read from the row).
"""

from __future__ import annotations

from ...verdicts import claims as claims_mod
from .cells import cell, mean

POST = ("Huitema 2024 (picoquic on a laptop's loopback, 16 connections of 1 GB per CC): BBR (v3) mean "
        "1.7 Gbit/s (1.1-2.4), CUBIC 3.0 (2.6-3.8); RTT samples 20-1400 us; with the delay-based exits "
        "disabled below a min_rtt of 128 us, BBR 1.4-3.5 Gbit/s, about 50 % faster and still about 15 % "
        "below CUBIC.")


def _median(values: list) -> float | None:
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def _flows(group: list[dict], key: str) -> list:
    return [f.get(key) for r in group for f in r["metrics"]["flows"]]


def _cpu_cores(group: list[dict]) -> float | None:
    return mean([sum(f.get("cpu_s") or 0 for f in r["metrics"]["flows"]) / r["metrics"]["duration_s"]
                 for r in group if r["metrics"].get("duration_s")])


def _any(cc: str) -> bool:
    return True


def _bbr(cc: str) -> bool:
    return cc.startswith("bbr")


# Per tool: (column after the CC's name, the CCs it applies to, its cell from the CC's
# repetitions at one point).
COLUMNS = {
    "picoquic": (("RTT sample p50 (ms)", _any, lambda g: cell(_median(_flows(g, "rtt_sample_p50_ms")), 1)),
                 ("CPU (cores)", _any, lambda g: cell(_cpu_cores(g))),
                 ("trains held by pacing", _any, lambda g: cell(mean(_flows(g, "pacing_limited_share"))))),
    "iperf3": (("RTT p50 after startup (ms)", _any,
                lambda g: cell(mean([r["metrics"].get("steady_rtt_p50_ms") for r in g]), 1)),
               ("retransmit rate", _any, lambda g: cell(mean([r["metrics"].get("retransmit_rate") for r in g]), 4)),
               ("left STARTUP (s)", _bbr, lambda g: cell(_median(_flows(g, "bbr_left_startup_by_s")), 1))),
}


def _columns(tool: str, cc: str) -> list:
    return [(name, column) for name, applies, column in COLUMNS[tool] if applies(cc)]


def quic_table(exp, records: list[dict]) -> list[str]:
    tools = {f.get("tool", "iperf3") for r in records for f in r.get("flow_plan") or ()}
    if "picoquic" not in tools and getattr(exp, "plot_kind", None) != "quic_rates":
        return []
    rows: dict = {}
    for group in claims_mod.grid_points(records):
        rec = group[0]
        key = (rec["link"]["rtt"], rec["link"]["delay_variation"])
        plan = rec["flow_plan"][0]
        rows.setdefault(key, {})[(plan.get("tool", "iperf3"), plan["cc"])] = group
    ccs = sorted({k for by_cc in rows.values() for k in by_cc})
    head = ["base RTT (ms)", "variation (ms)"]
    for tool, cc in ccs:
        head += [f"{cc}: rate mean (min-max, Mbit/s)", f"{cc}: total (Mbit/s)"]
        head += [f"{cc}: {name}" for name, _ in _columns(tool, cc)]
    ratios = [k for k in ccs if k[1].startswith("bbr") and (k[0], "cubic") in ccs]
    head += [f"{cc} / cubic mean rate" for _, cc in ratios] + ["CPU-bound"]
    lines = ["", POST, "", "Measured here: per connection, its bytes over its duration; means over repetitions:", "",
             "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for (rtt, variation), by_cc in sorted(rows.items()):
        cells, means, bound = [f"{rtt * 1e3:g}", f"{variation * 1e3:g}"], {}, False
        for key in ccs:
            group = by_cc.get(key, [])
            rates = [f["goodput_mbps"] for r in group for f in r["metrics"]["flows"]]
            means[key] = mean(rates)
            bound = bound or any(r["metrics"].get("cpu_bound") for r in group)
            cells += [f"{cell(means[key])} ({cell(min(rates))}-{cell(max(rates))})" if rates else "–",
                      cell(mean([r["metrics"]["goodput_mbps"] for r in group]))]
            cells += [column(group) if group else "–" for _, column in _columns(*key)]
        for tool, cc in ratios:
            bbr, cubic = means.get((tool, cc)), means.get((tool, "cubic"))
            cells.append(cell(bbr / cubic) if bbr and cubic else "–")
        lines.append("| " + " | ".join(cells + ["yes" if bound else "no"]) + " |")
    return lines
