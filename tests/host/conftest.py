"""Host tests' fixtures: `sh` runs a script of the repository with the VM's and the kernel
probe's commands faked (a call fails the test), `results` is a results root holding a
figure5 run made from a captured point."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bbrlab.analysis import analyze as analysis
from bbrlab.schema import experiment as spec
from bbrlab.emulation import topo
from bbrlab.store.results import RunDir, write_json

REPO = Path(__file__).resolve().parents[2]
STEP_BBR = REPO / "tests" / "fixtures" / "step-bbr"
WATCHED = ("vagrant", "virsh", "ip", "tc", "modprobe")


@pytest.fixture
def sh(tmp_path):
    """Run a script of the repository with the watched commands faked; fail if one ran."""
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "calls"
    for name in WATCHED:
        (fake / name).write_text(f"#!/bin/sh\necho \"{name} $*\" >> {calls}\nexit 1\n")
        (fake / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}")

    def run(script: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        proc = subprocess.run([str(REPO / script), *args], capture_output=True, text=True, env=env, timeout=120,
                              cwd=cwd)
        assert not calls.exists(), f"{script} {' '.join(args)} ran: {calls.read_text()}"
        return proc

    return run


@pytest.fixture
def results(tmp_path) -> Path:
    """A results root holding a figure5 run: the captured BBR point (tests/fixtures) as its
    cc=bbr point, analyzed as the run would; no verdict yet (plot writes the first)."""
    root = tmp_path / "results"
    exp = spec.load(REPO / "experiments" / "figure5.yaml")
    step = [p for p in spec.load(REPO / "experiments" / "step.yaml").points if p.params["cc"] == "bbr"][0]
    rundir = RunDir.create(root, "figure5")
    (rundir.path / "spec.yaml").write_text(exp.source)
    write_json(rundir.path / "run.json", {"status": "complete", "spec_hash": exp.identity})
    folder = rundir.points_dir / [p for p in exp.points if p.params["cc"] == "bbr"][0].id
    shutil.copytree(STEP_BBR, folder)
    t = json.loads((folder / "point.json").read_text())["timings"]
    series, mets = analysis.analyze(step, topo.build_plan(step), folder, t["t0"], t["launches"], t["end"])
    write_json(folder / "series.json", series)
    write_json(folder / "metrics.json", mets)
    return root
