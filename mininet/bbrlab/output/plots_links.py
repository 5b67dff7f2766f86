"""Figures of the link-timing experiments, registered in plot_kinds.PLOTS.

aggregation_goodput: goodput and median RTT against the base RTT, one line per congestion
control (BBR with and without Linux's ACK-aggregation allowance, CUBIC), one column per
direction that leaves in slots.

jitter_goodput: goodput against the delay variation, one panel per base RTT, the band
where the variation is within the emulator's own RTT noise shaded, and the reordering
the senders saw in each panel's title (it must be zero).
"""

from __future__ import annotations

from ..verdicts import claims as claims_mod
from .style import style
from ..store.results import RunDir


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
        rate = recs[0]["metrics"]["link_mbps"]
        top.axhline(rate, color="black", lw=0.8, ls=":", label=f"link rate {rate:g} Mbit/s")
        rtts = sorted({r["link"]["rtt"] * 1e3 for r in recs})
        bottom.plot(rtts, rtts, color="black", lw=0.8, ls=":", label="base RTT")
        top.set_title(_slot_text(recs[0]), fontsize=10)
        top.set_ylim(0, rate * 1.15)
        top.set_ylabel("steady goodput (Mbit/s)")
        bottom.set_ylabel("median RTT after startup (ms)")
        bottom.set_xlabel("base RTT (ms)")
        bottom.set_ylim(bottom=0)
        top.legend(fontsize=8, loc="lower right")
        bottom.legend(fontsize=8, loc="upper left")
    return fig


def noise_floor_ms(records: list[dict]) -> float | None:
    """The idle path's RTT spread (p90 - p10) where no variation is configured: what the
    emulator itself adds. None when no such point ran."""
    spreads = [r["metrics"]["idle_rtt_spread_ms"] for r in records
               if not r["link"].get("delay_variation") and r["metrics"].get("idle_rtt_spread_ms") is not None]
    return max(spreads) if spreads else None


def jitter_goodput(plt, exp, rundir: RunDir, records: list[dict]):
    rtts = sorted({r["link"]["rtt"] for r in records})
    fig, axes = plt.subplots(1, len(rtts), figsize=(5.5 * len(rtts) + 1, 5.5), sharey=True, squeeze=False)
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
        reordered = sum(r["metrics"].get("reordering_events") or 0 for r in recs)
        ax.set_title(f"base RTT {rtt * 1e3:g} ms: reordering seen {reordered}", fontsize=10)
        ax.set_xlabel("delay variation on the data direction (ms)")
        ax.set_ylim(0, recs[0]["metrics"]["link_mbps"] * 1.15)
        ax.legend(fontsize=8, loc="lower left")
    axes[0, 0].set_ylabel("steady goodput (Mbit/s)")
    return fig
