"""The BBR state figure, drawn from a synthetic run of v3-shallow (--quick: v1 and v3 points):
a column per BBR flow, its phase, cwnd with inflight_hi, and RTT; v1 and v3 in their colours."""

import dataclasses
from pathlib import Path

import pytest

from bbrlab.emulation import topo
from bbrlab.output.figures import plot_kinds, plots, plots_bbr, style
from bbrlab.schema import experiment as spec
from bbrlab.store.results import write_json

pytest.importorskip("matplotlib")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
TIMES = [round(i * 0.25, 2) for i in range(61)]  # 15 s at 4 samples a second
BDP = 67  # packets: 20 Mbit/s x 40 ms in 1500-byte packets


def v1_phase(t: float) -> str:
    if t < 1.0:
        return "STARTUP"
    if t < 1.25:
        return "DRAIN"
    if 10.0 <= t < 10.25:
        return "PROBE_RTT"
    return ("PROBE_BW_UP", "PROBE_BW_DOWN", "PROBE_BW_CRUISE", "PROBE_BW_CRUISE")[int(t * 4) % 4]


def v3_phase(t: float) -> str:
    if t < 1.0:
        return "STARTUP"
    if t < 1.5:
        return "DRAIN"
    if 6.0 <= t < 6.25 or 11.0 <= t < 11.25:
        return "PROBE_RTT"
    cycle = (t - 1.5) % 2.5  # a bandwidth probe every 2-3 s
    return ("PROBE_BW_REFILL" if cycle < 0.25 else "PROBE_BW_UP" if cycle < 0.75
            else "PROBE_BW_DOWN" if cycle < 1.0 else "PROBE_BW_CRUISE")


def flow_series(cc: str, n: int) -> dict:
    v3 = cc == "bbr3"
    phase = v3_phase if v3 else v1_phase
    cwnd = [[t, 4 if phase(t) == "PROBE_RTT" else (10 + 40 * t if t < 1 else 2 * BDP - 10 * n)] for t in TIMES]
    flow = {"cc": cc, "bbr_version": 3 if v3 else 1, "bbr_phase": [[t, phase(t)] for t in TIMES], "cwnd": cwnd,
            "srtt_ms": [[t, 40 + (8 if phase(t) == "PROBE_BW_UP" else 35 if not v3 and t > 1 else 3)] for t in TIMES]}
    if v3:
        flow["bbr_inflight_hi_pkts"] = [[t, 1.2 * BDP - 3 * n + (t % 2.5)] for t in TIMES if t >= 2.5]
    return flow


@pytest.fixture
def bbr_run(synthetic_run):
    exp = spec.load(EXPERIMENTS / "v3-shallow.yaml", quick=True)
    rundir = synthetic_run(exp, lambda point, plan: {"base_rtt_ms": 40.0, "link_mbps": 20.0},
                           lambda point, plan: {"flows": {f.id: flow_series(f.cc, n) for n, f in enumerate(plan.flows)},
                                                "link_rate": [[0.0, 20.0]]})
    return exp, rundir


def test_v3_has_a_style_of_its_own():
    assert style.style("bbr3")["label"] == "BBRv3" and style.style("bbr3")["color"] != style.style("bbr")["color"]
    assert plots_bbr.version_style({"cc": "bbr", "bbr_version": 3}) == style.style("bbr3")  # what the kernel said
    assert plots_bbr.version_style({"cc": "bbr3", "bbr_version": 1}) == style.style("bbr")


def test_the_figure_has_a_column_per_bbr_flow_with_phase_cwnd_and_rtt(tmp_path, bbr_run):
    exp, rundir = bbr_run
    records = rundir.point_records()
    assert len(plots_bbr.bbr_flows(rundir, records)) == 4  # two points of two flows
    plt = plots._pyplot()
    fig = plot_kinds.PLOTS["bbr_state"].draw(plt, exp, rundir, records)
    assert len(fig.axes) == 3 * 4
    phase_axes = fig.axes[:4]  # the first row
    titles = [ax.get_title() for ax in phase_axes]
    assert sum("BBRv3 (tcp_bbr_info v3" in t for t in titles) == 2 and sum(": BBR (tcp_bbr_info v1" in t for t in titles) == 2
    v3_col = titles.index(next(t for t in titles if "BBRv3" in t))
    assert phase_axes[v3_col].get_lines()[0].get_color() == style.style("bbr3")["color"]
    assert [t.get_text() for t in phase_axes[v3_col].get_yticklabels()] == list(plots_bbr.PHASES)
    cwnd_labels = fig.axes[4 + v3_col].get_legend_handles_labels()[1]
    assert cwnd_labels == ["cwnd (ss)", "inflight_hi (v3; none while unset)"]
    v1_col = titles.index(next(t for t in titles if "v1" in t))
    assert phase_axes[v1_col].get_ylabel() == "phase (v1: from pacing gain)"
    fig.savefig(tmp_path / "bbr_state.png")
    plt.close(fig)


