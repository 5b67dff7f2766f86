"""Figures of the bottleneck's queue discipline, registered in plot_kinds.PLOTS.

aqm_latency: per congestion control, the latency a sparse probe (ping, crossing the same
bottleneck) saw under load beside the flows' own smoothed RTT (ss), as CDFs, one colour
per AQM; below, each point's goodput and the queue's median delay. Under flow queuing
(fq_codel, CAKE) the probe skips the bulk flow's queue: the flows' RTT hides that number.
"""

from __future__ import annotations

from ...analysis.metrics import percentile
from ...schema.link import FRAME_BYTES
from ...verdicts import claims as claims_mod
from ...store.results import RunDir
from . import guides
from .legends import right_of_axes
from .style import AQM_STYLE, aqm_of, cc_of, style


def _cdf(ax, values: list[float], color: str, ls: str, label: str | None) -> None:
    values = sorted(values)
    if values:
        ax.plot(values, [(i + 1) / len(values) for i in range(len(values))], color=color, ls=ls, lw=1.6,
                label=label)


def _after(points: list, startup: float) -> list[float]:
    return [v for t, v in points if t >= startup]


def latencies(rundir: RunDir, record: dict, startup: float) -> tuple[list[float], list[float]]:
    """(the probe's RTT samples, the flows' smoothed RTT samples) after STARTUP seconds, in ms."""
    series = rundir.series(record["id"])
    probe = [v for pts in series.get("rtt", {}).values() for v in _after(pts, startup)]
    flows = [v for flow in series.get("flows", {}).values() for v in _after(flow.get("srtt_ms", []), startup)]
    return probe, flows


def aqm_latency(plt, exp, rundir: RunDir, records: list[dict]):
    from matplotlib.ticker import FuncFormatter

    ccs = sorted({cc_of(r) for r in records})
    aqms = [a for a in AQM_STYLE if any(aqm_of(r) == a for r in records)]
    fig, axes = plt.subplots(2, len(ccs), figsize=(max(12.0, 6.5 * len(ccs)), 11), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2]})
    startup = exp.points[0].sampling.startup if exp.points else 2.0
    averaged = claims_mod.average_repetitions(records)

    def med(values: list[float]) -> float:
        return percentile(values, 50) if values else float("nan")

    for col, cc in enumerate(ccs):
        ax, bars = axes[0][col], axes[1][col]
        for aqm in aqms:
            color, name = AQM_STYLE[aqm]
            probe, flows = [], []
            for rec in records:
                if cc_of(rec) == cc and aqm_of(rec) == aqm:
                    p, f = latencies(rundir, rec, startup)
                    probe += p
                    flows += f
            _cdf(ax, probe, color, "-", f"{name}: probe (ping), median {med(probe):.0f} ms")
            own = style(cc, with_run=False)["label"]  # the column's title names the run
            _cdf(ax, flows, color, "--", f"{name}: {own}'s own RTT (ss), median {med(flows):.0f} ms")
        base = next(r["metrics"]["base_rtt_ms"] for r in records if cc_of(r) == cc)  # each run's own
        ax.axvline(base, color="black", ls=":", lw=1, label=f"base RTT {base:g} ms")
        low, high = ax.get_xlim()
        if high > 3 * max(low, 1e-9):  # a FIFO's seconds beside an AQM's milliseconds: log
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if str(round(v))[0] in "2358" else ""))
            ax.set_xlabel("RTT under load (ms, log scale)")
        else:  # all within a few ms of each other: a log axis would label none of them
            ax.set_xlabel("RTT under load (ms)")
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.01)
        ax.set_title(f"{style(cc)['label']} flow: latency under load")
        # below the CDF, above the bars: a CDF's axis ends at 1 and the curves cross its middle
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
        _bars(bars, [r for r in averaged if cc_of(r) == cc], aqms)
    fig.subplots_adjust(hspace=0.62, wspace=0.35)
    return fig


def _bars(bars, merged: list[dict], aqms: list[str]) -> None:
    """One CC's points (MERGED: averaged over repetitions): each AQM's goodput (solid) and
    the queue's median delay (hatched, on an axis of its own)."""
    shown = [a for a in aqms if any(aqm_of(r) == a for r in merged)]
    goodput = [next(r["metrics"].get("steady_goodput_mbps") or 0 for r in merged if aqm_of(r) == a) for a in shown]
    delay = [next(r["metrics"].get("queue_delay_p50_ms") or 0 for r in merged if aqm_of(r) == a) for a in shown]
    xs = range(len(shown))
    bars.bar([x - 0.2 for x in xs], goodput, width=0.4, color=[AQM_STYLE[a][0] for a in shown])
    for x, g in zip(xs, goodput):
        bars.text(x - 0.2, g, f"{g:.1f}", ha="center", va="bottom", fontsize=8)
    bars.set_ylabel("steady goodput (Mbit/s, solid)")
    bars.set_ylim(0, max([merged[0]["metrics"]["link_mbps"]] + goodput) * 1.15)
    qx = bars.twinx()
    qx.bar([x + 0.2 for x in xs], delay, width=0.4, color=[AQM_STYLE[a][0] for a in shown], alpha=0.35, hatch="//")
    for x, d in zip(xs, delay):
        qx.text(x + 0.2, d, f"{d:.0f} ms", ha="center", va="bottom", fontsize=8)
    qx.set_ylabel("queue's median delay (ms, hatched)")
    qx.set_ylim(0, max(delay + [1]) * 1.2)
    bars.set_xticks(list(xs), [AQM_STYLE[a][1] for a in shown])
    bars.grid(False)
    qx.grid(False)


