"""QUIC flows (`tool: picoquic`): the spec's checks, picoquic's output parsed (a real
client report and server file from the testbed, tests/fixtures/picoquic; a qlog built
here event by event, in picoquic's own layout), and one connection's row and series."""

import json
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from bbrlab.analysis import classes, picoquic_output, quic_flows
from bbrlab.emulation.topo import FlowPlan, build_plan
from bbrlab.errors import ParseError, SpecError
from bbrlab.schema import experiment as spec
from bbrlab.traffic import picoquic

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "picoquic"


def raw(**flow) -> dict:
    group = {"tool": "picoquic", "cc": "bbr", "count": 2, "size": "1MB", **flow}
    return {"link": {"rate": "10Mbit", "rtt": "1ms", "buffer": "100pkt"}, "flows": [group]}


def test_a_picoquic_group_takes_picoquics_ccs_and_sizes_only():
    exp = spec.build(raw())
    assert exp.points[0].flows[0].tool == "picoquic" and exp.points[0].flows[0].cc == "bbr"
    assert exp.points[0].duration == pytest.approx(1.6)  # 2 x 1 MB at 10 Mbit/s
    for changes, message in [({"cc": "bbr3"}, "not a congestion control picoquic offers (did you mean bbr?)"),
                             ({"size": None, "duration": "10s"}, "flows.0.duration: a picoquic connection downloads a size"),
                             ({"ecn": True}, "flows.0.ecn: not with tool: picoquic"),
                             ({"tool": "quiche"}, "flows.0.tool: expected one of iperf3, picoquic")]:
        group = {k: v for k, v in {**raw()["flows"][0], **changes}.items() if v is not None}
        with pytest.raises(SpecError, match=re.escape(message)):
            spec.build({**raw(), "flows": [group]})
    with pytest.raises(SpecError, match="not a congestion control the testbed offers"):
        spec.build({**raw(), "flows": [{"cc": "c4", "size": "1MB"}]})  # iperf3's CCs are the kernel's


def test_the_plan_runs_the_server_on_the_sender_and_the_client_on_the_receiver():
    plan = build_plan(spec.build(raw()).points[0])
    f1, f2 = plan.flows
    assert (f1.tool, f1.sender, f1.receiver) == ("picoquic", "snd1", "rcv1") and f1.src == "10.0.1.1"
    assert plan.tcp_flows() == ()  # no ss or netlink sampler watches them
    server = picoquic.PICOQUIC.server(f1, Path("/tmp/raw"))
    assert server.host == "snd1" and server.argv[:5] == ["stdbuf", "-oL", "picoquicdemo", "-p", str(f1.port)]
    assert server.argv[server.argv.index("-G") + 1] == "bbr" and "-q" in server.argv
    client = picoquic.PICOQUIC.client(f2, Path("/tmp/raw"), 1.0, 5.0)
    assert client.host == "rcv1" and client.argv[-3:] == [f2.src, str(f2.port), "=b1:*1:397:1000000;"]
    assert client.cwd == Path("/tmp/raw/picoquic-f2")  # picoquicdemo's ticket and token stores


def test_the_client_report_and_the_server_file_from_the_testbed():
    report = picoquic_output.parse_client((FIXTURES / "client.txt").read_text())
    assert report.download_bytes == 4_000_000 and report.seconds == pytest.approx(10.440769)
    assert report.ended - report.started == pytest.approx(10.80, abs=0.01)
    assert report.cpu_seconds == pytest.approx(1.323 + 0.730)  # the children's line of `times`
    server = (FIXTURES / "server.txt").read_text()
    assert picoquic_output.parse_server_cpu(server) == pytest.approx(2.71)
    assert picoquic_output.parse_clock(server) == pytest.approx(1795665650.398024 - 1578.310561)
    failed = (FIXTURES / "client.txt").read_text().replace("Client exit with code = 0", "Client exit with code = 1")
    with pytest.raises(ParseError, match="the client failed: Client exit with code = 1"):
        picoquic_output.parse_client(failed)
    with pytest.raises(ParseError, match="no `epoch` line"):
        picoquic_output.parse_client("Client exit with code = 0\n")


