"""The fidelity gate: what this machine's calibration says about a run's points."""

from pathlib import Path

from bbrlab.schema import experiment as spec
from bbrlab.verdicts import judge
from bbrlab.store.results import RunDir, write_json

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
CALIBRATION = {"key": "abc123def456", "file": "/r/calibration/abc123def456.json",
               "gate": {"rate_bps": 100e6, "failed": "cubic: link_delivery 0.944 < 0.98"}}


def run(root: Path, name: str, calibration: dict | None) -> RunDir:
    rundir = RunDir.create(root, name)
    meta = {"status": "complete"} if calibration is None else {"status": "complete", "calibration": calibration}
    write_json(rundir.path / "run.json", meta)
    write_json(rundir.points_dir / "rep1" / "point.json", {"id": "rep1", "params": {}, "link": {"rate": 100e6}})
    write_json(rundir.points_dir / "rep1" / "metrics.json", {})
    return rundir


def test_gate_comes_from_the_calibration_the_run_recorded(tmp_path):
    figure8 = spec.load(EXPERIMENTS / "figure8.yaml")
    assert judge.fidelity_gate(run(tmp_path, "figure8", None), figure8) is None  # measured before calibration
    gate = judge.fidelity_gate(run(tmp_path, "figure8", CALIBRATION), figure8)
    assert gate == {"rate_bps": 100e6, "run": "/r/calibration/abc123def456.json",
                    "failed": "calibration abc123def456: cubic: link_delivery 0.944 < 0.98"}
    faithful = dict(CALIBRATION, gate=None)
    assert judge.fidelity_gate(run(tmp_path, "figure8", faithful), figure8) is None


def test_the_fidelity_run_itself_has_no_gate(tmp_path):
    fidelity = spec.load(EXPERIMENTS / "fidelity.yaml")
    assert judge.fidelity_gate(run(tmp_path, "fidelity", CALIBRATION), fidelity) is None


def test_overhead_says_where_a_points_time_beyond_its_flows_goes():
    from bbrlab.store import metadata

    meta = {"sessions": [{"wall_seconds": 100.0}, {"wall_seconds": 50.0}]}  # a resumed run: both sessions
    records = [{"timings": {"configured_seconds": 60.0, "setup_seconds": 6.0, "run_seconds": 62.0,
                            "analysis_seconds": 1.0}},
               {"timings": {"configured_seconds": 60.0, "setup_seconds": 0.5, "run_seconds": 64.0,
                            "analysis_seconds": 2.0}},
               {"timings": {"configured_seconds": 15.0, "setup_seconds": 0.5}}]  # written before the breakdown
    over = metadata.overhead(meta, records)
    assert over == {"wall_seconds": 150.0, "configured_flow_seconds": 135.0, "ratio": 1.111,
                    "setup_seconds_mean": 2.333, "setup_seconds_max": 6.0,
                    "run_beyond_flows_seconds_mean": 3.0, "analysis_seconds_mean": 1.5}


def test_the_points_that_failed_and_never_finished_are_stood_in_for(tmp_path):
    exp = spec.load(EXPERIMENTS / "figure5.yaml", quick=True)
    rundir = RunDir.create(tmp_path, "figure5")
    failed = [{"point": p.id, "error": "iperf3 exited 1"} for p in exp.points]
    write_json(rundir.path / "run.json", {"status": "incomplete", "sessions": [{"failed": failed}]})
    finished = exp.points[1]
    write_json(rundir.points_dir / finished.id / "point.json", {"id": finished.id, "params": finished.params})
    write_json(rundir.points_dir / finished.id / "metrics.json", {})
    (stand_in,) = judge.failed_points(rundir, exp)  # the other one finished on a later session
    assert stand_in["params"] == exp.points[0].params and stand_in["error"] == "iperf3 exited 1"
    assert stand_in["link"]["rate"] == 10e6 and [g["cc"] for g in stand_in["flows"]] == [exp.points[0].params["cc"]]
