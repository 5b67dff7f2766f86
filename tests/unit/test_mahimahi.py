"""ReBBR's emulator as a link kind (link.shaper: mahimahi): the chain a point gets, its trace,
what it refuses, and mm-link's log read back as the bottleneck's counters."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
import yaml
from bbrlab import cli
from bbrlab.analysis import mahimahi_log
from bbrlab.emulation import mahimahi_plan, plan_text, topo
from bbrlab.errors import ParseError
from bbrlab.schema import aqm_format
from bbrlab.schema import experiment as spec

LINK = {"rate": "100Mbit", "rtt": "100ms", "buffer": "4bdp", "loss": "1%", "shaper": "mahimahi"}


def point(link=None, flows=None, pacing="internal", sampling=None) -> spec.Point:
    raw = {"link": dict(LINK, **(link or {})), "pacing": pacing,
           "flows": flows or [{"cc": "bbr", "duration": "30s", "count": 2}]}
    if sampling:
        raw["sampling"] = sampling
    return spec.build(raw).points[0]


# ---------------------------------------------------------------- the trace


@pytest.mark.parametrize("rate, period, lines", [(100e6, 3, 25), (10e6, 6, 5), (12e6, 1, 1), (20e6, 3, 5)])
def test_the_trace_holds_a_line_per_12000_bits_spread_over_the_shortest_period(rate, period, lines):
    trace = mahimahi_plan.trace_lines(rate)
    assert len(trace) == lines and trace[-1] == period  # the period is the last line: mm-link repeats from it
    assert trace == sorted(trace) and trace[0] >= 1
    assert len(trace) * mahimahi_plan.TRACE_BITS / (period / 1000) == pytest.approx(rate)


def test_rebbrs_own_traces_are_the_ones_written():
    # ReBBR's _generate_trace (bbr_experiment.py, the run of its figure 8): 8, 8, 9 opportunities in
    # each 3 ms at 100 Mbit/s; 0, 1, 1, 1, 1, 1 in each 6 ms at 10 Mbit/s
    trace = mahimahi_plan.trace_lines(100e6)
    assert [trace.count(ms) for ms in (1, 2, 3)] == [8, 8, 9]
    assert mahimahi_plan.trace_lines(10e6) == [2, 3, 4, 5, 6]


def test_an_odd_rate_is_cut_to_a_minute_and_stays_within_a_line_of_it():
    trace = mahimahi_plan.trace_lines(10_000_007)
    assert trace[-1] == mahimahi_plan.MAX_PERIOD_MS
    assert abs(len(trace) - 10_000_007 * 60 / 12000) < 1


# ---------------------------------------------------------------- the plan


def test_the_chain_is_rebbrs_and_every_flow_runs_inside_it():
    p = topo.build_plan(point())
    chain = p.mahimahi
    assert chain.host == "snd1" and [f.sender for f in p.flows] == ["snd1", "snd1"]
    assert [h for h, role in p.hosts if role == "sender"] == ["snd1"]
    shells = chain.shells(Path("/r/link.trace"), Path("/r/up.log"))
    names = [a if a.startswith("--") else Path(a).name for a in shells]
    assert names[:5] == ["mm-delay", "50", "mm-loss", "uplink", "0.01"]
    assert names[5:] == ["mm-link", "link.trace", "link.trace", "--uplink-log=/r/up.log", "--uplink-queue=droptail",
                         "--uplink-queue-args=packets=3333"]
    assert all(not i.tc for i in p.intfs())  # nothing else shapes, delays or drops
    assert chain.sender_qdisc == "pfifo_fast" and "mahimahi" in p.summary
    text = plan_text.describe(p)
    assert "mm-delay 50 mm-loss uplink 0.01 mm-link" in text and "sleep infinity" in text


def test_loss_on_both_directions_is_a_second_loss_shell_and_fq_goes_inside():
    p = topo.build_plan(point({"loss_direction": "both", "buffer": "64KB"}, pacing="fq"))
    names = [a if a.startswith("--") else Path(a).name for a in p.mahimahi.shells(Path("t"), Path("l"))]
    assert names[2:8] == ["mm-loss", "uplink", "0.01", "mm-loss", "downlink", "0.01"]
    assert "--uplink-queue-args=bytes=64000" in names
    assert p.mahimahi.sender_qdisc == "fq" and not topo.build_plan(point(pacing="fq")).intfs()[0].tc


def test_without_loss_there_is_no_loss_shell():
    names = [Path(a).name for a in topo.build_plan(point({"loss": "0%"})).mahimahi.shells(Path("t"), Path("l"))]
    assert "mm-loss" not in names


def test_the_chain_is_calibrated_on_its_own():
    assert aqm_format.calibration_path("fifo", "mahimahi") == "fifo-mahimahi"
    # its calibration captures what leaves mm-link (its egress TUN), as the netem link's
    assert aqm_format.path_sets("fifo-mahimahi") == ["aqm=fifo", "shaper=mahimahi"]
    assert aqm_format.calibration_path("fifo", "netem") is None


# ---------------------------------------------------------------- what it refuses


def refused(capsys, tmp_path, raw) -> str:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(dict({"name": "mine"}, **raw), sort_keys=False))
    code = cli.main(["run", str(path), "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (code, out, err)
    return err.strip()


@pytest.mark.parametrize("link, flows, sampling, said", [
    ({"rtt": "25ms"}, None, None, "link.rtt: 25ms: mm-delay takes whole milliseconds each way"),
    ({"jitter": "1ms"}, None, None, "link.jitter: not with link.shaper: mahimahi"),
    ({"aqm": "fq_codel"}, None, None, "link.aqm: not with link.shaper: mahimahi"),
    ({"burst": "2ms"}, None, None, "link.burst: not with link.shaper: mahimahi"),
    ({"forward_share": 0.3}, None, None, "link.forward_share: mm-delay delays both directions alike"),
    ({"changes": [{"at": "5s", "rate": "50Mbit"}]}, None, None, "link.changes: not with link.shaper: mahimahi"),
    ({}, [{"cc": "bbr", "duration": "30s", "rtt": "40ms"}], None, "flows.0.rtt: with link.shaper: mahimahi"),
    ({}, [{"cc": "bbr", "size": "1MB", "tool": "picoquic"}], None, "flows.0.tool: picoquic is not run inside"),
])
def test_what_the_chain_cannot_express_is_one_line(capsys, tmp_path, link, flows, sampling, said):
    raw = {"link": dict(LINK, **link), "flows": flows or [{"cc": "bbr", "duration": "30s"}]}
    if sampling:
        raw["sampling"] = sampling
    assert said in refused(capsys, tmp_path, raw)


# ---------------------------------------------------------------- mm-link's log


def log_text(queue="droptail [packets=2]", events=()) -> str:
    head = ["# mahimahi mm-link (Uplink) [t] > l", "# command line: mm-link", f"# queue: {queue}",
            "# init timestamp: 1000000", "# base timestamp: 0"]
    return "\n".join(head + list(events)) + "\n"


def test_the_log_replays_the_droptail_queue_and_counts_its_drops():
    events = ["10 + 1500", "10 + 1500", "10 + 1500",  # the third finds two queued: dropped
              "11 # 1504", "11 - 1500 1", "12 # 1504", "12 - 1500 2", "30 + 100", "31 # 1504", "31 - 100 1"]
    s = mahimahi_log.samples(log_text(events=events), 0.005, "10:")
    assert [round(x.t, 3) for x in s] == [1000.01, 1000.015, 1000.02, 1000.025, 1000.03, 1000.035]
    at_15, at_30, last = s[1], s[4], s[-1]
    assert (at_15.backlog_pkts, at_15.sent_pkts, at_15.sent_bytes, at_15.drops) == (0, 2, 3000, 1)
    assert (at_30.backlog_pkts, at_30.sent_pkts) == (1, 2)  # a sample at T holds what happened up to T
    assert (last.backlog_pkts, last.sent_bytes, last.drops) == (0, 3100, 1)
    assert s[0].kind == "mahimahi" and s[0].options == {"packets": 2}


def test_an_unbounded_queue_never_drops_and_a_cut_last_line_is_ignored():
    events = [f"{t} + 1500" for t in range(1, 6)] + ["6 - 1500 5", "7 -"]
    s = mahimahi_log.samples(log_text("infinite", events), 0.002, "10:")
    assert s[-1].drops == 0 and s[-1].backlog_pkts == 4


def test_what_left_is_counted_from_the_capture_when_there_is_one():
    """The log says each packet left at its scheduled opportunity; the capture of mm-link's
    egress says when it did: after a late wake-up, the held packets leave together later."""
    events = ["10 + 1500", "10 + 1500", "11 # 1504", "11 - 1500 1", "12 # 1504", "12 - 1500 2", "20 + 52"]
    logged = mahimahi_log.samples(log_text(events=events), 0.005, "10:")
    wire = mahimahi_log.on_the_wire(logged, [(1000.0181, 1500), (1000.018, 1500), (1000.031, 52)])
    assert [(q.sent_pkts, q.sent_bytes) for q in logged] == [(0, 0), (2, 3000), (2, 3000)]
    assert [(q.sent_pkts, q.sent_bytes) for q in wire] == [(0, 0), (0, 0), (2, 3000)]
    assert [q.backlog_pkts for q in wire] == [q.backlog_pkts for q in logged]  # the queue is the log's


def test_drops_inside_the_chain_count_every_tun_device_but_the_senders_own_queue(tmp_path):
    path = tmp_path / mahimahi_plan.DROPS_FILE
    assert mahimahi_log.emulator_drops(path) is None  # no chain
    device = {"namespace": 1, "dev": "link-7", "qdisc": "pfifo_fast", "senders": False, "qdisc_drops": 0,
              "rx_packets": 900, "rx_dropped": 0, "tx_packets": 800, "tx_dropped": 0}
    senders = dict(device, namespace=3, dev="ingress", qdisc="fq", senders=True, qdisc_drops=5)
    path.write_text(json.dumps([device, senders]))
    assert mahimahi_log.emulator_drops(path) == 0  # fq's own drops are the senders', not the emulator's
    path.write_text(json.dumps([dict(device, tx_dropped=2), dict(senders, rx_dropped=1),
                                dict(device, dev="delay-5", qdisc_drops=4)]))
    assert mahimahi_log.emulator_drops(path) == 7
    path.write_text("[{}]")
    with pytest.raises(ParseError, match="not the chain's drop counters"):
        mahimahi_log.emulator_drops(path)


def test_the_chains_payload_capacity_counts_ip_packets_not_frames():
    """mm-link's trace line of 12000 bits carries one 1500-byte IP packet; tc's shapers count
    the 1514-byte Ethernet frame: one flow's ceiling is 1448/1500 of the rate there."""
    assert point().link.wire_bytes == 1500
    assert point({"shaper": "netem"}).link.wire_bytes == 1514