def test_points_without_bbr_state_draw_a_note_not_an_error(bbr_run):
    exp, rundir = bbr_run
    for rec in rundir.point_records():
        write_json(rundir.points_dir / rec["id"] / "series.json", {"flows": {"f1": {"cc": "cubic", "cwnd": []}}})
    plt = plots._pyplot()
    fig = plot_kinds.PLOTS["bbr_state"].draw(plt, exp, rundir, rundir.point_records())
    assert any("no BBR state" in t.get_text() for ax in fig.axes for t in ax.texts)
    plt.close(fig)


def test_the_shallow_buffer_figure_draws_each_ccs_retransmissions_per_flow_count():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from bbrlab.output.figures import plots_loss

    exp = spec.load(EXPERIMENTS / "v3-shallow.yaml")
    records = []
    for point in exp.points:
        plan = topo.build_plan(point)
        rate = {"bbr": 0.08, "bbr3": 0.01, "cubic": 0.003}[point.params["cc"]] * len(plan.flows) / 2
        records.append({"id": point.id, "params": point.params, "link": dataclasses.asdict(point.link),
                        "flows": [dataclasses.asdict(g) for g in point.flows],
                        "flow_plan": [dataclasses.asdict(f) for f in plan.flows],
                        "metrics": {"buffer_pkts": round(BDP * point.link.buffer.value), "bdp_pkts": BDP, "retransmit_rate": rate,
                                    "steady_goodput_mbps": 18.0, "payload_capacity_mbps": 19.1}})
    assert plot_kinds.PLOTS[exp.plot_kind].draw is plots_loss.buffer_retransmits
    fig = plots_loss.buffer_retransmits(plt, exp, None, records)
    loss_ax = fig.axes[0]
    labels = loss_ax.get_legend_handles_labels()[1]
    assert labels[:6] == ["BBR, 2 flows", "BBR, 4 flows", "BBRv3, 2 flows", "BBRv3, 4 flows", "CUBIC, 2 flows",
                          "CUBIC, 4 flows"] and "IETF 101" in labels[6]
    assert [t.get_text() for t in loss_ax.get_xticklabels()] == ["0.25", "0.5", "1", "2"]  # the buffers asked for
    v1_four = loss_ax.get_lines()[1]
    assert list(v1_four.get_xdata()) == [0.25, 0.5, 1, 2] and set(v1_four.get_ydata()) == {16.0}  # percent
    plt.close(fig)


def test_each_flow_s_rtt_is_drawn_against_its_own_class_s_base_rtt(synthetic_run):
    """rtt-mix's near flows (5 ms) and far flows (50 ms) on one link: each column's base RTT
    is its flow's class's, and the RTT row's shared scale holds every column's RTT."""
    exp = spec.load(EXPERIMENTS / "rtt-mix.yaml", ["cc=bbr3", "flows.1.rtt=50ms", "buffer=1bdp"])

    def series(point, plan):
        flows = {}
        for n, f in enumerate(plan.flows):
            flow = flow_series(f.cc, n)
            own = (point.flows[f.group].rtt or point.link.rtt) * 1e3  # the class's path, and the queue's 3 to 8 ms
            flows[f.id] = dict(flow, group=f.group, srtt_ms=[[t, v - 40 + own] for t, v in flow["srtt_ms"]])
        return {"flows": flows, "link_rate": [[0.0, 20.0]]}

    rundir = synthetic_run(exp, lambda point, plan: {"base_rtt_ms": 50.0, "link_mbps": 20.0, "groups": [
        {"group": g, "class": group.name, "cc": group.cc, "rtt_ms": (group.rtt or point.link.rtt) * 1e3}
        for g, group in enumerate(point.flows)]}, series)
    plt = plots._pyplot()
    fig = plot_kinds.PLOTS["bbr_state"].draw(plt, exp, rundir, rundir.point_records())
    rtt_row = fig.axes[8:]
    bases = [[line for line in ax.get_lines() if line.get_label().startswith("base RTT")] for ax in rtt_row]
    assert [line.get_label() for (line,) in bases] == ["base RTT 5 ms (class near)"] * 2 + ["base RTT 50 ms (class far)"] * 2
    assert [line.get_ydata()[0] for (line,) in bases] == [5.0, 5.0, 50.0, 50.0]
    highest = max(max(line.get_ydata()) for ax in rtt_row for line in ax.get_lines())
    assert all(ax.get_ylim()[1] >= highest for ax in rtt_row)  # the far flows in view, not the first column's scale
    plt.close(fig)
