"""Figures, drawn from a results directory alone (series.json, metrics.json, verdict.json).

One style table gives every congestion control the same colour and marker in every plot.
Each figure's title carries its parameters; its footer carries the verdict.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from ..verdicts import claims as claims_mod
from .legends import clear_legends
from ..errors import BbrlabError
from ..store.results import RunDir, write_atomic

STYLE = {
    "bbr": {"color": "#1f77b4", "marker": "o", "label": "BBR"},
    "bbr_noagg": {"color": "#17becf", "marker": "d", "label": "BBR without ACK-aggregation allowance"},
    "cubic": {"color": "#d62728", "marker": "s", "label": "CUBIC"},
    "reno": {"color": "#2ca02c", "marker": "^", "label": "Reno"},
    "bic": {"color": "#9467bd", "marker": "v", "label": "BIC"},
    "vegas": {"color": "#8c564b", "marker": "D", "label": "Vegas"},
    "westwood": {"color": "#e377c2", "marker": "P", "label": "Westwood"},
    "htcp": {"color": "#7f7f7f", "marker": "X", "label": "H-TCP"},
    "illinois": {"color": "#bcbd22", "marker": "*", "label": "Illinois"},
    "hybla": {"color": "#bcbd22", "marker": "h", "label": "Hybla"},
}
EXTRA_COLORS = ["#ff7f0e", "#aec7e8", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94"]


def style(cc: str) -> dict:
    if cc in STYLE:
        return STYLE[cc]
    color = EXTRA_COLORS[sum(map(ord, cc)) % len(EXTRA_COLORS)]
    return {"color": color, "marker": "o", "label": cc}


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise BbrlabError("matplotlib is missing: apt-get install python3-matplotlib "
                          "(or provision with sudo ./setup.sh)") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "font.size": 10})
    return plt


def _params_line(records: list[dict], axes: dict) -> str:
    """The figure's parameters; a swept one is named with its values, not the first point's."""
    s = records[0]["summary"]
    durations = sorted({f["duration"] for f in records[0]["flow_plan"] if f["duration"]})
    flows = len(records[0]["flow_plan"])
    dur = f", {durations[-1]:g} s flows" if durations else ""
    from .plots_fct import workload_line  # classes of short flows, when the point has them

    shorts = workload_line(records[0], axes)

    def shown(key: str, value: str) -> str:
        if key not in axes:
            return value
        values = [str(v) for v in axes[key]]
        if len(values) > 4:  # a title line has room for a range, not for 13 values
            return f"{values[0]} … {values[-1]} ({len(values)} values)"
        return f"{', '.join(values)} (swept)"

    rate = s["rate"].replace("Gbit", " Gbit/s").replace("Mbit", " Mbit/s").replace("kbit", " kbit/s")
    if s.get("trace"):  # a trace replayed at the bottleneck: its file and average
        rate = f"trace {Path(s['trace']['trace']).name} ({s['trace']['average_mbps']:.2f} Mbit/s on average)"
    buffer = s["buffer"]
    if "rate" in axes or "rtt" in axes:  # the packet count differs per point: say what was asked
        spec_buffer = records[0]["link"]["buffer"]
        buffer = {"pkt": "{:g} pkt", "bdp": "{:g} BDP", "bytes": "{:g} B"}[spec_buffer["unit"]].format(
            spec_buffer["value"])
    if "buffer" in axes:  # a buffer sweep: its values, not the first point's
        buffer = shown("buffer", buffer)
    return (f"bottleneck {shown('rate', rate)}, base RTT {shown('rtt', s['base_rtt'].replace('ms', ' ms'))}, "
            f"buffer {buffer}, loss {shown('loss', s['loss'])}, pacing {s['pacing']}, "
            + (f"shaper {shown('shaper', s['shaper'])}, " if "shaper" in s else "")
            + (shorts if shorts and not flows else f"{flows} flow{'s' if flows > 1 else ''}{dur}"))


# The footer's colour by verdict word; another word (a verdict.json written when an
# inconclusive run said "reproduced (inconclusive: ...)") reads as inconclusive.
VERDICT_COLORS = {"reproduced": "#2e7d32", "not reproduced": "#b71c1c", "inconclusive": "#e65100",
                  "not evaluated": "#616161"}


def verdict_color(word: str) -> str:
    return VERDICT_COLORS.get(word, VERDICT_COLORS["inconclusive"])


def _unbroken_units(text: str) -> str:
    """TEXT with a no-break space between a number and its unit, so a wrapped title line
    never starts with the unit ("30 s flows", "2 BDP")."""
    return re.sub(r"(\d) (?=[A-Za-z/%])", "\\1\u00a0", text)


def _shortened(line: str, width: int = 150) -> str:
    """LINE cut to WIDTH characters, its indent kept (a claim or a why under the verdict)."""
    indent = line[:len(line) - len(line.lstrip())]
    return indent + textwrap.shorten(line.strip(), width - len(indent), placeholder=" …")


def _footer(fig, verdict: dict) -> None:
    lines = claims_mod.verdict_lines(verdict)
    text = "\n".join(_shortened(line) for line in lines)
    color = verdict_color(verdict["verdict"])
    fig.text(0.01, 0.01, text, fontsize=8, family="monospace", va="bottom", ha="left", color=color)
    fig.subplots_adjust(bottom=0.1 + 0.028 * len(lines))


def _cc_of(record: dict) -> str:
    ccs = sorted({g["cc"] for g in record["flows"]})
    return ccs[0] if len(ccs) == 1 else "+".join(ccs)


def _label(record: dict, axes_shown: set) -> str:
    extra = ", ".join(f"{k}={v}" for k, v in record["params"].items() if k not in axes_shown)
    name = style(_cc_of(record))["label"]
    return f"{name} ({extra})" if extra else name


def _rate_line(ax, series: dict, end: float, label: str, lw: float = 1.2) -> None:
    """The configured bottleneck rate over time, held until END, as a dashed step."""
    steps = series["link_rate"]
    ax.step([t for t, _ in steps] + [end], [v for _, v in steps] + [steps[-1][1]], where="post",
            color="black", ls="--", lw=lw, label=label)


def rtt_timeseries(plt, exp, rundir: RunDir, records: list[dict]):
    """Figure 5: RTT over time for each CC on one axis, plus the RTT CDF."""
    fig, (ax, cdf) = plt.subplots(1, 2, figsize=(13, 5.6), gridspec_kw={"width_ratios": [2.2, 1]})
    base = records[0]["metrics"]["base_rtt_ms"]
    medians: dict[str, list[float]] = {}  # per CC, each repetition's median RTT in run order
    for rec in sorted(records, key=lambda r: r.get("repetition", 1)):
        medians.setdefault(_label(rec, {"cc"}), []).append(rec["metrics"].get("rtt_p50_ms", float("nan")))
    labelled = set()
    for rec in sorted(records, key=lambda r: (_cc_of(r), r["id"])):
        series = rundir.series(rec["id"])
        st = style(_cc_of(rec))
        label = _label(rec, {"cc"})
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
    ax.axhline(base, color="black", ls="--", lw=1, label=f"base RTT {base:g} ms")
    cdf.axvline(base, color="black", ls="--", lw=1)
    full = records[0]["metrics"].get("full_buffer_rtt_ms")
    if full:  # where a buffer-filling sender ends up
        ax.axhline(full, color="grey", ls=":", lw=1.2, label=f"RTT behind a full buffer {full:.0f} ms")
        cdf.axvline(full, color="grey", ls=":", lw=1.2)
    ax.set_xlabel("time since flow start (s)")
    ax.set_ylabel("RTT (ms, ping every 100 ms)")
    ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], (full or 0) * 1.15))
    ax.legend(loc="upper right", fontsize=8)
    cdf.set_xlabel("RTT (ms)")
    cdf.set_ylabel("CDF")
    cdf.set_ylim(0, 1.01)  # no legend of its own: a CDF's axis ends at 1
    return fig


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
    _rate_line(ax, series, rec["metrics"]["duration_s"], "bottleneck rate", lw=1)
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
    for metric, cc, label, color, marker in measures:
        # the bounds the experiment's claims set on the metric (none: informative)
        claim = next((c for c in exp.claims if c.metric == metric), None)
        bounds = tuple(b for b in ((claim.min, claim.max) if claim else ()) if b is not None)
        label += " (" + (" to ".join(f"{b:g}" for b in bounds) if len(bounds) == 2 else
                         f"{'>=' if claim.min is not None else '<='} {bounds[0]:g}" if bounds else "informative") + ")"
        pts = [(r["link"]["rate"] / 1e6, r["metrics"][metric]) for r in merged
               if r["metrics"].get(metric) is not None and (cc is None or _cc_of(r) == cc)]
        if not pts:
            continue
        worst = {}
        # one marker per rate: the worst point (the lowest against a floor, the highest
        # against a ceiling or none, the farthest from 1 against both)
        pick = ((lambda a, b: max(a, b, key=lambda v: abs(v - 1))) if len(bounds) == 2
                else min if claim is not None and claim.max is None else max)
        for x, y in pts:
            worst[x] = y if x not in worst else pick(worst[x], y)
        xs = sorted(worst)
        ax.plot(xs, [worst[x] for x in xs], color=color, marker=marker, lw=1.4 if bounds else 1, label=label,
                ls="-" if bounds else "--")
        for bound in bounds:
            ax.axhline(bound, color=color, ls=":", lw=1)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_xticks(rates, [f"{x:g}" for x in rates])
    ax.set_xlabel("configured bottleneck rate (Mbit/s)")
    ax.set_ylabel("ratio (dotted: each target)")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    top = [r for r in merged if r["link"]["rate"] / 1e6 == rates[-1] and _cc_of(r) == "cubic"] or merged[-1:]
    series, m = rundir.series(top[0]["id"]), top[0]["metrics"]
    sent = [(t, v) for t, v in series.get("link_sent", []) if t >= 0]
    tx.plot([t for t, _ in sent], [v for _, v in sent], color="grey", lw=0.8,
            label="bottleneck sent (its byte counter, per sample)")
    for flow in series["flows"].values():
        pts = flow["throughput"]
        tx.plot([t for t, _ in pts], [v for _, v in pts], color=style(flow["cc"])["color"], lw=1.6,
                label=f"{style(flow['cc'])['label']} goodput (receiver, per iperf3 interval)")
    _rate_line(tx, series, m["duration_s"], f"configured rate {rates[-1]:g} Mbit/s")
    tx.axhline(m["payload_capacity_mbps"], color="black", ls=":", lw=1.2,
               label=f"payload capacity {m['payload_capacity_mbps']:.1f} Mbit/s (1448 B in 1514 B frames)")
    tx.set_ylabel("throughput (Mbit/s)")
    tx.set_xlabel("time since flow start (s)")
    tx.set_ylim(bottom=0, top=max(tx.get_ylim()[1], m["link_mbps"] * 1.15))
    tx.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.subplots_adjust(right=0.64, hspace=0.3)
    return fig


def buffer_rtt(plt, exp, rundir: RunDir, records: list[dict]):
    """Figure 5's point as a sweep: median RTT (bar: p5-p95) against the buffer, per CC,
    with the base RTT and the RTT behind a full buffer."""
    merged = claims_mod.average_repetitions(records)
    fig, ax = plt.subplots(figsize=(11, 6))
    base = merged[0]["metrics"]["base_rtt_ms"]
    full = sorted((r["metrics"]["buffer_pkts"] / r["metrics"]["bdp_pkts"], r["metrics"]["full_buffer_rtt_ms"])
                  for r in merged)
    for cc in sorted({_cc_of(r) for r in merged}):
        recs = sorted((r for r in merged if _cc_of(r) == cc), key=lambda r: r["metrics"]["buffer_pkts"])
        xs = [r["metrics"]["buffer_pkts"] / r["metrics"]["bdp_pkts"] for r in recs]
        med = [r["metrics"]["rtt_p50_ms"] for r in recs]
        lo = [m - r["metrics"].get("rtt_p5_ms", m) for m, r in zip(med, recs)]
        hi = [r["metrics"].get("rtt_p95_ms", m) - m for m, r in zip(med, recs)]
        st = style(cc)
        ax.errorbar(xs, med, yerr=[[max(0, v) for v in lo], [max(0, v) for v in hi]], color=st["color"],
                    marker=st["marker"], lw=1.6, capsize=3, label=f"{st['label']} median RTT while the flow ran (bar: p5-p95)")
    ax.plot([x for x, _ in full], [y for _, y in full], color="grey", ls="--", lw=1,
            label="RTT behind a full buffer")
    ax.axhline(base, color="black", ls=":", lw=1, label=f"base RTT {base:g} ms")
    ax.axhline(2 * base, color="black", ls="-.", lw=0.8, label="2 x base RTT (BBR v1's 2-BDP cap, informative)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = sorted({round(x, 1) for x, _ in full})
    ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
    ax.minorticks_off()
    ax.set_xlabel("bottleneck buffer (BDP)")
    ax.set_ylabel("RTT (ms)")
    ax.legend(fontsize=8, loc="upper left")
    return fig


def _adapt_text(seconds: float | None) -> str:
    if seconds is None:
        return "does not reach 85% of every new rate"
    return f"reaches 85% of each new rate, as the link sent it, within {seconds:.1f} s"


def rate_step(plt, exp, rundir: RunDir, records: list[dict]):
    """Bandwidth steps: delivered throughput against the configured rate, per CC."""
    fig, ax = plt.subplots(figsize=(12, 5.5))
    for rec in sorted(records, key=_cc_of):
        series = rundir.series(rec["id"])
        st = style(_cc_of(rec))
        for flow in series["flows"].values():
            pts = flow["throughput"]
            ax.plot([t for t, _ in pts], [v for _, v in pts], color=st["color"], lw=1.4,
                    label=f"{_label(rec, {'cc'})} goodput ({_adapt_text(rec['metrics'].get('adapt_time_max_s'))})")
    _rate_line(ax, rundir.series(records[0]["id"]), records[0]["metrics"]["duration_s"], "bottleneck rate")
    ax.set_xlabel("time since flow start (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right", fontsize=8)
    return fig


def loss_goodput(plt, exp, rundir: RunDir, records: list[dict]):
    """Figure 8: goodput against random loss with the ideal line (plots_loss.py)."""
    from .plots_loss import loss_goodput as draw_it  # the loss sweeps' figures

    return draw_it(plt, exp, rundir, records)


def sweep_normalized(plt, exp, rundir: RunDir, records: list[dict], untrusted: set[str] = frozenset()):
    """Goodput / link rate against loss per value of the other axis, per CC (plots_loss.py)."""
    from .plots_loss import sweep_normalized as draw_it

    return draw_it(plt, exp, rundir, records, untrusted)


def untrusted_points(verdict: dict) -> set[str]:
    """The points (as the verdict names them) the emulator cannot be trusted with."""
    gate = verdict.get("fidelity_gate") or {}
    return (set(verdict.get("cpu_bound_points") or ()) | set(verdict.get("link_short_points") or ())
            | set(gate.get("points") or ()))


def coexist_share(plt, exp, rundir: RunDir, records: list[dict]):
    """Each CC's share against the buffer, with the Ware et al. model (plots_field.py)."""
    from .plots_field import coexist_share as draw_it  # the field experiments' figures

    return draw_it(plt, exp, rundir, records)


