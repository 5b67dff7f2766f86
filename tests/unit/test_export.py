"""bbrlab export: tidy CSV tables of a run that pandas reads in one call each, in SI units."""

import json

import pytest

from bbrlab import cli
from bbrlab.output.files import export


def test_export_writes_tidy_tables_pandas_reads_in_one_call(capsys, tmp_path, step_run):
    pandas = pytest.importorskip("pandas")  # Debian: python3-pandas (vm/vm.sh deps --test-tools)
    run = step_run(tmp_path / "results")
    out = tmp_path / "tables"
    assert cli.main(["export", str(run.path), "--format", "csv", "--out", str(out)]) == 0
    assert capsys.readouterr().out.split() == [str(out / f) for f in ("points.csv", "flows.csv", "series.csv")]
    metrics = json.loads((run.points_dir / "cc=bbr,rep1" / "metrics.json").read_text())

    points = pandas.read_csv(out / "points.csv")
    assert len(points) == 1 and points.loc[0, "param_cc"] == "bbr" and points.loc[0, "experiment"] == "step"
    assert points.loc[0, "rate_bps"] == 10e6 and points.loc[0, "rtt_s"] == pytest.approx(0.04)
    assert points.loc[0, "goodput_bps"] == pytest.approx(metrics["goodput_mbps"] * 1e6)
    assert points.loc[0, "rtt_p50_s"] == pytest.approx(metrics["rtt_p50_ms"] / 1e3)
    assert not any(c.endswith(("_mbps", "_ms")) for c in points.columns)

    flows = pandas.read_csv(out / "flows.csv")
    assert list(flows["flow"]) == ["f1"] and flows.loc[0, "cc"] == "bbr"
    assert flows.loc[0, "steady_goodput_bps"] == pytest.approx(metrics["flows"][0]["steady_goodput_mbps"] * 1e6)

    series = pandas.read_csv(out / "series.csv")
    assert {"throughput", "rtt", "cwnd", "srtt", "queue", "link_rate"} <= set(series["series"])
    assert series["t_s"].dtype == float and series["value"].dtype == float
    rtt = series[series["series"] == "rtt"]
    assert set(rtt["unit"]) == {"s"} and 0.03 < rtt["value"].median() < 1.0


def test_export_of_something_that_is_not_a_run_is_one_line(capsys, tmp_path, step_run):
    assert cli.main(["export", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"bbrlab: {tmp_path}: not a bbrlab results directory (no run.json)\n"
    run = step_run(tmp_path / "results")
    assert cli.main(["export", str(run.path), "--format", "xlsx"]) == 2
    assert "--format xlsx: only csv is written" in capsys.readouterr().err


def test_si_names():
    assert export.si_name("goodput_mbps") == ("goodput_bps", 1e6)
    assert export.si_name("rtt_p50_ms") == ("rtt_p50_s", 1e-3)
    assert export.si_name("utilization") == ("utilization", 1.0)
