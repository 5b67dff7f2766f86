"""Classes of long flows on one bottleneck (rtt-mix), registered in plot_kinds.PLOTS.

class_share: per point (its axes other than the CC), each class's share of what all flows
delivered after startup, one bar per CC and class, against the class's fair share (its
flows over all flows); below, each class's median smoothed RTT against its own base RTT
(not the link's: a class may have a path of its own), which says who kept the queue. The
report's table gives the same numbers with the goodput and the retransmission rate
(report_field.class_table).
"""

from __future__ import annotations

from ...verdicts import claims as claims_mod
from ...store.results import RunDir
from ..reports.cells import mean
from .style import RUN_AXIS, cc_of, style

HATCHES = ("", "//", "..", "xx", "\\\\", "oo")  # one per class, in spec order


def _where(params: dict) -> str:
    """A point's axes other than the CC ("buffer=4bdp"), or "all points" (several runs' points
    side by side: the run is in the CC's label)."""
    return ", ".join(f"{k}={v}" for k, v in params.items() if k not in ("cc", RUN_AXIS)) or "all points"


def class_rows(records: list[dict]) -> list[dict]:
    """One row per grid point and class: where, cc, class, its flows and fair share, and its
    share (mean, lowest, highest over repetitions), steady goodput, srtt p50 and
    retransmission rate (means), in the order the points first appear."""
    rows = []
    for group in claims_mod.grid_points(records):
        classes = group[0]["metrics"].get("groups") or ()
        total = sum(c.get("flows") or 0 for c in classes)
        for c in classes:
            entries = [e for r in group for e in r["metrics"].get("groups") or () if e["group"] == c["group"]]
            shares = [e.get("share") for e in entries if isinstance(e.get("share"), (int, float))]
            rows.append({"where": _where(group[0]["params"]), "cc": cc_of(group[0]), "class": c["class"],
                         "rtt_ms": c.get("rtt_ms"), "flows": c.get("flows"),
                         "fair": (c.get("flows") or 0) / total if total else None,
                         "share": mean(shares), "low": min(shares) if shares else None,
                         "high": max(shares) if shares else None, "n": len(group),
                         "goodput": mean(e.get("steady_goodput_mbps") for e in entries),
                         "srtt_p50": mean(e.get("srtt_p50_ms") for e in entries),
                         "retransmit_rate": mean(e.get("retransmit_rate") for e in entries)})
    return rows


def in_file_order(exp, rows: list[dict]) -> list[dict]:
    """ROWS by their point's place in the experiment's grid, not in the run's shuffled order."""
    grid = list(dict.fromkeys(_where(p.params) for p in exp.points))
    return sorted(rows, key=lambda r: grid.index(r["where"]) if r["where"] in grid else len(grid))


def class_share(plt, exp, rundir: RunDir, records: list[dict]):
    rows = in_file_order(exp, class_rows(records))
    wheres = list(dict.fromkeys(r["where"] for r in rows))
    ccs = list(dict.fromkeys(r["cc"] for r in rows))
    names = list(dict.fromkeys(r["class"] for r in rows))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 8), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    width = 0.8 / max(1, len(ccs) * len(names))
    labelled = set()
    for r in rows:
        k = ccs.index(r["cc"]) * len(names) + names.index(r["class"])
        x = wheres.index(r["where"]) + (k + 0.5) * width - 0.4
        st, hatch = style(r["cc"]), HATCHES[names.index(r["class"]) % len(HATCHES)]
        # one legend entry per CC and class (its first bars: several runs' may sit at points of
        # their own); the RTTs are on the x axis
        label = f"{st['label']}, {r['class']}" if (r["cc"], r["class"]) not in labelled else None
        labelled.add((r["cc"], r["class"]))
        if r["share"] is not None:
            err = [[r["share"] - r["low"]], [r["high"] - r["share"]]] if r["n"] > 1 else None
            top.bar(x, r["share"], width, color=st["color"], alpha=0.85, hatch=hatch, edgecolor="black",
                    lw=0.6, yerr=err, capsize=2, label=label)
        if r["fair"] is not None:
            top.plot([x - width / 2, x + width / 2], [r["fair"]] * 2, color="black", lw=1.6)
        if r["srtt_p50"] is not None:
            bottom.bar(x, r["srtt_p50"], width, color=st["color"], alpha=0.85, hatch=hatch, edgecolor="black",
                       lw=0.6)
        if r["rtt_ms"] is not None:  # the class's own path, not the link's: what its queue adds is above it
            bottom.plot([x - width / 2, x + width / 2], [r["rtt_ms"]] * 2, color="black", lw=1.6)
    top.plot([], [], color="black", lw=1.6, label="the class's fair share (its flows / all flows)")
    bottom.plot([], [], color="black", lw=1.6, label="the class's base RTT")
    top.set_ylim(0, 1.02)
    top.set_ylabel("share of the goodput after startup")
    top.set_title("each class's share" + (" (bar: lowest-highest repetition)" if any(r["n"] > 1 for r in rows)
                                          else ""), fontsize=10)
    bottom.set_ylabel("median smoothed RTT (ms)")
    bottom.set_title("each class's median smoothed RTT after startup (ss), against its base RTT", fontsize=10)
    first = {w: next(r["cc"] for r in rows if r["where"] == w) for w in wheres}  # the classes' RTTs: one CC's
    rtts = {w: " / ".join(f"{r['class']} {r['rtt_ms']:g} ms" for r in rows if r["where"] == w and r["cc"] == first[w])
            for w in wheres}
    bottom.set_xticks(range(len(wheres)), [f"{w}\n{rtts[w]}" for w in wheres], fontsize=9)
    bottom.set_xlim(-0.5, len(wheres) - 0.5)
    bottom.set_ylim(bottom=0)
    top.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    bottom.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.subplots_adjust(left=0.07, right=0.74, hspace=0.2)
    return fig