def _sent(t, pn, stream):
    frames = [{"frame_type": "stream", "id": 0, "offset": 0, "length": stream}] if stream else [{"frame_type": "ping"}]
    header = {"packet_size": stream + 30, "packet_number": pn}
    return [t, "transport", "packet_sent", {"packet_type": "1RTT", "header": header, "frames": frames}]


def _ack(t, *ranges):
    return [t, "transport", "packet_received", {"packet_type": "1RTT", "header": {"packet_size": 40, "packet_number": 9},
                                                "frames": [{"frame_type": "ack", "acked_ranges": [list(r) for r in ranges]}]}]


def qlog(events) -> str:
    return json.dumps({"qlog_version": "draft-00", "traces": [{
        "configuration": {"time_units": "us"}, "common_fields": {"reference_time": "5000000"}, "events": events}]})


EVENTS = [
    [0, "transport", "packet_sent", {"packet_type": "initial", "header": {"packet_size": 1200, "packet_number": 0},
                                     "frames": [{"frame_type": "crypto", "offset": 0, "length": 300}]}],
    _sent(1000, 0, 1000), _sent(1000, 1, 1000), _sent(1000, 2, 1000), _sent(1000, 3, 0),
    [1500, "recovery", "metrics_updated", {"cwnd": 14400, "pacing_rate": 8000000, "latest_rtt": 900}],
    _ack(2000, (0, 0)),
    _ack(3000, (2, 3), (0, 0)),  # packet 1 lost: a hole; 0 acknowledged again
    [3100, "recovery", "congestion_state_updated", {"old": "0", "new": "65541", "cc_param": 1}],  # PROBE_BW_UP
    _sent(3200, 4, 1000),
    _ack(500000, (2, 4), (0, 0)),  # 4 is new
    [500100, "recovery", "metrics_updated", {"smoothed_rtt": 1100, "latest_rtt": 1300}],
    [600000, "info", "message", {"message": "Closed. Retrans= 1, spurious= 0, max sp gap = 0"}],
]


def test_the_qlog_gives_each_acknowledged_stream_byte_once_and_the_ccs_state():
    log = picoquic_output.parse_qlog(qlog(EVENTS), "x.server.qlog")
    assert log.reference == 5.0 and log.mtu == 1030
    assert log.delivered == ((0.002, 1000), (0.003, 1000), (0.5, 1000))  # not packet 1, nor 0 twice
    assert log.states == ((0.0031, 5),) and log.retransmits == 1
    assert [d for _, d in log.metrics][0] == {"cwnd": 14400, "pacing_rate": 8000000, "latest_rtt": 900}
    with pytest.raises(ParseError, match="not a complete qlog"):
        picoquic_output.parse_qlog(qlog(EVENTS)[:-40], "x.server.qlog")  # the server stopped before writing it out
    with pytest.raises(ParseError, match="no 1-RTT packet sent"):
        picoquic_output.parse_qlog(qlog(EVENTS[:1]), "x.server.qlog")


def test_newly_acked_ranges_stay_merged():
    acked: list = []
    assert picoquic_output._newly_acked(acked, 0, 5) == [(0, 5)]
    assert picoquic_output._newly_acked(acked, 8, 9) == [(8, 9)] and acked == [[0, 5], [8, 9]]
    assert picoquic_output._newly_acked(acked, 0, 12) == [(6, 7), (10, 12)] and acked == [[0, 12]]
    assert picoquic_output._newly_acked(acked, 3, 4) == []


# picoquic's performance log (performance_log.c) as a server in the testbed wrote it, its CC
# number made a parameter (5: bbr)
PERF = (FIXTURES / "perf.csv").read_text().replace(", 29560, 5, 1112355,", ", 29560, {ccalgo}, 1112355,")


def test_the_performance_log_names_the_cc_that_ran():
    row = picoquic_output.parse_perflog(PERF.format(ccalgo=7))
    assert row["cc"] == "bbr1" and row["trains_s"] == 1039 and row["Duration"] == 7.291738 and row["ALPN"] == "perf"
    assert picoquic_output.parse_perflog((FIXTURES / "perf.csv").read_text())["cc"] == "bbr"
    with pytest.raises(ParseError, match="no connection line"):
        picoquic_output.parse_perflog(PERF.splitlines()[0])


