"""Parsers against real captured tool output (tests/fixtures, see capture.sh)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bbrlab.errors import ParseError
from bbrlab.analysis.tool_output import parse_iperf3, parse_ping, parse_rate, parse_ss, ping_loss
from bbrlab.analysis.system_output import CpuTimes, cpu_busy_fraction, parse_proc_stat, parse_tc_json, parse_tc_qdiscs

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# ---------------------------------------------------------------- iperf3


def test_iperf3_client_is_sender_with_cwnd_and_rtt():
    result = parse_iperf3(fixture("iperf3_client_bbr.json"))
    assert result.role == "sender"
    assert result.cc == "bbr"
    assert result.start == 1795317514.0
    assert result.duration == pytest.approx(3.000134)
    assert result.bytes_sent == 4100736
    assert result.bytes_received == 3605520
    assert result.retransmits == 172
    assert len(result.intervals) == 3
    first = result.intervals[0]
    assert (first.start, first.end, first.bytes) == (0.0, 1.000079, 1754976)
    assert first.bits_per_second == pytest.approx(14038698.44, rel=1e-9)
    assert first.retransmits == 172
    assert first.snd_cwnd == 28960
    assert first.rtt_ms == pytest.approx(23.659)  # iperf3 reports microseconds


def test_iperf3_cubic_client_reports_cubic():
    result = parse_iperf3(fixture("iperf3_client_cubic.json"))
    assert result.cc == "cubic"
    assert result.retransmits == 118
    assert sum(iv.retransmits for iv in result.intervals) == 118


def test_iperf3_server_is_receiver_without_sender_fields():
    result = parse_iperf3(fixture("iperf3_server_bbr.json"))
    assert result.role == "receiver"
    assert result.cc == "bbr"  # receiver_tcp_congestion only
    assert result.duration == pytest.approx(3.018134)
    assert result.bytes_sent == 0
    assert result.bytes_received == 3605520
    assert result.retransmits is None
    # The server has its own intervals, plus a short tail after the client's 3 s.
    assert len(result.intervals) == 4
    assert result.intervals[-1].bytes == 18824
    assert all(iv.snd_cwnd is None and iv.rtt_ms is None for iv in result.intervals)
    assert sum(iv.bytes for iv in result.intervals) == result.bytes_received


def test_iperf3_error_json_raises_with_iperf3_message():
    with pytest.raises(ParseError, match="unable to connect to server: Connection refused"):
        parse_iperf3(fixture("iperf3_error.json"))


def test_iperf3_truncated_json_names_the_problem():
    text = fixture("iperf3_client_bbr.json")
    with pytest.raises(ParseError, match="not valid JSON"):
        parse_iperf3(text[: len(text) // 2])


def test_iperf3_empty_output():
    with pytest.raises(ParseError, match="empty"):
        parse_iperf3("  \n")


def test_iperf3_missing_key_is_named():
    with pytest.raises(ParseError, match=r"start\.timestamp"):
        parse_iperf3('{"start": {}, "intervals": [], "end": {"sum_sent": '
                     '{"sender": true, "seconds": 1, "bytes": 0}, "sum_received": {"bytes": 0}}}')


def test_iperf3_omitted_intervals_are_dropped():
    text = fixture("iperf3_client_bbr.json").replace('"omitted":\tfalse', '"omitted":\ttrue', 2)
    result = parse_iperf3(text)
    assert len(result.intervals) == 2
    assert result.intervals[0].start == pytest.approx(1.000079)


# ---------------------------------------------------------------- ss


def test_ss_first_block_has_control_and_data_sockets():
    samples = parse_ss(fixture("ss_bbr.txt"))
    first_t = samples[0].t
    assert first_t == pytest.approx(1795317514.069419795)
    block = [s for s in samples if s.t == first_t]
    assert [s.local for s in block] == ["10.99.0.1:50558", "10.99.0.1:50568"]
    data = block[1]
    assert data.peer == "10.99.0.2:5201"
    assert data.cc == "bbr"
    assert (data.cwnd, data.ssthresh) == (11, None)
    assert (data.srtt_ms, data.rttvar_ms, data.min_rtt_ms) == (0.014, 0.006, 0.013)
    assert data.send_rate_bps == 9101714286
    assert data.pacing_rate_bps == 22070233680
    assert data.delivery_rate_bps == 891076920
    assert data.bytes_acked == 38
    assert (data.bytes_retrans, data.retrans_total, data.unacked) == (None, None, None)
    assert data.bbr_bw_bps == 891076864
    assert data.bbr_mrtt_ms == 0.013
    assert (data.bbr_pacing_gain, data.bbr_cwnd_gain) == (2.88672, 2.88672)


def test_ss_cubic_loss_fields():
    samples = parse_ss(fixture("ss_cubic.txt"))
    hit = next(s for s in samples if s.retrans_total == 33)
    assert hit.cc == "cubic"
    assert (hit.cwnd, hit.ssthresh, hit.unacked) == (33, 66, 95)
    assert hit.bytes_retrans == 47784
    assert (hit.srtt_ms, hit.rttvar_ms) == (16.855, 15.089)
    assert hit.bbr_bw_bps is None and hit.bbr_pacing_gain is None


def test_ss_sample_count_and_empty_trailing_blocks():
    samples = parse_ss(fixture("ss_cubic.txt"))
    assert len(samples) == 56
    assert {s.cc for s in samples if s.local == "10.99.0.1:50594"} == {"cubic"}
    last_header = [ln for ln in fixture("ss_cubic.txt").splitlines() if ln.startswith("###")][-1]
    assert samples[-1].t < float(last_header[4:])  # sockets closed before sampling stopped


def test_ss_retrans_total_never_decreases():
    data = [s for s in parse_ss(fixture("ss_bbr.txt")) if s.local == "10.99.0.1:50568"]
    totals = [s.retrans_total or 0 for s in data]
    assert totals == sorted(totals) and totals[-1] == 172  # matches iperf3's count


@pytest.mark.parametrize(
    ("token", "bps"),
    [("643555168bps", 643555168), ("12.3Mbps", 12.3e6), ("9.5Kbps", 9500),
     ("1.2Gbps", 1.2e9), ("5bps/10bps", 5)],
)
def test_rate_units(token, bps):
    assert parse_rate(token) == pytest.approx(bps)


def test_ss_scaled_units_and_unknown_fields():
    text = ("### 10.5\n0 0 10.0.0.1:1 10.0.0.2:2\n\t ts sack bbr newfield:7 rtt:40.5/0.3"
            " cwnd:10 bbr:(bw:9.48Mbps,mrtt:40.2,pacing_gain:1,cwnd_gain:2)"
            " pacing_rate 12.3Mbps delivery_rate 9.5Mbps retrans:0/12 novalue\n")
    (s,) = parse_ss(text)
    assert s.t == 10.5 and s.cc == "bbr"
    assert s.bbr_bw_bps == pytest.approx(9.48e6)
    assert s.pacing_rate_bps == pytest.approx(12.3e6)
    assert s.retrans_total == 12 and s.min_rtt_ms is None


def test_ss_state_column_is_tolerated():
    (s,) = parse_ss("### 1\nESTAB 0 0 10.0.0.1:1 10.0.0.2:2\n\t cubic rtt:1/0.5 cwnd:10\n")
    assert (s.local, s.peer, s.cc) == ("10.0.0.1:1", "10.0.0.2:2", "cubic")


@pytest.mark.parametrize(
    ("text", "message"),
    [("### soon\n", "bad block header"),
     ("0 0 a:1 b:2\n", "before the first"),
     ("### 1\n\t bbr rtt:1/1 cwnd:2\n", "info line without a socket"),
     ("### 1\n0 0 a:1 b:2\n\t bbr rtt:1/1\n", "lacks cc/cwnd/rtt"),
     ("### 1\n0 0 a:1 b:2\n\t bbr rtt:x/1 cwnd:2\n", "bad value for rtt"),
     ("### 1\n0 0 a:1 b:2\n\t bbr rtt:1/1 cwnd:2 send 3Tbps\n", "bad rate")],
)
def test_ss_errors(text, message):
    with pytest.raises(ParseError, match=message):
        parse_ss(text)


# ---------------------------------------------------------------- ping


def test_ping_replies_and_loss():
    samples = parse_ping(fixture("ping_bbr.txt"))
    assert len(samples) == 34  # the summary says 34 transmitted, 34 received
    assert samples[0].t == 1795317514.076875
    assert (samples[0].seq, samples[0].rtt_ms) == (1, 0.077)
    assert (samples[1].seq, samples[1].rtt_ms) == (2, 22.0)
    assert samples[-1].seq == 34
    assert ping_loss(samples, 1, 34) == 0
    assert ping_loss(samples, 1, 40) == 6  # trailing losses are the caller's range
    assert ping_loss([s for s in samples if s.seq % 2], 1, 34) == 17


def test_ping_skips_noise_and_rejects_missing_timestamp():
    text = ("PING 10.0.1.2 (10.0.1.2) 56(84) bytes of data.\n"
            "no answer yet for icmp_seq=1\n"
            "[1700000000.5] From 10.0.1.1 icmp_seq=2 Destination Host Unreachable\n"
            "[1700000000.123456] 64 bytes from 10.0.1.2: icmp_seq=3 ttl=62 time=40.3 ms\n"
            "[1700000000.2] 64 bytes from 10.0.1.2: icmp_seq=3 ttl=62 time=41 ms (DUP!)\n")
    assert [(s.seq, s.rtt_ms) for s in parse_ping(text)] == [(3, 40.3)]
    with pytest.raises(ParseError, match="line 1"):
        parse_ping("64 bytes from 10.0.1.2: icmp_seq=3 ttl=62 time=40.3 ms\n")
    with pytest.raises(ValueError, match="last_seq"):
        ping_loss([], 5, 4)


# ---------------------------------------------------------------- tc


def test_tc_qdisc_samples():
    samples = parse_tc_qdiscs(fixture("tc_bbr.txt"))
    assert len(samples) == 64  # 32 blocks x (htb root + bfifo leaf)
    root, leaf = samples[0], samples[1]
    assert root.t == leaf.t == pytest.approx(1795317514.069412030)
    assert (root.kind, root.handle, root.parent) == ("htb", "1:", "root")
    assert (leaf.kind, leaf.handle, leaf.parent) == ("bfifo", "10:", "1:10")
    assert (leaf.backlog_bytes, leaf.backlog_pkts) == (21196, 3)
    assert (leaf.sent_bytes, leaf.sent_pkts, leaf.drops) == (8606, 17, 0)
    assert (root.overlimits, root.requeues) == (1, 0)
    assert leaf.options == {"limit": 60000}
    assert samples[-1].drops == 8


def test_tc_meta_json():
    qdiscs = parse_tc_json(fixture("tc_meta.json"))
    assert [q["kind"] for q in qdiscs] == ["htb", "bfifo"]
    assert qdiscs[0]["root"] is True and "parent" not in qdiscs[0]


def test_tc_errors():
    with pytest.raises(ParseError, match=r"lacks 'backlog'.*without -s"):
        parse_tc_qdiscs("### 1\n" + fixture("tc_meta.json"))
    with pytest.raises(ParseError, match="not a list"):
        parse_tc_json('{"kind": "htb"}')
    with pytest.raises(ParseError, match="not valid JSON"):
        parse_tc_qdiscs('### 1\n[{"kind":\n')
    assert parse_tc_qdiscs("### 1\n\n### 2\n") == []


# ---------------------------------------------------------------- /proc/stat


def test_proc_stat_and_busy_fraction():
    a = parse_proc_stat(fixture("proc_stat_1.txt"))
    b = parse_proc_stat(fixture("proc_stat_2.txt"))
    assert a == CpuTimes(18849, 0, 9139, 44574, 1345, 0, 356, 133)
    assert b.total - a.total == 1535
    assert cpu_busy_fraction(a, b) == pytest.approx(142 / 1535)
    with pytest.raises(ValueError, match="not later"):
        cpu_busy_fraction(b, b)


def test_proc_stat_errors():
    with pytest.raises(ParseError, match="no 'cpu' line"):
        parse_proc_stat("cpu0 1 2 3 4\n")
    with pytest.raises(ParseError, match="bad cpu line"):
        parse_proc_stat("cpu 1 x 3 4\n")
    assert parse_proc_stat("cpu 1 2 3 4\n").total == 10


def test_proc_stat_reads_one_cpu_by_name():
    text = "cpu  10 0 10 80 0 0 0 0\ncpu0 9 0 1 40 0 0 0 0\ncpu1 1 0 9 40 0 0 0 0\n"
    assert parse_proc_stat(text, "cpu1").system == 9
    assert parse_proc_stat(text).user == 10
