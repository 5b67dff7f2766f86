"""Figure 5 for real, as a user runs it: `sudo ./figure5.sh --quick all` inside the
testbed VM, then checks on the figure, the paper's claims with the margins that hold
under emulation, and the run's record of what was configured (qdiscs, offloads,
per-host sysctls) against what was asked for.
"""

import os
import re
import struct
import subprocess

import pytest
from conftest import REPO, RESULTS

from bbrlab.runs import calibrate
from bbrlab.schema import experiment as spec
from bbrlab.store.results import RunDir, read_json

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")

BASE_RTT_MS = 40.0
BUFFER_PKTS = 175


ROOT_SYSCTLS = ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.core.rmem_max", "net.core.wmem_max",
                "net.ipv4.tcp_congestion_control", "net.core.default_qdisc"]


def root_sysctls():
    out = subprocess.run(["sysctl", "-n", *ROOT_SYSCTLS], capture_output=True, text=True, check=True).stdout
    return dict(zip(ROOT_SYSCTLS, out.splitlines()))


@pytest.fixture(scope="module")
def run():
    root = RESULTS / "figure5"
    before = root_sysctls()
    proc = subprocess.run([str(REPO / "figure5.sh"), "--local", "--quick", "--fresh",
                           "--results", str(root), "all"], capture_output=True, text=True, timeout=900, cwd=REPO)
    print(proc.stdout, proc.stderr)
    rundir = RunDir.latest(root, "figure5")
    records = {r["params"]["cc"]: r for r in rundir.point_records()}
    return proc, rundir, records, (before, root_sysctls())


def test_the_machines_own_settings_are_left_alone(run):
    before, after = run[3]
    assert after == before  # Mininet's fixLimits would shrink the root namespace's buffers


def test_script_exits_zero_and_every_claim_is_judged(run):
    proc, rundir, *_ = run
    assert proc.returncode == 0, proc.stderr
    verdict = read_json(rundir.path / "verdict.json")
    # judged, and not CPU-bound (a TCG guest's link may still be flagged as below its rate,
    # which makes the verdict inconclusive)
    assert verdict["verdict"] in ("reproduced", "not reproduced", "inconclusive"), verdict["verdict"]
    assert verdict["cpu_bound_points"] == [], verdict["why"]
    assert [c["status"] for c in verdict["claims"]].count("not evaluated") == 0
    assert f"verdict: {verdict['verdict']}" in proc.stdout
    assert read_json(rundir.path / "run.json")["status"] == "complete"


def test_the_run_records_the_calibration_it_is_judged_against(run):
    """The calibration test_calibrate.py stored (it runs first) is reused, not measured again."""
    proc, rundir, *_ = run
    assert "no calibration yet" not in proc.stderr
    cal = calibrate.load()
    recorded = read_json(rundir.path / "run.json")["calibration"]
    assert recorded["key"] == cal["key"] and recorded["faithful_up_to_bps"] == cal["faithful_up_to_bps"]


def test_bbr_median_rtt_far_below_cubic_and_both_keep_the_link_busy(run):
    records = run[2]
    verdict = read_json(run[1].path / "verdict.json")
    held = verdict["sender_short_points"] + verdict["link_short_points"] + verdict["off_schedule_points"]
    if held:  # the testbed set them aside (measured here: a paced BBR flow at 0.46 of the link)
        pytest.skip(f"figure 5: this machine's guest held back or short at {held}: {verdict['why']}")
    bbr, cubic = records["bbr"]["metrics"], records["cubic"]["metrics"]
    # The paper's claim (at most half of CUBIC's median) is judged by the verdict, on one
    # 20 s run per CC here: measured under TCG at 0.30-0.55 (BBR v1's ACK-aggregation
    # allowance keeps 0.5-1.2 BDP queued when the guest's timers bunch ACKs). What holds on
    # every run: BBR stays below CUBIC and never fills the 5-BDP buffer, and the verdict
    # judges the ratio it measured.
    assert bbr["rtt_p50_ms"] < cubic["rtt_p50_ms"], (bbr["rtt_p50_ms"], cubic["rtt_p50_ms"])
    assert bbr["rtt_p50_ms"] < 2.5 * BASE_RTT_MS, bbr["rtt_p50_ms"]  # BBR never fills the 5-BDP buffer
    (claim,) = [c for c in verdict["claims"] if c["id"] == "bbr-below-cubic"]
    ratio = bbr["rtt_p50_ms"] / cubic["rtt_p50_ms"]
    assert claim["status"] != ("fails" if ratio <= 0.5 else "holds"), (claim, ratio)
    # CUBIC fills it: its p95 RTT reaches most of the RTT behind 175 full-size packets.
    assert cubic["rtt_p95_ms"] > 0.8 * cubic["full_buffer_rtt_ms"], cubic["rtt_p95_ms"]
    assert cubic["queue_max_pkts"] >= 0.8 * BUFFER_PKTS
    for m in (bbr, cubic):
        assert m["link_busy"] >= 0.85, m
        assert not m["cpu_bound"], m["cpu_busy_mean"]
    # CUBIC keeps the queue full: the link's delivery while backlogged is judged, and close
    # to its rate (measured under TCG: 0.87-0.99; a real host gives ~1.0)
    assert cubic["link_delivery"] is not None and cubic["link_delivery"] > 0.8, cubic["link_delivery"]