def fct_cdf(plt, exp, rundir: RunDir, records: list[dict]):
    """Short flows: FCT CDFs per class and CC, slowdown against size (plots_fct.py)."""
    from .plots_fct import fct_cdf as draw_it

    return draw_it(plt, exp, rundir, records)


def trace_replay(plt, exp, rundir: RunDir, records: list[dict]):
    """A trace replayed at the bottleneck against what it sent, per point (plots_field.py)."""
    from .plots_field import trace_replay as draw_it

    return draw_it(plt, exp, rundir, records)


def aggregation_goodput(plt, exp, rundir: RunDir, records: list[dict]):
    """Goodput and RTT against the base RTT under slots, per CC (plots_links.py)."""
    from .plots_links import aggregation_goodput as draw_it  # the link-timing experiments' figures

    return draw_it(plt, exp, rundir, records)


def jitter_goodput(plt, exp, rundir: RunDir, records: list[dict]):
    """Goodput against the delay variation, per base RTT and CC (plots_links.py)."""
    from .plots_links import jitter_goodput as draw_it

    return draw_it(plt, exp, rundir, records)


KINDS = {
    "rtt_timeseries": rtt_timeseries,
    "throughput_timeseries": throughput_timeseries,
    "loss_goodput": loss_goodput,
    "sweep_normalized": sweep_normalized,
    "rate_step": rate_step,
    "link_fidelity": link_fidelity,
    "buffer_rtt": buffer_rtt,
    "coexist_share": coexist_share,
    "trace_replay": trace_replay,
    "aggregation_goodput": aggregation_goodput,
    "jitter_goodput": jitter_goodput,
    "fct_cdf": fct_cdf,
}


