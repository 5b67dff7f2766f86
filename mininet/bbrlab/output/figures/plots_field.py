"""Figures of the field experiments (docs/field.md), registered in plot_kinds.PLOTS.

coexist_share: each congestion control's share of what was delivered against the
bottleneck buffer (in BDPs), the Ware et al. model's prediction beside it, and any
published point the experiment's `reference:` gives (e.g. IETF 101 at 8 BDP). Points
under an AQM (coexist-aqm) get a line style per queue discipline on the same axes.
"""

from __future__ import annotations

from ...verdicts import claims as claims_mod
from ...analysis import ware
from ...verdicts import reference_numbers
from .style import AQM_LINES, AQM_STYLE, aqm_of, base_cc, buffer_bdp, cc_of, not_drawn, style
from ...store.results import RunDir

PAIR_LINES = ("-", (0, (5, 2)), "-.", ":")  # one per pairing, where colour means the CC
MODEL_LINE = (0, (1, 3))  # the model's dotted-sparse line, apart from every measured one
LOSS_BASED = ("cubic", "reno", "bic", "htcp", "illinois", "westwood", "hybla")


def class_shares(records: list[dict]) -> dict[str, list[tuple[float, float, float, float]]]:
    """cc -> [(buffer in BDPs, mean share over repetitions, lowest, highest)], by buffer."""
    out: dict[str, list] = {}
    for group in claims_mod.grid_points(records):
        x = buffer_bdp(group[0])
        for cc in group[0]["metrics"].get("by_cc") or {}:
            values = [r["metrics"]["by_cc"][cc]["share"] for r in group
                      if (r["metrics"].get("by_cc") or {}).get(cc, {}).get("share") is not None]
            if values:
                out.setdefault(cc, []).append((x, sum(values) / len(values), min(values), max(values)))
    return {cc: sorted(points) for cc, points in out.items()}


def model_curve(record: dict, low: float, high: float, steps: int = 80) -> list[tuple[float, float]]:
    """(buffer in BDPs, BBR's predicted share) from LOW to HIGH BDPs for RECORD's link and flows."""
    link = record["link"]
    durations = [f["duration"] for f in record["flow_plan"] if f.get("duration")]
    n_bbr = sum(base_cc(f["cc"]) == "bbr" for f in record["flow_plan"])
    if not durations or not n_bbr:
        return []
    grid = [low * (high / low) ** (i / steps) for i in range(steps + 1)] if high > low else [low]
    return [(x, ware.share(x, link["rate"], link["rtt"], min(durations), n_bbr).bbr) for x in grid]


def pairings(records: list[dict]) -> dict[str, list[dict]]:
    """Records by the CCs their points pair ("bbr+cubic", "bbr3+cubic"), in first-seen order:
    v3-coexist sweeps which BBR meets CUBIC, and a CC's shares from two pairings never merge
    (nor two runs': each run's CCs have names of their own)."""
    out: dict[str, list[dict]] = {}
    for r in records:
        out.setdefault(cc_of(r), []).append(r)
    return out


def with_v1(records: list[dict]) -> list[dict]:
    """RECORDS of the points that pair Linux's bbr (v1) with others: the Ware et al. model is
    fit for v1, so only these are drawn or tabled beside it (of several runs': each run's)."""
    return [r for r in records if "bbr" in map(base_cc, cc_of(r).split("+"))]


def _against(cc: str, pairing: str) -> str:
    others = [style(o, with_run=False)["label"] for o in pairing.split("+") if o != cc]  # CC's label names the run
    return f" against {' + '.join(others)}" if others else ""