def test_a_log_without_its_header_or_with_a_bad_line_is_a_parse_error(tmp_path):
    with pytest.raises(ParseError, match="init timestamp"):
        mahimahi_log.samples("10 + 1500\n", 0.1, "10:")
    with pytest.raises(ParseError, match="line 6"):
        mahimahi_log.samples(log_text(events=["x y", "10 + 1500"]), 0.1, "10:")
    path = tmp_path / mahimahi_plan.UPLINK_LOG
    with gzip.open(path, "wt") as f:
        f.write(log_text(events=["1 + 52"]))
    assert mahimahi_log.read(path).endswith("1 + 52\n")


# ---------------------------------------------------------------- the preflight


@pytest.mark.parametrize("dnsmasq, named", [("/nonexistent/dnsmasq", True), ("/bin/sh", False)])
def test_the_preflight_names_the_dnsmasq_every_shell_starts(monkeypatch, tmp_path, dnsmasq, named):
    from bbrlab.emulation import preflight
    for shell in mahimahi_plan.SHELLS:
        (tmp_path / shell).write_text("#!/bin/sh\n")
        (tmp_path / shell).chmod(0o4755)
    monkeypatch.setattr(mahimahi_plan, "BIN", tmp_path)
    monkeypatch.setattr(mahimahi_plan, "DNSMASQ", dnsmasq)
    problems = preflight.mahimahi_problems()
    assert not any("Mahimahi's mm-" in p for p in problems), problems  # the shells are there, setuid
    assert any("dnsmasq-base" in p for p in problems) == named, problems


