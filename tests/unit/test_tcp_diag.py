"""The socket sampler (traffic/tcp_diag.py): tcp_bbr_info decoded by its length (v1's 20
bytes, v3's 52 as the BBRv3 patch's inet_diag.h lays them out), tcp_info by its uapi layout, a
sock_diag answer turned into a record and read back as the sample ss would have printed, one
sampler per host with a kernel TCP flow; and the program asking the kernel about a real
connection over loopback, checked against ss's own view of it."""

import json
import re
from dataclasses import replace
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bbrlab.emulation.topo import FlowPlan, Plan
from bbrlab.errors import ParseError
from bbrlab.traffic import sampling
from bbrlab.analysis import tcp_diag_output
from bbrlab.analysis.tool_output import parse_ss
from bbrlab.traffic import tcp_diag

MBIT_BYTES = 125_000  # 1 Mbit/s in bytes/s, the kernel's unit for rates


def v1_info(bw_bytes=1_250_000, min_rtt_us=40_000, pacing_gain=320, cwnd_gain=512) -> bytes:
    """struct tcp_bbr_info of Linux 6.1/6.12: five u32s."""
    return struct.pack("=IIIII", bw_bytes & 0xFFFFFFFF, bw_bytes >> 32, min_rtt_us, pacing_gain, cwnd_gain)


def v3_info(bw_bytes=1_250_000, bw_hi=1_300_000, bw_lo=0xFFFFFFFFFFFFFFFF, mode=2, phase=4, version=3,
            inflight_lo=0xFFFFFFFF, inflight_hi=70, extra_acked=3) -> bytes:
    """v3's struct (the patch's inet_diag.h): v1's five u32s, bw_hi_lsb/msb, bw_lo_lsb/msb,
    u8 mode, phase, unused1, version, then u32 inflight_lo, inflight_hi, extra_acked."""
    return (v1_info(bw_bytes, 20_000, 320, 512)
            + struct.pack("=IIII", bw_hi & 0xFFFFFFFF, bw_hi >> 32, bw_lo & 0xFFFFFFFF, bw_lo >> 32)
            + struct.pack("=BBBB", mode, phase, 0, version)
            + struct.pack("=III", inflight_lo, inflight_hi, extra_acked))


def test_a_v1_struct_gives_the_four_fields_in_bits_us_and_ratios():
    info = tcp_diag.decode_bbr_info(v1_info(bw_bytes=10 * MBIT_BYTES + (1 << 32)))
    assert info == {"version": 1, "bw_bps": (10 * MBIT_BYTES + (1 << 32)) * 8, "min_rtt_us": 40_000,
                    "pacing_gain": 1.25, "cwnd_gain": 2.0}
    startup = tcp_diag.decode_bbr_info(v1_info(pacing_gain=739, cwnd_gain=739))  # high_gain, 2/ln 2
    assert startup["pacing_gain"] == pytest.approx(2.887, abs=1e-3)


def test_a_v3_struct_adds_bounds_mode_phase_and_version():
    data = v3_info()
    assert len(data) == 52
    info = tcp_diag.decode_bbr_info(data)
    assert info["version"] == 3 and info["bw_bps"] == 10_000_000 and info["min_rtt_us"] == 20_000
    assert info["bw_hi_bps"] == 10_400_000 and info["bw_lo_bps"] is None  # ~0: no lower bound yet
    assert info["inflight_hi_pkts"] == 70 and info["inflight_lo_pkts"] is None and info["extra_acked_pkts"] == 3
    assert (info["mode"], info["phase"]) == ("PROBE_BW", "PROBE_BW_UP")
    cut = tcp_diag.decode_bbr_info(v3_info(bw_lo=(1 << 32) + 5, inflight_hi=0xFFFFFFFF, mode=3, phase=3))
    assert cut["bw_lo_bps"] == ((1 << 32) + 5) * 8 and cut["inflight_hi_pkts"] is None
    assert (cut["mode"], cut["phase"]) == ("PROBE_RTT", "PROBE_RTT")
    assert tcp_diag.decode_bbr_info(v3_info(phase=9))["phase"] == "UNKNOWN_9"
    assert tcp_diag.decode_bbr_info(data + bytes(8))["inflight_hi_pkts"] == 70  # fields appended later: unread


def test_v1_built_against_v3s_header_sends_52_bytes_with_a_zero_tail_and_reads_as_v1():
    zero_tail = v1_info() + bytes(32)  # bbr_get_info: memset(&info->bbr, 0, sizeof(info->bbr)), 5 fields set
    assert tcp_diag.decode_bbr_info(zero_tail) == tcp_diag.decode_bbr_info(v1_info())


def test_a_struct_shorter_than_v1_is_refused():
    with pytest.raises(ValueError, match="16 bytes"):
        tcp_diag.decode_bbr_info(bytes(16))


def attr(kind: int, payload: bytes) -> bytes:
    padded = payload + bytes(-len(payload) % 4)
    return struct.pack("=HH", 4 + len(payload), kind) + padded


