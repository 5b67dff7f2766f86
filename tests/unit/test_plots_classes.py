"""v3-coexist's two pairings on one figure, and rtt-mix's classes against their fair share,
drawn from synthetic runs of those experiments."""

from pathlib import Path

import pytest

from bbrlab.verdicts import claims
from bbrlab.output.figures import legends, plot_kinds, plots, plots_classes, plots_field, style
from bbrlab.output.reports import report_field
from bbrlab.schema import experiment as spec

pytest.importorskip("matplotlib")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def link_metrics(point) -> dict:
    return {"buffer_pkts": point.link.buffer_packets, "bdp_pkts": round(point.link.bdp_packets, 2), "loss": 0.0,
            "link_mbps": point.link.rate / 1e6, "duration_s": 120.0}


def v3_coexist_run(synthetic_run, shares):
    """A run of v3-coexist where the BBR flow (v1 or v3) took SHARES[cc][buffer]."""
    exp = spec.load(EXPERIMENTS / "v3-coexist.yaml")

    def metrics(point, plan):
        bbr = point.params["cc"]
        share = shares[bbr][point.params["buffer"]]
        by_cc = {bbr: {"share": share}, "cubic": {"share": round(1 - share, 4)}}
        return dict(link_metrics(point), by_cc=by_cc, groups=[
            dict(by_cc[bbr], group=0, cc=bbr, **{"class": "g1"}), dict(by_cc["cubic"], group=1, cc="cubic", **{"class": "g2"})])

    return exp, synthetic_run(exp, metrics)


V1 = {"0.5bdp": 0.93, "1bdp": 0.92, "2bdp": 0.65, "4bdp": 0.46, "8bdp": 0.39, "16bdp": 0.33, "32bdp": 0.18}
V3 = {"0.5bdp": 0.6, "1bdp": 0.57, "2bdp": 0.49, "4bdp": 0.51, "8bdp": 0.41, "16bdp": 0.42, "32bdp": 0.07}


def test_v3_coexist_keeps_each_pairings_cubic_apart(synthetic_run):
    exp, rundir = v3_coexist_run(synthetic_run, {"bbr": V1, "bbr3": V3})
    records = rundir.point_records()
    pairs = plots_field.pairings(records)
    assert list(pairs) == ["bbr+cubic", "bbr3+cubic"] or list(pairs) == ["bbr3+cubic", "bbr+cubic"]
    cubic_v1 = dict((x, m) for x, m, *_ in plots_field.class_shares(pairs["bbr+cubic"])["cubic"])
    cubic_v3 = dict((x, m) for x, m, *_ in plots_field.class_shares(pairs["bbr3+cubic"])["cubic"])
    assert cubic_v1[0.5] == pytest.approx(0.07) and cubic_v3[0.5] == pytest.approx(0.4)
    plt = plots._pyplot()
    with style.versions_named(records):  # as plots.figure draws it
        fig = plot_kinds.PLOTS["coexist_share"].draw(plt, exp, rundir, records)
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert any(label.startswith("CUBIC against BBRv3") for label in labels)
    assert any(label.startswith("CUBIC against BBR v1") for label in labels)
    # the model is v1's: one pair of curves, beside v1's pairing
    assert sum("Ware et al. model" in label for label in labels) == 2
    styles = {c.get_label(): c.lines[0].get_linestyle() for c in ax.containers if c.get_label().startswith("BBR")}
    assert len(set(styles.values())) == 2
    plt.close(fig)
    lines = report_field.coexist_table(exp, records)
    assert lines[3].startswith("| buffer (BDP) | bbr share (bbr vs cubic) | cubic share (bbr vs cubic) | "
                               "bbr3 share (bbr3 vs cubic) | cubic share (bbr3 vs cubic) | BBR, Ware et al. model")
    assert any(line.startswith("| 0.5 | 0.93 | 0.07 | 0.60 | 0.40 |") for line in lines)


def rtt_mix_run(synthetic_run, near_share, reps=1):
    """A run of rtt-mix where the near class took NEAR_SHARE[cc] of the goodput (0.01 more
    in each further repetition)."""
    exp = spec.load(EXPERIMENTS / "rtt-mix.yaml")

    def metrics(point, plan):
        cc, far_ms = point.params["cc"], float(point.params["rtt"].removesuffix("ms"))
        near = round(near_share[cc] + 0.01 * (point.repetition - 1), 4)
        groups = [{"group": 0, "class": "near", "cc": cc, "rtt_ms": 5.0, "flows": 2, "share": near,
                   "steady_goodput_mbps": 18.5 * near, "srtt_p50_ms": 40.0, "retransmit_rate": 0.01},
                  {"group": 1, "class": "far", "cc": cc, "rtt_ms": far_ms, "flows": 2, "share": round(1 - near, 4),
                   "steady_goodput_mbps": 18.5 * (1 - near), "srtt_p50_ms": 85.0, "retransmit_rate": 0.02}]
        return dict(link_metrics(point), groups=groups, by_cc={cc: {"share": 1.0}})

    return exp, synthetic_run(exp, metrics, repetitions=reps)


