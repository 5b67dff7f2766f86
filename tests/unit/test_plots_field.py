"""The coexistence figure, drawn from a synthetic run of the coexist experiment, and that
experiment's claims judged on it."""

from pathlib import Path

import pytest

from bbrlab.verdicts import claims
from bbrlab.output.figures import legends, plot_kinds, plots, plots_field, plots_paper, style
from bbrlab.schema import experiment as spec
from bbrlab.analysis import ware
from bbrlab.store.results import write_json

pytest.importorskip("matplotlib")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def coexist_run(synthetic_run, bbr_shares, quick: bool = True, overrides=()):
    """A run of coexist (--quick) where BBR took BBR_SHARES[buffer][k] in repetition k + 1."""
    exp = spec.load(EXPERIMENTS / "coexist.yaml", list(overrides), quick=quick)

    def metrics(point, plan):
        share = bbr_shares[point.params["buffer"]][point.repetition - 1]
        by_cc = {"bbr": {"share": share, "steady_goodput_mbps": 9.2 * share},
                 "cubic": {"share": 1 - share, "steady_goodput_mbps": 9.2 * (1 - share)}}
        return {"buffer_pkts": point.link.buffer_packets, "bdp_pkts": round(point.link.bdp_packets, 2),
                "loss": 0.0, "link_mbps": 10.0, "duration_s": 30.0, "by_cc": by_cc,
                "groups": [dict(by_cc["bbr"], group=0, cc="bbr"), dict(by_cc["cubic"], group=1, cc="cubic")]}

    repetitions = {len(shares) for shares in bbr_shares.values()}
    assert len(repetitions) == 1, "as many repetitions at every buffer"
    return exp, synthetic_run(exp, metrics, repetitions=repetitions.pop())


SHARES = {"0.5bdp": [0.85, 0.86], "1bdp": [0.72, 0.73], "8bdp": [0.35, 0.34], "16bdp": [0.3, 0.31]}


def test_the_coexist_claims_hold_when_shares_cross_between_1_and_8_bdp(synthetic_run):
    exp, rundir = coexist_run(synthetic_run, SHARES)
    verdict = claims.verdict(exp.claims, rundir.point_records())
    assert verdict["verdict"] == "reproduced", verdict["why"]
    shallow, deep = verdict["claims"]
    assert sorted(c["point"] for c in shallow["checks"]) == ["buffer=0.5bdp", "buffer=1bdp"]
    assert sorted(c["point"] for c in deep["checks"]) == ["buffer=16bdp", "buffer=8bdp"]
    flipped = {k: [1 - v for v in vals] for k, vals in SHARES.items()}
    exp, rundir = coexist_run(synthetic_run, flipped)
    assert claims.verdict(exp.claims, rundir.point_records())["verdict"] == "not reproduced"


def test_the_figure_draws_each_ccs_share_and_the_model_beside_it(synthetic_run):
    exp, rundir = coexist_run(synthetic_run, SHARES)
    records = rundir.point_records()
    shares = plots_field.class_shares(records)
    assert [x for x, *_ in shares["bbr"]] == [0.5, 1.0, 8.0, 16.0]
    assert shares["bbr"][0][1:] == pytest.approx((0.855, 0.85, 0.86))
    curve = plots_field.model_curve(records[0], 0.4, 20)
    assert curve[0][0] == pytest.approx(0.4) and curve[-1][0] == pytest.approx(20)
    assert curve[-1][1] == pytest.approx(ware.share(20, 10e6, 0.04, 30.0).bbr)
    plt = plots._pyplot()
    fig = plot_kinds.PLOTS["coexist_share"].draw(plt, exp, rundir, records)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert any("Ware et al. model" in label for label in labels)
    assert any("IETF 101" in label for label in labels)
    plt.close(fig)
    fig = plots.figure(exp, rundir, records, claims.verdict(exp.claims, records))
    ax = fig.axes[0]
    measured = {c.get_label().split(" (")[0]: c.lines[0] for c in ax.containers}
    assert list(measured["BBR"].get_xdata()) == [0.5, 1, 8, 16]  # the buffers, in BDPs
    assert list(measured["BBR"].get_ydata()) == pytest.approx([0.855, 0.725, 0.345, 0.305])  # each buffer's mean
    assert list(measured["CUBIC"].get_ydata()) == pytest.approx([0.145, 0.275, 0.655, 0.695])
    model = {line.get_label(): line for line in ax.get_lines() if "Ware et al." in line.get_label()}
    assert model["BBR, Ware et al. model (IMC 2019)"].get_linestyle() == "--"
    assert [*model["BBR, Ware et al. model (IMC 2019)"].get_ydata()][-1] == pytest.approx(curve[-1][1], abs=0.01)
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "bottleneck buffer (BDP)" and ax.get_ylim() == (0, 1.02)
    assert legends.legend_overlaps(ax) == 0
    plt.close(fig)