def diag_message(bbr: bytes | None, cc: bytes = b"bbr") -> bytes:
    """An inet_diag_msg for 10.0.1.1:40000 -> 10.0.3.2:5201 with tcp_info, the CC's name and its info."""
    sockid = (struct.pack("!HH", 40000, 5201) + socket.inet_aton("10.0.1.1") + bytes(12)
              + socket.inet_aton("10.0.3.2") + bytes(12) + struct.pack("=I", 0) + bytes(8))
    head = struct.pack("=BBBB", socket.AF_INET, 1, 0, 0) + sockid + struct.pack("=IIIII", 0, 0, 0, 0, 77)
    info = bytearray(232)
    info[7] = 1  # tcpi_delivery_rate_app_limited
    for fmt, offset, value in (("I", 16, 1448), ("I", 24, 30), ("I", 68, 41_500), ("I", 72, 2_250),
                               ("I", 76, 0x7FFFFFFF), ("I", 80, 36), ("I", 100, 7), ("Q", 104, 1_312_500),
                               ("Q", 120, 123_456_789), ("I", 148, 40_000), ("Q", 160, 1_250_000),
                               ("Q", 208, 10_136), ("I", 220, 2)):
        struct.pack_into("=" + fmt, info, offset, value)  # mss, unacked, rtt, rttvar, ssthresh (infinite), ...
    body = attr(2, bytes(info)) + attr(4, cc + b"\0")
    return head + body + (attr(16, bbr) if bbr is not None else b"")


def test_a_socket_of_the_dump_becomes_one_record():
    rec = tcp_diag.record(diag_message(v3_info()), 1000.25)
    assert rec["local"] == "10.0.1.1:40000" and rec["peer"] == "10.0.3.2:5201" and rec["t"] == 1000.25
    assert (rec["cc"], rec["cwnd"], rec["srtt_us"], rec["bytes_acked"]) == ("bbr", 36, 41_500, 123_456_789)
    assert (rec["mss"], rec["unacked"], rec["rttvar_us"], rec["min_rtt_us"], rec["total_retrans"]) == (
        1448, 30, 2_250, 40_000, 7)
    assert (rec["pacing_rate"], rec["delivery_rate"], rec["bytes_retrans"], rec["reord_seen"]) == (
        1_312_500, 1_250_000, 10_136, 2)
    assert rec["app_limited"] is True and rec["ssthresh"] == 0x7FFFFFFF
    assert rec["bbr"]["phase"] == "PROBE_BW_UP" and bytes.fromhex(rec["bbr_raw"]) == v3_info()
    cubic = tcp_diag.record(diag_message(None, b"cubic"), 1000.25)
    assert cubic["cc"] == "cubic" and cubic["bbr"] is None and cubic["bbr_raw"] is None
    json.dumps(rec)  # a JSON line as it stands


def test_a_record_reads_back_as_the_sample_ss_would_have_printed():
    rec = json.loads(json.dumps(tcp_diag.record(diag_message(v1_info()), 1000.25)))
    (got,) = tcp_diag_output.parse_tcp_diag(json.dumps(rec) + "\n", "tcp-snd1.jsonl")
    # the same socket as `ss -tin` prints it (ss.c's units and its rules for what it shows)
    (want,) = parse_ss("### 1000.25\n0 0 10.0.1.1:40000 10.0.3.2:5201\n\t bbr wscale:7,7 rto:244 "
                       "rtt:41.5/2.25 mss:1448 cwnd:36 bytes_acked:123456789 bytes_retrans:10136 "
                       "retrans:0/7 reord_seen:2 bbr:(bw:10Mbps,mrtt:40,pacing_gain:1.25,cwnd_gain:2) "
                       "send 10.0495Mbps pacing_rate 10.5Mbps delivery_rate 10Mbps unacked:30 minrtt:40\n")
    assert got == replace(want, send_rate_bps=pytest.approx(want.send_rate_bps, rel=1e-4))
    assert got.ssthresh is None  # infinite: ss shows none
    unset = dict(rec, pacing_rate=0xFFFFFFFFFFFFFFFF, min_rtt_us=0xFFFFFFFF, delivery_rate=0, ssthresh=20, bbr=None)
    (bare,) = tcp_diag_output.parse_tcp_diag(json.dumps(unset) + "\n", "x")
    assert (bare.pacing_rate_bps, bare.min_rtt_ms, bare.delivery_rate_bps, bare.ssthresh, bare.bbr_bw_bps) == (
        None, None, None, 20, None)


@pytest.mark.parametrize("change, message", [
    ({"cwnd": None}, "tcp-snd1.jsonl:1: field 'cwnd' missing"),
    ({"cc": 5}, "field 'cc' missing or not a str"),
    ({"bbr": [1]}, "'bbr' is neither null nor"),
])
def test_a_bad_record_is_one_error_naming_its_line(change, message):
    rec = dict(tcp_diag.record(diag_message(v1_info()), 1.0), **change)
    with pytest.raises(ParseError, match=re.escape(message)):
        tcp_diag_output.parse_tcp_diag(json.dumps(rec) + "\n", "tcp-snd1.jsonl")


