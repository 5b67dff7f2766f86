"""The authors' versions for real, on Debian's 6.1 kernel: Linux 4.10.1's BBR (bbr410) is
built, offered under its own name beside the kernel's own v1, named by its version in the
preflight and the run's provenance, and runs figure 8's 10% point beside bbr."""

import os
import subprocess

import pytest
from conftest import REPO, RESULTS, by_point, fresh_quick

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
        # BBR's model is read from the socket (ss -tin's bbr:(...)), so the module is BBR's
        assert m["flows"][0].get("bbr_bw_p50_mbps") is not None, m["flows"][0]
        assert m["steady_goodput_mbps"] > 10, m  # a BBR at 10% loss; CUBIC gets under 1 here