def test_the_share_axis_ends_at_1_whatever_the_legend_would_cover(synthetic_run):
    """The full-length run's shares (2026-11-23): the legend inside the axes covered CUBIC's
    0.82 at 32 BDP and raised the axis to 3; beside the axes it covers nothing."""
    measured = {"0.5bdp": 0.934, "1bdp": 0.928, "2bdp": 0.654, "4bdp": 0.463, "8bdp": 0.393, "16bdp": 0.332,
                "32bdp": 0.182}
    exp, rundir = coexist_run(synthetic_run, {b: [v] for b, v in measured.items()}, quick=False)
    records = rundir.point_records()
    fig = plots.figure(exp, rundir, records, claims.verdict(exp.claims, records))  # legends placed as drawn
    top = fig.axes[0].get_ylim()[1]
    plots._pyplot().close(fig)
    assert top <= 1.02


def test_the_trace_replay_figure_has_one_panel_per_interval(synthetic_run):
    exp = spec.load(EXPERIMENTS / "trace-interval.yaml", quick=True)

    def offered(plan):
        return [[round(t, 3), round(v / 1e6, 4)] for t, v in plan.schedule.schedule.averaged(0, 20, 0.1)]

    rundir = synthetic_run(exp, lambda point, plan: {"trace_delivery": 0.98, "schedule_late_p99_ms": 0.8,
                                                     "duration_s": 20.0, "loss": 0.0},
                           lambda point, plan: {"link_rate": offered(plan),
                                                "link_sent": [[t, v * 0.98] for t, v in offered(plan)],
                                                "flows": {"f1": {"cc": "cubic", "throughput": [
                                                    [t, v * 0.9] for t, v in offered(plan)[::5]]}}})
    records = rundir.point_records()
    plt = plots._pyplot()
    fig = plot_kinds.PLOTS["trace_replay"].draw(plt, exp, rundir, records)
    titles = sorted(ax.get_title() for ax in fig.axes)
    assert len(titles) == 3 and all("delivered 0.98 of the trace, updates late p99 0.8 ms" in t for t in titles)
    assert any(t.startswith("trace_interval=1ms") for t in titles)
    plt.close(fig)
    verdict = claims.verdict(exp.claims, records)
    assert verdict["verdict"] == "reproduced"
    fig = plots.figure(exp, rundir, records, verdict)
    panel = next(ax for ax in fig.axes if ax.get_title().startswith("trace_interval=10ms"))
    lines = {line.get_label(): line for line in panel.get_lines()}
    trace = lines["offered by the trace (100 ms)"]
    sent = lines["bottleneck sent"]  # 0.98 of what the trace offered
    assert list(sent.get_ydata()) == pytest.approx([0.98 * v for v in trace.get_ydata()])
    assert all(legends.legend_overlaps(ax) == 0 for ax in fig.axes)
    plt.close(fig)


def test_the_report_gives_the_shares_beside_the_model_and_ietf_101(synthetic_run):
    from bbrlab.output.reports import report_field

    exp, rundir = coexist_run(synthetic_run, SHARES)
    lines = report_field.coexist_table(exp, rundir.point_records())
    assert lines[3] == "| buffer (BDP) | bbr share | cubic share | BBR, Ware et al. model | BBR share, IETF 101 |"
    model_8 = ware.share(8, 10e6, 0.04, 30.0).bbr
    assert f"| 8 | 0.34 (0.34-0.35) | 0.66 (0.65-0.66) | {model_8:.2f} | 0.34 (3.26 of 9.57 Mbit/s) |" in lines
    assert "| 0.5 | 0.85 (0.85-0.86) | 0.15 (0.14-0.15) | 0.97 | – |" in lines
    assert report_field.coexist_table(spec.load(EXPERIMENTS / "step.yaml"), rundir.point_records()) == []


