"""Figures of the loss sweeps, registered in plot_kinds.PLOTS.

loss_goodput: figure 8's goodput against random loss (log x) per CC, BBR's own bandwidth
estimate dashed, the ideal line bw x (1 - p), the Mathis et al. model and a reference's
numbers beside.

sweep_normalized: goodput / link rate against loss, one line per value of the sweep's
other axis, one panel per CC; points the emulator could not be trusted with are hollow.

buffer_retransmits: the losses a CC causes itself in a shallow buffer (IETF 101 on BBR v1:
"high loss rates if the bottleneck buffer < 1.5 x BDP"): the retransmission rate and the
goodput after startup against the buffer in BDPs, one colour per CC, one line style per
number of flows.
"""

from __future__ import annotations

from ...verdicts import claims as claims_mod
from ...analysis import mathis
from ...verdicts import reference_numbers
from .style import RUN_AXIS, buffer_bdp, cc_of, not_drawn, style
from ...store.results import RunDir


ZERO_STEP = 4.0  # 0 % sits this factor left of the smallest loss swept, past a break


def zero_position(losses_pct: list[float]) -> float | None:
    """Where 0 % loss is drawn on a log axis, or None when it was not swept: a position of
    its own left of the smallest positive loss (a log axis has no 0: without it the point
    vanishes and its line runs off the left edge)."""
    if 0 not in losses_pct:
        return None
    positive = [v for v in losses_pct if v > 0]
    return min(positive) / ZERO_STEP if positive else 1.0