def test_rtt_mix_gives_each_class_against_its_fair_share(synthetic_run):
    exp, rundir = rtt_mix_run(synthetic_run, {"bbr": 0.2, "bbr3": 0.4, "cubic": 0.6}, reps=2)
    records = rundir.point_records()
    rows = plots_classes.class_rows(records)
    near = {(r["where"], r["cc"]): r for r in rows if r["class"] == "near"}
    assert len(rows) == 24 and len(near) == 12
    row = near[("buffer=1bdp, rtt=50ms", "bbr")]
    assert row["fair"] == 0.5 and row["share"] == pytest.approx(0.205) and (row["low"], row["high"]) == (0.2, 0.21)
    assert row["n"] == 2 and row["goodput"] == pytest.approx(18.5 * 0.205)
    plt = plots._pyplot()
    fig = plot_kinds.PLOTS["class_share"].draw(plt, exp, rundir, records)
    top = fig.axes[0]
    bars = [p for p in top.patches if p.get_height() > 0]
    assert len(bars) == 24 and max(p.get_height() for p in bars) == pytest.approx(0.795)
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()][:2] == [
        "buffer=1bdp, rtt=50ms\nnear 5 ms / far 50 ms", "buffer=1bdp, rtt=100ms\nnear 5 ms / far 100 ms"]
    plt.close(fig)
    lines = report_field.class_table(exp, records)
    assert "| buffer=1bdp, rtt=50ms | bbr | near (5 ms) | 2 | 0.21 (0.20-0.21) | 0.50 | 0.41 | 3.79 | 40.0 | 1.00% |" in lines
    assert report_field.class_table(spec.load(EXPERIMENTS / "coexist.yaml"), records) == []
    fig = plots.figure(exp, rundir, records, claims.verdict(exp.claims, records))
    bottom = fig.axes[1]  # each class's smoothed RTT, marked with the base RTT of its own path
    marks = {(round(sum(line.get_xdata()) / 2, 6), line.get_ydata()[0]) for line in bottom.get_lines()
             if len(line.get_xdata())}
    assert {x for x, _ in marks} == {round(bar.get_x() + bar.get_width() / 2, 6) for bar in bottom.patches}
    near = {round(bar.get_x() + bar.get_width() / 2, 6) for bar in bottom.patches if bar.get_height() == 40.0}
    assert {y for x, y in marks if x in near} == {5.0}  # not the link's 50 ms: the near class's path is 5 ms
    assert {y for x, y in marks if x not in near} == {50.0, 100.0}
    assert bottom.get_legend_handles_labels()[1] == ["the class's base RTT"]
    assert all(legends.legend_overlaps(ax) == 0 for ax in fig.axes)
    plots._pyplot().close(fig)


def test_v3_coexists_claims_pair_each_bbr_with_its_own_cubic(synthetic_run):
    exp, rundir = v3_coexist_run(synthetic_run, {"bbr": V1, "bbr3": V3})
    verdict = claims.verdict(exp.claims, rundir.point_records())
    assert verdict["verdict"] == "reproduced", verdict["why"]
    ratio = {c["id"]: c for c in verdict["claims"]}["v3-leaves-cubic-more-of-a-shallow-buffer"]
    assert [(c["point"], c["value"]) for c in ratio["checks"]] == [
        ("buffer=0.5bdp, cc=bbr3 vs buffer=0.5bdp, cc=bbr", round(0.6 / 0.93, 4)),
        ("buffer=1bdp, cc=bbr3 vs buffer=1bdp, cc=bbr", round(0.57 / 0.92, 4))]
    exp, rundir = v3_coexist_run(synthetic_run, {"bbr": V1, "bbr3": V1})  # a second run beside the first  # v3 no fairer than v1
    verdict = claims.verdict(exp.claims, rundir.point_records())
    assert verdict["verdict"] == "not reproduced"
    assert {c["id"]: c["status"] for c in verdict["claims"]}["v3-leaves-cubic-more-of-a-shallow-buffer"] == "fails"
