"""The suite engine for real: `bbrlab suite --quick` over startup (the smallest experiment
whose quick profile no other test runs: its 1 MB downloads are asserted on the suite's run),
the one-page report, and the run's cost against its flows' durations. (Random loss, which
bw-sweep asked here, is lab 2's and figure8-versions' question in test_labs and
test_versions.)
"""

import os
from pathlib import Path

import pytest
from conftest import RESULTS, bbrlab
from test_shortflows import flow_records, judged

from bbrlab.analysis import fct
from bbrlab.store.results import RunDir, read_json

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")

SUBSET = ["startup"]


@pytest.fixture(scope="module")
def suite():
    root = RESULTS / "suite"
    proc = bbrlab("suite", "--quick", "--fresh", *SUBSET, results=root, timeout=1800)
    print(proc.stdout, proc.stderr[-4000:])
    return proc, root


def test_suite_runs_each_experiment_and_writes_the_report(suite):
    proc, root = suite
    assert proc.returncode == 0, proc.stderr[-4000:]
    text = (root / "report.md").read_text()
    for name in SUBSET:
        rundir = RunDir.latest(root, name)
        assert read_json(rundir.path / "run.json")["status"] == "complete", name
        assert (rundir.path / f"{name}.png").stat().st_size > 10_000, name
        assert f"| {name} | {read_json(rundir.path / 'verdict.json')['verdict']} |" in text
    assert "Not run yet: " in text and "figure8" in text  # the rest of the suite is named, not hidden
    assert "overhead ratio" in proc.stderr


def test_startup_quick_times_each_1mb_download_alone_on_the_link(suite):
    rundir = RunDir.latest(suite[1], "startup")
    records = rundir.point_records()
    assert sorted(r["params"]["cc"] for r in records) == ["bbr", "cubic"]
    ideal = fct.ideal_seconds(1_000_000, 0.040, 10e6) * 1e3
    for rec in records:
        m = rec["metrics"]
        assert (m["flows_planned"], m["flows_completed"]) == (3, 3), m
        assert ideal <= m["fct_p50_ms"] < 6 * ideal, (ideal, m["fct_p50_ms"])
        flows = flow_records(Path(rec["dir"]))
        assert {f["cc_set"] for f in flows} == {rec["params"]["cc"]}
        for a, b in zip(flows, flows[1:]):  # one after another, never two on the link at once
            assert b["start"] >= a["end"]
    verdict = judged(rundir)
    (one_mb,) = [c for c in verdict["claims"] if c["id"] == "bbr-not-slower-1mb"]
    assert one_mb["status"] != "not evaluated"