def test_one_connection_row_and_series(tmp_path):
    point = spec.build(raw(cc="bbr", count=1)).points[0]
    point = replace(point, sampling=replace(point.sampling, interval=0.02, iperf_interval=0.25, startup=0.0))
    (flow,) = build_plan(point).flows
    (tmp_path / "picoquic-f1").mkdir()
    (tmp_path / "picoquic-f1" / "abc.server.qlog").write_text(qlog(EVENTS))
    client = (FIXTURES / "client.txt").read_text().replace("Download_bytes: 4000000", "Download_bytes: 3000") \
        .replace("Connection_duration_sec: 10.440769", "Connection_duration_sec: 0.6")
    (tmp_path / "picoquic-f1-client.txt").write_text(client)
    (tmp_path / "picoquic-f1-server.txt").write_text("clock 1000.5 2.5\ncpu 0.40 0.10\n")  # epoch = monotonic + 998
    (tmp_path / "picoquic-f1" / "perf.csv").write_text(PERF.format(ccalgo=5))
    t0 = 1000.0  # the connection started at monotonic 5.0 = epoch 1003.0: 3 s after t0
    row, series, tput, (offset, intervals) = quic_flows.flow(point, flow, tmp_path, t0, 2.9)
    assert offset == pytest.approx(3.0) and row["data_start_s"] == 3.0 and row["start_s"] == 2.9
    assert row["bytes"] == 3000 and row["goodput_mbps"] == pytest.approx(3000 * 8 / 0.6 / 1e6, abs=1e-4)
    assert sum(iv.bytes for iv in intervals) == 3000  # the acknowledged stream bytes over time add up
    assert row["rtt_sample_p50_ms"] == pytest.approx(1.1) and row["rtt_sample_min_ms"] == 0.9
    assert row["cpu_server_s"] == 0.5 and row["cpu_s"] == pytest.approx(0.5 + 2.053) and row["tool"] == "picoquic"
    assert series["bbr_phase"] == [[3.0, "STARTUP"], [3.0031, "PROBE_BW_UP"]] and series["bbr_version"] == 3
    assert series["cwnd"][0] == [3.0015, pytest.approx(14400 / 1030, abs=0.1)]
    assert series["pacing_mbps"] == [[3.0015, 8.0], [3.6, 8.0]]  # held to the connection's end
    assert row["pacing_p50_mbps"] == 8.0  # what its CC asked for, after the startup period (none here)
    late = replace(point, sampling=replace(point.sampling, startup=1.0))  # the connection ended before it
    assert quic_flows.flow(late, flow, tmp_path, t0, 2.9)[0]["pacing_p50_mbps"] is None
    assert classes.cc_key(row) == "picoquic-bbr" and classes.cc_key({"cc": "bbr"}) == "bbr"
    assert row["cc_ran"] == "bbr" and row["pacing_limited_share"] == round(775 / 1039, 4)
    assert row["cwnd_limited_share"] == round(257 / 1039, 4) and row["retransmits"] == 0  # the performance log's
    (tmp_path / "picoquic-f1" / "perf.csv").write_text(PERF.format(ccalgo=2))
    with pytest.raises(ParseError, match="picoquic's server ran cubic, not bbr"):
        quic_flows.flow(point, flow, tmp_path, t0, 2.9)
    (tmp_path / "picoquic-f1" / "perf.csv").write_text(PERF.format(ccalgo=5))
    (tmp_path / "picoquic-f1-server.txt").write_text("cpu 0.40 0.10\n")
    with pytest.raises(ParseError, match="no clock line"):
        quic_flows.flow(point, flow, tmp_path, t0, 2.9)


