"""The short-flow figure and report table, drawn from a synthetic run of cdn-mix --quick
whose flows take a chosen multiple of their ideal time, and its claims judged on it."""

import csv
from pathlib import Path

import pytest

from bbrlab.verdicts import claims
from bbrlab.analysis import fct
from bbrlab.output.figures import legends, plots, plots_fct, style
from bbrlab.output.reports import report_field
from bbrlab.schema import experiment as spec, workload
from bbrlab.emulation import topo

pytest.importorskip("matplotlib")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
T0 = 5000.0


def synthetic_records(plan, factor) -> list[dict]:
    """Every scheduled flow of PLAN, taking FACTOR(class, cc) x its ideal FCT; the last
    one of each class unfinished."""
    records = []
    for w in plan.workloads:
        planned = workload.flows(w.workload, w.group, plan.summary["rate_bps"], w.start)
        for k, (at, size) in enumerate(planned):
            start = T0 + at
            est = start + w.rtt
            done = k < len(planned) - 1
            fct_s = factor(w.cls, w.cc) * fct.ideal_seconds(size, w.rtt, plan.summary["rate_bps"])
            records.append({"id": f"g{w.group + 1}-{k + 1}", "group": w.group, "class": w.cls, "cc": w.cc,
                            "cc_set": w.cc, "size": size, "at": at, "start": start, "established": est,
                            "end": est + fct_s if done else None, "bytes_acked": size if done else 0,
                            "retrans": 0, "completed": done, "error": None if done else "open at the deadline"})
    return records


def cdn_run(synthetic_run, factor):
    exp = spec.load(EXPERIMENTS / "cdn-mix.yaml", quick=True)

    def flow_rows(point, plan):
        return fct.rows(synthetic_records(plan, factor), {w.group: w.rtt for w in plan.workloads}, point.link.rate, T0)

    def metrics(point, plan):
        rows = flow_rows(point, plan)
        return {"loss": 0.0, "link_mbps": 20.0, "buffer_pkts": point.link.buffer_packets,
                "bdp_pkts": point.link.bdp_packets, **fct.summarize(rows),
                **fct.programs([{"role": "send", "cpu_s": 1.0}], rows),
                "groups": fct.per_class(rows, [(w.group, w.cls, w.cc, w.rtt) for w in plan.workloads])}

    def series(point, plan):
        rows = flow_rows(point, plan)
        return {"shortflows": rows, "fct_cdf": fct.cdfs(rows)}

    return exp, synthetic_run(exp, metrics, series)


def as_the_cdn_saw_it(cls: str, cc: str) -> float:
    return {("client", "bbr"): 1.5, ("client", "cubic"): 3.0, ("pop-to-pop", "bbr"): 4.0,
            ("pop-to-pop", "cubic"): 2.0}[(cls, cc)]


def test_the_cdn_mix_claims_are_evaluated_on_the_classes(synthetic_run):
    exp, rundir = cdn_run(synthetic_run, as_the_cdn_saw_it)
    verdict = claims.verdict(exp.claims, rundir.point_records())
    by_id = {c["id"]: c for c in verdict["claims"]}
    assert by_id["bbr-helps-lossy-clients-fct"]["status"] == "holds"
    assert by_id["bbr-helps-lossy-clients-fct"]["checks"][0]["value"] == pytest.approx(0.5, abs=0.05)
    assert by_id["bbr-helps-lossy-clients-throughput"]["checks"][0]["value"] == pytest.approx(2.0, abs=0.1)
    assert by_id["pop-to-pop-worse-under-bbr-fct"]["status"] == "holds"
    assert by_id["pop-to-pop-worse-under-bbr-throughput"]["checks"][0]["value"] == pytest.approx(0.5, abs=0.05)
    assert by_id["flows-complete"]["status"] == "holds" and by_id["workload-on-time"]["status"] == "holds"
    assert verdict["verdict"] == "reproduced"
    the_other_way = cdn_run(synthetic_run, lambda cls, cc: 2.0 if cc == "bbr" else 1.2)
    assert claims.verdict(exp.claims, the_other_way[1].point_records())["verdict"] == "not reproduced"


def test_the_quick_profile_plans_enough_flows_for_every_claim():
    """172 flows, and in each class more than one object over 3 MB (the large-object claims)."""
    exp = spec.load(EXPERIMENTS / "cdn-mix.yaml", quick=True)
    plan = topo.build_plan(exp.points[0])
    planned = [workload.flows(w.workload, w.group, 20e6) for w in plan.workloads]
    assert [len(p) for p in planned] == [83, 89]
    assert [sum(size > 3e6 for _, size in p) for p in planned] == [3, 4]


