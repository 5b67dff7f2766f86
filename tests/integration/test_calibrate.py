"""`bbrlab calibrate` for real in the testbed VM (runs first: the other tests reuse the
calibration it stores). The bottleneck must deliver what it is told at 100 Mbit/s: the
backlogged link sends >= 98% of its rate, no 100 ms window above 103% of it, and BBR's
median bandwidth estimate within 105% of it and above 90% of the payload capacity
(0.861 of it: the estimate counts payload, 1448 bytes of each 1514-byte frame)."""

import json
import os
from pathlib import Path

import pytest
from conftest import RESULTS, bbrlab

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


@pytest.fixture(scope="module")
def calibration():
    proc = bbrlab("calibrate", "--quick", results=RESULTS / "calibrate", timeout=900)
    print(proc.stdout, proc.stderr)
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip().splitlines()[-1].split("calibration: ", 1)[1])
    return proc, json.loads(path.read_text())


def test_it_measures_the_timer_and_every_rate(calibration):
    proc, cal = calibration
    assert cal["timer"]["samples"] >= 4000 and 0 < cal["timer"]["p50_us"] <= cal["timer"]["p99_us"]
    assert [r["rate_mbps"] for r in cal["rates"]] == [10, 50, 100]
    assert cal["shaper"] == "netem"
    assert "faithful" in proc.stdout and "timer lateness" in proc.stdout


@pytest.mark.parametrize(("metric", "kind", "bound"), [
    ("link_delivery", "min", 0.98), ("link_peak_beyond_pause", "max", 1.03), ("bbr_bw_ratio", "max", 1.05),
    ("bbr_bw_ratio", "min", 0.861)])
def test_the_bottleneck_delivers_its_rate_at_100_mbit(calibration, metric, kind, bound):
    (top,) = [r for r in calibration[1]["rates"] if r["rate_mbps"] == 100]
    value = top[metric]
    assert value is not None
    assert (value >= bound) if kind == "min" else (value <= bound), f"{metric} {value} at 100 Mbit/s"


def test_runs_record_the_calibration_they_are_judged_against(calibration):
    _, cal = calibration
    proc = bbrlab("run", "figure5", "--quick", "--only", "cc=bbr", "--fresh", results=RESULTS / "calibrated")
    assert proc.returncode == 0, proc.stderr
    assert "no calibration yet" not in proc.stderr  # the stored one is reused
    run_json = sorted((RESULTS / "calibrated" / "figure5").glob("*/run.json"))[-1]
    recorded = json.loads(run_json.read_text())["calibration"]
    assert recorded["key"] == cal["key"] and recorded["faithful_up_to_bps"] == cal["faithful_up_to_bps"]