def test_the_server_qlog_counts_as_written_once_its_json_is_closed(tmp_path):
    assert not picoquic._written(tmp_path)
    (tmp_path / "a.server.qlog").write_text(qlog(EVENTS)[:-4])
    assert not picoquic._written(tmp_path)
    (tmp_path / "a.server.qlog").write_text(qlog(EVENTS) + "\n")
    assert not picoquic._written(tmp_path)  # and the performance log's line
    (tmp_path / "perf.csv").write_text(PERF.format(ccalgo=5))
    assert picoquic._written(tmp_path)


def test_a_plan_without_picoquic_is_unchanged():
    plan = build_plan(spec.build({"link": {"rate": "10Mbit", "rtt": "10ms", "buffer": "100pkt"},
                                  "flows": [{"cc": "bbr", "duration": "5s"}]}).points[0])
    assert plan.tcp_flows() == plan.flows and plan.flows[0].tool == "iperf3"
    assert isinstance(SimpleNamespace, type) and FlowPlan.__dataclass_fields__["tool"].default == "iperf3"


def jitter_record(cc: str, flows: list[dict], tool: str = "picoquic", **metrics) -> dict:
    """A point of quic-jitter's grid at 10 ms and 1 ms of variation: one CC's connections (or flows)."""
    return {"id": f"rtt=10ms,delay_variation=1ms,tool={tool},cc={cc},rep1",
            "params": {"rtt": "10ms", "delay_variation": "1ms", "tool": tool, "cc": cc},
            "link": {"rtt": 0.01, "delay_variation": 0.001}, "flow_plan": [{"cc": cc, "tool": tool}],
            "metrics": {"flows": flows, "goodput_mbps": sum(f["goodput_mbps"] for f in flows), **metrics}}


def test_the_report_table_puts_each_ccs_connections_beside_the_posts_numbers():
    from bbrlab.output.reports import report_quic

    def record(cc, rates, bound=False):
        flows = [{"goodput_mbps": r, "cpu_s": 1.0, "rtt_sample_p50_ms": 30.0 + i,
                  "pacing_limited_share": 0.5 if cc == "bbr" else None} for i, r in enumerate(rates)]
        return jitter_record(cc, flows, duration_s=10.0, cpu_bound=bound)

    lines = report_quic.quic_table(None, [record("bbr", [1.5, 1.6, 1.4, 1.5]), record("cubic", [2.0, 3.0, 2.5, 2.5], True)])
    assert report_quic.POST in lines and "bbr / cubic mean rate" in lines[5]
    assert lines[-1] == ("| 10 | 1 | 1.50 (1.40-1.60) | 6.00 | 32.0 | 0.40 | 0.50 | 2.50 (2.00-3.00) | 10.00 | 32.0 "
                         "| 0.40 | – | 0.60 | yes |")
    tcp = jitter_record("bbr", [{"goodput_mbps": 1.0}], tool="iperf3")
    assert report_quic.quic_table(None, [tcp]) == []  # kernel TCP's runs have their own tables...


def test_the_same_table_gives_kernel_tcps_flows_at_quic_jitters_points():
    from types import SimpleNamespace
    from bbrlab.output.reports import report_quic

    def record(cc, rates, left=None):  # ...but for quic-jitter-tcp, quic-jitter's points with iperf3
        return jitter_record(cc, [{"goodput_mbps": r, "bbr_left_startup_by_s": left} for r in rates], tool="iperf3",
                             steady_rtt_p50_ms=25.0, retransmit_rate=0.0012)

    exp = SimpleNamespace(plot_kind="quic_rates")
    lines = report_quic.quic_table(exp, [record("bbr", [2.0, 2.0], 0.4), record("bbr3", [1.0, 3.0], 0.6),
                                         record("cubic", [2.5, 2.5])])
    assert lines[5].endswith("| bbr / cubic mean rate | bbr3 / cubic mean rate | CPU-bound |")
    assert "bbr3: left STARTUP (s)" in lines[5] and "CPU (cores)" not in lines[5]
    assert lines[-1] == ("| 10 | 1 | 2.00 (2.00-2.00) | 4.00 | 25.0 | 0.0012 | 0.4 | 2.00 (1.00-3.00) | 4.00 | 25.0 "
                         "| 0.0012 | 0.6 | 2.50 (2.50-2.50) | 5.00 | 25.0 | 0.0012 | 0.80 | 0.80 | no |")  # no STARTUP for CUBIC


