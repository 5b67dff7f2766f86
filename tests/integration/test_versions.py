"""The authors' versions for real, on Debian's 6.1 kernel: Linux 4.10.1's BBR (bbr410) is
built, offered under its own name beside the kernel's own v1, named by its version in the
preflight and the run's provenance, and runs figure 8's 10% point beside bbr; and ReBBR's
emulator, Mahimahi 0.96's chain, carries the same BBR beside netem's bottleneck."""

import os
import subprocess

import pytest
from conftest import REPO, RESULTS, by_point, fresh_quick, leftovers

from bbrlab.analysis.tcp_diag_output import parse_tcp_diag
from bbrlab.store.results import read_json

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="needs root"),
              pytest.mark.skipif(os.uname().release.endswith("-bbrlab"),
                                 reason="bbr410 is built for Debian's 6.1 kernel only")]


def test_the_kernel_offers_bbr410_beside_its_own_bbr():
    with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
        offered = f.read().split()
    assert {"bbr", "bbr410"} <= set(offered), offered
    described = subprocess.run(["modinfo", "-F", "description", "tcp_bbr410"], capture_output=True, text=True,
                               check=True).stdout.strip()
    assert described == "TCP BBR (Bottleneck Bandwidth and RTT) of Linux 4.10.1, registered as bbr410"


def test_preflight_names_linux_410s_bbr():
    proc = subprocess.run([str(REPO / "bbrlab"), "preflight"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert "bbr410 (Linux 4.10.1's BBR, of 2017)" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_figure8_versions_quick_runs_410s_bbr_at_10_percent_loss_beside_61s():
    rundir = fresh_quick("figure8-versions", RESULTS / "versions")
    points = by_point(rundir)
    assert set(points) == {"loss=10%,cc=bbr410", "loss=10%,cc=bbr"}
    old, new = points["loss=10%,cc=bbr410"], points["loss=10%,cc=bbr"]
    assert old["flow_plan"][0]["cc"] == "bbr410" and old["pacing"] == "fq"
    modules = read_json(rundir.path / "run.json")["congestion_control_modules"]
    assert "of Linux 4.10.1" in modules["bbr410"] and "4.10" not in modules.get("bbr", "")
    for point in (old, new):
        m = point["metrics"]
        assert not m["cpu_bound"], m
        # BBR's model is read from the socket (tcp_bbr_info over netlink), so the module is BBR's
        assert m["flows"][0].get("bbr_bw_p50_mbps") is not None, m["flows"][0]
        assert m["steady_goodput_mbps"] > 10, m  # a BBR at 10% loss; CUBIC gets under 1 here
    # the pacing rate over BBR's bw x gain (tcp_info, bw in payload bytes): 4.10's packet rate on
    # Ethernet (fq spaced its 1514-byte frames at a rate of 1500-byte packets), 6.1's 1% margin
    raw = {name: rundir.path / "points" / point["id"] / "raw" / "tcp-snd1.jsonl" for name, point in (("old", old), ("new", new))}
    assert pacing_over_model(raw["old"]) == pytest.approx(1500 / 1514, abs=5e-4)
    assert pacing_over_model(raw["new"]) == pytest.approx(0.99, abs=5e-4)


def pacing_over_model(ss_file) -> float:
    """The median of sk_pacing_rate / (BBR's bw x pacing_gain) over a flow's socket samples."""
    ratios = sorted(s.pacing_rate_bps / (s.bbr_bw_bps * s.bbr_pacing_gain)
                    for s in parse_tcp_diag(ss_file.read_text(), ss_file.name)
                    if s.pacing_rate_bps and s.bbr_bw_bps and s.bbr_pacing_gain)
    assert len(ratios) > 5, ss_file
    return ratios[len(ratios) // 2]


def test_figure8_emulators_quick_runs_410s_bbr_through_mahimahis_chain_beside_netem():
    rundir = fresh_quick("figure8-emulators", RESULTS / "versions")
    points = by_point(rundir)
    assert set(points) == {"loss=10%,shaper=netem,cc=bbr410", "loss=10%,shaper=mahimahi,cc=bbr410"}
    chained = points["loss=10%,shaper=mahimahi,cc=bbr410"]
    raw = rundir.path / "points" / chained["id"] / "raw"
    assert (raw / "mahimahi-uplink.log.gz").is_file() and not (raw / "tc-bottleneck.txt").exists()
    chain = (raw / "mahimahi-chain.txt").read_text()
    assert "mm-delay 50" in chain and "mm-loss uplink 0.1" in chain, chain
    assert chain.count("qdisc pfifo_fast") >= 4, chain  # every TUN of the chain, none left fq
    for point in points.values():
        m = point["metrics"]
        print(point["id"], {k: m.get(k) for k in ("steady_goodput_mbps", "link_busy", "link_delivery",
                                                  "queue_p50_pkts", "rtt_p50_ms", "idle_rtt_ms", "cpu_busy_mean",
                                                  "cpu_bound")})
        # ss and netlink reached the sender inside the chain as in netem's dumbbell
        assert m["flows"][0].get("bbr_bw_p50_mbps") is not None, m["flows"][0]
        if not m["cpu_bound"]:  # a CPU-bound point is set aside by the verdict, not judged here
            assert m["link_busy"] > 0.5, m  # unpaced 4.10 BBR at 10% loss: ReBBR's 0.75 at 100 Mbit/s
    assert not points["loss=10%,shaper=netem,cc=bbr410"]["metrics"]["cpu_bound"]
    m = chained["metrics"]
    # the chain's base RTT is mm-delay's 2 x 50 ms, and its six shell processes' millisecond
    # timers add to it under TCG (measured: 110-123 ms idle): ping inside the chain crosses it
    assert 100 <= m["idle_rtt_min_ms"] < 130, m
    # what left mm-link, captured on its egress TUN (link-<pid>), counted as sent: a 1500-byte
    # packet a trace line of 12000 bits while packets waited (measured: 1.0008 at 4 Mbit/s)
    assert (raw / "bottleneck.pcap").stat().st_size > 24 and m["link_peak_ratio"] is not None, m
    assert m["link_delivery"] is None or 0.95 < m["link_delivery"] < 1.05, m
    assert m["queue_max_pkts"] > 0 and m["link_busy"] is not None, m  # its log read back as the queue
    # every TUN device's drops counted, none outside the link (else the point is set aside)
    assert m["emulator_drops"] == 0 and m["payload_capacity_mbps"] == pytest.approx(4 * 1448 / 1500, abs=1e-3), m
    judged = read_json(rundir.path / "verdict.json")
    print(judged)
    # judged against the chain's own calibration, which the capture lets vouch for a rate
    paths = read_json(rundir.path / "run.json")["calibration"]["paths"]
    print(paths["fifo-mahimahi"])
    assert paths["fifo-mahimahi"]["shaper"] == "mahimahi"
    assert leftovers() == []
