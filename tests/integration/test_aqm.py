"""AQM at the bottleneck for real: figure5-aqm's quick profile, CUBIC only, with ECN asked,
so one short run shows a droptail FIFO filling, fq_codel and CAKE holding the standing queue
near their target, and the AQMs marking instead of dropping; each AQM judged against its
own calibration. Then coexist-aqm's quick point (flow queuing splits a deep buffer) and
headend's (an 800-ms buffer, FIFO against fq_codel).
"""

import os
from pathlib import Path

import pytest
from conftest import RESULTS, by_point, fresh_quick

from bbrlab.store.results import RunDir, read_json

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")

BASE_RTT_MS = 40.0
HALF_BUFFER_MS = 175 * 1514 * 8 / 10e6 / 2 * 1000  # 106 ms: half of figure 5's buffer at 10 Mbit/s
TARGET_MS = 5.0


@pytest.fixture(scope="module")
def points():
    rundir = fresh_quick("figure5-aqm", RESULTS / "aqm", "--only", "cc=cubic", "--set", "flows.0.ecn=true")
    found = by_point(rundir)
    assert set(found) == {"aqm=fifo,cc=cubic", "aqm=fq_codel,cc=cubic", "aqm=cake,cc=cubic"}
    return {p["params"]["aqm"]: p for p in found.values()}


def test_the_aqm_ran_as_asked(points):
    for aqm, point in points.items():
        assert point["link"]["aqm"]["kind"] == aqm
    assert points["fifo"]["metrics"]["steady_goodput_mbps"] > 9.0, points["fifo"]["metrics"]
    # one CUBIC flow under an AQM whose target is an eighth of its RTT leaves the link idle
    # after each back-off (measured: 0.85-0.9 of the rate under fq_codel, less under CAKE
    # on a busy host); the AQMs must still carry the flow
    for aqm in ("fq_codel", "cake"):
        assert points[aqm]["metrics"]["steady_goodput_mbps"] > 6.0, (aqm, points[aqm]["metrics"])


def test_a_fifo_fills_and_an_aqm_holds_cubic_near_its_target(points):
    fifo = points["fifo"]["metrics"]
    assert fifo["queue_delay_p50_ms"] >= HALF_BUFFER_MS
    for aqm in ("fq_codel", "cake"):
        m = points[aqm]["metrics"]
        assert m["queue_delay_p50_ms"] <= 3 * TARGET_MS, (aqm, m["queue_delay_p50_ms"])
        (group,) = m["groups"]  # the flow's own RTT: base + the queue the AQM holds
        assert group["srtt_p50_ms"] <= BASE_RTT_MS + 4 * TARGET_MS, (aqm, group["srtt_p50_ms"])
    assert fifo["groups"][0]["srtt_p50_ms"] >= BASE_RTT_MS + HALF_BUFFER_MS