FORMATS = ("png", "svg", "pdf")  # what a figure can be written as (matplotlib's own backends)


def figure(exp, rundir: RunDir, records: list[dict], verdict: dict):
    """The experiment's figure (a matplotlib Figure): its kind's panels, title, verdict."""
    plt = _pyplot()
    if exp.plot_kind == "sweep_normalized":
        fig = sweep_normalized(plt, exp, rundir, records, untrusted_points(verdict))
    else:
        fig = KINDS[exp.plot_kind](plt, exp, rundir, records)
    title = exp.plot_title or exp.title
    # the parameter line wraps rather than run off a narrow figure's edges
    params = textwrap.fill(_unbroken_units(_params_line(records, exp.axes)), int(fig.get_figwidth() * 11))
    fig.suptitle(f"{title}\n{params}", fontsize=11)
    _footer(fig, verdict)
    fig.subplots_adjust(top=0.86)
    clear_legends(fig)
    return fig


def draw(exp, rundir: RunDir, records: list[dict], verdict: dict, name: str | None = None,
         formats: tuple[str, ...] = ("png",)) -> Path:
    """Render the experiment's figure into the run directory (atomically) as NAME.png
    (default: the experiment's name), and as NAME.svg / NAME.pdf when FORMATS asks; return
    the path of the first format."""
    import io

    plt = _pyplot()
    fig = figure(exp, rundir, records, verdict)
    paths = []
    for fmt in formats:
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt)
        paths.append(rundir.path / f"{name or exp.name}.{fmt}")
        write_atomic(paths[-1], buffer.getvalue())
    plt.close(fig)
    return paths[0]


