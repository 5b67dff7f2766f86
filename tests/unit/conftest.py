"""Offline unit tests: where Mininet is not installed, the two names links.py takes from
it are stood in for by empty classes, so the testbed's modules import on any host; and
`step_run`, a results directory made from a captured point; `synthetic_run`, one whose
points hold made-up numbers; `measured`, the runner run offline on a stand-in testbed."""

import importlib.machinery
import os
import sys
import types

import pytest

import seeding

try:  # the real Mininet, when this host has it
    import mininet.link  # noqa: F401
except ImportError:  # else the two names links.py takes from it (the repository's own
    fake = types.ModuleType("mininet.link")  # mininet/ directory may stand as the package)
    fake.__spec__ = importlib.machinery.ModuleSpec("mininet.link", None)
    fake.Intf = type("Intf", (), {})
    fake.Link = type("Link", (), {})
    sys.modules["mininet.link"] = fake
    try:
        import mininet  # noqa: F401
    except ImportError:
        package = types.ModuleType("mininet")
        package.__spec__ = importlib.machinery.ModuleSpec("mininet", None, is_package=True)
        package.__path__ = []
        sys.modules["mininet"] = package


def pytest_report_header(config):
    return f"property-based tests' seed: {seeding.SEED} (BBRLAB_SEED={seeding.SEED} draws the same inputs)"


@pytest.fixture(autouse=True, scope="session")
def synthetic_traces(tmp_path_factory):
    """Unit tests never read the real Mahimahi traces or published results (they are not the
    project's to ship): $BBRLAB_TRACES holds synthetic stand-ins under the names the
    experiments use, and $BBRLAB_REFERENCE an empty folder."""
    from bbrlab.schema import traces

    folder = tmp_path_factory.mktemp("traces")
    for name in ("Verizon-LTE-short.up", "Verizon-LTE-short.down"):
        traces.write(folder / name, traces.synthesize("walk", 140.0, 6e6, step=0.5, seed=12))
    saved = {k: os.environ.get(k) for k in ("BBRLAB_TRACES", "BBRLAB_REFERENCE")}
    os.environ["BBRLAB_TRACES"] = str(folder)
    os.environ["BBRLAB_REFERENCE"] = str(tmp_path_factory.mktemp("reference"))
    yield folder
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def step_run():
    """Make a run of the step experiment holding the captured BBR point (tests/fixtures/
    step-bbr), analyzed as the run would: make(ROOT) -> RunDir, without a verdict yet."""
    import json
    import shutil
    from pathlib import Path

    from bbrlab.analysis import analyze as analysis
    from bbrlab.schema import experiment as spec
    from bbrlab.emulation import topo
    from bbrlab.store import metadata
    from bbrlab.store.results import MEASUREMENT, RunDir, write_json

    repo = Path(__file__).resolve().parents[2]

    def make(root: Path) -> RunDir:
        exp = spec.load(repo / "experiments" / "step.yaml")
        (point,) = [p for p in exp.points if p.params["cc"] == "bbr"]
        rundir = RunDir.create(root, "step")
        (rundir.path / "spec.yaml").write_text(exp.source)
        write_json(rundir.path / "run.json", {"status": "complete", "spec_hash": exp.identity, "measurement": MEASUREMENT,
                                              "testbed": metadata.testbed({g.cc for p in exp.points for g in p.flows})})
        folder = rundir.points_dir / point.id
        shutil.copytree(repo / "tests" / "fixtures" / "step-bbr", folder)
        t = json.loads((folder / "point.json").read_text())["timings"]
        series, mets = analysis.analyze(point, topo.build_plan(point), folder, t["t0"], t["launches"], t["end"])
        write_json(folder / "series.json", series)
        write_json(folder / "metrics.json", mets)
        return rundir

    return make


@pytest.fixture
def synthetic_run(tmp_path):
    """Write a finished run of experiment EXP whose points hold made-up numbers of the shape
    the analysis writes, for figures, reports and claims to read:
    make(exp, metrics_of, series_of=None, root=tmp_path, repetitions=1, testbed=None) -> RunDir.

    Each point's record is the one the runner writes; metrics_of(point, plan) gives its
    metrics.json, series_of(point, plan) its series.json (empty without it). With
    REPETITIONS, each point is written that many times (point.repetition says which);
    TESTBED goes into run.json (what the run ran on: {"kernel": ...})."""
    import dataclasses

    from bbrlab.emulation import topo
    from bbrlab.store.results import FORMAT_VERSION, RunDir, write_json

    def make(exp, metrics_of, series_of=None, root=None, repetitions: int = 1, testbed: dict | None = None) -> RunDir:
        rundir = RunDir.create(root or tmp_path, exp.name)
        (rundir.path / "spec.yaml").write_text(exp.source)
        write_json(rundir.path / "run.json", {"status": "complete", **({"testbed": testbed} if testbed else {})})
        for first in exp.points:
            plan = topo.build_plan(first)
            for point in (dataclasses.replace(first, repetition=first.repetition + k) for k in range(repetitions)):
                folder = rundir.points_dir / point.id
                write_json(folder / "point.json", {
                    "format": FORMAT_VERSION, "id": point.id, "params": point.params, "repetition": point.repetition,
                    "link": dataclasses.asdict(point.link), "pacing": point.pacing,
                    "flows": [dataclasses.asdict(g) for g in point.flows],
                    "flow_plan": [dataclasses.asdict(f) for f in plan.flows],
                    "workloads": [dataclasses.asdict(w) for w in plan.workloads], "summary": plan.summary})
                write_json(folder / "metrics.json", metrics_of(point, plan))
                write_json(folder / "series.json", series_of(point, plan) if series_of else {})
        return rundir

    return make


class FakeTestbed:
    def __init__(self, plan):
        self.plan = plan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def configure(self, plan):
        self.plan = plan

    def snapshot(self):
        return {}


@pytest.fixture
def measured(monkeypatch):
    """Run points offline; TABLE[(cc, repetition)] is what a point measures (a dict of metrics
    or a number for m); the list it returns names the points run, in order."""
    from bbrlab.analysis import analyze as analysis
    from bbrlab.output.figures import plots
    from bbrlab.runs import runner

    ran = []
    table = {}

    def analyze(point, plan, folder, t0, launches, end, events=None):
        ran.append(point.id)
        value = table[(point.params["cc"], point.repetition)]
        if isinstance(value, BaseException):
            raise value
        metrics = value if isinstance(value, dict) else {"rtt_p50_ms": value}
        return {}, {"goodput_mbps": 1.0, **metrics}

    monkeypatch.setattr(runner, "Testbed", FakeTestbed)
    monkeypatch.setattr(runner, "run_point", lambda testbed, point, plan, folder: {
        "t0": 0.0, "launches": {}, "end": point.duration, "run_seconds": point.duration, "events": []})
    monkeypatch.setattr(analysis, "analyze", analyze)
    monkeypatch.setattr(plots, "draw", lambda exp, rundir, records, v, **how: rundir.path / "auto.png")
    return table, ran