# ---------------------------------------------------------------- the log kept


@pytest.mark.parametrize("planted", ["symlink", "fifo"])
def test_the_log_is_kept_only_if_it_is_mm_links_file(monkeypatch, tmp_path, planted):
    """The chain's folder is its user's while it runs: root copies what it finds there into
    the results only if it is a regular file, never through a link (to /etc/shadow, say)."""
    from bbrlab.emulation import mahimahi
    from bbrlab.errors import TestbedError
    monkeypatch.setattr(mahimahi.shutil, "chown", lambda *a: None)
    chain = mahimahi.Chain.__new__(mahimahi.Chain)
    chain.work, chain.raw_dir = tmp_path / "work", tmp_path / "raw"
    chain.work.mkdir(), chain.raw_dir.mkdir()
    (tmp_path / "secret").write_text("root's\n")
    if planted == "symlink":
        (chain.work / "uplink.log").symlink_to(tmp_path / "secret")
    else:
        os.mkfifo(chain.work / "uplink.log")
    with pytest.raises(TestbedError, match="is not mm-link's log"):
        chain._compress()
    assert not (chain.raw_dir / mahimahi_plan.UPLINK_LOG).exists()
    (chain.work / "uplink.log").unlink()
    (chain.work / "uplink.log").write_text(log_text(events=["1 + 52"]))
    chain._compress()
    assert mahimahi_log.read(chain.raw_dir / mahimahi_plan.UPLINK_LOG).endswith("1 + 52\n")
    assert not (chain.work / "uplink.log").exists()


def test_a_killed_chains_namespaces_are_found_on_one_list_of_processes():
    """cleanup reads /proc once: the chain's shells ending with the holder name their
    namespaces; someone else's Mahimahi (another inner command) and a process without a
    namespace are left alone; in_namespaces then picks what runs there."""
    from bbrlab.emulation import mahimahi
    from bbrlab.emulation.procs import Process, in_namespaces
    procs = [
        Process(10, ("/usr/local/lib/mahimahi/bin/mm-delay", "50", "mm-loss", "uplink", "0.1", "mm-link",
                     "up", "down", "--", "sleep", "infinity"), 4001),
        Process(11, ("mm-link", "up", "down", "--", "sleep", "infinity"), 4003),
        Process(12, ("mm-delay", "20", "bash"), 4005),  # a user's own shell
        Process(13, ("mm-loss", "uplink", "0.1", "sleep", "infinity"), None),  # gone while read
        Process(14, ("iperf3", "-c", "10.0.3.2"), 4003),
        Process(15, (), 4001),
        Process(16, ("iperf3", "-s"), 4005),
    ]
    assert mahimahi.leftovers(procs) == {4001, 4003}
    assert sorted(in_namespaces({4001, 4003}, procs)) == [10, 11, 14, 15]
    assert in_namespaces(set(), procs) == []
