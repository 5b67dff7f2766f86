"""The report's tables for the field experiments (docs/field.md): our numbers at full
length next to the anchors'. Reads records only, like the rest of the report.

coexist: per buffer, each CC's share of the goodput (mean over repetitions, and the
lowest and highest), the Ware et al. model's BBR share, and the published point the
experiment's `reference: {goodput_mbps: {BDPs: {cc: Mbit/s}}}` gives (IETF 101 at 8 BDP).

short flows (fct.py): per grid point and class, the flows completed of those planned, the
median FCT and the slowdown's median / p95 / p99 of objects up to 3 MB, and the median
throughput of objects over 3 MB (means over repetitions).

classes of long flows (rtt-mix): per point and class, its share against its fair share.
"""

from __future__ import annotations

from ...analysis import ware
from ...verdicts import reference_numbers
from .cells import cell, mean
from ..figures.plots_classes import class_rows, in_file_order
from ..figures.plots_field import class_shares, pairings, with_v1


def _share(values: tuple | None) -> str:
    if values is None:
        return "–"
    _, mean, low, high = values
    return f"{mean:.2f}" + (f" ({low:.2f}-{high:.2f})" if high > low else "")


def coexist_table(exp, records: list[dict]) -> list[str]:
    """Shares by buffer beside the model and the reference; [] for other experiments."""
    if exp.plot_kind != "coexist_share" or not records:
        return []
    pairs = pairings(records)  # v3-coexist: v1's pairing with CUBIC and v3's, side by side
    columns = [(pairing, cc, points) for pairing, recs in pairs.items()
               for cc, points in sorted(class_shares(recs).items())]
    if not columns:
        return []
    rec = (with_v1(records) or records)[0]
    durations = [f["duration"] for f in rec.get("flow_plan") or () if f.get("duration")]
    n_bbr = sum(f["cc"] == "bbr" for f in rec.get("flow_plan") or ())
    apart = reference_numbers.mismatch(exp.reference, records)
    ref = {} if apart else {float(x): g for x, g in (exp.reference.get("goodput_mbps") or {}).items()}
    source = exp.reference.get("source", "reference")
    head = ["buffer (BDP)"] + [f"{cc} share" + (f" ({pairing.replace('+', ' vs ')})" if len(pairs) > 1 else "")
                               for pairing, cc, _ in columns]
    head += ["BBR, Ware et al. model"] if n_bbr and durations else []
    head += [f"BBR share, {source}"] if ref else []
    lines = ["", "Each CC's share of the goodput after startup (mean over repetitions, lowest-highest):", "",
             "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    by_x = [{p[0]: p for p in points} for _, _, points in columns]
    for x in sorted({x for column in by_x for x in column} | set(ref)):
        cells = [f"{x:g}"] + [_share(column.get(x)) for column in by_x]
        if n_bbr and durations:
            cells.append(f"{ware.share(x, rec['link']['rate'], rec['link']['rtt'], min(durations), n_bbr).bbr:.2f}")
        if ref:
            g = ref.get(x)
            cells.append(f"{g['bbr'] / sum(g.values()):.2f} ({g['bbr']:g} of {sum(g.values()):g} Mbit/s)"
                         if g and "bbr" in g else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return lines + (["", f"Not compared with {source}: {apart}."] if apart else [])


def class_table(exp, records: list[dict]) -> list[str]:
    """Each class's share against its fair share, per point; [] for other plot kinds."""
    if exp.plot_kind != "class_share" or not records:
        return []
    lines = ["", "Each class's share of the goodput after startup against its fair share (mean over repetitions, "
             "lowest-highest), its goodput, median smoothed RTT and retransmission rate:", "",
             "| point | CC | class (base RTT) | flows | share | fair share | share / fair | goodput (Mbit/s) "
             "| srtt p50 (ms) | retransmitted |", "|---" * 10 + "|"]
    for r in in_file_order(exp, class_rows(records)):
        spread = f" ({r['low']:.2f}-{r['high']:.2f})" if r["n"] > 1 and r["share"] is not None else ""
        ratio = r["share"] / r["fair"] if r["share"] is not None and r["fair"] else None
        rate = f"{100 * r['retransmit_rate']:.2f}%" if r["retransmit_rate"] is not None else "–"
        lines.append(f"| {r['where']} | {r['cc']} | {r['class']} ({cell(r['rtt_ms'], 0)} ms) | {r['flows']} "
                     f"| {cell(r['share'])}{spread} | {cell(r['fair'])} | {cell(ratio)} | {cell(r['goodput'])} "
                     f"| {cell(r['srtt_p50'], 1)} | {rate} |")
    return lines


FCT_COLUMNS = (("FCT p50 (ms)", "fct_p50_ms", 0), ("FCT ≤ 3 MB p50 (ms)", None, 0),
               ("slowdown p50", "slowdown_p50", 2), ("p95", "slowdown_p95", 2), ("p99", "slowdown_p99", 2),
               ("> 3 MB, Mbit/s (p50)", "tput_over3m_p50_mbps", 2))


def _small_fct(entry: dict) -> float | None:
    """The median FCT of the objects up to 3 MB: the median of the buckets' medians,
    weighted by their flows (close enough for a table; the figure has the CDFs)."""
    parts = [(entry.get(f"fct_{b}_p50_ms"), entry.get(f"flows_{b}") or 0) for b in ("to100k", "to1m", "to3m")]
    parts = [(v, n) for v, n in parts if v is not None and n]
    return sum(v * n for v, n in parts) / sum(n for _, n in parts) if parts else None


def fct_table(records: list[dict]) -> list[str]:
    """Short flows per grid point and class; [] for a run without short flows."""
    from ...verdicts.claims import grid_points, point_name

    rows = []
    for group in grid_points(records):
        entries: dict[int, list[dict]] = {}
        for rec in group:
            for entry in rec["metrics"].get("groups") or ():
                if "flows_planned" in entry:
                    entries.setdefault(entry["group"], []).append(entry)
        for g, reps in sorted(entries.items()):
            cells = [point_name(group[0]), reps[0]["class"], reps[0]["cc"],
                     f"{sum(e['flows_completed'] for e in reps)} of {sum(e['flows_planned'] for e in reps)}"]
            for _, key, digits in FCT_COLUMNS:
                cells.append(cell(mean([_small_fct(e) if key is None else e.get(key) for e in reps]), digits))
            rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return []
    head = ["point", "class", "CC", "completed"] + [c for c, _, _ in FCT_COLUMNS]
    return ["", "Short flows per class (means over repetitions; FCT: the data phase; slowdown: FCT over the "
            "base RTT plus the bytes on the wire at the rate, at least 1):", "",
            "| " + " | ".join(head) + " |", "|---" * len(head) + "|", *rows]
