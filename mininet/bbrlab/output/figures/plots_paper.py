"""The 2016 paper's figures and the emulator's own: RTT over time (figure 5), throughput over
time (figure 6), rate steps, RTT against the buffer, and the link's fidelity. Registered in
plot_kinds.PLOTS."""

from __future__ import annotations

from ...analysis.metrics import percentile
from ...verdicts import claims as claims_mod
from ...store.results import RunDir
from . import guides
from .legends import right_of_axes
from .style import RUN_AXIS, base_cc, cc_of, point_label, rate_line, style


def rtt_timeseries(plt, exp, rundir: RunDir, records: list[dict]):
    """Figure 5: RTT over time for each CC on one axis, plus the RTT CDF."""
    fig, (ax, cdf) = plt.subplots(1, 2, figsize=(13, 5.6), gridspec_kw={"width_ratios": [2.2, 1]})
    medians: dict[str, list[float]] = {}  # per CC, each repetition's median RTT in run order
    for rec in sorted(records, key=lambda r: r.get("repetition", 1)):
        medians.setdefault(point_label(rec, {"cc"}), []).append(rec["metrics"].get("rtt_p50_ms", float("nan")))
    labelled = set()
    for rec in sorted(records, key=lambda r: (cc_of(r), r["id"])):
        series = rundir.series(rec["id"])
        if "+" in cc_of(rec) or class_paths(rec):  # several classes in one point: each its own entry
            _class_rtts(ax, cdf, rec, series, labelled)
            continue
        st = style(cc_of(rec))
        label = point_label(rec, {"cc"})
        # one legend entry per CC (the CDF's colours are the same), naming each run's median
        runs = medians[label]
        line = None
        if label not in labelled:
            line = (f"{label}: median RTT {runs[0]:.0f} ms" if len(runs) == 1 else
                    f"{label}, {len(runs)} runs: median RTT {', '.join(f'{m:.0f}' for m in runs)} ms")
        labelled.add(label)
        for name, pts in series["rtt"].items():
            pts = [(t, v) for t, v in pts if t >= 0]
            if not pts:
                continue
            ax.plot([t for t, _ in pts], [v for _, v in pts], color=st["color"], lw=1.0, label=line)
            values = sorted(v for _, v in pts)
            cdf.plot(values, [(i + 1) / len(values) for i in range(len(values))], color=st["color"], lw=1.6)
            line = None
    # the link's base RTT is no guide to a class on a path of its own: those get their own
    full = max(_guides(ax, cdf, [r for r in records if not class_paths(r)]) or 0,
               _class_guides(ax, cdf, [r for r in records if class_paths(r)]) or 0) or None
    ax.set_xlabel("time since flow start (s)")
    ax.set_ylabel("RTT (ms, ping every 100 ms)")
    ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], (full or 0) * 1.15))
    ax.legend(loc="upper right", fontsize=8)
    cdf.set_xlabel("RTT (ms)")
    cdf.set_ylabel("CDF")
    cdf.set_ylim(0, 1.01)  # no legend of its own: a CDF's axis ends at 1
    return fig


def _guides(ax, cdf, records: list[dict]) -> float | None:
    """The base RTT and where a buffer-filling sender ends up, across both axes: one line per
    value the points have (several runs' may differ), one legend entry naming them all; the
    largest RTT behind a full buffer, if any."""
    guides = (("base_rtt_ms", "g", "black", "--", 1, "base RTT"),
              ("full_buffer_rtt_ms", ".0f", "grey", ":", 1.2, "RTT behind a full buffer"))
    for key, fmt, color, ls, lw, text in guides:
        values = sorted({r["metrics"][key] for r in records if r["metrics"].get(key)})
        for k, value in enumerate(values):
            ax.axhline(value, color=color, ls=ls, lw=lw,
                       label=f"{text} {', '.join(dict.fromkeys(format(v, fmt) for v in values))} ms" if k == 0 else None)
            cdf.axvline(value, color=color, ls=ls, lw=lw)
    return max((r["metrics"].get("full_buffer_rtt_ms") or 0 for r in records), default=0) or None


def class_paths(record: dict) -> dict[str, float]:
    """The classes of a point that mixes them, by name, with the base RTT (ms) of each one's
    own path, where any differs from the link's; else {}."""
    metrics = record["metrics"]
    own = {g["class"]: g["rtt_ms"] for g in metrics.get("groups") or () if g.get("rtt_ms") is not None}
    return own if len(own) > 1 and any(v != metrics.get("base_rtt_ms") for v in own.values()) else {}


