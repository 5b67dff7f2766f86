"""The testbed's BBRv3 kernel for real: bbr (v1), bbr3 and bbr_noagg side by side on one
kernel, and v3 retransmitting less than v1 where IETF 101 says v1 loses most (two flows in
a 0.5-BDP buffer).

quic-jitter-tcp's quick profile: Linux's BBRv3 at quic-jitter's point, beside picoquic's.

These run on the BBRv3 kernel (`vm/vm.sh kernel bbr3`; tests/run.sh does it after the
other integration tests, with BBRLAB_EXPECT_BBR3=1 so a kernel without bbr3 fails them).
On Debian's kernel they are skipped.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, RESULTS, bbrlab, by_point, fresh_quick

from bbrlab.store.results import RunDir, read_json

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def _offered() -> set[str]:
    for module in ("tcp_bbr", "tcp_bbr3", "tcp_bbr_noagg"):
        subprocess.run(["modprobe", "-q", module], check=False)
    return set(AVAILABLE.read_text().split())


EXPECTED = os.environ.get("BBRLAB_EXPECT_BBR3") == "1"
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root"),
    pytest.mark.skipif(not EXPECTED and "bbr3" not in _offered(),
                       reason="runs on the BBRv3 kernel: vm/vm.sh kernel bbr3 (BBRLAB_KERNEL=bbr3 vagrant up)"),
]


def test_the_kernel_offers_v1_v3_and_noagg_under_their_own_names():
    offered = _offered()
    assert {"bbr", "bbr3", "bbr_noagg", "cubic", "reno"} <= offered, offered
    describe = {m: subprocess.run(["modinfo", "-F", "description", m], capture_output=True, text=True,
                                  check=True).stdout.strip() for m in ("tcp_bbr", "tcp_bbr3", "tcp_bbr_noagg")}
    assert "v3" in describe["tcp_bbr3"].lower() or "bbrv3" in describe["tcp_bbr3"].lower(), describe
    assert "v3" not in describe["tcp_bbr"].lower(), describe  # bbr is v1 on every kernel
    versions = {m: subprocess.run(["modinfo", "-F", "srcversion", m], capture_output=True, text=True,
                                  check=True).stdout.strip() for m in ("tcp_bbr", "tcp_bbr3")}
    assert versions["tcp_bbr"] != versions["tcp_bbr3"]


def test_preflight_names_the_kernel_and_both_bbrs():
    proc = subprocess.run([str(REPO / "bbrlab"), "preflight"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    assert line.startswith(f"kernel {os.uname().release}: ") and "-bbrlab" in line
    assert "bbr (Linux's BBR v1)" in line and "bbr3 (BBRv3)" in line


@pytest.fixture(scope="module")
def lab5() -> RunDir:
    """Lab 5 (what BBRv3 changed) as its handout gives it, run once; its shallow run holds
    v3-shallow's quick points (tests/unit/test_lab.py holds the files to that), so v3-shallow's
    question is asked of it rather than of a second run of the same points. Its shallow run."""
    from test_labs import ROOT, run_lab

    run_lab(5)
    return RunDir.latest(ROOT / "bbrv3", "lab5-shallow")


def test_v3_retransmits_less_than_v1_in_a_shallow_buffer(lab5):
    rundir = lab5
    points = by_point(rundir)
    v1, v3 = points["cc=bbr"]["metrics"], points["cc=bbr3"]["metrics"]
    assert v1["retransmit_rate"] > 0.005, v1["retransmit_rate"]  # v1 overflows half a BDP in every round
    assert v3["retransmit_rate"] < v1["retransmit_rate"] / 2, (v3["retransmit_rate"], v1["retransmit_rate"])
    assert v3["steady_utilization"] > 0.8, v3["steady_utilization"]
    meta = rundir.path / "run.json"
    assert "-bbrlab" in meta.read_text()  # the run records the kernel it ran on
    # v3's own state over time, read from tcp_bbr_info over netlink (ss cannot decode it)
    v3_flows = rundir.series(points["cc=bbr3"]["id"])["flows"].values()
    assert v3_flows and all(f.get("bbr_version") == 3 for f in v3_flows)
    phases = {phase for f in v3_flows for _, phase in f["bbr_phase"]}
    assert phases & {"PROBE_BW_UP", "PROBE_BW_DOWN", "PROBE_BW_CRUISE", "PROBE_BW_REFILL"}, phases
    assert any(f.get("bbr_inflight_hi_pkts") for f in v3_flows)
    v1_flows = rundir.series(points["cc=bbr"]["id"])["flows"].values()
    assert all(f.get("bbr_version") == 1 for f in v1_flows)  # bbr stays v1 on the BBRv3 kernel
    # (its figure, plot kind bbr_state, is drawn on the host from the pulled run: tests/pulled)


def test_quic_jitter_tcp_quick_runs_kernel_bbr3_at_quic_jitters_point():
    """quic-jitter's question with Linux's TCP (issue: picoquic's BBRv3 beside the kernel's):
    bbr3 and CUBIC flows each move their bytes at 1 ms with 2 ms of variation, v3's state is
    read from its own sockets, and the report sets BBRv3's rate beside CUBIC's."""
    root = RESULTS / "bbr3-quic"
    rundir = fresh_quick("quic-jitter-tcp", root)
    points = by_point(rundir)
    assert set(points) == {"rtt=1ms,delay_variation=2ms,cc=bbr3", "rtt=1ms,delay_variation=2ms,cc=cubic"}, set(points)
    for rec in points.values():
        flows = rec["metrics"]["flows"]
        # each sender sent its 2 MB (iperf3's server stops counting at the client's end of
        # test, so what was still in flight is not in its bytes)
        assert len(flows) == 4 and all(f["sent_bytes"] >= 2_000_000 and f["goodput_mbps"] > 0.5 for f in flows), flows
        assert rec["metrics"]["reordering_events"] == 0  # the variation keeps the packets' order
    v3_flows = rundir.series(points["rtt=1ms,delay_variation=2ms,cc=bbr3"]["id"])["flows"].values()
    # v3's state read from its sockets; a 2 MB flow that ends between two netlink samples has
    # none (seen on a slower machine: 2 ss samples, no state), but none reads as another BBR
    versions = [f.get("bbr_version") for f in v3_flows]
    proc = bbrlab("report", "quic-jitter-tcp", results=root, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = (root / "report.md").read_text()
    assert "bbr3 / cubic mean rate" in report and "bbr3: left STARTUP (s)" in report, report[-3000:]
    assert set(versions) <= {3, None}, versions  # none reads as another BBR
    if 3 not in versions and points["rtt=1ms,delay_variation=2ms,cc=bbr3"]["metrics"]["cpu_bound"]:
        # a CPU-bound guest's sampler read no socket's state (seen: 4 flows, none); the point
        # is set aside by its verdict, and what its sampler missed decides nothing either
        pytest.skip(f"quic-jitter-tcp: this machine's guest was CPU-bound; v3's state was not sampled: {versions}")
    assert 3 in versions, versions


def test_lab5_commands_run_and_lab_check_accepts_them(lab5):
    """Lab 5's commands ran as its handout gives them, on the kernel it needs, lab check
    accepted them (the fixture), each run is complete (its figure is drawn on the host from
    the pulled results: tests/pulled) and the lab's time is kept."""
    from test_labs import ROOT

    loss = RunDir.latest(ROOT / "bbrv3", "lab5-loss")
    for rundir in (lab5, loss):
        assert read_json(rundir.path / "run.json")["status"] == "complete", rundir.path
    assert json.loads((ROOT / "times.json").read_text())["bbrv3"] > 0