def loss_axis(ax, losses_pct: list[float], zero_at: float | None) -> None:
    """A log loss axis labelled with the swept values as plain numbers (0.1, 1, 5, not
    powers of ten), 0 % at ZERO_AT marked off from the rest by a break."""
    from matplotlib.ticker import FixedFormatter, NullFormatter

    ax.set_xscale("log")
    positive = sorted(v for v in losses_pct if v > 0)
    major = ([zero_at] if zero_at is not None else []) + spaced_ticks(positive)
    ax.set_xticks(major)
    ax.set_xticks(([zero_at] if zero_at is not None else []) + positive, minor=True)
    ax.xaxis.set_major_formatter(FixedFormatter([f"{v:g}" if v != zero_at else "0" for v in major]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    if zero_at is not None and positive:
        gap = (zero_at * positive[0]) ** 0.5
        ax.axvline(gap, color="grey", lw=0.8, ls=(0, (2, 2)))
        ax.annotate("log scale from here", (gap, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -10),
                    textcoords="offset points", fontsize=7, color="grey", va="top")
        ax.set_xlim(zero_at / 1.6, positive[-1] * 1.6)


def _x(loss_pct: float, zero_at: float | None) -> float:
    return zero_at if loss_pct == 0 and zero_at is not None else loss_pct


def _loss_curves(records: list[dict], group_key: str | None):
    curves: dict = {}
    for rec in records:
        key = (cc_of(rec), rec["params"].get(group_key) if group_key else None)
        curves.setdefault(key, []).append(rec)
    return curves


def _other_axis(records: list[dict]) -> str | None:
    """The one sweep parameter besides loss and cc whose values differ across RECORDS (pacing
    in figure8-versions), which then splits each CC's curve; None when there is none."""
    varying = [k for k in records[0]["params"] if k not in ("loss", "cc", RUN_AXIS)
               and len({str(r["params"].get(k)) for r in records}) > 1]
    return varying[0] if len(varying) == 1 else None


# a second value of the other axis is drawn dash-dotted, hollow: both curves keep the CC's colour
VARIANT_LINES = ("-", "-.", ":")


def loss_goodput(plt, exp, rundir: RunDir, records: list[dict]):
    """Figure 8: goodput against random loss (log x), with the ideal line bw*(1-p); one curve
    per CC, and per value of another swept parameter (pacing) where there is one."""
    merged = claims_mod.average_repetitions(records)
    fig, ax = plt.subplots(figsize=(11, 6))
    link = merged[0]["metrics"]["link_mbps"]
    zero_at = zero_position([r["metrics"]["loss"] * 100 for r in merged])
    other = _other_axis(merged)
    values = sorted({str(r["params"].get(other)) for r in merged}) if other else [None]
    for (cc, value), recs in sorted(_loss_curves(merged, other).items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        recs = sorted(recs, key=lambda r: r["metrics"]["loss"])
        st = style(cc)
        variant = values.index(str(value)) % len(VARIANT_LINES) if other else 0
        name = st["label"] + (f", {other} {value}" if other else "")
        xs = [_x(r["metrics"]["loss"] * 100, zero_at) for r in recs]
        ys = [r["metrics"]["steady_goodput_mbps"] for r in recs]
        errs = [r["metrics"].get("steady_goodput_mbps_ci95", 0) for r in recs]
        ax.errorbar(xs, ys, yerr=errs, color=st["color"], marker=st["marker"], lw=1.6, capsize=3,
                    ls=VARIANT_LINES[variant], mfc=None if variant == 0 else "white", label=f"{name} (measured)")
        # BBR's own model: far above its goodput, the emulator carried less than BBR measured;
        # close to it, the model itself was starved
        est = [(x, r["metrics"]["bbr_bw_p50_mbps"]) for x, r in zip(xs, recs)
               if r["metrics"].get("bbr_bw_p50_mbps") is not None]
        if est:
            ax.plot([x for x, _ in est], [v for _, v in est], color=st["color"], marker=st["marker"],
                    mfc="none", lw=0.9, ls="--" if variant == 0 else ":", alpha=1 if variant == 0 else 0.6,
                    label=f"{name}: its own bw estimate (median)")
    losses = sorted({r["metrics"]["loss"] for r in merged if r["metrics"]["loss"] > 0})
    if losses:
        grid = [losses[0] * 100 * (losses[-1] / losses[0]) ** (i / 60) for i in range(61)]
        ax.plot(grid, [link * (1 - p / 100) for p in grid], color="black", ls="--", lw=1, label="ideal: bw x (1 - p)")
        rtt = merged[0]["metrics"]["base_rtt_ms"] / 1e3
        ax.plot(grid, [mathis.capped_mbps(rtt, p / 100, link) for p in grid], color="grey", ls="-.", lw=1,
                label=f"Mathis et al.: MSS/RTT x 1.22/sqrt(p) at {rtt * 1e3:g} ms (Reno-like)")
    apart = reference_numbers.mismatch(exp.reference, records)
    if apart:  # said in the legend rather than drawn beside numbers of another link
        not_drawn(ax, apart)
    for name, ref in ({} if apart else reference_numbers.series(exp.reference)).items():
        st = style(name, with_run=False)  # a published number: no run's
        pts = sorted((float(k), float(v)) for k, v in ref.items())
        ax.plot([_x(p, zero_at) for p, _ in pts], [g for _, g in pts], color=st["color"], marker=st["marker"], lw=1,
                alpha=0.3, ls=":", label=f"{st['label']}, {exp.reference.get('source', 'reference')}")
    if losses or zero_at is not None:
        loss_axis(ax, [p * 100 for p in losses] + ([0.0] if zero_at is not None else []), zero_at)
    else:
        ax.set_xscale("log")
    ax.set_xlabel("random loss rate on the data path (%)")
    ax.set_ylabel("goodput after startup (Mbit/s)")
    # BBR's estimate may exceed the link (a trace's peaks): keep it in view
    highest = max([link] + [r["metrics"].get("bbr_bw_p50_mbps") or 0 for r in merged])
    ax.set_ylim(0, highest * 1.08)
    if len(ax.get_legend_handles_labels()[1]) > 6:  # many CCs: beside the plot, not over the curves
        fig.set_size_inches(14, 6)  # room for the legend's longest names (Mathis, the reference's)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        fig.subplots_adjust(left=0.06, right=0.66)
    else:
        ax.legend(loc="lower left", fontsize=8)
    return fig


def spaced_ticks(values: list[float], ratio: float = 1.6) -> list[float]:
    """The VALUES (ascending, > 0) a log axis can label without their labels running into
    each other: each at least RATIO times the one before; the largest always, in place of
    a kept neighbour too close to it (10, 15, 20, 25, 30, 40, 50 -> 10, 20, 50)."""
    kept: list[float] = []
    for v in values:
        if not kept or v >= kept[-1] * ratio:
            kept.append(v)
    if values and kept[-1] != values[-1]:
        if len(kept) > 1 and values[-1] < kept[-1] * ratio:
            kept.pop()
        kept.append(values[-1])
    return kept


def sweep_normalized(plt, exp, rundir: RunDir, records: list[dict], untrusted: set[str] = frozenset()):
    """Sweeps: goodput / link rate against loss, one line per value of the other axis, per CC.

    Points the emulator could not be trusted with (UNTRUSTED: CPU-bound, link below its
    rate, or at a rate this machine failed the fidelity check at) get hollow markers, and a
    curve made only of them is dashed, so a reader does not take the emulator's limit for
    the congestion control's.
    """
    merged = claims_mod.average_repetitions(records)
    group_key = next((k for k in exp.axes if k not in ("loss", "cc", RUN_AXIS)), None)
    ccs = sorted({cc_of(r) for r in merged})
    fig, axes = plt.subplots(1, len(ccs), figsize=(6.5 * len(ccs), 5.5), sharey=True, squeeze=False)
    cmap = plt.get_cmap("viridis")
    values = list(exp.axes.get(group_key, [None]))
    swept = sorted({r["metrics"]["loss"] * 100 for r in merged})
    zero_at = zero_position(swept)
    for ax, cc in zip(axes[0], ccs):
        def position(value) -> int:
            return values.index(value) if value in values else 0

        curves = _loss_curves(merged, group_key).items()
        for (c, value), recs in sorted(curves, key=lambda kv: position(kv[0][1])):
            if c != cc:
                continue
            recs = sorted(recs, key=lambda r: r["metrics"]["loss"])
            idx = position(value)
            color = cmap(0.85 * idx / max(len(values) - 1, 1))  # viridis without its pale yellow end
            xs = [_x(r["metrics"]["loss"] * 100, zero_at) for r in recs]
            ys = [r["metrics"]["steady_goodput_mbps"] / r["metrics"]["link_mbps"] for r in recs]
            bad = [claims_mod.point_name(r) in untrusted for r in recs]
            label = f"{group_key}={value}" if group_key else style(cc)["label"]
            if all(bad):
                label += " (emulator-limited)"
            elif any(bad):
                label += " (hollow: emulator-limited)"
            ax.plot(xs, ys, color=color, lw=1.5, ls="--" if all(bad) else "-", label=label,
                    marker=style(cc)["marker"], markevery=[i for i, b in enumerate(bad) if not b] or None,
                    mfc=color if not all(bad) else "none")
            hollow = [(x, y) for x, y, b in zip(xs, ys, bad) if b]
            if hollow and not all(bad):
                ax.plot([x for x, _ in hollow], [y for _, y in hollow], ls="none", marker=style(cc)["marker"],
                        color=color, mfc="none")
        loss_axis(ax, swept, zero_at)
        ax.set_title(style(cc)["label"])
        ax.set_xlabel("random loss rate (%)")
        ax.set_ylim(0, 1.1)
        ax.legend(fontsize=8, loc="best")
    axes[0][0].set_ylabel("goodput / bottleneck rate")
    return fig


IETF101_SHALLOW_BDP = 1.5  # IETF 101: v1's "high loss rates if the bottleneck buffer < 1.5 x BDP"
COUNT_STYLES = ("-", "--", ":", "-.")


def buffer_retransmits(plt, exp, rundir: RunDir, records: list[dict]):
    merged = claims_mod.average_repetitions(records)
    fig, (loss_ax, good_ax) = plt.subplots(1, 2, figsize=(13, 5.5))
    bdp = buffer_bdp  # as the file asked: 0.25, not the 0.249 of whole packets
    counts = sorted({len(r["flow_plan"]) for r in merged})
    for cc in sorted({cc_of(r) for r in merged}):
        st = style(cc)
        for n, count in enumerate(counts):
            recs = sorted((r for r in merged if cc_of(r) == cc and len(r["flow_plan"]) == count), key=bdp)
            if not recs:
                continue
            label = f"{st['label']}, {count} flow{'s' if count > 1 else ''}"
            kw = dict(color=st["color"], marker=st["marker"], ls=COUNT_STYLES[n % len(COUNT_STYLES)], lw=1.5, ms=5)
            loss_ax.plot([bdp(r) for r in recs], [100 * r["metrics"]["retransmit_rate"] for r in recs], label=label, **kw)
            good_ax.plot([bdp(r) for r in recs], [r["metrics"]["steady_goodput_mbps"] for r in recs], label=label, **kw)
    capacity = max((r["metrics"].get("payload_capacity_mbps") or 0) for r in merged)
    if capacity:
        good_ax.axhline(capacity, color="grey", ls="--", lw=1, label=f"payload capacity {capacity:.1f} Mbit/s")
    xs = sorted({round(bdp(r), 2) for r in merged})
    for ax in (loss_ax, good_ax):
        ax.axvline(IETF101_SHALLOW_BDP, color="black", ls=":", lw=1,
                   label="1.5 BDP (IETF 101: v1's high loss below)" if ax is loss_ax else None)
        ax.set_xscale("log")
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.minorticks_off()
        ax.set_xlabel("bottleneck buffer (BDP)")
        ax.grid(alpha=0.3)
    loss_ax.set_ylabel("retransmitted segments / segments sent (%)")
    loss_ax.set_ylim(bottom=0)
    good_ax.set_ylabel("goodput after startup, all flows (Mbit/s)")
    good_ax.set_ylim(0, 1.15 * max([capacity] + [r["metrics"]["steady_goodput_mbps"] for r in merged]))
    loss_ax.legend(fontsize=8, loc="upper right")
    good_ax.legend(fontsize=8, loc="lower right")
    return fig
