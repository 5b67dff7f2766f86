"""Figures of QUIC connections (`tool: picoquic`), in the style of Huitema's post on
low-RTT jitter; registered in plot_kinds.PLOTS.

quic_rates: the post's figure 1. Each connection's rate (its bytes over its duration),
sorted, one line per congestion control (picoquic's, or kernel TCP's for iperf3 flows, as
quic-jitter-tcp runs quic-jitter's points); one panel per base RTT (rows) and delay
variation (columns). A panel whose points were CPU-bound says so in its title.

quic_timeline: the post's figure 2. For the first connection of each point drawn (up to
four), over its first 4 s: its pacing rate and throughput, its RTT samples and
smoothed RTT, and BBR's state (picoquic's own names).
"""

from __future__ import annotations

from ...schema import picoquic_builds
from ...store.results import RunDir
from ...verdicts import claims as claims_mod
from .style import RUN_AXIS, VARIANT_MARK, base_cc, in_turn, own_id, run_of, style, variant

WINDOW = 4.0  # seconds of one connection in quic_timeline, as in the post's figure 2
MAX_POINTS = 4


def _label(cc: str, tool: str = "picoquic", build: str | None = None) -> str:
    """The CC by its implementation ("picoquic bbr (BBRv3)"), its picoquic build where one
    was chosen ("picoquic 1.1.25.1 of 2024-09-27"), and the run it was drawn for where
    several are (its name there: bbr@1)."""
    run = run_of(cc)
    cc = base_cc(cc)
    if tool != "picoquic":  # kernel TCP: bbr is Linux's v1, bbr3 its BBRv3
        text = f"Linux {cc}" + (" (BBR v1)" if cc == "bbr" else " (BBRv3)" if cc == "bbr3" else "")
    else:
        text = f"picoquic {cc}" + (" (BBRv3)" if cc == "bbr" else " (BBRv1)" if cc == "bbr1" else "")
        if build is not None:  # on a line of its own: a legend as narrow as a panel's half
            text = f"{text},\n{picoquic_builds.label(build).removeprefix('picoquic ')}"
    return f"{text}, {run}" if run else text


def _style(cc: str, tool: str = "picoquic", build: str | None = None) -> dict:
    """picoquic's bbr is v3: BBRv3's colour, never Linux's v1's; bbr1 gets v1's (in the shade
    of its run, where several runs are drawn); an older picoquic build its own shade, by its
    place in the builds' list (every second one dashed, so that two builds of one CC differ
    in more than a shade; a what-if build dotted, with diamonds)."""
    if tool != "picoquic":
        return style(cc)
    base, _, run = cc.partition(VARIANT_MARK)
    own = {"bbr": "bbr3", "bbr1": "bbr"}.get(base, base)
    shade = int(run) if run else list(picoquic_builds.BUILDS).index(build) if build else 0
    if picoquic_builds.what_if(build):
        return {**style(variant(own, shade)), "ls": ":", "marker": "D"}
    return {**style(variant(own, shade) if shade else own), "ls": "--" if build and shade and shade % 2 == 0 else "-"}


def quic_rates(plt, exp, rundir: RunDir, records: list[dict], untrusted: set | None = None):
    from matplotlib.ticker import MaxNLocator

    rtts = sorted({r["link"]["rtt"] for r in records})
    variations = sorted({r["link"]["delay_variation"] for r in records})
    legend_in = 2.7  # inches to the right of the panels for the legend
    size = (max(8.0, 2.9 * len(variations) + 1.2) + legend_in, max(7.0, 2.7 * len(rtts) + 1.5))
    fig, axes = plt.subplots(len(rtts), len(variations), figsize=size, sharey=True, squeeze=False)
    # up to the fastest connection (the link's rate would flatten CPU-bound connections to nothing)
    top = 1.25 * max(f["goodput_mbps"] for r in records for f in r["metrics"]["flows"])
    for i, rtt in enumerate(rtts):
        for j, var in enumerate(variations):
            ax = axes[i, j]
            recs = [r for r in records if r["link"]["rtt"] == rtt and r["link"]["delay_variation"] == var]
            cpu = False
            for group in claims_mod.grid_points(recs):
                plan = group[0]["flow_plan"][0]
                cc, tool, build = plan["cc"], plan.get("tool", "iperf3"), plan.get("build")
                st = _style(cc, tool, build)
                for k, rec in enumerate(group):
                    rates = sorted(f["goodput_mbps"] for f in rec["metrics"]["flows"])
                    ax.plot(range(1, len(rates) + 1), rates, color=st["color"], marker=st["marker"], lw=1.3,
                            ls=st.get("ls", "-"), ms=4, alpha=1.0 if k == 0 else 0.5,
                            label=_label(cc, tool, build) if k == 0 else None)
                    cpu = cpu or bool(rec["metrics"].get("cpu_bound")) or claims_mod.point_name(rec) in (untrusted or ())
            ax.set_title(f"RTT {rtt * 1e3:g} ms, variation {var * 1e3:g} ms" + (", CPU-bound" if cpu else ""),
                         fontsize=8.5, color="firebrick" if cpu else "black")
            ax.set_ylim(0, top)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
            if i == len(rtts) - 1:
                ax.set_xlabel("connection (sorted by rate)")
            if j == 0:
                ax.set_ylabel("bytes / duration (Mbit/s)")
    # beside the panels, never over a connection's rate
    axes[0, -1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.03, 1.0), borderaxespad=0)
    fig.subplots_adjust(hspace=0.45, right=1 - (legend_in + 0.2) / size[0])
    return fig


