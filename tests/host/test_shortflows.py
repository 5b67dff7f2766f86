"""The short-flow programs for real, over this host's loopback: one sink, one sender, a
handful of flows with BBR and CUBIC. Every flow's record has its bytes, its completion and
the CC read back from its socket; a flow the deadline cuts is written as unfinished."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bbrlab.analysis import tool_output
from bbrlab.traffic.inhost import shortflows

PROGRAM = Path(shortflows.__file__)
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
CCS = set(AVAILABLE.read_text().split()) if AVAILABLE.is_file() else set()

pytestmark = pytest.mark.skipif(not {"bbr", "cubic"} <= CCS, reason="needs tcp_bbr and tcp_cubic")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sink(tmp_path):
    port = free_port()
    out = open(tmp_path / "sink.jsonl", "w")
    proc = subprocess.Popen([sys.executable, str(PROGRAM), "sink", "--port", str(port)], stdout=out)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    yield port
    proc.terminate()
    proc.wait(timeout=10)
    out.close()
    summary = tool_output.parse_shortflows((tmp_path / "sink.jsonl").read_text(), "sink.jsonl")[1]
    assert summary["role"] == "sink" and summary["cpu_s"] >= 0


def send(tmp_path, schedule: dict) -> tuple[list[dict], dict]:
    (tmp_path / "schedule.json").write_text(json.dumps(schedule))
    subprocess.run([sys.executable, str(PROGRAM), "send", "--schedule", str(tmp_path / "schedule.json"),
                    "--out", str(tmp_path / "send.jsonl")], check=True, timeout=60)
    return tool_output.parse_shortflows((tmp_path / "send.jsonl").read_text(), "send.jsonl")


def test_flows_with_bbr_and_cubic_complete_with_their_bytes_and_cc(tmp_path, sink):
    flows = [{"id": f"f{k}", "at": 0.05 * k, "size": size, "cc": cc, "group": k % 2, "class": cc}
             for k, (size, cc) in enumerate([(1, "bbr"), (1000, "cubic"), (100_000, "bbr"), (3_000_000, "cubic"),
                                             (20_000, "bbr"), (5, "cubic")])]
    records, summary = send(tmp_path, {"dst": "127.0.0.1", "port": sink, "deadline": 20, "flows": flows})
    assert [r["id"] for r in records] == [f["id"] for f in flows]
    for flow, r in zip(flows, records):
        assert r["completed"] and r["error"] is None
        assert r["bytes_acked"] == flow["size"] and r["cc_set"] == flow["cc"] == r["cc"]
        assert r["start"] <= r["established"] <= r["end"]
    assert summary["completed"] == 6 and summary["unfinished"] == 0 and summary["late_max_ms"] < 500


def test_sequential_flows_never_overlap_and_client_ports_come_from_the_block(tmp_path, sink):
    base = free_port()
    flows = [{"id": f"s{k}", "at": 0.0, "size": 200_000, "cc": "bbr", "group": 0, "class": "a", "cport": base}
             for k in range(3)]
    records, _ = send(tmp_path, {"dst": "127.0.0.1", "port": sink, "deadline": 20, "sequential": True,
                                 "gap": 0.1, "ports": [base, 1], "flows": flows})
    assert all(r["completed"] for r in records)
    for a, b in zip(records, records[1:]):
        assert b["start"] >= a["end"] + 0.1 - 1e-3
        assert b["due"] >= a["due"] + (a["end"] - a["start"]) + 0.1 - 1e-3  # due the gap after the previous one


def test_a_refused_flow_and_a_flow_cut_by_the_deadline_are_written_unfinished(tmp_path, sink):
    closed = free_port()
    flows = [{"id": "refused", "at": 0.0, "size": 1000, "cc": "bbr", "group": 0, "class": "a"},
             {"id": "huge", "at": 0.0, "size": 50_000_000_000, "cc": "cubic", "group": 0, "class": "a"}]
    doc = {"dst": "127.0.0.1", "port": sink, "deadline": 0.5, "flows": [dict(flows[1])]}
    records, summary = send(tmp_path, doc)
    (huge,) = records
    assert not huge["completed"] and huge["error"] == "open at the deadline" and 0 < huge["bytes_acked"] < huge["size"]
    assert summary["unfinished"] == 1
    records, summary = send(tmp_path, {"dst": "127.0.0.1", "port": closed, "deadline": 2, "flows": [flows[0]]})
    assert not records[0]["completed"] and records[0]["error"] and summary["completed"] == 0