def overlay(a: RunDir, b: RunDir, pairs: list[tuple[dict, dict]], path: Path) -> Path:
    """Two runs' matched points on the same axes: RTT and goodput over time, A solid and B
    dashed, one colour per point; the legend below the axes, never over the data."""
    import io

    plt = _pyplot()
    fig, (rtt, tput) = plt.subplots(2, 1, figsize=(12, 8), sharex=True)
    cmap = plt.get_cmap("tab10")
    for i, (ra, rb) in enumerate(pairs[:10]):
        name = claims_mod.point_name(ra)
        for run, rec, ls, tag in ((a, ra, "-", "A"), (b, rb, "--", "B")):
            series = run.series(rec["id"])
            for pts in series.get("rtt", {}).values():
                pts = [(t, v) for t, v in pts if t >= 0]
                rtt.plot([t for t, _ in pts], [v for _, v in pts], color=cmap(i % 10), ls=ls, lw=1,
                         label=f"{tag}: {name}")
                break  # the first group's path: one line per point and run
            total: dict[float, float] = {}
            for flow in series.get("flows", {}).values():
                for t, v in flow.get("throughput", []):
                    total[round(t, 1)] = total.get(round(t, 1), 0.0) + v
            times = sorted(total)
            tput.plot(times, [total[t] for t in times], color=cmap(i % 10), ls=ls, lw=1)
    rtt.set_ylabel("RTT (ms)")
    tput.set_ylabel("goodput, all flows (Mbit/s)")
    tput.set_xlabel("time since flow start (s)")
    fig.suptitle(f"A (solid): {a.path.parent.name}/{a.path.name}    B (dashed): {b.path.parent.name}/{b.path.name}",
                 fontsize=10)
    fig.legend(*rtt.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8)
    fig.subplots_adjust(bottom=0.08 + 0.025 * ((min(len(pairs), 10) * 2 + 1) // 2))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    write_atomic(path, buffer.getvalue())
    return path
