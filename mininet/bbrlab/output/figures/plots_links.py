"""Figures of the link-timing experiments, registered in plot_kinds.PLOTS.

aggregation_goodput: goodput and median RTT against the base RTT, one line per congestion
control (BBR with and without Linux's ACK-aggregation allowance, CUBIC), one column per
direction that leaves in slots.

jitter_goodput: goodput against the delay variation, one panel per base RTT, the band
where the variation is within the emulator's own RTT noise shaded, the link's rate, and the
reordering the senders saw in each panel's title (it must be zero).

Where several runs share a panel, the link's rate, a slot's timing and the reordering are
each run's own where the runs differ in them (guides.py).
"""

from __future__ import annotations

import textwrap

from ...verdicts import claims as claims_mod
from . import guides
from .style import style
from ...store.results import RunDir


def _by_cc(records: list[dict], x_of, y_key: str) -> dict[str, list[tuple[float, float, float, float]]]:
    """cc -> [(x, mean over repetitions, lowest, highest)] of metric Y_KEY, sorted by x."""
    out: dict[str, list] = {}
    for group in claims_mod.grid_points(records):
        values = [r["metrics"][y_key] for r in group if r["metrics"].get(y_key) is not None]
        if values:
            cc = group[0]["flow_plan"][0]["cc"]
            out.setdefault(cc, []).append((x_of(group[0]), sum(values) / len(values), min(values), max(values)))
    return {cc: sorted(points) for cc, points in out.items()}


def _errorbars(ax, points, cc: str, label_tail: str = "") -> None:
    st = style(cc)
    ax.errorbar([p[0] for p in points], [p[1] for p in points],
                yerr=[[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]],
                color=st["color"], marker=st["marker"], lw=1.6, capsize=3, label=st["label"] + label_tail)


def slot_on(record: dict) -> str:
    slot = record["link"].get("slot")
    return slot["on"] if slot else "none"


def _slot_text(record: dict) -> str:
    slot = record["link"].get("slot")
    if not slot:
        return "no slots"
    gap = f"{slot['min'] * 1e3:g}-{slot['max'] * 1e3:g} ms" if slot["max"] > slot["min"] else f"{slot['min'] * 1e3:g} ms"
    what = "ACKs" if slot["on"] == "ack" else "data"
    return f"{what} leave in slots every {gap}"


def _link_mbps(record: dict) -> float:
    return record["metrics"]["link_mbps"]


def _rate_lines(ax, records: list[dict]) -> str:
    """The link's rate: each run's own where several runs' differ (guides.lines). Returns
    where the axes' legend goes: at the bottom, below goodput that sits near the one rate;
    where the rates differ, at the top (the curves lie at several heights), where
    legends.clear_legends raises the axes' top above it."""
    drawn = guides.lines(records, _link_mbps, lambda v: f"link rate {v:g} Mbit/s", ls=":")
    for rate, kw in drawn:
        ax.axhline(rate, lw=0.8, **kw)
    return "upper" if len(drawn) > 1 else "lower"


def aggregation_goodput(plt, exp, rundir: RunDir, records: list[dict]):
    columns = sorted({slot_on(r) for r in records})
    fig, axes = plt.subplots(2, len(columns), figsize=(6.5 * len(columns) + 1, 8.5), sharex=True, squeeze=False)
    for col, on in enumerate(columns):
        recs = [r for r in records if slot_on(r) == on]
        top, bottom = axes[0, col], axes[1, col]
        for cc, points in _by_cc(recs, lambda r: r["link"]["rtt"] * 1e3, "steady_goodput_mbps").items():
            _errorbars(top, points, cc)
        for cc, points in _by_cc(recs, lambda r: r["link"]["rtt"] * 1e3, "steady_rtt_p50_ms").items():
            _errorbars(bottom, points, cc)
        where = _rate_lines(top, recs)
        rtts = sorted({r["link"]["rtt"] * 1e3 for r in recs})
        bottom.plot(rtts, rtts, color="black", lw=0.8, ls=":", label="base RTT")
        # several runs' slots where they differ, each with its runs
        top.set_title(textwrap.fill(guides.said(recs, _slot_text, str), 70), fontsize=10)
        top.set_ylim(0, max(_link_mbps(r) for r in recs) * 1.15)
        top.set_ylabel("steady goodput (Mbit/s)")
        bottom.set_ylabel("median RTT after startup (ms)")
        bottom.set_xlabel("base RTT (ms)")
        bottom.set_ylim(bottom=0)
        top.legend(fontsize=8, loc=f"{where} right")
        bottom.legend(fontsize=8, loc="upper left")
    return fig


def noise_floor_ms(records: list[dict]) -> float | None:
    """The idle path's RTT spread (p90 - p10) where no variation is configured: what the
    emulator itself adds. None when no such point ran."""
    spreads = [r["metrics"]["idle_rtt_spread_ms"] for r in records
               if not r["link"].get("delay_variation") and r["metrics"].get("idle_rtt_spread_ms") is not None]
    return max(spreads) if spreads else None


def _reordering(records: list[dict]) -> str:
    """The reordering events the senders of RECORDS saw: "0", or each run's where several
    runs' differ ("0 (run 1), 3 (run 2)")."""
    seen: dict = {}
    for r in records:
        run = guides.run_of(r)
        seen[run] = seen.get(run, 0) + (r["metrics"].get("reordering_events") or 0)
    return guides.said(records, lambda r: seen[guides.run_of(r)], str)


def jitter_goodput(plt, exp, rundir: RunDir, records: list[dict]):
    rtts = sorted({r["link"]["rtt"] for r in records})
    fig, axes = plt.subplots(1, len(rtts), figsize=(5.5 * len(rtts) + 1, 5.5), sharey=True, squeeze=False)
    top = max(_link_mbps(r) for r in records) * 1.15  # the panels share it: every run's rate below it
    for ax, rtt in zip(axes[0], rtts):
        recs = [r for r in records if r["link"]["rtt"] == rtt]
        for cc, points in _by_cc(recs, lambda r: r["link"]["delay_variation"] * 1e3, "steady_goodput_mbps").items():
            _errorbars(ax, points, cc)
        floor = noise_floor_ms(recs)
        if floor:
            ax.axvspan(0, floor, color="grey", alpha=0.18,
                       label=f"within the emulator's RTT noise ({floor:.2g} ms)")
        mins = [r["metrics"]["idle_rtt_min_ms"] for r in recs if r["metrics"].get("idle_rtt_min_ms") is not None]
        if mins:
            real = min(mins)
            ax.axvline(real, color="black", lw=0.8, ls=":", label=f"smallest RTT measured ({real:.2g} ms)")
        where = _rate_lines(ax, recs)
        ax.set_title(textwrap.fill(f"base RTT {rtt * 1e3:g} ms: reordering seen {_reordering(recs)}", 60),
                     fontsize=10)
        ax.set_xlabel("delay variation on the data direction (ms)")
        ax.set_ylim(0, top)
        ax.legend(fontsize=8, loc=f"{where} left")
    axes[0, 0].set_ylabel("steady goodput (Mbit/s)")
    return fig
