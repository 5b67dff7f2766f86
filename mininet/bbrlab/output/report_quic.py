"""The report's table for runs of QUIC connections (quic-jitter, quic-unlimited), with the
numbers of the post it follows beside the measured ones. Reads records only.

Per base RTT and delay variation, per CC: the connections' mean, lowest and highest rate
(bytes over duration, as the post's figure 1), the point's total goodput, the median of
the connections' median RTT samples, the CPU the connections used (in cores: their
server and client processes over the point's duration), and the share of their packet
trains that pacing held back (picoquic's performance log; the post's diagnosis); the BBR / CUBIC ratio of mean
rates; and whether the point was CPU-bound (then no finding is read from the row).
"""

from __future__ import annotations

from ..verdicts import claims as claims_mod
from .cells import cell, mean

POST = ("Huitema 2024 (picoquic on a laptop's loopback, 16 connections of 1 GB per CC): BBR (v3) mean "
        "1.7 Gbit/s (1.1-2.4), CUBIC 3.0 (2.6-3.8); RTT samples 20-1400 us; with the delay-based exits "
        "disabled below a min_rtt of 128 us, BBR 1.4-3.5 Gbit/s, about 50 % faster and still about 15 % "
        "below CUBIC.")


def _median(values: list) -> float | None:
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def quic_table(exp, records: list[dict]) -> list[str]:
    if not any(f.get("tool") == "picoquic" for r in records for f in r.get("flow_plan") or ()):
        return []
    rows: dict = {}
    for group in claims_mod.grid_points(records):
        rec = group[0]
        key = (rec["link"]["rtt"], rec["link"]["delay_variation"])
        rows.setdefault(key, {})[rec["flow_plan"][0]["cc"]] = group
    ccs = sorted({cc for by_cc in rows.values() for cc in by_cc})
    head = ["base RTT (ms)", "variation (ms)"]
    for cc in ccs:
        head += [f"{cc}: rate mean (min-max, Mbit/s)", f"{cc}: total (Mbit/s)", f"{cc}: RTT sample p50 (ms)",
                 f"{cc}: CPU (cores)", f"{cc}: trains held by pacing"]
    pair = {"bbr", "cubic"} <= set(ccs)
    head += (["bbr / cubic mean rate"] if pair else []) + ["CPU-bound"]
    lines = ["", POST, "", "Measured here: per connection, its bytes over its duration; means over repetitions:", "",
             "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for (rtt, variation), by_cc in sorted(rows.items()):
        cells, means, bound = [f"{rtt * 1e3:g}", f"{variation * 1e3:g}"], {}, False
        for cc in ccs:
            group = by_cc.get(cc, [])
            rates = [f["goodput_mbps"] for r in group for f in r["metrics"]["flows"]]
            means[cc] = sum(rates) / len(rates) if rates else None
            cpu = [sum(f.get("cpu_s") or 0 for f in r["metrics"]["flows"]) / r["metrics"]["duration_s"]
                   for r in group if r["metrics"].get("duration_s")]
            bound = bound or any(r["metrics"].get("cpu_bound") for r in group)
            cells += [f"{cell(means[cc])} ({cell(min(rates))}-{cell(max(rates))})" if rates else "–",
                      cell(sum(r["metrics"]["goodput_mbps"] for r in group) / len(group) if group else None),
                      cell(_median([f.get("rtt_sample_p50_ms") for r in group for f in r["metrics"]["flows"]]), 1),
                      cell(sum(cpu) / len(cpu) if cpu else None),
                      cell(mean([f.get("pacing_limited_share") for r in group for f in r["metrics"]["flows"]]))]
        if pair:
            cells.append(cell(means["bbr"] / means["cubic"]) if means.get("bbr") and means.get("cubic") else "–")
        lines.append("| " + " | ".join(cells + ["yes" if bound else "no"]) + " |")
    return lines
