"""Figures of short flows (fct.py), registered in plot_kinds.PLOTS as `fct_cdf`.

Left: the flow completion time's CDF per class and congestion control (every repetition's
completed flows pooled; colour by CC as in every bbrlab figure, line style by class).
Right: each completed flow's slowdown against its size (log-log), the median per size
bucket drawn over the points. Legends give how many flows completed and how many did not.
"""

from __future__ import annotations

import statistics

from ...verdicts import claims as claims_mod
from ...schema.metric_names import FCT_BUCKETS
from .style import RUN_AXIS, style
from ...store.results import RunDir

CLASS_STYLES = ("-", "--", ":", "-.")
BUCKET_EDGES = [0.0] + [upper for _, upper in FCT_BUCKETS[:-1]] + [float("inf")]


def workload_line(record: dict, axes: dict | None = None) -> str | None:
    """The short-flow classes of RECORD's point, for the figure's parameter line (None: none);
    a value swept (AXES) is given as the sweep's values, not the first point's."""
    axes = axes or {}

    def swept(key: str, value: str) -> str:
        return f"{', '.join(str(v) for v in axes[key])} (swept)" if key in axes else value

    parts = []
    for w in record.get("workloads") or ():
        wl = w["workload"]
        if wl["arrivals"] == "sequential":
            how = f"{wl['count']} downloads one after another"
        elif wl.get("load") is not None:
            load = swept("load", f"{wl['load'] * 100:g}%")
            how = f"Poisson, load {load} for {wl['duration']:g} s"
        else:
            rate = swept("rate", f"{wl['rate']:g}/s")
            how = f"Poisson, {rate} for {wl['duration']:g} s"
        own_rtt = (record.get("flows") or [{}] * (w["group"] + 1))[w["group"]].get("rtt")
        rtt = f"{w['rtt'] * 1e3:g} ms" if own_rtt or "rtt" not in axes else "the link's"
        loss = f", loss {w['loss'] * 100:g}%" if w["loss"] else ""
        parts.append(f"{w['cls']}: RTT {rtt}{loss}, {how}, sizes {swept('sizes', wl['sizes']['text'])}")
    return "; ".join(parts) or None


def pooled(rundir: RunDir, records: list[dict]) -> dict[tuple[str, str, str], list[dict]]:
    """(point name without repetition, class, cc) -> every repetition's flow rows (several
    runs' points: the name without the run, which the CC's label gives)."""
    out: dict = {}
    for group in claims_mod.grid_points(records):
        name = claims_mod.point_name({"params": {k: v for k, v in group[0]["params"].items() if k != RUN_AXIS}})
        for rec in group:
            for row in rundir.series(rec["id"]).get("shortflows") or ():
                out.setdefault((name, row["class"], row["cc"]), []).append(row)
    return out


def _rest(name: str) -> str:
    """A point's name without its CC (colour says that): 'rtt=40ms, sizes=fixed 1MB'."""
    return ", ".join(part for part in name.split(", ") if not part.startswith("cc=") and part != "point")


def _label(key: tuple[str, str, str], rows: list[dict]) -> str:
    name, cls, cc = key
    done = sum(r["fct_ms"] is not None for r in rows)
    point = f" [{_rest(name)}]" if _rest(name) else ""
    return f"{style(cc)['label']}, {cls}{point} ({done} done, {len(rows) - done} unfinished)"


SLOWDOWN_TICKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]
SLOWDOWN_TICKS_FINE = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]


def slowdown_ticks(span: float) -> list[float]:
    """Where the slowdown axis is labelled, for an axis whose top is SPAN times its bottom."""
    return SLOWDOWN_TICKS_FINE if span < 10 else SLOWDOWN_TICKS


def fct_cdf(plt, exp, rundir: RunDir, records: list[dict]):
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 7))
    flows = pooled(rundir, records)
    # colour by CC; line style by class and by the point's other parameters
    kinds = sorted({(_rest(name), cls) for name, cls, _ in flows})
    for key, rows in sorted(flows.items()):
        name, cls, cc = key
        st = style(cc)
        ls = CLASS_STYLES[kinds.index((_rest(name), cls)) % len(CLASS_STYLES)]
        fcts = sorted(r["fct_ms"] for r in rows if r["fct_ms"] is not None)
        if fcts:
            left.step(fcts, [(i + 1) / len(rows) for i in range(len(fcts))], where="post", color=st["color"],
                      ls=ls, lw=1.6, label=_label(key, rows))
        done = [r for r in rows if r["slowdown"] is not None]
        right.scatter([r["size"] for r in done], [r["slowdown"] for r in done], s=7, alpha=0.25, color=st["color"],
                      marker=st["marker"])
        medians = []
        for lo, hi in zip(BUCKET_EDGES, BUCKET_EDGES[1:]):
            inside = [r for r in done if lo < r["size"] <= hi]
            if inside:  # as metrics.json's slowdown_p50 (the two middle values' mean)
                medians.append((statistics.median(r["size"] for r in inside),
                                statistics.median(r["slowdown"] for r in inside)))
        if medians:
            right.plot([x for x, _ in medians], [y for _, y in medians], color=st["color"], ls=ls, lw=1.8,
                       marker=st["marker"], label=f"{st['label']}, {cls}: median per size bucket"
                       + (f" [{_rest(name)}]" if _rest(name) else ""))
    left.set_xscale("log")
    left.set_xlabel("flow completion time (ms, data phase; log)")
    left.set_ylabel("share of the flows (unfinished ones never reach it)")
    left.set_ylim(0, 1.02)
    left.set_title("FCT per class and CC", fontsize=10)
    left.legend(fontsize=7, loc="best")
    for _, upper in FCT_BUCKETS[:-1]:
        right.axvline(upper, color="grey", lw=0.7, ls=":")
    right.set_xscale("log")
    right.set_yscale("log")
    # labels at 1-2-5 steps (finer within a decade): labelled minor ticks of a log axis run
    # into each other
    low, high = right.get_ylim()
    right.yaxis.set_major_locator(FixedLocator(slowdown_ticks(high / max(low, 1e-9))))
    right.yaxis.set_major_formatter(ScalarFormatter())
    right.yaxis.set_minor_formatter(NullFormatter())
    right.set_xlabel("object size (bytes; log; dotted: 100 KB, 1 MB, 3 MB)")
    on_trace = any(p.link.trace for p in exp.points)
    right.set_ylabel("slowdown: FCT / (base RTT + bytes on the wire / rate)"
                     + ("\nrate: what the trace offered from the flow's start" if on_trace else ""))
    right.set_title("slowdown against size", fontsize=10)
    right.legend(fontsize=7, loc="upper right")
    return fig