def _xy(points: list, start: float) -> tuple[list, list]:
    inside = [(t - start, v) for t, v in points if start <= t <= start + WINDOW]
    return [t for t, _ in inside], [v for _, v in inside]


def quic_timeline(plt, exp, rundir: RunDir, records: list[dict]):
    chosen = []
    for rec in sorted(records, key=lambda r: r["id"]):
        flows = rundir.series(rec["id"]).get("flows") or {}
        quic = [(fid, f) for fid, f in flows.items() if f.get("tool") == "picoquic"]
        if quic:
            chosen.append((rec, *quic[0]))
    chosen = in_turn(chosen, lambda found: found[0]["params"].get(RUN_AXIS))[:MAX_POINTS]
    if not chosen:
        raise ValueError("no QUIC connection in the points drawn")
    fig, axes = plt.subplots(3, len(chosen), figsize=(5.2 * len(chosen) + 1, 8.5), sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [2, 2, 1.2]})
    for col, (rec, fid, flow) in enumerate(chosen):
        rate_ax, rtt_ax, state_ax = axes[:, col]
        st = _style(flow["cc"])
        start = flow["data_start"]
        rate_ax.plot(*_xy(flow.get("pacing_mbps") or [], start), color=st["color"], lw=1.0, label="pacing rate")
        rate_ax.plot(*_xy(flow.get("acked_mbps") or flow.get("throughput") or [], start), color="black", lw=1.4,
                     label="throughput (acked, per 100 ms)")
        rate_ax.set_ylim(bottom=0)
        rate_ax.set_ylabel("Mbit/s")
        rate_ax.legend(fontsize=8, loc="upper right")
        rate_ax.set_title(f"{own_id(rec)}\nconnection {fid}: {_label(flow['cc'])}", fontsize=9)
        rtt_ax.plot(*_xy(flow.get("rtt_sample_ms") or [], start), ls="none", marker=".", ms=3, color=st["color"],
                    label="RTT samples (the first of each sampling interval)")
        rtt_ax.plot(*_xy(flow.get("srtt_ms") or [], start), color="black", lw=1.0, label="smoothed RTT")
        rtt_ax.set_yscale("log")
        rtt_ax.set_ylabel("RTT (ms, log)")
        rtt_ax.legend(fontsize=8, loc="upper right")
        phases = flow.get("bbr_phase") or []
        if phases:
            names = sorted({p for _, p in phases})
            held = [(t, p) for t, p in phases if t < start] or phases[:1]
            shown = [(max(held[-1][0], start), held[-1][1])] + [(t, p) for t, p in phases if start < t <= start + WINDOW]
            shown.append((start + WINDOW, shown[-1][1]))
            state_ax.step([t - start for t, _ in shown], [names.index(p) for _, p in shown], where="post",
                          color=st["color"], lw=1.4)
            state_ax.set_yticks(range(len(names)), names, fontsize=7)
            state_ax.set_ylim(-0.5, len(names) - 0.5)
        else:
            why = "not a BBR" if base_cc(flow["cc"]) not in ("bbr", "bbr1") else "its states were not recorded"
            state_ax.text(0.5, 0.5, f"no BBR state ({why})", ha="center", va="center", transform=state_ax.transAxes)
            state_ax.set_yticks([])
        state_ax.set_xlabel("seconds from the connection's start")
        state_ax.set_xlim(0, WINDOW)
    return fig
