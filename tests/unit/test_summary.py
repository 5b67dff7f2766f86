"""The fidelity gate: what the emulator's own check on this machine says about other runs."""

from pathlib import Path

from bbrlab import spec, summary
from bbrlab.results import RunDir, write_json

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
MACHINE = {"hostname": "bbrlab", "kernel": "6.1.0-test", "cpus": 2, "virtualization": "qemu"}


def run(root: Path, name: str, system: dict, claims: list[dict] | None = None, rate: float = 100e6) -> RunDir:
    rundir = RunDir.create(root, name)
    write_json(rundir.path / "run.json", {"status": "complete", "system": system})
    write_json(rundir.points_dir / "rep1" / "point.json", {"id": "rep1", "params": {}, "link": {"rate": rate}})
    write_json(rundir.points_dir / "rep1" / "metrics.json", {})
    if claims is not None:
        write_json(rundir.path / "verdict.json", {"verdict": "x", "claims": claims})
    return rundir


def fidelity_claims(efficiency_ok: bool, delivery_ok: bool) -> list[dict]:
    return [
        {"id": "link-delivers-its-rate", "text": "one flow gets 95%", "status": "holds" if efficiency_ok else "fails",
         "checks": [{"value": 0.74}]},
        {"id": "backlogged-link-at-its-rate", "text": "backlogged at 95%", "status": "holds" if delivery_ok else "fails",
         "checks": [{"value": 0.77}]},
        {"id": "idle-rtt-as-configured", "text": "idle RTT", "status": "fails", "checks": [{"value": 3.0}]},
    ]


def test_gate_comes_from_the_newest_fidelity_run_on_the_same_machine(tmp_path):
    figure8 = spec.load(EXPERIMENTS / "figure8.yaml")
    mine = run(tmp_path, "figure8", MACHINE)
    assert summary.fidelity_gate(mine, figure8) is None  # no fidelity run yet
    fid = run(tmp_path, "fidelity", MACHINE, fidelity_claims(False, False))
    gate = summary.fidelity_gate(mine, figure8)
    assert gate == {"rate_bps": 100e6, "run": str(fid.path),
                    "failed": "one flow gets 95%: 0.74; backlogged at 95%: 0.77"}  # not the idle-RTT claim
    run(tmp_path, "fidelity", MACHINE, fidelity_claims(True, True))  # newer, and the link kept up
    assert summary.fidelity_gate(mine, figure8) is None


def test_gate_ignores_other_machines_and_the_fidelity_run_itself(tmp_path):
    run(tmp_path, "fidelity", dict(MACHINE, hostname="laptop", virtualization="none"), fidelity_claims(False, True))
    mine = run(tmp_path, "figure8", MACHINE)
    assert summary.fidelity_gate(mine, spec.load(EXPERIMENTS / "figure8.yaml")) is None
    fid = run(tmp_path, "fidelity", MACHINE, fidelity_claims(False, True))
    assert summary.fidelity_gate(fid, spec.load(EXPERIMENTS / "fidelity.yaml")) is None
    assert summary.fidelity_gate(mine, spec.load(EXPERIMENTS / "figure8.yaml"))["failed"] == "one flow gets 95%: 0.74"


def test_overhead_says_where_a_points_time_beyond_its_flows_goes():
    from bbrlab import metadata

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


def test_a_damaged_fidelity_run_is_ignored_with_a_warning_not_a_traceback(tmp_path, capsys):
    mine = run(tmp_path, "figure8", MACHINE)
    fid = run(tmp_path, "fidelity", MACHINE, fidelity_claims(False, False))
    (fid.path / "verdict.json").write_text('{"verdict": "x"}')  # no claims
    assert summary.fidelity_gate(mine, spec.load(EXPERIMENTS / "figure8.yaml")) is None
    assert "warning: ignoring the fidelity run" in capsys.readouterr().err
    assert summary.fidelity_gate(run(tmp_path, "cc-compare", {}), spec.load(EXPERIMENTS / "cc-compare.yaml")) is None
