"""The field experiments' quick profiles for real (docs/field.md): coexist's shares cross
over between 1 and 8 BDP; cellular's link delivers the trace's average and BBR keeps at
least twice CUBIC's goodput at 1% loss; the trace's schedule was fed on time."""

import os
from pathlib import Path

import pytest
from conftest import RESULTS, by_point, fresh_quick

from bbrlab import spec, topo, traces
from bbrlab.errors import SpecError

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def run(name: str) -> dict:
    """{point id without the repetition: its record} of a fresh quick run of NAME."""
    return by_point(fresh_quick(name, RESULTS / "field"))


def test_coexist_shares_cross_over_between_1_and_8_bdp():
    points = run("coexist")
    share = {p["params"]["buffer"]: p["metrics"]["by_cc"] for p in points.values()}
    assert share["1bdp"]["bbr"]["share"] > share["1bdp"]["cubic"]["share"], share["1bdp"]
    assert share["8bdp"]["cubic"]["share"] > share["8bdp"]["bbr"]["share"], share["8bdp"]
    assert all(not p["metrics"]["cpu_bound"] for p in points.values())


def test_cellular_follows_the_trace_and_bbr_keeps_twice_cubics_goodput_at_1_percent():
    try:
        exp = spec.load(EXPERIMENTS / "cellular.yaml", quick=True)
    except SpecError as exc:
        pytest.skip(f"no Verizon trace here (set {traces.TRACES_VARIABLE}): {exc}")
    points = run("cellular")
    low = [p["metrics"] for k, p in points.items() if k.startswith("loss=0.001%")]
    assert max(m["trace_delivery"] for m in low) == pytest.approx(1.0, abs=0.05), low
    bbr, cubic = points["loss=1%,cc=bbr"]["metrics"], points["loss=1%,cc=cubic"]["metrics"]
    assert bbr["steady_goodput_mbps"] >= 2 * cubic["steady_goodput_mbps"]
    plan = topo.build_plan(exp.points[0]).schedule.schedule
    due = sum(t < exp.points[0].duration for t in plan.times)  # the updates due while the flow ran
    for m in (bbr, cubic):  # all written (none lost, few skipped) and on time
        assert m["schedule_updates"] + m["schedule_skipped"] >= due and m["schedule_skipped"] < 0.01 * due, m
        assert m["schedule_late_p99_ms"] < plan.interval * 1e3, m
