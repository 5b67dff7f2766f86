"""picoquic in the testbed (ansible/roles/picoquic, built natively into the box by
vm/build-box.sh): the build of the pinned commits is installed and offers exactly the
congestion controls the experiment format takes for `tool: picoquic`; quic-jitter's quick
profile runs QUIC connections through the emulated bottleneck; quic-post's quick profile
runs the two builds of Huitema's post (2024) beside each other, each proving which ran."""

import os
import re
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")

PREFIX = "/usr/local"
SCRIPT = "/usr/local/lib/bbrlab/build-picoquic.sh"
DEMO = f"{PREFIX}/bin/picoquicdemo"


def test_the_pinned_build_is_installed_and_offers_the_ccs_the_format_takes():
    status = subprocess.run([SCRIPT, "--status", PREFIX], capture_output=True, text=True, timeout=30)
    assert status.stdout.strip() == "current", (status.stdout, status.stderr)
    helped = subprocess.run([DEMO, "-h"], capture_output=True, text=True, timeout=30)
    listed = re.search(r"Supported values are:\s*(.*?)\.\s*$", helped.stdout + helped.stderr, re.S | re.M)
    assert listed, helped.stdout[-2000:]
    offered = {w.strip() for w in listed.group(1).split(",")}
    assert {"bbr", "bbr1", "cubic", "newreno"} <= offered, offered
    assert shutil.which("picolog_t") == f"{PREFIX}/bin/picolog_t"  # its binary-log reader
    from bbrlab.schema.ccs import QUIC_CCS
    assert set(QUIC_CCS) == offered, offered  # the names the experiment format takes are picoquic's own


def test_quic_jitter_quick_runs_picoquic_connections_through_the_bottleneck():
    """quic-jitter's quick profile for real: every connection downloads its whole size
    through the emulated path; the server's qlog gives its goodput over time (adding up to
    its bytes), RTT samples, and for picoquic's bbr its BBRv3 states from STARTUP on; CPU
    is measured per connection; no picoquicdemo outlives the run (its figures, drawn on the
    host from the pulled results: tests/pulled/test_figures.py)."""
    from conftest import RESULTS, by_point, fresh_quick, leftovers
    from bbrlab.schema import picoquic_builds

    root = RESULTS / "quic"
    rundir = fresh_quick("quic-jitter", root)
    points = by_point(rundir)
    assert set(points) == {f"rtt=1ms,delay_variation=2ms,cc={cc}" for cc in ("bbr", "cubic")}
    for name, rec in points.items():
        rows = rec["metrics"]["flows"]
        assert len(rows) == 4 and all(r["bytes"] == 2_000_000 and r["tool"] == "picoquic" for r in rows), rows
        assert all(r["cpu_s"] and r["cpu_s"] > 0 and r["rtt_sample_min_ms"] for r in rows), rows
        assert {r["cc_ran"] for r in rows} == {name.rsplit("=", 1)[1]}  # read back from picoquic's own log
        assert {r["picoquic_version"] for r in rows} == {picoquic_builds.BUILDS[picoquic_builds.DEFAULT].version}
        assert 0.5 < rec["metrics"]["goodput_mbps"] <= rec["metrics"]["link_mbps"], rec["metrics"]["goodput_mbps"]
        series = rundir.series(rec["id"])["flows"]
        for fid, flow in series.items():
            placed = sum(v for _, v in flow["throughput"])  # Mbit/s per 1 s interval
            assert flow["throughput"] and flow["rtt_sample_ms"] and flow["cwnd"], fid
            assert placed > 0
            if name.endswith("cc=bbr"):
                assert flow["bbr_phase"][0][1] == "STARTUP" and len({p for _, p in flow["bbr_phase"]}) > 1, flow["bbr_phase"]
            else:
                assert "bbr_phase" not in flow
        assert set(rec["metrics"]["by_cc"]) == {f"picoquic-{name.rsplit('=', 1)[1]}"}
    assert not [x for x in leftovers() if "picoquic" in x], leftovers()


def test_the_posts_builds_run_and_each_connection_proves_which_ran():
    """quic-post's quick profile: picoquic's BBR of 2024-09-27 and of 2024-10-12 (the post's
    fix, and the fix with its threshold at 25 ms: a what-if) and CUBIC, each connection read
    back by the version its server printed; the
    connections' smallest RTT samples say where this machine's floor stands against the
    fix's 128 us (milliseconds under TCG: docs/field.md)."""
    from conftest import RESULTS, by_point, fresh_quick, leftovers
    from bbrlab.schema import picoquic_builds

    lines = open(f"{PREFIX}/share/picoquic/build.txt").read().splitlines()[1:]
    assert {line.split()[0]: line.split()[1] for line in lines} == {b: "built" for b in picoquic_builds.BUILDS}, lines
    rundir = fresh_quick("quic-post", RESULTS / "quic")
    points = by_point(rundir)
    assert set(points) == {f"delay_variation=1ms,cc={cc},build={b}" for cc, b in
                           [("bbr", "401781f40e04"), ("bbr", "6fc1ff2dedd9"), ("bbr", "6fc1ff2dedd9-minrtt25ms"),
                            ("cubic", "401781f40e04")]}
    for name, rec in points.items():
        build = picoquic_builds.BUILDS[name.rsplit("=", 1)[1]]
        rows = rec["metrics"]["flows"]
        assert len(rows) == 2 and all(r["bytes"] == 1_000_000 for r in rows), rows
        assert {r["picoquic_version"] for r in rows} == {build.version}, rows  # as each server printed it
        assert {r["cc_ran"] for r in rows} == {name.split("cc=")[1].split(",")[0]}
        assert all(r["rtt_sample_min_ms"] > 0 for r in rows), rows  # the floor this machine gives (docs/field.md)
        assert rec["flow_plan"][0]["build"] == build.name
        # the CC's states: from the qlog, or (the 2024 builds) from the binary log picolog_t read
        for series in rundir.series(rec["id"])["flows"].values():
            if series["cc"] == "bbr":
                assert series["bbr_phase"][0][1] == "STARTUP" and len(series["bbr_phase"]) > 1, series["bbr_phase"]
    assert not [x for x in leftovers() if "picoquic" in x], leftovers()
