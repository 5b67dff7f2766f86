"""The report's tables for the field experiments (docs/field.md): our numbers at full
length next to the anchors'. Reads records only, like the rest of the report.

coexist: per buffer, each CC's share of the goodput (mean over repetitions, and the
lowest and highest), the Ware et al. model's BBR share, and the published point the
experiment's `reference: {goodput_mbps: {BDPs: {cc: Mbit/s}}}` gives (IETF 101 at 8 BDP).
"""

from __future__ import annotations

from . import ware
from .plots_field import class_shares


def _share(values: tuple | None) -> str:
    if values is None:
        return "–"
    _, mean, low, high = values
    return f"{mean:.2f}" + (f" ({low:.2f}-{high:.2f})" if high > low else "")


def coexist_table(exp, records: list[dict]) -> list[str]:
    """Shares by buffer beside the model and the reference; [] for other experiments."""
    if exp.plot_kind != "coexist_share" or not records:
        return []
    shares = class_shares(records)
    ccs = sorted(shares)
    if not ccs:
        return []
    rec = records[0]
    durations = [f["duration"] for f in rec.get("flow_plan") or () if f.get("duration")]
    n_bbr = sum(f["cc"] == "bbr" for f in rec.get("flow_plan") or ())
    ref = {float(x): g for x, g in (exp.reference.get("goodput_mbps") or {}).items()}
    source = exp.reference.get("source", "reference")
    head = ["buffer (BDP)"] + [f"{cc} share" for cc in ccs] + (["BBR, Ware et al. model"] if n_bbr and durations else [])
    head += [f"BBR share, {source}"] if ref else []
    lines = ["", "Each CC's share of the goodput after startup (mean over repetitions, lowest-highest):", "",
             "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    by_x = {cc: {p[0]: p for p in points} for cc, points in shares.items()}
    for x in sorted({x for points in by_x.values() for x in points} | set(ref)):
        cells = [f"{x:g}"] + [_share(by_x[cc].get(x)) for cc in ccs]
        if n_bbr and durations:
            cells.append(f"{ware.share(x, rec['link']['rate'], rec['link']['rtt'], min(durations), n_bbr).bbr:.2f}")
        if ref:
            g = ref.get(x)
            cells.append(f"{g['bbr'] / sum(g.values()):.2f} ({g['bbr']:g} of {sum(g.values()):g} Mbit/s)"
                         if g and "bbr" in g else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return lines