def test_v3_reads_random_loss_as_congestion_and_v1_does_not(lab5):
    """v3-loss's question, asked of lab 5's loss run (10 Mbit/s, 40 ms, 1% and 5% random loss:
    v3-loss's link at a rate every machine of this kind carries) rather than of a second run:
    at 5%, v1 keeps most of the link and BBRv3, whose rounds each lose more than its 2%
    threshold, keeps far less (labs/5-bbrv3/key.md: v1 0.95 of the ideal, v3 0.30 x v1, below
    0.5 x v1 on any faithful machine; v3-loss at 100 Mbit/s measured 0.036 x v1)."""
    from test_labs import ROOT

    rundir = RunDir.latest(ROOT / "bbrv3", "lab5-loss")
    points = by_point(rundir)
    v1, v3 = points["loss=5%,cc=bbr"]["metrics"], points["loss=5%,cc=bbr3"]["metrics"]
    assert v1["goodput_vs_ideal"] > 0.6, v1["goodput_vs_ideal"]
    rates = v3["steady_goodput_mbps"], v1["steady_goodput_mbps"]
    assert rates[0] < 0.5 * rates[1], rates
    v3_flows = rundir.series(points["loss=5%,cc=bbr3"]["id"])["flows"].values()
    assert v3_flows and all(f.get("bbr_version") == 3 and f["bbr_phase"] for f in v3_flows)


