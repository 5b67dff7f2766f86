"""picoquic in the testbed (ansible/roles/picoquic, built natively into the box by
vm/build-box.sh): the build of the pinned commits is installed, picoquicdemo offers the
congestion controls the QUIC experiments name, and one quicperf download over loopback
moves every byte it asked for, with a server qlog that carries the sender's cwnd, pacing
rate and RTT, and BBR's state changes."""

import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")

PREFIX = "/usr/local"
SCRIPT = "/usr/local/lib/bbrlab/build-picoquic.sh"
DEMO = f"{PREFIX}/bin/picoquicdemo"
CERTS = f"{PREFIX}/share/picoquic/certs"
SIZE = 4_000_000


def test_the_pinned_build_is_installed_and_offers_bbr_bbr1_and_cubic():
    status = subprocess.run([SCRIPT, "--status", PREFIX], capture_output=True, text=True, timeout=30)
    assert status.stdout.strip() == "current", (status.stdout, status.stderr)
    helped = subprocess.run([DEMO, "-h"], capture_output=True, text=True, timeout=30)
    listed = re.search(r"Supported values are:\s*(.*?)\.\s*$", helped.stdout + helped.stderr, re.S | re.M)
    assert listed, helped.stdout[-2000:]
    offered = {w.strip() for w in listed.group(1).split(",")}
    assert {"bbr", "bbr1", "cubic", "newreno"} <= offered, offered


def test_a_quicperf_download_moves_every_byte_and_the_server_logs_bbr(tmp_path):
    qlogs = tmp_path / "qlog"
    qlogs.mkdir()
    server = subprocess.Popen([DEMO, "-p", "4443", "-c", f"{CERTS}/cert.pem", "-k", f"{CERTS}/key.pem", "-G", "bbr",
                               "-q", str(qlogs)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    try:
        deadline = time.monotonic() + 30  # listening: its UDP port bound
        while time.monotonic() < deadline and server.poll() is None and ":4443 " not in subprocess.run(
                ["ss", "-Hlun"], capture_output=True, text=True).stdout:
            time.sleep(0.2)
        assert server.poll() is None, server.communicate()[0][-2000:]
        client = subprocess.run([DEMO, "-G", "bbr", "-a", "perf", "-D", "localhost", "4443", f"=b1:*1:397:{SIZE};"],
                                cwd=tmp_path, capture_output=True, text=True, timeout=120)
        print(client.stdout[-3000:])
        assert client.returncode == 0 and "Client exit with code = 0" in client.stdout, client.stdout[-3000:]
        assert re.search(rf"^Download_bytes: {SIZE}$", client.stdout, re.M), client.stdout[-3000:]
        deadline = time.monotonic() + 10  # the server writes its qlog out when the connection closes

        def closed() -> bool:
            return any(p.read_text().rstrip().endswith("]}]}") for p in qlogs.glob("*.server.qlog"))

        while time.monotonic() < deadline and not closed():
            time.sleep(0.2)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    (log,) = qlogs.glob("*.server.qlog")
    events = json.loads(log.read_text())["traces"][0]["events"]
    metrics = [e[3] for e in events if e[1:3] == ["recovery", "metrics_updated"]]
    assert any("cwnd" in m for m in metrics) and any("pacing_rate" in m for m in metrics), metrics[:5]
    assert any("smoothed_rtt" in m for m in metrics), metrics[:5]
    assert [e for e in events if e[1:3] == ["recovery", "congestion_state_updated"]], "no BBR state change logged"
    assert shutil.which("picolog_t") == f"{PREFIX}/bin/picolog_t"


def test_quic_jitter_quick_runs_picoquic_connections_through_the_bottleneck():
    """quic-jitter's quick profile for real: every connection downloads its whole size
    through the emulated path; the server's qlog gives its goodput over time (adding up to
    its bytes), RTT samples, and for picoquic's bbr its BBRv3 states from STARTUP on; CPU
    is measured per connection; no picoquicdemo outlives the run; both figures draw."""
    from conftest import RESULTS, bbrlab, by_point, fresh_quick, leftovers

    root = RESULTS / "quic"
    rundir = fresh_quick("quic-jitter", root)
    points = by_point(rundir)
    assert set(points) == {f"rtt=1ms,delay_variation={v},cc={cc}" for v in ("0ms", "2ms") for cc in ("bbr", "cubic")}
    for name, rec in points.items():
        rows = rec["metrics"]["flows"]
        assert len(rows) == 4 and all(r["bytes"] == 2_000_000 and r["tool"] == "picoquic" for r in rows), rows
        assert all(r["cpu_s"] and r["cpu_s"] > 0 and r["rtt_sample_min_ms"] for r in rows), rows
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
    assert (rundir.path / "quic-jitter.png").stat().st_size > 10_000
    drawn = bbrlab("plot", str(rundir.path), "--kind", "quic_timeline", results=root)
    assert drawn.returncode == 0 and (rundir.path / "quic-jitter-quic_timeline.png").is_file(), drawn.stderr
    assert not [x for x in leftovers() if "picoquic" in x], leftovers()