def test_the_rates_figure_names_picoquics_bbr_v3_and_linuxs_bbr_v1():
    pytest.importorskip("matplotlib")  # it draws figures
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from bbrlab.output.figures import plots_quic

    def record(tool, cc, rates):
        return jitter_record(cc, [{"goodput_mbps": r} for r in rates], tool=tool)

    records = [record("picoquic", "bbr", [1.0, 2.0]), record("iperf3", "bbr", [2.0, 2.5]), record("iperf3", "bbr3", [2.2])]
    fig = plots_quic.quic_rates(plt, None, None, records)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["picoquic bbr (BBRv3)", "Linux bbr (BBR v1)", "Linux bbr3 (BBRv3)"]
    colours = [line.get_color() for line in fig.axes[0].get_lines()]
    assert colours[0] == colours[2] != colours[1]  # v3's colour for both BBRv3s, never v1's
    plt.close(fig)


def test_a_group_chooses_a_picoquic_build_and_gets_its_program_and_syntax():
    """The post's builds (2024) read quicperf's first scenario syntax and sit by commit
    beside today's, which stays on PATH; a build's own CCs are checked against it."""
    old = spec.build(raw(build="401781f40e04", cc="reno"))
    (f1, _) = build_plan(old.points[0]).flows
    assert f1.build == "401781f40e04"
    server = picoquic.PICOQUIC.server(f1, Path("/tmp/raw"))
    assert server.argv[2] == "/usr/local/lib/picoquic/401781f40e04/picoquicdemo"
    client = picoquic.PICOQUIC.client(f1, Path("/tmp/raw"), 1.0, 5.0)
    assert "/usr/local/lib/picoquic/401781f40e04/picoquicdemo" in client.argv
    assert client.argv[-1] == "*1:0:-:397:1000000;"  # once, on stream 0, at once, 397 bytes posted
    today = build_plan(spec.build(raw(build="d199d45be869")).points[0]).flows[0]
    assert picoquic.PICOQUIC.server(today, Path("/tmp/raw")).argv[2] == "picoquicdemo"
    assert build_plan(spec.build(raw()).points[0]).flows[0].build is None
    for changes, message in [
            ({"build": "401781f40e0"}, "flows.0.build: '401781f40e0' is not a picoquic build the testbed makes "
                                       "(did you mean 401781f40e04?) (builds: d199d45be869, 2026-08-16"),
            ({"build": 401781}, "flows.0.build: 401781 is not a picoquic build"),
            ({"build": "401781f40e04", "cc": "c4"}, "flows.0.cc: picoquic build 401781f40e04 (2024-09-27) has no "
                                                    "congestion control 'c4'"),
            ({"cc": "reno"}, "not a congestion control picoquic offers"),  # today's calls it newreno
            ({"tool": "iperf3", "size": "1MB", "build": "401781f40e04"}, "flows.0.build: a picoquic build, for "
                                                                         "tool: picoquic only")]:
        with pytest.raises(SpecError, match=re.escape(message)):
            spec.build(raw(**changes))