def test_rtt_mix_quick_both_bbrs_leave_the_low_rtt_flows_under_their_fair_share():
    """rtt-mix's quick point: 2 flows at 5 ms against 2 at 50 ms in a 4-BDP buffer, 30 s.
    Under v1 and under BBRv3 alike the near flows get well under their fair share of a half
    (full length: 0.22 and 0.12), the CDN's PoP-to-PoP finding with long flows."""
    rundir = fresh_quick("rtt-mix", RESULTS / "bbr3-rtt-mix")
    points = by_point(rundir)
    assert set(points) == {"buffer=4bdp,cc=bbr,rtt=50ms", "buffer=4bdp,cc=bbr3,rtt=50ms"}, set(points)
    for cc in ("bbr", "bbr3"):
        groups = {g["class"]: g for g in points[f"buffer=4bdp,cc={cc},rtt=50ms"]["metrics"]["groups"]}
        assert groups["near"]["flows"] == groups["far"]["flows"] == 2
        assert groups["near"]["rtt_ms"] == 5 and groups["far"]["rtt_ms"] == 50
        assert groups["near"]["share"] < 0.35, (cc, groups["near"]["share"])
        assert groups["near"]["srtt_p50_ms"] < groups["far"]["srtt_p50_ms"]
    verdict = read_json(rundir.path / "verdict.json")
    aside = verdict["cpu_bound_points"] + verdict["sender_short_points"]
    if aside:  # set aside, its claims undecided: a machine limit, said
        pytest.skip(f"rtt-mix: this machine's guest did not keep up at {aside}: {verdict['why']}")
    status = {c["id"]: c["status"] for c in verdict["claims"]}
    assert status["v1-low-rtt-flows-get-about-half-their-fair-share"] == status["v3-does-not-change-it"] == "holds"


def test_v3_coexist_quick_v3_leaves_cubic_more_of_a_shallow_buffer_than_v1():
    """v3-coexist's quick point: 1 BBR vs 1 CUBIC in a 0.5-BDP buffer, 30 s. v1 takes most of
    it (full length: 0.92), BBRv3, which bounds its data in flight after loss, far less
    (full length: 0.60; Google's design target: coexistence with CUBIC at this BDP)."""
    rundir = fresh_quick("v3-coexist", RESULTS / "bbr3-coexist")
    points = by_point(rundir)
    assert set(points) == {"buffer=0.5bdp,cc=bbr", "buffer=0.5bdp,cc=bbr3"}, set(points)
    v1 = points["buffer=0.5bdp,cc=bbr"]["metrics"]["by_cc"]
    v3 = points["buffer=0.5bdp,cc=bbr3"]["metrics"]["by_cc"]
    assert set(v1) == {"bbr", "cubic"} and set(v3) == {"bbr3", "cubic"}
    assert v1["bbr"]["share"] > 0.7, v1
    assert v3["bbr3"]["share"] < v1["bbr"]["share"] - 0.15, (v3, v1)