def _class_guides(ax, cdf, records: list[dict]) -> float | None:
    """Each class's own base RTT and the RTT behind a full buffer on its path, across both
    axes, for points whose classes have paths of their own: one line per value, one legend
    entry per guide naming each class's values; the largest RTT behind a full buffer."""
    base: dict[str, set] = {}
    full: dict[str, set] = {}
    for rec in records:
        queue = (rec["metrics"].get("full_buffer_rtt_ms") or 0) - rec["metrics"].get("base_rtt_ms", 0)
        for name, rtt in class_paths(rec).items():
            base.setdefault(name, set()).add(rtt)
            if queue > 0:
                full.setdefault(name, set()).add(rtt + queue)
    for values, fmt, color, ls, lw, text in ((base, "g", "black", "--", 1, "base RTT"),
                                             (full, ".0f", "grey", ":", 1.2, "RTT behind a full buffer")):
        label = f"{text}: " + ", ".join(f"{name} {'/'.join(format(v, fmt) for v in sorted(found))} ms"
                                        for name, found in values.items())
        for k, value in enumerate(sorted(set().union(*values.values()))):
            ax.axhline(value, color=color, ls=ls, lw=lw, label=label if k == 0 else None)
            cdf.axvline(value, color=color, ls=ls, lw=lw)
    return max((v for found in full.values() for v in found), default=0) or None


LINESTYLES = ("-", "--", ":", "-.")  # classes of one CC told apart


def _class_rtts(ax, cdf, rec: dict, series: dict, labelled: set) -> None:
    """A mixed point's RTT probes (one ping per flow group) coloured by each group's CC,
    with a line style per class of the same CC, and one legend entry per class naming its
    CC and its median RTT (of the first repetition drawn)."""
    groups = {f"g{g['group'] + 1}": g for g in rec["metrics"].get("groups") or []}
    # a sweep's point (its run is in its CC's label)
    where = ", ".join(f"{k}={v}" for k, v in rec["params"].items() if k not in ("cc", RUN_AXIS))
    seen: dict[str, int] = {}
    for name, pts in series["rtt"].items():
        pts = [(t, v) for t, v in pts if t >= 0]
        group = groups.get(name, {"class": name, "cc": cc_of(rec)})
        if not pts:
            continue
        st = style(group["cc"])
        ls = LINESTYLES[seen.get(group["cc"], 0) % len(LINESTYLES)]
        seen[group["cc"]] = seen.get(group["cc"], 0) + 1
        values = sorted(v for _, v in pts)
        label = None
        if (where, group["class"], group["cc"]) not in labelled:  # one entry per class, CC and point: its first
            label = (f"{group['class']} ({st['label']}){', ' + where if where else ''}: "  # repetition's
                     f"median RTT {percentile(values, 50):.0f} ms")
            labelled.add((where, group["class"], group["cc"]))
        ax.plot([t for t, _ in pts], [v for _, v in pts], color=st["color"], ls=ls, lw=1.0, label=label)
        cdf.plot(values, [(i + 1) / len(values) for i in range(len(values))], color=st["color"], ls=ls, lw=1.6)


