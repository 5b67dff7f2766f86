"""BBR's own state over time (analysis/bbr_state.py's series), registered in plot_kinds.PLOTS.

bbr_state: one column per BBR flow of the points drawn, three panels on its time axis: the
phase BBR was in (a categorical step: v3's own report; v1's read from its pacing gain), its
cwnd (ss) with v3's inflight_hi, both in packets, and its smoothed RTT (ss). The colour and
the column's title tell v1 from v3 (style.py), by the version the kernel's struct gave.
"""

from __future__ import annotations

import math

from ...store.results import RunDir
from .style import RUN_AXIS, base_cc, in_turn, own_id, style

# bottom to top roughly by pacing gain, so a probe up reads as a step up
PHASES = ("PROBE_RTT", "DRAIN", "PROBE_BW_DOWN", "PROBE_BW_CRUISE", "PROBE_BW_REFILL", "PROBE_BW_UP", "STARTUP")
MAX_FLOWS = 4  # columns: more would leave each too narrow to read
LABEL_INCHES = 1.9  # left of each column: the longest phase name and the axis label


def bbr_flows(rundir: RunDir, records: list[dict]) -> list[tuple[dict, str, dict]]:
    """(record, flow id, its series) of every flow with BBR state, in point then flow order."""
    found = []
    for rec in sorted(records, key=lambda r: r["id"]):
        for fid, flow in (rundir.series(rec["id"]).get("flows") or {}).items():
            if flow.get("bbr_phase") and flow.get("tool", "iperf3") == "iperf3":  # the kernel's (QUIC: plots_quic)
                found.append((rec, fid, flow))
    return found


def version_style(flow: dict) -> dict:
    """v3's colour when the kernel reported v3, else the flow's own BBR's (never v3's); a
    run's own shade where several runs are drawn (bbr@1)."""
    cc = flow.get("cc") or "bbr"
    if flow.get("bbr_version", 1) >= 3:
        return style(cc if base_cc(cc) == "bbr3" else "bbr3")
    return style(cc if base_cc(cc) in ("bbr", "bbr_noagg") else "bbr")


def _xy(points: list) -> tuple[list, list]:
    return [t for t, _ in points], [v for _, v in points]


def _base_rtt(rec: dict, flow: dict) -> tuple[float | None, str]:
    """The base RTT of FLOW's own path (ms) and whose it is: its class's where the point's
    classes have RTTs of their own (a class at 5 ms on a 50 ms link), else the link's."""
    metrics = rec.get("metrics") or {}
    groups = [g for g in metrics.get("groups") or () if g.get("rtt_ms") is not None]
    mine = [g for g in groups if g.get("group") == flow.get("group")]
    if mine and any(g["rtt_ms"] != metrics.get("base_rtt_ms") for g in groups):
        return mine[0]["rtt_ms"], f" (class {mine[0]['class']})"
    return metrics.get("base_rtt_ms"), ""


def _column(axes, rec: dict, fid: str, flow: dict) -> None:
    phase_ax, cwnd_ax, rtt_ax = axes
    st = version_style(flow)
    v3 = flow.get("bbr_version", 1) >= 3
    names = list(PHASES) + sorted({p for _, p in flow["bbr_phase"]} - set(PHASES))  # an unknown one on top
    times, phases = _xy(flow["bbr_phase"])
    phase_ax.step(times, [names.index(p) for p in phases], where="post", color=st["color"], lw=1.4)
    phase_ax.set_yticks(range(len(names)), names, fontsize=8)
    phase_ax.set_ylim(-0.5, len(names) - 0.5)
    phase_ax.set_ylabel("phase" if v3 else "phase (v1: from pacing gain)")
    phase_ax.set_title(f"{own_id(rec)}, flow {fid}: {st['label']} (tcp_bbr_info v{flow.get('bbr_version', 1)}, "
                       f"cc {base_cc(flow['cc'])})", fontsize=9)
    cwnd_ax.plot(*_xy(flow.get("cwnd") or []), color=st["color"], lw=1.2, label="cwnd (ss)")
    if v3:
        cwnd_ax.plot(*_xy(flow.get("bbr_inflight_hi_pkts") or []), color=st["color"], ls="--", lw=1.4,
                     label="inflight_hi (v3; none while unset)")
    cwnd_ax.set_ylabel("packets")
    cwnd_ax.set_ylim(bottom=0)
    cwnd_ax.legend(loc="upper right", fontsize=8)
    rtt_ax.plot(*_xy(flow.get("srtt_ms") or []), color=st["color"], lw=1.2, label="smoothed RTT (ss)")
    base, whose = _base_rtt(rec, flow)
    if base:
        rtt_ax.axhline(base, color="black", ls=":", lw=1, label=f"base RTT {base:g} ms{whose}")
    rtt_ax.set_ylabel("RTT (ms)")
    rtt_ax.set_ylim(bottom=0)
    rtt_ax.legend(loc="upper right", fontsize=8)
    rtt_ax.set_xlabel("time since first flow start (s)")


def bbr_state(plt, exp, rundir: RunDir, records: list[dict]):
    flows = in_turn(bbr_flows(rundir, records), lambda found: found[0]["params"].get(RUN_AXIS))
    shown = flows[:MAX_FLOWS]
    columns = max(1, len(shown))
    panel = 7.0 if columns == 1 else 5.0  # inches of each column's axes
    width = columns * (panel + LABEL_INCHES) + 0.2
    fig, axes = plt.subplots(3, columns, figsize=(width, 9.0), squeeze=False, sharex="col",
                             gridspec_kw={"height_ratios": [1.3, 1.6, 1.2]})
    # every column carries its phase names: the margin and the gaps are sized in inches for them
    fig.subplots_adjust(hspace=0.25, wspace=LABEL_INCHES / panel, left=LABEL_INCHES / width, right=1 - 0.2 / width)
    if not shown:
        for ax in axes[:, 0]:
            ax.set_axis_off()
        axes[1][0].text(0.5, 0.5, "no BBR state in these points (tcp_diag.py decodes the state of the flows whose cc is a BBR)",
                        ha="center", va="center", transform=axes[1][0].transAxes)
        return fig
    for col, (rec, fid, flow) in enumerate(shown):
        _column(axes[:, col], rec, fid, flow)
        if col:  # cwnd and RTT on one scale per row: v1 against v3 at a glance
            axes[1][col].sharey(axes[1][0])
            axes[2][col].sharey(axes[2][0])
    for row in axes[1:]:  # the scale of every column's data (classes may differ in RTT), not the first's
        tops = [ax.dataLim.y1 for ax in row if math.isfinite(ax.dataLim.y1)]
        if tops:
            row[0].set_ylim(0, 1.05 * max(tops))
    if len(flows) > len(shown):
        axes[0][-1].set_title(f"{axes[0][-1].get_title()}\n({len(flows) - len(shown)} more BBR flows not drawn)",
                              fontsize=9)
    return fig
