"""AQM at the bottleneck for real: figure5-aqm's quick profile, CUBIC only, with ECN asked,
so one short run shows a droptail FIFO filling, fq_codel and CAKE holding the standing queue
near their target, and the AQMs marking instead of dropping.
"""

import os

import pytest
from conftest import RESULTS, by_point, fresh_quick

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