def throughput_timeseries(plt, exp, rundir: RunDir, records: list[dict]):
    """Figure 6: per-flow throughput over time, with Jain's fairness index below."""
    rec = records[0]
    series = rundir.series(rec["id"])
    fig, (ax, jx) = plt.subplots(2, 1, figsize=(12, 7.2), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    cmap = plt.get_cmap("tab10")
    mixed = len({flow["cc"] for flow in series["flows"].values()}) > 1  # classes: coloured by CC
    for i, (fid, flow) in enumerate(series["flows"].items()):
        pts = flow["throughput"]
        color = style(flow["cc"])["color"] if mixed else cmap(i % 10)
        ax.plot([t for t, _ in pts], [v for _, v in pts], color=color, lw=1.2,
                label=f"flow {i + 1} ({style(flow['cc'])['label']}, starts {flow['start']:.0f} s)")
    rate_line(ax, series, rec["metrics"]["duration_s"], "bottleneck rate", lw=1)
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right", fontsize=8, ncol=2)
    if series.get("jain"):
        jx.plot([t for t, _ in series["jain"]], [v for _, v in series["jain"]], color="black", lw=1.2)
    jx.set_ylim(0, 1.05)
    jx.set_ylabel("Jain index")
    jx.set_xlabel("time since first flow start (s)")
    return fig


def link_fidelity(plt, exp, rundir: RunDir, records: list[dict]):
    """The emulator alone, per configured rate: what the backlogged bottleneck sent, its
    highest 100 ms rate, one CUBIC flow's efficiency and BBR's own estimate, each against
    the target it must meet; and, below, what the link sent over time at the top rate."""
    merged = sorted(claims_mod.average_repetitions(records), key=lambda r: r["link"]["rate"])
    fig, (ax, tx) = plt.subplots(2, 1, figsize=(12, 8.4), gridspec_kw={"height_ratios": [3, 2]})
    rates = sorted({r["link"]["rate"] / 1e6 for r in merged})
    measures = (  # metric, CC whose points measure it, label, colour, marker
        ("link_delivery", "cubic", "backlogged link sent / rate", "tab:grey", "s"),
        ("link_peak_beyond_pause", None, "peak 100 ms rate beyond a pause's catch-up / rate", "tab:purple", "^"),
        ("link_peak_ratio", None, "peak 100 ms rate / rate, catch-up included", "plum", "v"),
        ("steady_link_efficiency", "cubic", "CUBIC goodput / payload capacity", style("cubic")["color"], "o"),
        ("bbr_bw_ratio", "bbr", "BBR's median bw estimate / rate", style("bbr")["color"], "D"),
    )
    for measure in measures:
        _fidelity_measure(ax, merged, measure, next((c for c in exp.claims if c.metric == measure[0]), None))
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_xticks(rates, [f"{x:g}" for x in rates])
    ax.set_xlabel("configured bottleneck rate (Mbit/s)")
    ax.set_ylabel("ratio (dotted: each target)")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    top = [r for r in merged if r["link"]["rate"] / 1e6 == rates[-1] and base_cc(cc_of(r)) == "cubic"] or merged[-1:]
    series, m = rundir.series(top[0]["id"]), top[0]["metrics"]
    sent = [(t, v) for t, v in series.get("link_sent", []) if t >= 0]
    run = top[0]["params"].get(RUN_AXIS)  # of several runs, the first's
    tx.plot([t for t, _ in sent], [v for _, v in sent], color="grey", lw=0.8,
            label="bottleneck sent (its byte counter, per sample)" + (f", {run}" if run else ""))
    for flow in series["flows"].values():
        pts = flow["throughput"]
        tx.plot([t for t, _ in pts], [v for _, v in pts], color=style(flow["cc"])["color"], lw=1.6,
                label=f"{style(flow['cc'])['label']} goodput (receiver, per iperf3 interval)")
    rate_line(tx, series, m["duration_s"], f"configured rate {rates[-1]:g} Mbit/s")
    tx.axhline(m["payload_capacity_mbps"], color="black", ls=":", lw=1.2,
               label=f"payload capacity {m['payload_capacity_mbps']:.1f} Mbit/s (1448 B in 1514 B frames)")
    tx.set_ylabel("throughput (Mbit/s)")
    tx.set_xlabel("time since flow start (s)")
    tx.set_ylim(bottom=0, top=max(tx.get_ylim()[1], m["link_mbps"] * 1.15))
    tx.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.subplots_adjust(right=0.64, hspace=0.3)
    return fig


def _fidelity_measure(ax, merged: list[dict], measure: tuple, claim) -> None:
    """One of link_fidelity's measures against the rate (MEASURE: metric, the CC whose points
    measure it, label, colour, marker), within the bounds CLAIM sets on it (none:
    informative); several runs' each its own line, hollow after the first, named by its run."""
    metric, cc, label, color, marker = measure
    bounds = tuple(b for b in ((claim.min, claim.max) if claim else ()) if b is not None)
    label += " (" + (" to ".join(f"{b:g}" for b in bounds) if len(bounds) == 2 else
                     f"{'>=' if claim.min is not None else '<='} {bounds[0]:g}" if bounds else "informative") + ")"
    # one marker per rate: the worst point (the lowest against a floor, the highest
    # against a ceiling or none, the farthest from 1 against both)
    pick = ((lambda a, b: max(a, b, key=lambda v: abs(v - 1))) if len(bounds) == 2
            else min if claim is not None and claim.max is None else max)
    drawn = False
    for k, run in enumerate(dict.fromkeys(r["params"].get(RUN_AXIS) for r in merged)):  # None: one run
        pts = [(r["link"]["rate"] / 1e6, r["metrics"][metric]) for r in merged if r["params"].get(RUN_AXIS) == run
               and r["metrics"].get(metric) is not None and (cc is None or base_cc(cc_of(r)) == cc)]
        worst: dict[float, float] = {}
        for x, y in pts:
            worst[x] = y if x not in worst else pick(worst[x], y)
        xs = sorted(worst)
        if xs:
            ax.plot(xs, [worst[x] for x in xs], color=color, marker=marker, lw=1.4 if bounds else 1,
                    label=label + (f", {run}" if run else ""), ls="-" if bounds else "--",
                    mfc=None if k == 0 else "white")
            drawn = True
    for bound in bounds if drawn else ():
        ax.axhline(bound, color=color, ls=":", lw=1)


def buffer_rtt(plt, exp, rundir: RunDir, records: list[dict]):
    """Figure 5's point as a sweep: median RTT (bar: p5-p95) against the buffer, per CC,
    with the base RTT and the RTT behind a full buffer."""
    merged = claims_mod.average_repetitions(records)
    fig, ax = plt.subplots(figsize=(11, 6))
    for cc in sorted({cc_of(r) for r in merged}):
        recs = sorted((r for r in merged if cc_of(r) == cc), key=lambda r: r["metrics"]["buffer_pkts"])
        xs = [_bdps(r) for r in recs]
        med = [r["metrics"]["rtt_p50_ms"] for r in recs]
        lo = [m - r["metrics"].get("rtt_p5_ms", m) for m, r in zip(med, recs)]
        hi = [r["metrics"].get("rtt_p95_ms", m) - m for m, r in zip(med, recs)]
        st = style(cc)
        ax.errorbar(xs, med, yerr=[[max(0, v) for v in lo], [max(0, v) for v in hi]], color=st["color"],
                    marker=st["marker"], lw=1.6, capsize=3, label=f"{st['label']} median RTT while the flow ran (bar: p5-p95)")
    several = _buffer_guides(ax, merged)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = sorted({round(_bdps(r), 1) for r in merged})
    ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
    ax.minorticks_off()
    ax.set_xlabel("bottleneck buffer (BDP)")
    ax.set_ylabel("RTT (ms)")
    if several:  # each run's guides: a legend too tall for the axes' top, beside them
        fig.subplots_adjust(right=right_of_axes(fig, ax.legend(fontsize=8, loc="upper left",
                                                               bbox_to_anchor=(1.01, 1.0)), 0.95))
    else:
        ax.legend(fontsize=8, loc="upper left")
    return fig


def _bdps(record: dict) -> float:
    """The point's buffer in BDPs, as it held them."""
    return record["metrics"]["buffer_pkts"] / record["metrics"]["bdp_pkts"]


def _buffer_guides(ax, merged: list[dict]) -> bool:
    """The RTT behind a full buffer against the buffer, the base RTT and twice it: each
    run's own where several runs' differ (guides.lines), one line where they are the same.
    Whether they differ."""
    def base(r: dict) -> float:
        return r["metrics"]["base_rtt_ms"]

    curves: dict[tuple, set] = {}  # per run and base RTT: (buffer in BDPs, RTT behind it full)
    for r in merged:
        curves.setdefault((guides.run_of(r), base(r)), set()).add((_bdps(r), r["metrics"]["full_buffer_rtt_ms"]))
    full = guides.lines(merged, lambda r: tuple(sorted(curves[guides.run_of(r), base(r)])),
                        lambda _: "RTT behind a full buffer", color="grey")
    for pts, kw in full:
        ax.plot([x for x, _ in pts], [y for _, y in pts], lw=1, **kw)
    for value, kw in guides.lines(merged, base, lambda b: f"base RTT {b:g} ms", ls=":"):
        ax.axhline(value, lw=1, **kw)
    for value, kw in guides.lines(merged, base, lambda _: "2 x base RTT (BBR v1's 2-BDP cap, informative)", ls="-."):
        ax.axhline(2 * value, lw=0.8, **kw)
    return len(full) > 1


def _adapt_text(seconds: float | None) -> str:
    if seconds is None:
        return "does not reach 85% of every new rate"
    return f"reaches 85% of each new rate, as the link sent it, within {seconds:.1f} s"


def rate_step(plt, exp, rundir: RunDir, records: list[dict]):
    """Bandwidth steps: delivered throughput against the configured rate, per CC."""
    fig, ax = plt.subplots(figsize=(12, 5.5))
    steps = {}  # per point: its configured rate's steps and its end
    for rec in sorted(records, key=cc_of):
        series = rundir.series(rec["id"])
        steps[rec["id"]] = (tuple(map(tuple, series["link_rate"])), rec["metrics"]["duration_s"])
        st = style(cc_of(rec))
        for flow in series["flows"].values():
            pts = flow["throughput"]
            ax.plot([t for t, _ in pts], [v for _, v in pts], color=st["color"], lw=1.4,
                    label=f"{point_label(rec, {'cc'})} goodput ({_adapt_text(rec['metrics'].get('adapt_time_max_s'))})")
    # each run's own steps where several runs' differ
    for (rate, end), kw in guides.lines(records, lambda r: steps[r["id"]], lambda _: "bottleneck rate"):
        rate_line(ax, {"link_rate": rate}, end, **kw)
    ax.set_xlabel("time since flow start (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right", fontsize=8)
    return fig