def test_idle_path_has_the_configured_rtt(run):
    for cc, rec in run[2].items():
        # The configured delay is in place: the idle path's floor. Measured under TCG: the
        # emulator adds ~2 ms to it (reported, not hidden); the median above the floor is the
        # guest's own noise (idle_rtt_spread_ms: 28-46 ms on a slow phase of a busy machine).
        m = rec["metrics"]
        assert 0 <= m["idle_rtt_min_ms"] - m["base_rtt_ms"] < 4.0, (cc, m["idle_rtt_min_ms"], m["idle_rtt_ms"])
        assert m["idle_rtt_ms"] >= m["idle_rtt_min_ms"] and m["idle_rtt_spread_ms"] >= 0, m


def test_figure_is_a_real_png(run):
    rundir = run[1]
    png = (rundir.path / "figure5.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert width >= 1000 and height >= 500
    assert len(png) > 40_000  # two traces, a CDF, title and verdict: not an empty canvas


def test_metadata_records_the_queueing_that_was_configured(run):
    for cc, rec in run[2].items():
        intfs = rec["testbed"]["interfaces"]
        kinds = {name: [q["kind"] for q in i["qdiscs"]] for name, i in intfs.items()}
        assert kinds["snd1-eth0"] == ["noqueue"], kinds  # internal pacing: nothing on the sender
        assert kinds["r1-eth0"] == ["netem"], kinds  # the shaper: netem rate, its queue the buffer
        (shaper,) = intfs["r1-eth0"]["qdiscs"]
        assert shaper["options"]["limit"] == BUFFER_PKTS  # the buffer is the bottleneck's queue
        assert shaper["options"]["rate"]["rate"] == 10_000_000 / 8  # bytes/s
        assert shaper["options"].get("delay", {}).get("delay", 0) == 0  # no delay: the delay lines are elsewhere
        for dev in ("r2-eth1", "rcv1-eth0"):  # the delay lines: 20 ms each way, never dropping
            netem = next(q for q in intfs[dev]["qdiscs"] if q["kind"] == "netem")
            assert netem["options"]["delay"]["delay"] == pytest.approx(0.020)
            assert netem["options"]["limit"] >= 10_000
        for name, intf in intfs.items():
            assert intf["offloads"] == {"tso": "off", "gso": "off", "gro": "off"}, name
    # which code ran: the guest's copy has no .git; vm/vm.sh passes the revision on
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", read_json(run[1].path / "run.json")["git"])


def test_socket_buffers_are_set_inside_every_host(run):
    # Read back inside each host namespace (per-namespace since Linux 4.15). That bbrlab
    # sets them itself, rather than inheriting the root's, is shown by test_interrupt,
    # which asks for values the root namespace does not have.
    wanted = spec.DEFAULT_SYSCTLS
    for cc, rec in run[2].items():
        hosts = rec["testbed"]["sysctls"]
        assert set(hosts) == {"snd1", "r1", "r2", "rcv1"}
        for host, values in hosts.items():
            for key, value in wanted.items():
                assert values[key] == value, (cc, host, key)