def _buffer_ms(record: dict) -> float:
    """The point's buffer in ms at its rate, as the spec wrote it when it was given as time."""
    buffer = record["link"]["buffer"]
    if buffer["unit"] == "time":
        return float(buffer["value"]) * 1e3
    return record["metrics"]["buffer_pkts"] * FRAME_BYTES * 8 / record["link"]["rate"] * 1e3


def _base_rtt(record: dict) -> float:
    return record["metrics"]["base_rtt_ms"]


CC_LINES = ("-", "--", "-.", ":")  # headend: one line style per CC (colour means the AQM)


def _headend_lines(column, pts: list[tuple[float, dict]], aqm: str, cc: str, i: int) -> None:
    """One AQM's and CC's points (PTS: (buffer in ms, record)) in a rate's COLUMN (its
    probe's, the flow's own and goodput axes), in the AQM's colour and the I-th CC's line style."""
    if not pts:
        return
    probe_ax, own_ax, put_ax = column
    color, name = AQM_STYLE[aqm]
    st, ls = style(cc), CC_LINES[i % len(CC_LINES)]
    x = [b for b, _ in pts]
    p50 = [r["metrics"].get("steady_rtt_p50_ms") for _, r in pts]
    p95 = [r["metrics"].get("steady_rtt_p95_ms") for _, r in pts]
    probe_ax.errorbar(x, p50, yerr=[[0] * len(p50), [max(0.0, b - a) for a, b in zip(p50, p95)]],
                      color=color, ls=ls, marker=st["marker"], lw=1.6, capsize=3, label=f"{name}, {st['label']} load")
    own = [((r["metrics"].get("by_cc") or {}).get(cc) or {}).get("srtt_p50_ms") for _, r in pts]
    own_ax.plot(x, own, color=color, ls=ls, marker=st["marker"], lw=1.6)
    put_ax.plot(x, [r["metrics"].get("steady_goodput_mbps") for _, r in pts], color=color, ls=ls,
                marker=st["marker"], lw=1.6)


def _base_guides(axes, here: list[dict], xs: list[float]) -> None:
    """The base RTT and the base plus what the full buffer holds (across the buffers XS, in
    ms) on each of AXES: each run's own where the runs of HERE differ in their base RTT."""
    ends = (xs[0] / 1.3, xs[-1] * 1.3) if xs else ()
    for ax in axes:
        for base, kw in guides.lines(here, _base_rtt, lambda b: f"base RTT {b:g} ms", ls=":"):
            ax.axhline(base, lw=1, **kw)
        for base, kw in guides.lines(here, _base_rtt, lambda _: "base + the full buffer", color="grey",
                                     ls=(0, (6, 3))):
            ax.plot(ends, [base + b for b in ends], lw=0.9, **kw)


def headend(plt, exp, rundir: RunDir, records: list[dict]):
    """Per rate (a column): the sparse probe's latency under load (median, bar to p95), the
    flow's own median RTT and its goodput against the buffer in ms, one colour per queue
    discipline and one line style per CC; beside the latency, what a full FIFO holds."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    averaged = claims_mod.average_repetitions(records)
    rates = sorted({r["link"]["rate"] for r in averaged})
    ccs = sorted({cc_of(r) for r in averaged})
    aqms = [a for a in AQM_STYLE if any(aqm_of(r) == a for r in averaged)]
    fig, axes = plt.subplots(3, len(rates), figsize=(max(12.0, 6.5 * len(rates)), 12), sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2, 2]})
    for col, rate in enumerate(rates):
        probe_ax, own_ax, put_ax = axes[:, col]
        here = [r for r in averaged if r["link"]["rate"] == rate]
        xs = sorted({_buffer_ms(r) for r in here})
        for aqm in aqms:
            for i, cc in enumerate(ccs):
                _headend_lines(axes[:, col], sorted((_buffer_ms(r), r) for r in here
                                                    if aqm_of(r) == aqm and cc_of(r) == cc), aqm, cc, i)
        _base_guides((probe_ax, own_ax), here, xs)
        for ax in (probe_ax, own_ax):
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        # the runs' own base RTTs where they differ
        probe_ax.set_title(f"{rate / 1e6:g} Mbit/s, {guides.said(here, _base_rtt, lambda b: f'{b:g} ms')} base RTT")
        probe_ax.set_ylabel("probe's RTT under load (ms)\nmedian, bar to p95")
        own_ax.set_ylabel("the flow's own RTT (ss, ms)\nmedian")
        put_ax.set_ylabel("steady goodput (Mbit/s)")
        put_ax.set_ylim(0, rate / 1e6 * 1.08)
        put_ax.axhline(rate / 1e6, color="black", lw=0.8, ls=":")
        put_ax.set_xscale("log")
        put_ax.set_xticks(xs, [f"{x:.0f}" for x in xs])
        put_ax.xaxis.set_minor_formatter(NullFormatter())
        if xs:
            put_ax.set_xlim(xs[0] / 1.3, xs[-1] * 1.3)
        put_ax.set_xlabel("bottleneck buffer (ms at the rate)")
    legend = axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.subplots_adjust(left=0.07, right=right_of_axes(fig, legend, 0.8), hspace=0.12, wspace=0.25)
    return fig
