"""Figures of the bottleneck's queue discipline, registered in plot_kinds.PLOTS.

aqm_latency: per congestion control, the latency a sparse probe (ping, crossing the same
bottleneck) saw under load beside the flows' own smoothed RTT (ss), as CDFs, one colour
per AQM; below, each point's goodput and the queue's median delay. Under flow queuing
(fq_codel, CAKE) the probe skips the bulk flow's queue: the flows' RTT hides that number.
"""

from __future__ import annotations

from ..analysis.metrics import percentile
from ..verdicts import claims as claims_mod
from ..store.results import RunDir
from .style import cc_of, style

AQM_STYLE = {
    "fifo": ("#444444", "droptail FIFO"), "fq_codel": ("#2ca02c", "fq_codel"), "cake": ("#9467bd", "CAKE"),
    "codel": ("#ff7f0e", "CoDel"), "pie": ("#8c564b", "PIE"), "fq_pie": ("#e377c2", "FQ-PIE"),
    "red": ("#d62728", "RED"),
}


def aqm_of(record: dict) -> str:
    return ((record.get("link") or {}).get("aqm") or {}).get("kind", "fifo")


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
    fig, axes = plt.subplots(2, len(ccs), figsize=(max(12.0, 6.5 * len(ccs)), 9.5), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2]})
    base = records[0]["metrics"]["base_rtt_ms"]
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
            _cdf(ax, flows, color, "--", f"{name}: {style(cc)['label']}'s own RTT (ss), median {med(flows):.0f} ms")
        ax.axvline(base, color="black", ls=":", lw=1, label=f"base RTT {base:g} ms")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if str(round(v))[0] in "2358" else ""))
        ax.set_xlabel("RTT under load (ms, log scale)")
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.01)
        ax.set_title(f"{style(cc)['label']} flow: latency under load")
        ax.legend(fontsize=7, loc="center")
        merged = [r for r in averaged if cc_of(r) == cc]
        shown = [a for a in aqms if any(aqm_of(r) == a for r in merged)]
        goodput = [next(r["metrics"].get("steady_goodput_mbps") or 0 for r in merged if aqm_of(r) == a) for a in shown]
        delay = [next(r["metrics"].get("queue_delay_p50_ms") or 0 for r in merged if aqm_of(r) == a) for a in shown]
        xs = range(len(shown))
        bars.bar([x - 0.2 for x in xs], goodput, width=0.4, color=[AQM_STYLE[a][0] for a in shown])
        for x, g in zip(xs, goodput):
            bars.text(x - 0.2, g, f"{g:.1f}", ha="center", va="bottom", fontsize=8)
        bars.set_ylabel("steady goodput (Mbit/s, solid)")
        bars.set_ylim(0, max([records[0]["metrics"]["link_mbps"]] + goodput) * 1.15)
        qx = bars.twinx()
        qx.bar([x + 0.2 for x in xs], delay, width=0.4, color=[AQM_STYLE[a][0] for a in shown], alpha=0.35,
               hatch="//")
        for x, d in zip(xs, delay):
            qx.text(x + 0.2, d, f"{d:.0f} ms", ha="center", va="bottom", fontsize=8)
        qx.set_ylabel("queue's median delay (ms, hatched)")
        qx.set_ylim(0, max(delay + [1]) * 1.2)
        bars.set_xticks(list(xs), [AQM_STYLE[a][1] for a in shown])
        bars.grid(False)
        qx.grid(False)
    fig.subplots_adjust(hspace=0.3, wspace=0.35)
    return fig