def test_the_figure_and_the_report_table(synthetic_run):
    exp, rundir = cdn_run(synthetic_run, as_the_cdn_saw_it)
    records = rundir.point_records()
    pooled = plots_fct.pooled(rundir, records)
    assert sorted(pooled) == [("cc=bbr", "client", "bbr"), ("cc=bbr", "pop-to-pop", "bbr"),
                              ("cc=cubic", "client", "cubic"), ("cc=cubic", "pop-to-pop", "cubic")]
    line = plots_fct.workload_line(records[0])
    assert "client: RTT 50 ms, loss 0.05%, Poisson, load 30% for 45 s" in line
    swept = plots_fct.workload_line(dict(records[0], flows=[{"rtt": None}, {"rtt": 0.01}]),
                                    {"rtt": ["40ms", "100ms"], "load": ["30%", "60%"]})
    assert "client: RTT the link's, loss 0.05%, Poisson, load 30%, 60% (swept)" in swept and "RTT 10 ms" in swept
    fig = plots.figure(exp, rundir, records, claims.verdict(exp.claims, records))
    cdf, slowdown = fig.axes
    curves = {line.get_label(): line for line in cdf.get_lines()}
    assert sorted(curves) == ["BBR, client (82 done, 1 unfinished)", "BBR, pop-to-pop (88 done, 1 unfinished)",
                              "CUBIC, client (82 done, 1 unfinished)", "CUBIC, pop-to-pop (88 done, 1 unfinished)"]
    client = curves["BBR, client (82 done, 1 unfinished)"]
    assert client.get_ydata()[-1] == pytest.approx(82 / 83)  # the unfinished flow never reaches the top
    assert client.get_color() == style.style("bbr")["color"] and client.get_linestyle() == "-"
    assert curves["BBR, pop-to-pop (88 done, 1 unfinished)"].get_linestyle() == "--"  # a class: its line style
    assert cdf.get_xscale() == "log" and slowdown.get_xscale() == slowdown.get_yscale() == "log"
    medians = {line.get_label(): set(line.get_ydata()) for line in slowdown.get_lines()
               if line.get_label().endswith("median per size bucket")}
    assert medians == {"BBR, client: median per size bucket": {1.5}, "CUBIC, client: median per size bucket": {3.0},
                       "BBR, pop-to-pop: median per size bucket": {4.0},
                       "CUBIC, pop-to-pop: median per size bucket": {2.0}}  # each class's chosen multiple
    assert sorted(line.get_xdata()[0] for line in slowdown.get_lines() if line.get_linestyle() == ":") == [1e5, 1e6, 3e6]
    assert len(slowdown.collections) == 4  # every completed flow, per class and CC
    assert all(legends.legend_overlaps(ax) == 0 for ax in fig.axes)
    plots._pyplot().close(fig)
    table = report_field.fct_table(records)
    assert any("| cc=bbr | client | bbr |" in row for row in table)
    assert report_field.fct_table([]) == []


def test_export_writes_one_row_per_short_flow_in_si_units(tmp_path, synthetic_run):
    from bbrlab.output.files import export

    exp, rundir = cdn_run(synthetic_run, as_the_cdn_saw_it)
    written = export.export([rundir], tmp_path / "tables")
    assert [p.name for p in written] == ["points.csv", "flows.csv", "series.csv", "shortflows.csv"]
    with open(tmp_path / "tables" / "shortflows.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {"flow", "class", "cc", "size", "fct_s", "slowdown", "completed", "tput_bps"} <= set(rows[0])
    assert len(rows) == sum(r["metrics"]["flows_planned"] for r in rundir.point_records())
    assert float(rows[0]["fct_s"]) < 60 and rows[0]["completed"] == "1" and rows[0]["class"] == "client"


def test_the_slowdown_axis_labels_a_few_round_values_finer_within_a_decade():
    wide, narrow = plots_fct.slowdown_ticks(150), plots_fct.slowdown_ticks(3)
    assert wide[:4] == [1, 2, 5, 10] and all(b / a >= 2 for a, b in zip(wide, wide[1:]))
    assert {1, 1.5, 2, 3} <= set(narrow) and max(narrow) == 10