def coexist_share(plt, exp, rundir: RunDir, records: list[dict]):
    """Each CC's share against the buffer; with several queue disciplines (coexist-aqm), one
    line style per discipline on the same axes, the model beside the FIFO's points only; with
    several pairings (v3-coexist: v1 or v3 against CUBIC), one line style per pairing."""
    fig, ax = plt.subplots(figsize=(13, 6))
    aqms = [a for a in AQM_STYLE if any(aqm_of(r) == a for r in records)]
    pairs = pairings(records)
    xs: list[float] = []
    for aqm in aqms:
        for k, (pairing, recs) in enumerate(pairs.items()):
            shares = class_shares([r for r in recs if aqm_of(r) == aqm])
            xs = sorted(set(xs) | {x for points in shares.values() for x, *_ in points})
            for cc, points in sorted(shares.items()):
                st = style(cc)
                label = st["label"] + (_against(cc, pairing) if len(pairs) > 1 else "")
                if aqms == ["fifo"]:
                    label += " (measured; bar: lowest-highest repetition)" if len(pairs) == 1 else ""
                else:
                    label += f", {AQM_STYLE[aqm][1]}"
                ls = AQM_LINES.get(aqm, "--") if len(aqms) > 1 else PAIR_LINES[k % len(PAIR_LINES)]
                ax.errorbar([p[0] for p in points], [p[1] for p in points],
                            yerr=[[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]],
                            color=st["color"], marker=st["marker"], ls=ls, lw=1.8, capsize=3, label=label)
    # the model is fit for v1: drawn beside the FIFO's points of a pairing with Linux's bbr
    fifo = [r for r in with_v1(records) if aqm_of(r) == "fifo"]
    shares = class_shares(fifo)
    loss_based = [cc for cc in shares if cc in LOSS_BASED]
    curve = model_curve(fifo[0], min(xs) / 1.2, max(xs) * 1.2) if xs and "bbr" in shares and loss_based else []
    model = "Ware et al. model" + (" for the FIFO" if aqms != ["fifo"] else "")
    if curve:
        ax.plot([x for x, _ in curve], [y for _, y in curve], color=style("bbr")["color"], ls=MODEL_LINE, lw=1.0,
                alpha=0.7, label=f"{style('bbr')['label']}, {model} (IMC 2019)")
        ax.plot([x for x, _ in curve], [1 - y for _, y in curve], color=style(loss_based[0])["color"], ls=MODEL_LINE,
                lw=1.0, alpha=0.7, label=f"{style(loss_based[0])['label']}, {model} (the rest)")
    apart = reference_numbers.mismatch(exp.reference, records)
    if apart:  # said in the legend rather than drawn beside numbers of another link
        not_drawn(ax, apart)
    for x, goodputs in ({} if apart else exp.reference.get("goodput_mbps") or {}).items():
        total = sum(goodputs.values())
        for cc, g in goodputs.items():
            st = style(cc, with_run=False)  # a published number: no run's
            ax.plot([float(x)], [g / total], ls="none", marker="*", ms=13, color=st["color"],
                    mec="black", label=f"{st['label']}, {exp.reference.get('source', 'reference')}")
    ax.axhline(0.5, color="black", lw=0.8, ls=":")
    ax.set_xscale("log")
    if xs:
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.minorticks_off()  # the buffers' own ticks only (a log axis labels its minor ticks too)
        ax.set_xlim(min(xs) / 1.3, max(xs) * 1.3)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("bottleneck buffer (BDP)")
    ax.set_ylabel("share of the goodput after startup")
    # beside the axes: inside, it would cover a curve somewhere, and a share's axis ends at 1
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5),
              title="bar: lowest-highest repetition" if len(pairs) > 1 else None, title_fontsize=8)
    fig.subplots_adjust(left=0.07, right=0.72)
    return fig


def trace_replay(plt, exp, rundir: RunDir, records: list[dict]):
    """A trace replayed at the bottleneck, one panel per point (its first repetition): the
    rate the schedule offered (100 ms windows), what the bottleneck sent (its byte counter)
    and each flow's goodput, with what the link delivered of the trace and the schedule's
    lateness in the panel's title."""
    firsts = [group[0] for group in claims_mod.grid_points(records)][:6]
    fig, axes = plt.subplots(len(firsts), 1, figsize=(12, 2.6 * len(firsts) + 1), sharex=True, squeeze=False)
    for ax, rec in zip(axes[:, 0], firsts):
        series, m = rundir.series(rec["id"]), rec["metrics"]
        offered = series.get("link_rate") or []
        ax.step([t for t, _ in offered], [v for _, v in offered], where="post", color="black", lw=0.9, ls="--",
                label="offered by the trace (100 ms)")
        sent = [(t, v) for t, v in series.get("link_sent", []) if t >= 0]
        ax.plot([t for t, _ in sent], [v for _, v in sent], color="grey", lw=0.9, label="bottleneck sent")
        for flow in series.get("flows", {}).values():
            pts = flow["throughput"]
            ax.plot([t for t, _ in pts], [v for _, v in pts], color=style(flow["cc"])["color"], lw=1.4,
                    label=f"{style(flow['cc'])['label']} goodput")
        delivery, late = m.get("trace_delivery"), m.get("schedule_late_p99_ms")
        ax.set_title(f"{claims_mod.point_name(rec)}: delivered {delivery if delivery is not None else '–'} of the "
                     f"trace, updates late p99 {late if late is not None else '–'} ms", fontsize=9)
        ax.set_ylabel("Mbit/s")
        ax.set_ylim(bottom=0)
    axes[0, 0].legend(fontsize=8, loc="upper right", ncol=4)
    axes[-1, 0].set_xlabel("time since flow start (s)")
    return fig