def test_the_version_a_server_ran_proves_which_build_ran(tmp_path):
    """Its performance log names it (PQ_v); a log without that column: the line the server
    printed at start (stdbuf -oL keeps it though a signal stops the server)."""
    point = spec.build(raw(cc="bbr", count=1, build="6fc1ff2dedd9")).points[0]
    point = replace(point, sampling=replace(point.sampling, interval=0.02, iperf_interval=0.25, startup=0.0))
    (flow,) = build_plan(point).flows
    (tmp_path / "picoquic-f1").mkdir()
    (tmp_path / "picoquic-f1" / "abc.server.qlog").write_text(qlog(EVENTS))
    perf = tmp_path / "picoquic-f1" / "perf.csv"
    (tmp_path / "picoquic-f1-client.txt").write_text((FIXTURES / "client.txt").read_text())
    started = "Starting Picoquic server (v{}) on port 5201, server name = ::, just_once = 0, do_retry = 0\n"
    server = tmp_path / "picoquic-f1-server.txt"
    server.write_text(started.format("1.1.25.2") + "clock 1000.5 2.5\ncpu 0.40 0.10\n")
    perf.write_text(PERF.format(ccalgo=5).replace(", 1.1.52.0,", ", 1.1.25.2,"))
    assert quic_flows.flow(point, flow, tmp_path, 1000.0, 2.9)[0]["picoquic_version"] == "1.1.25.2"
    perf.write_text(PERF.format(ccalgo=5))  # today's build answered
    with pytest.raises(ParseError, match=re.escape("flow f1: picoquic 1.1.52.0 ran, not build 6fc1ff2dedd9 (1.1.25.2)")):
        quic_flows.flow(point, flow, tmp_path, 1000.0, 2.9)
    header, line = PERF.format(ccalgo=5).splitlines()[:2]
    drop = header.split(", ").index("PQ_v")
    perf.write_text("\n".join(", ".join(x for i, x in enumerate(row.split(", ")) if i != drop) for row in (header, line)))
    assert quic_flows.flow(point, flow, tmp_path, 1000.0, 2.9)[0]["picoquic_version"] == "1.1.25.2"  # as printed
    server.write_text("clock 1000.5 2.5\ncpu 0.40 0.10\n")
    with pytest.raises(ParseError, match=re.escape("picoquic (no version printed) ran")):
        quic_flows.flow(point, flow, tmp_path, 1000.0, 2.9)


CC_CSV = ("time, path, sequence, cwin, app limited, cc_state, cc_param, bw_max, transit, \n"
          "1000, 0, 1, 14000, 0, 0, 0, 0, 0,\n1200000, 0, 2, 30000, 0, 1, 0, 0, 0,\n"
          "1200500, 0, 3, 30000, 0, 1, 0, 0, 0,\n1250000, 0, 4, 30000, 0, 2, 0, 0, 0,\n")


def test_the_binary_logs_csv_gives_the_ccs_changes_of_state():
    assert picoquic_output.parse_cc_csv(CC_CSV, "cc.csv") == ((1.2, 1), (1.25, 2))
    for text, message in [("", "empty"), ("time, cwin\n1, 2\n", "no time and cc_state columns"),
                          (CC_CSV + "12x, 0, 5, 1, 0, 3, 0, 0, 0,\n", "a line without a time and a cc_state")]:
        with pytest.raises(ParseError, match=message):
            picoquic_output.parse_cc_csv(text, "cc.csv")


def test_a_2024_build_writes_a_binary_log_todays_does_not(tmp_path):
    from bbrlab.traffic import picoquic

    def argv(build):
        (flow,) = build_plan(spec.build(raw(cc="bbr", count=1, build=build)).points[0]).flows
        return picoquic.server_argv(flow, tmp_path)

    assert argv("401781f40e04")[-2:] == ["-b", str(tmp_path)] and "-b" not in argv("d199d45be869")


def test_the_binary_log_is_read_once_and_a_failed_read_is_kept(tmp_path, monkeypatch):
    """One binary log per server, read by the build's own picolog_t into cc.csv and removed;
    several, or a reader that fails, leave the log in place and a line saying why."""
    from bbrlab.schema import picoquic_builds

    (flow,) = build_plan(spec.build(raw(cc="bbr", count=1, build="401781f40e04")).points[0]).flows
    reader = tmp_path / "picolog_t"
    reader.write_text('#!/bin/sh\n[ "$1 $2" = "-f csv" ] || exit 9\n'
                      'case "$3" in *bad*) echo "cannot parse $3" >&2; exit 3;; esac\necho "time, cc_state"\n')
    reader.chmod(0o755)
    monkeypatch.setattr(picoquic_builds, "log_reader", lambda name: str(reader))
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.server.log").write_bytes(b"\0")
    assert picoquic._read_binlog(flow, logs) is None
    assert (logs / picoquic_builds.CC_LOG).read_text() == "time, cc_state\n" and not (logs / "a.server.log").exists()
    (logs / picoquic_builds.CC_LOG).unlink()
    (logs / "bad.server.log").write_bytes(b"\0")
    assert picoquic._read_binlog(flow, logs) == "exit 3 reading bad.server.log: cannot parse " + str(logs / "bad.server.log")
    assert (logs / "bad.server.log").exists() and not (logs / picoquic_builds.CC_LOG).exists()
    (logs / "c.server.log").write_bytes(b"\0")
    assert picoquic._read_binlog(flow, logs) == ("expected the server's one binary log, found 2: "
                                                 "bad.server.log c.server.log")
    # the analysis reports a failed read as the run's error
    text = f"clock 1000.5 2.5\n{picoquic_builds.LOG_READ_FAILED} exit 3 reading bad.server.log: x\n"
    with pytest.raises(ParseError, match=re.escape("flow f1: the CC's states: picolog_t failed: exit 3")):
        quic_flows._with_states(None, flow, tmp_path, text)


