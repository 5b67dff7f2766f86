"""The AQM figure: the probe's and the flows' latency per AQM, goodput and queue delay below."""

from pathlib import Path

import pytest

from bbrlab.output.figures import plot_kinds, plots, plots_aqm
from bbrlab.schema import experiment as spec

pytest.importorskip("matplotlib")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
# per AQM: (the probe's RTT, the flow's srtt, its goodput, the queue's delay), as measured in kind
SHAPE = {"fifo": (250.0, 252.0, 9.4, 210.0), "fq_codel": (41.0, 46.0, 9.3, 4.0), "cake": (41.5, 47.0, 9.2, 4.5)}
TIMES = [i * 0.5 for i in range(40)]


@pytest.fixture
def aqm_run(synthetic_run):
    exp = spec.load(EXPERIMENTS / "figure5-aqm.yaml", quick=True)

    def metrics(point, plan):
        _, _, goodput, delay = SHAPE[point.params["aqm"]]
        return {"base_rtt_ms": 40.0, "link_mbps": 10.0, "steady_goodput_mbps": goodput, "queue_delay_p50_ms": delay}

    def series(point, plan):
        probe, srtt, _, _ = SHAPE[point.params["aqm"]]
        return {"rtt": {"g1": [[t, probe + (t % 2)] for t in TIMES]},
                "flows": {"f1": {"cc": point.flows[0].cc, "srtt_ms": [[t, srtt] for t in TIMES]}}}

    return exp, synthetic_run(exp, metrics, series)


def test_the_latencies_leave_out_startup_and_come_per_aqm(aqm_run):
    exp, rundir = aqm_run
    records = rundir.point_records()
    fq = next(r for r in records if plots_aqm.aqm_of(r) == "fq_codel")
    probe, flows = plots_aqm.latencies(rundir, fq, exp.points[0].sampling.startup)
    assert len(probe) == len(flows) == 30 and min(probe) == 41.0 and set(flows) == {46.0}  # startup: 5 s
    assert {plots_aqm.aqm_of(r) for r in records} == {"fifo", "fq_codel", "cake"}


def test_the_figure_has_a_column_per_cc_and_a_line_per_aqm(aqm_run):
    exp, rundir = aqm_run
    plt = plots._pyplot()
    fig = plot_kinds.PLOTS["aqm_latency"].draw(plt, exp, rundir, rundir.point_records())
    cdf_bbr, cdf_cubic = fig.axes[0], fig.axes[1]
    labels = cdf_cubic.get_legend_handles_labels()[1]
    assert "fq_codel: probe (ping), median 42 ms" in labels and "droptail FIFO: CUBIC's own RTT (ss), median 252 ms" in labels
    assert cdf_bbr.get_title() == "BBR flow: latency under load"
    plt.close(fig)


def test_the_headend_figure_has_a_column_per_rate_and_the_full_buffer_beside_the_probe(synthetic_run):
    exp = spec.load(EXPERIMENTS / "headend.yaml")

    def metrics(point, plan):
        queue = point.link.full_buffer_seconds() * 1e3 if point.params["aqm"] == "fifo" else 5.0
        return {"base_rtt_ms": 40.0, "buffer_pkts": point.link.buffer_packets, "steady_goodput_mbps": 9.0,
                "steady_rtt_p50_ms": 40 + queue, "steady_rtt_p95_ms": 45 + queue,
                "by_cc": {point.flows[0].cc: {"srtt_p50_ms": 41 + queue}}}

    rundir = synthetic_run(exp, metrics)
    records = rundir.point_records()
    assert sorted({round(plots_aqm._buffer_ms(r)) for r in records}) == [200, 800, 2000]
    plt = plots._pyplot()
    fig = plot_kinds.PLOTS["headend"].draw(plt, exp, rundir, records)
    assert [ax.get_title() for ax in fig.axes[:2]] == ["10 Mbit/s, 40 ms base RTT", "20 Mbit/s, 40 ms base RTT"]
    labels = fig.axes[1].get_legend_handles_labels()[1]  # the legend sits on the last column's top panel
    assert {"droptail FIFO, CUBIC load", "fq_codel, BBR load", "CAKE, CUBIC load", "base + the full buffer"} <= set(labels)
    plt.close(fig)