def test_flows_of_a_mixed_point_are_coloured_by_their_cc(synthetic_run):
    exp, rundir = coexist_run(synthetic_run, {"0.5bdp": [0.8], "1bdp": [0.7], "8bdp": [0.3], "16bdp": [0.3]})
    records = rundir.point_records()
    flows = {"f1": {"cc": "bbr", "start": 0.0, "throughput": [[1, 6.0], [2, 6.5]]},
             "f2": {"cc": "cubic", "start": 0.0, "throughput": [[1, 3.0], [2, 2.5]]}}
    for rec in records:
        write_json(rundir.points_dir / rec["id"] / "series.json", {"flows": flows, "link_rate": [[0.0, 10.0]]})
    plt = plots._pyplot()
    fig = plots_paper.throughput_timeseries(plt, exp, rundir, [dict(records[0], metrics={"duration_s": 30.0})])
    colors = [line.get_color() for line in fig.axes[0].get_lines()[:2]]
    assert colors == [style.style("bbr")["color"], style.style("cubic")["color"]]
    plt.close(fig)


def test_ietf_101s_point_is_drawn_only_beside_a_run_on_its_link(synthetic_run):
    """IETF 101 measured 8 BDP at 10 Mbit/s and 40 ms: a run at 20 Mbit/s and 30 ms gets no
    stars, and the legend and the report say why."""
    exp, rundir = coexist_run(synthetic_run, SHARES, overrides=["rate=20Mbit", "rtt=30ms"])
    assert exp.reference["at"] == {"rate": 10e6, "rtt": 0.04}
    records = rundir.point_records()
    plt = plots._pyplot()
    fig = plots_field.coexist_share(plt, exp, rundir, records)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    plt.close(fig)
    why = "IETF 101 was measured at 10 Mbit/s, 40 ms, this run at 20 Mbit/s, 30 ms: not comparable"
    assert [label.replace("\n", " ") for label in labels if label.startswith("not drawn")] == [f"not drawn: {why}"]
    assert not any(label.endswith(", IETF 101") for label in labels)
    from bbrlab.output.reports import report_field

    lines = report_field.coexist_table(exp, records)
    assert lines[-1] == f"Not compared with IETF 101: {why}." and not any("BBR share, IETF 101" in x for x in lines)


def test_a_references_link_is_checked_at_load(tmp_path):
    from bbrlab.errors import SpecError
    from bbrlab.schema import reference_format

    assert reference_format.parse({"source": "x", "at": {"rate": "100Mbit", "rtt": "100ms", "trace": "$T/a.up"}})["at"] == {
        "rate": 100e6, "rtt": 0.1, "trace": "a.up"}
    with pytest.raises(SpecError, match=r"reference.at: unknown key 'loss' \(known: rate, rtt, trace\)"):
        reference_format.parse({"at": {"loss": "1%"}})
    with pytest.raises(SpecError, match=r"reference: unknown key 'sauce' \(did you mean source\?\)"):
        reference_format.parse({"sauce": "x"})
    with pytest.raises(SpecError, match=r"reference.at.rate"):
        reference_format.parse({"at": {"rate": "10"}})


def coexist_aqm_run(synthetic_run, bbr_share):
    """A run of coexist-aqm where BBR took BBR_SHARE[aqm][buffer]."""
    exp = spec.load(EXPERIMENTS / "coexist-aqm.yaml")

    def metrics(point, plan):
        share = bbr_share[point.params["aqm"]][point.params["buffer"]]
        return {"buffer_pkts": point.link.buffer_packets, "bdp_pkts": round(point.link.bdp_packets, 2),
                "link_mbps": 10.0, "by_cc": {"bbr": {"share": share}, "cubic": {"share": 1 - share}}, "groups": []}

    return exp, synthetic_run(exp, metrics)


def test_coexist_under_aqm_draws_a_line_style_per_discipline_and_the_model_for_the_fifo(synthetic_run):
    fifo = {"0.5bdp": 0.9, "1bdp": 0.85, "2bdp": 0.6, "8bdp": 0.4, "32bdp": 0.2}
    even = {b: 0.5 for b in fifo}
    exp, rundir = coexist_aqm_run(synthetic_run, {"fifo": fifo, "fq_codel": even, "cake": dict(even, **{"8bdp": 0.7})})
    records = rundir.point_records()
    plt = plots._pyplot()
    fig = plot_kinds.PLOTS["coexist_share"].draw(plt, exp, rundir, records)
    handles, labels = fig.axes[0].get_legend_handles_labels()
    assert {"BBR, droptail FIFO", "CUBIC, fq_codel", "BBR, CAKE"} <= set(labels)
    assert "BBR, Ware et al. model for the FIFO (IMC 2019)" in labels
    plt.close(fig)
    verdict = claims.verdict(exp.claims, records)
    by_id = {c["id"]: c["status"] for c in verdict["claims"]}
    assert by_id == {"fq-codel-splits-evenly": "holds", "cake-splits-evenly": "fails",
                     "fifo-bbr-ahead-in-shallow-buffers": "holds"}, verdict["why"]