def test_the_what_if_build_proves_it_is_not_the_published_fix(tmp_path):
    """The fix with its threshold raised is a build of the same commit: only the version its
    build suffixes tells the two apart, in the performance log and in the start line."""
    from bbrlab.schema import picoquic_builds

    point = spec.build(raw(cc="bbr", count=1, build="6fc1ff2dedd9-minrtt25ms")).points[0]
    point = replace(point, sampling=replace(point.sampling, interval=0.02, iperf_interval=0.25, startup=0.0))
    (flow,) = build_plan(point).flows
    (tmp_path / "picoquic-f1").mkdir()
    (tmp_path / "picoquic-f1" / "abc.server.qlog").write_text(qlog(EVENTS))
    (tmp_path / "picoquic-f1-client.txt").write_text((FIXTURES / "client.txt").read_text())
    server = tmp_path / "picoquic-f1-server.txt"
    server.write_text("Starting Picoquic server (v1.1.25.2-minrtt25ms) on port 5201, server name = ::, just_once = 0, "
                      "do_retry = 0\nclock 1000.5 2.5\ncpu 0.40 0.10\n")
    perf = tmp_path / "picoquic-f1" / "perf.csv"
    perf.write_text(PERF.format(ccalgo=5).replace(", 1.1.52.0,", ", 1.1.25.2-minrtt25ms,"))
    row, series = quic_flows.flow(point, flow, tmp_path, 1000.0, 2.9)[:2]
    assert row["picoquic_version"] == "1.1.25.2-minrtt25ms"
    # its qlog writer, of 2024, never records the CC's state: no phases are made up for it
    assert "bbr_phase" not in series and not picoquic_builds.BUILDS[flow.build].logs_states
    assert picoquic_builds.BUILDS[picoquic_builds.DEFAULT].logs_states
    # with its binary log read by picolog_t (cc.csv), the states are there: STARTUP, then DRAIN at 1.2 s
    (tmp_path / "picoquic-f1" / "cc.csv").write_text(CC_CSV)
    series = quic_flows.flow(point, flow, tmp_path, 1000.0, 2.9)[1]
    assert series["bbr_phase"] == [[3.0, "STARTUP"], [4.2, "DRAIN"], [4.25, "PROBE_BW_DOWN"]]
    perf.unlink()  # no performance log: the version the server printed, suffix and all
    assert quic_flows.flow(point, flow, tmp_path, 1000.0, 2.9)[0]["picoquic_version"] == "1.1.25.2-minrtt25ms"
    server.write_text(server.read_text().replace("-minrtt25ms", ""))  # the fix as published answered
    with pytest.raises(ParseError, match=re.escape("picoquic 1.1.25.2 ran, not build 6fc1ff2dedd9-minrtt25ms")):
        quic_flows.flow(point, flow, tmp_path, 1000.0, 2.9)