def test_a_shorter_tcp_info_leaves_the_fields_beyond_it_unset():
    short = tcp_diag.decode_tcp_info(bytes(104))  # up to tcpi_total_retrans
    assert short["cwnd"] == 0 and short["pacing_rate"] is None and short["reord_seen"] is None


def test_every_host_that_sends_a_kernel_tcp_flow_is_watched_for_those_flows_only():
    def flow(fid, cc, sender, dst, port):
        return FlowPlan(fid, 0, cc, sender, "rcv1", dst, port, 0.0, 10.0, None)

    def plan_of(flows):
        return Plan(hosts=(), links=(), routes={}, sysctls={}, flows=flows, events=(), bottleneck=None)
    plan = plan_of((flow("f1", "bbr", "snd1", "10.0.3.2", 5201), flow("f2", "cubic", "snd1", "10.0.3.2", 5202),
                    flow("f3", "bbr3", "snd2", "10.0.3.2", 5203), flow("f4", "cubic", "snd3", "10.0.4.2", 5204),
                    replace(flow("f5", "bbr", "snd4", "10.0.3.2", 5205), tool="picoquic")))
    # not snd4: picoquic's BBR is no kernel socket
    assert sampling.socket_targets(plan) == {"snd1": ["10.0.3.2:5201", "10.0.3.2:5202"], "snd2": ["10.0.3.2:5203"],
                                             "snd3": ["10.0.4.2:5204"]}
    assert sampling.socket_targets(plan_of(plan.flows[4:])) == {}  # QUIC only


# ---------------------------------------------------------------- live, over this host's loopback

def bbr_connection():
    """A loopback connection under bbr with data in flight: (client, server port), or a skip."""
    client = socket.socket()
    try:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"bbr")
    except OSError as exc:
        client.close()
        pytest.skip(f"this host's kernel has no tcp_bbr ({exc}; try `modprobe tcp_bbr` as root)")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def drain():
        conn, _ = server.accept()
        with conn:
            while conn.recv(1 << 16):
                pass
    threading.Thread(target=drain, daemon=True).start()
    client.connect(server.getsockname())
    for _ in range(100):
        client.sendall(bytes(1 << 16))
    return client, server


def test_live_the_sampler_decodes_a_v1_connection_on_loopback(tmp_path):
    client, server = bbr_connection()
    peer = "127.0.0.1:%d" % server.getsockname()[1]
    program = tcp_diag.__file__
    try:
        once = subprocess.run([sys.executable, program, "--peer", peer, "--once"], capture_output=True,
                              text=True, timeout=30)
        assert once.returncode == 0, once.stderr
        (rec,) = [json.loads(line) for line in once.stdout.splitlines()]
        print(json.dumps(rec))  # shown with pytest -s
        assert rec["peer"] == peer and rec["cc"] == "bbr" and rec["cwnd"] > 0 and rec["bytes_acked"] > 0
        version = rec["bbr"]["version"]
        assert version in (1, 3) and rec["bbr"]["bw_bps"] > 0 and rec["bbr"]["min_rtt_us"] > 0
        raw = bytes.fromhex(rec["bbr_raw"])
        if version == 1:  # a stock kernel's 20 bytes, or 52 with a zero tail beside BBRv3
            assert (len(raw) == 20 or (len(raw) == 52 and not any(raw[20:]))) and "phase" not in rec["bbr"]
        # what ss says of the same socket, as the sampler read it: the same MSS and gains, the
        # counters only ever growing between the two looks
        (sample,) = tcp_diag_output.parse_tcp_diag(once.stdout, "once")
        seen = subprocess.run(["ss", "-H", "-t", "-i", "-n", "state", "established", "dst", "127.0.0.1",
                               "dport", "=", f":{server.getsockname()[1]}"], capture_output=True, text=True)
        if seen.returncode == 0 and seen.stdout.strip():
            (ss,) = parse_ss("### 0\n" + seen.stdout)
            assert (ss.cc, ss.bbr_pacing_gain is None) == (sample.cc, sample.bbr_pacing_gain is None)
            assert ss.bytes_acked >= sample.bytes_acked and ss.local == sample.local
        # the long-lived form: samples on its interval until SIGTERM, then exits cleanly
        out = tmp_path / "bbr-lo.jsonl"
        proc = subprocess.Popen([sys.executable, program, "--peer", peer, "--interval", "0.05", "--out", str(out)])
        deadline = time.monotonic() + 20
        while (not out.exists() or out.read_text().count("\n") < 3) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
        assert out.read_text().count("\n") >= 3 and out.read_text().endswith("\n")
    finally:
        client.close()
        server.close()


def test_the_program_runs_by_path_without_the_package():
    """Inside a host it runs as a script: it may import the standard library only."""
    imports = [line for line in Path(tcp_diag.__file__).read_text().splitlines() if line.startswith(("import", "from"))]
    assert imports and not [line for line in imports if "bbrlab" in line or line.startswith("from .")]
