"""A point's short-flow classes run as the testbed runs them (sinks listening, schedules
written into raw/, senders timed from time zero, stopped, analyzed), every host played by
this machine's own namespace over loopback (the sinks really listen, the flows really run)."""

from __future__ import annotations

import dataclasses
import socket
import subprocess
import time
from pathlib import Path

import pytest

from bbrlab.analysis import analyze as analysis
from bbrlab.traffic import shortflow_traffic
from bbrlab.schema import experiment as spec, workload
from bbrlab.emulation import topo

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
CCS = set(AVAILABLE.read_text().split()) if AVAILABLE.is_file() else set()

pytestmark = pytest.mark.skipif(not {"bbr", "cubic"} <= CCS, reason="needs tcp_bbr and tcp_cubic")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalNode:
    """A host of the testbed played by this machine's own namespace."""

    def __init__(self, name: str):
        self.name = name

    def popen(self, argv, **kwargs):
        return subprocess.Popen(argv, **kwargs)


class LocalTestbed:
    def node(self, name: str) -> LocalNode:
        return LocalNode(name)


def test_the_testbed_s_short_flows_run_on_schedule_and_are_analyzed(tmp_path, monkeypatch):
    monkeypatch.setattr(workload, "SINK_PORT", free_port())
    raw_spec = {"link": {"rate": "20Mbit", "rtt": "50ms", "buffer": "2bdp"}, "cc": "cubic",
                "flows": [{"class": "client", "workload": {"rate": "8/s", "sizes": "tests/fixtures/sizes-small.cdf",
                                                           "duration": "1s", "seed": 3}},
                          {"class": "pop", "rtt": "10ms", "cc": "bbr",
                           "workload": {"rate": "8/s", "sizes": "fixed 20KB", "duration": "1s"}}]}
    point = spec.build(raw_spec).points[0]
    plan = topo.build_plan(point)
    local = tuple(dataclasses.replace(w, dst="127.0.0.1", receiver="rcv1") for w in plan.workloads)
    plan = dataclasses.replace(plan, workloads=local)
    raw = tmp_path / "raw"
    raw.mkdir()
    shorts = shortflow_traffic.ShortFlows(LocalTestbed(), plan, raw, grace=5.0)
    try:
        shorts.start_sinks()
        t0, zero = time.monotonic() + 0.5, time.time() + 0.5
        shorts.launch(zero)
        shorts.wait(t0)
    finally:
        shorts.stop()
    series, out = {}, {"groups": []}
    analysis._shortflows(point, plan, raw, zero, series, out)
    assert out["flows_planned"] == len(series["shortflows"]) > 6
    assert out["flows_completed"] == out["flows_planned"] and out["flows_unfinished"] == 0
    assert {(r["class"], r["cc_set"]) for r in series["shortflows"]} == {("client", "cubic"), ("pop", "bbr")}
    assert all(0 <= r["start_s"] < 1.5 for r in series["shortflows"])
    assert [g["class"] for g in out["groups"]] == ["client", "pop"] and out["shortflow_cpu_s_per_flow"] > 0
    assert len(out["shortflow_programs"]) == 3  # two senders, one sink (one receiving host here)
    assert (raw / "shortflows-schedule-g1.json").is_file() and (raw / "shortflows-g2.jsonl").is_file()
