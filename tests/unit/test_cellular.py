"""The cellular experiment: a trace replayed by path, ReBBR's LTE numbers read by path
(synthetic stand-ins here: conftest points $BBRLAB_TRACES and $BBRLAB_REFERENCE at them)."""

import os
from pathlib import Path

import pytest

from bbrlab.verdicts import reference_numbers
from bbrlab.output.reports import report
from bbrlab.schema import experiment as spec
from bbrlab.emulation import topo
from bbrlab.errors import SpecError
from bbrlab.store.results import RunDir, write_atomic, write_json

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
CSV = """congestion_control, loss_rate, goodput_Mbps, rtt_ms, bandwidth_Mbps, specified_bw_Mbps
cubic, 1e-05, 5.9, 100, 5.96, 100
cubic, 0.01, 1.2, 100, 5.96, 100
bbr, 1e-05, 5.7, 100, 5.96, 100
bbr, 0.01, 5.6, 100, 5.96, 100
"""


@pytest.fixture
def rebbr(monkeypatch, tmp_path):
    (tmp_path / "rebbr").mkdir()
    (tmp_path / "rebbr" / "experiment4.csv").write_text(CSV)
    monkeypatch.setenv("BBRLAB_REFERENCE", str(tmp_path))
    return tmp_path


def test_the_trace_is_read_from_the_traces_folder_and_sets_the_rate(synthetic_traces):
    exp = spec.load(EXPERIMENTS / "cellular.yaml", quick=True)
    point = exp.points[0]
    assert point.link.trace == str(synthetic_traces / "Verizon-LTE-short.up")
    plan = topo.build_plan(point)
    assert plan.schedule.schedule.interval == 0.01 and plan.schedule.schedule.period == 140.0
    assert point.link.rate == pytest.approx(plan.schedule.schedule.average)
    assert point.link.buffer_packets == 1_250_000 // 1500


def test_without_the_trace_the_experiment_is_one_error_naming_the_key_and_the_fetch(monkeypatch, tmp_path):
    monkeypatch.setenv("BBRLAB_TRACES", str(tmp_path))
    with pytest.raises(SpecError) as err:
        spec.load(EXPERIMENTS / "cellular.yaml")
    assert str(err.value) == (f"link.trace: needs trace Verizon-LTE-short.up (not in $BBRLAB_TRACES={tmp_path}): "
                              "run `./bbrlab fetch-data`")


def test_rebbrs_csv_is_read_by_path_as_goodput_by_loss_percent(rebbr):
    exp = spec.load(EXPERIMENTS / "cellular.yaml", quick=True)
    assert reference_numbers.csv_path(exp.reference) == rebbr / "rebbr" / "experiment4.csv"
    assert reference_numbers.series(exp.reference) == {"cubic": {0.001: 5.9, 1.0: 1.2}, "bbr": {0.001: 5.7, 1.0: 5.6}}


def test_without_the_csv_there_is_no_comparison_and_a_bad_csv_names_its_line(monkeypatch, tmp_path):
    monkeypatch.setenv("BBRLAB_REFERENCE", str(tmp_path))
    assert reference_numbers.series({"csv": "$BBRLAB_REFERENCE/none.csv"}) == {}
    assert reference_numbers.series({"series": {"bbr": {1: 2.0}}}) == {"bbr": {1: 2.0}}
    (tmp_path / "bad.csv").write_text("congestion_control, loss_rate, goodput_Mbps\nbbr, x, 1\n")
    with pytest.raises(SpecError, match="bad.csv:2"):
        reference_numbers.series({"csv": "$BBRLAB_REFERENCE/bad.csv"})


def _a_finished_run(root: Path):
    exp = spec.load(EXPERIMENTS / "cellular.yaml", quick=True)
    rundir = RunDir.create(root, exp.name)
    write_atomic(rundir.path / "spec.yaml", exp.source)
    write_json(rundir.path / "run.json", {"status": "complete", "points_total": len(exp.points), "git": "a" * 40,
                                          "system": {"kernel": "6.1.0-test", "cpus": 2}})
    for point in exp.points:
        cc = point.flows[0].cc
        record = {"id": point.id, "params": point.params, "flows": [{"cc": cc}]}
        write_json(rundir.points_dir / point.id / "point.json", record)
        write_json(rundir.points_dir / point.id / "metrics.json", {
            "loss": point.link.loss, "steady_goodput_mbps": 5.5 if cc == "bbr" else 2.0})
    write_json(rundir.path / "verdict.json", {"verdict": "reproduced", "cpu_bound_points": [], "claims": []})
    write_atomic(rundir.path / "cellular.png", b"\x89PNG\r\n\x1a\n")
    return exp


def test_the_report_puts_ours_next_to_rebbrs_lte_numbers(rebbr, tmp_path):
    root = tmp_path / "results"
    exp = _a_finished_run(root)
    text = report.write(root, [exp]).read_text()
    assert "Goodput (Mbit/s) next to ReBBR experiment 4 (Mahimahi, LTE):" in text
    assert "| 1 | 5.50 | 5.60 | 2.00 | 1.20 |" in text
    assert "| 0.001 | 5.50 | 5.70 | 2.00 | 5.90 |" in text
    assert os.environ["BBRLAB_REFERENCE"] == str(rebbr)


def test_without_rebbrs_file_the_report_says_what_it_goes_without_and_the_fetch(monkeypatch, tmp_path):
    monkeypatch.setenv("BBRLAB_REFERENCE", str(tmp_path / "none"))
    root = tmp_path / "results"
    text = report.write(root, [_a_finished_run(root)]).read_text()
    assert "next to ReBBR" not in text
    assert (f"Without the numbers of ReBBR experiment 4 (Mahimahi, LTE): this report needs reference file "
            f"rebbr/experiment4.csv (not in $BBRLAB_REFERENCE={tmp_path / 'none'}): run `./bbrlab fetch-data`.") in text