def test_with_ecn_an_aqm_marks_instead_of_dropping(points):
    for aqm in ("fq_codel", "cake"):
        m = points[aqm]["metrics"]
        assert m["aqm_ce_marks"] > 0, aqm
        assert m["bottleneck_drops"] <= max(2, m["aqm_ce_marks"] // 20), (aqm, m["bottleneck_drops"], m["aqm_ce_marks"])
    assert "aqm_ce_marks" not in points["fifo"]["metrics"]  # nothing marks on a FIFO


def test_a_sparse_probe_skips_the_bulk_flow_s_queue_under_flow_queuing(points):
    assert points["fifo"]["metrics"]["rtt_p50_ms"] >= BASE_RTT_MS + HALF_BUFFER_MS
    for aqm in ("fq_codel", "cake"):
        assert points[aqm]["metrics"]["rtt_p50_ms"] <= BASE_RTT_MS + 2 * TARGET_MS, aqm


def test_the_one_way_probe_puts_the_queue_on_the_data_direction_alone(points):
    """irtt (sampling.irtt): one-way delays on the testbed's one clock. A FIFO's queue adds
    to the data direction only; under flow queuing the probe skips it both ways."""
    half = BASE_RTT_MS / 2
    for aqm, point in points.items():
        m = point["metrics"]
        print(aqm, {k: m.get(k) for k in ("owd_data_p50_ms", "owd_return_p50_ms", "owd_loss", "rtt_p50_ms")})
        assert m["owd_loss"] < 0.02, (aqm, m["owd_loss"])
        assert half <= m["owd_return_p50_ms"] <= half + 5, (aqm, m["owd_return_p50_ms"])
    fifo, fq = points["fifo"]["metrics"], points["fq_codel"]["metrics"]
    assert fifo["owd_data_p50_ms"] >= half + HALF_BUFFER_MS, fifo["owd_data_p50_ms"]
    assert fq["owd_data_p50_ms"] <= half + 2 * TARGET_MS, fq["owd_data_p50_ms"]


def test_each_aqm_was_judged_against_its_own_calibration(points):
    """The run measured (or reused) a calibration of each AQM's design at 10 Mbit/s: the
    fidelity targets plus CUBIC's queue near the AQM's target, and the link kept busy by
    the backlog of four CUBIC flows (one flow backs off below the rate under an AQM)."""
    run = read_json(RunDir.latest(RESULTS / "aqm", "figure5-aqm").path / "run.json")
    paths = run["calibration"]["paths"]
    assert set(paths) == {"fq_codel-htb", "cake-cake"}, paths
    for path, summary in paths.items():
        cal = read_json(Path(summary["file"]))
        (row,) = [r for r in cal["rates"] if r["rate_mbps"] == 10]
        shown = ("link_delivery", "link_peak_beyond_pause", "bbr_bw_ratio", "steady_link_efficiency",
                 "queue_delay_p50_ms", "link_busy", "missed")
        print(path, {k: row.get(k) for k in shown})
        assert cal["path"] == path and row["aqm_target_ms"] == TARGET_MS
        assert row["queue_delay_p50_ms"] <= 3 * TARGET_MS, (path, row)
        assert row["link_busy"] >= 0.95 and "link_busy" in cal["targets"], (path, row)
        assert summary["faithful_up_to_bps"] == 10e6, (path, row["missed"])


def test_flow_queuing_splits_a_deep_buffer_between_bbr_and_cubic():
    """coexist-aqm's quick point: 1 BBR vs 1 CUBIC at 8 BDP under fq_codel, where a FIFO gives
    CUBIC 0.60 (coexist): each flow's own queue gives each about half."""
    rundir = fresh_quick("coexist-aqm", RESULTS / "aqm")
    (point,) = rundir.point_records()
    assert point["params"] == {"buffer": "8bdp", "aqm": "fq_codel"}
    share = point["metrics"]["by_cc"]["bbr"]["share"]
    print("BBR's share at 8 BDP under fq_codel:", share, point["metrics"]["by_cc"])
    assert 0.35 <= share <= 0.65, share
    assert point["metrics"]["steady_link_efficiency"] >= 0.9, point["metrics"]


def test_a_head_end_buffer_of_800_ms_fills_under_a_fifo_and_not_under_fq_codel():
    """headend's quick points: CUBIC behind an 800-ms buffer at 10 Mbit/s. A FIFO fills it (the
    probe waits at least half of it); fq_codel keeps the probe near the base RTT and still
    carries the flow. How much goodput CoDel costs one CUBIC flow is headend's own claim (0.9
    of the FIFO's), judged in its verdict: one CUBIC flow leaves the link idle after each
    back-off to CoDel's 5 ms (0.893 of the FIFO's goodput in CI on 2026-11-28, 0.85-0.9 of
    the rate in figure5-aqm's points above), so the test holds it to 0.8, not the claim."""
    found = by_point(fresh_quick("headend", RESULTS / "aqm"))
    fifo = found["rate=10Mbit,buffer=800ms,aqm=fifo,cc=cubic"]["metrics"]
    fq = found["rate=10Mbit,buffer=800ms,aqm=fq_codel,cc=cubic"]["metrics"]
    print({k: (fifo.get(k), fq.get(k)) for k in ("steady_rtt_p50_ms", "queue_delay_p50_ms", "steady_goodput_mbps")})
    assert fifo["steady_rtt_p50_ms"] >= BASE_RTT_MS + 400, fifo["steady_rtt_p50_ms"]
    assert fq["steady_rtt_p50_ms"] <= BASE_RTT_MS + 2 * TARGET_MS, fq["steady_rtt_p50_ms"]
    assert fq["steady_goodput_mbps"] >= 0.8 * fifo["steady_goodput_mbps"], (fq, fifo)