def test_the_builds_the_script_makes_are_those_the_schema_names():
    """build-picoquic.sh's entries (commit, and a what-if's suffix and the constant it
    changes) and schema/picoquic_builds.py's names, one for one and in the same order."""
    from bbrlab.schema import picoquic_builds

    script = (Path(__file__).parents[2] / "ansible/roles/picoquic/files/build-picoquic.sh").read_text()
    entries = re.search(r"^builds=\((.*?)^\)", script, re.S | re.M).group(1)
    words = [e.split() for e in re.findall(r'"([^"]*)"', re.sub(r"#[^\n]*", "", entries))]
    assert [w[0][:12] + (f"-{w[4]}" if len(w) == 6 else "") for w in words] == list(picoquic_builds.BUILDS)
    (whatif,) = [w for w in words if len(w) == 6]
    assert whatif[5] == "PICOQUIC_MINRTT_THRESHOLD=25000"  # microseconds, as picoquic_internal.h counts
    assert picoquic_builds.BUILDS[f"{whatif[0][:12]}-{whatif[4]}"].version.endswith(f"-{whatif[4]}")


def test_the_rates_figure_tells_the_builds_apart():
    pytest.importorskip("matplotlib")  # it draws figures
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from bbrlab.output.figures import plots_quic

    def record(cc, build, rates):
        rec = jitter_record(cc, [{"goodput_mbps": r} for r in rates])
        rec["flow_plan"][0]["build"] = build
        rec["params"] = {**rec.get("params", {}), "build": build}
        return rec

    records = [record("bbr", "401781f40e04", [1.0, 2.0]), record("bbr", "6fc1ff2dedd9", [2.0, 2.5]),
               record("bbr", "6fc1ff2dedd9-minrtt25ms", [2.1, 2.6]), record("cubic", "401781f40e04", [2.2, 2.4])]
    fig = plots_quic.quic_rates(plt, None, None, records)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["picoquic bbr (BBRv3),\n1.1.25.1 of 2024-09-27", "picoquic bbr (BBRv3),\n1.1.25.2 of 2024-10-12",
                      "picoquic bbr (BBRv3),\n1.1.25.2-minrtt25ms of 2024-10-12",
                      "picoquic cubic,\n1.1.25.1 of 2024-09-27"]
    lines = fig.axes[0].get_lines()
    assert lines[0].get_color() != lines[1].get_color() and lines[1].get_linestyle() == "--"
    assert lines[2].get_linestyle() == ":" and lines[2].get_marker() == "D"  # the what-if, apart from the fix
    fig.canvas.draw()  # the legend beside the panel, inside the figure, over no connection's rate
    legend = fig.axes[0].get_legend().get_window_extent()
    assert legend.x0 > fig.axes[0].get_window_extent().x1 and legend.x1 <= fig.bbox.x1
    plt.close(fig)


def test_the_preflight_names_a_missing_build_and_what_its_build_said(monkeypatch, tmp_path):
    from bbrlab.emulation import preflight
    from bbrlab.schema import picoquic_builds

    installed = {"picoquicdemo", "/usr/local/lib/picoquic/6fc1ff2dedd9/picoquicdemo"}
    monkeypatch.setattr(preflight.shutil, "which", lambda name: name if name in installed else None)
    (tmp_path / "share" / "picoquic").mkdir(parents=True)
    (tmp_path / "share" / "picoquic" / "build.txt").write_text(
        "picoquic d199d45be869 401781f40e04 6fc1ff2dedd9 script 0\nd199d45be869 built\n"
        "401781f40e04 failed: no route to github.com\n6fc1ff2dedd9 built\n")
    monkeypatch.setattr(picoquic_builds, "PREFIX", str(tmp_path))
    installed = {"picoquicdemo", f"{tmp_path}/lib/picoquic/6fc1ff2dedd9/picoquicdemo"}
    assert preflight.quic_problems({None, "6fc1ff2dedd9"}) == [] and preflight.quic_problems(set()) == []
    (problem,) = preflight.quic_problems({None, "401781f40e04"})
    assert problem.startswith("picoquic build 401781f40e04 (picoquic 1.1.25.1 of 2024-09-27) is not installed (its "
                              "build said: 401781f40e04 failed: no route to github.com): provisioning builds it")
    installed = set()
    assert preflight.quic_problems({None}) == [preflight.QUIC_HINT]
