"""A host's TCP sockets as the kernel keeps them, asked over netlink (sock_diag) as ss asks:
tcp_info, the CC's name and the CC's own info.

Each sample dumps the established IPv4 TCP sockets of one network namespace
(SOCK_DIAG_BY_FAMILY) through a netlink socket kept open for the run, and gives, per socket
whose peer is one of the flows' address:port, one record (a JSON line in the point's
raw/tcp-<host>.jsonl): the sample's epoch time, the local and peer address:port, the CC's
name, the fields of tcp_info that `ss -tin` prints (cwnd, ssthresh, RTT and its variation,
min RTT, pacing and delivery rate, MSS, unacked, retransmits, bytes acknowledged and
retransmitted, reordering seen), and for a BBR the decoded tcp_bbr_info ("bbr": null for
another CC) with the attribute's bytes in hex (the evidence, should the decoding ever be
doubted). Values are the kernel's own units (us, bytes, bytes/s), unrounded: ss prints rates
to three digits. The testbed samples every sender host from one thread of its own
(sampling.SocketSampler), a socket opened in each host's namespace.

Why not ss: under software virtualization starting a process costs ~0.1 s of CPU (a Python
program's start ~1 s), and ss ran once per flow and sample (measured: 0.4 of a guest CPU for
four flows sampled every 0.5 s, and 2 % of the link's rate). And Debian 12's ss (iproute2 6.1)
knows tcp_bbr_info as BBRv1 wrote it, five u32s; a BBRv3 kernel appends its bounds and state
machine, decoded here.

By hand, inside a host (`bbrlab shell`), it samples that host's namespace:

    python3 tcp_diag.py --peer ADDR:PORT [--peer ...] --interval S [--out FILE] [--once]

SIGTERM ends it after the sample in progress. Only the standard library: it runs by path
without the package.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import struct
import sys
import threading
import time

RAW_NAME = "tcp-{host}.jsonl"  # its output in a point's raw/ directory, one file per sender host


def raw_name(host: str) -> str:
    """The sampler's file of sender HOST in a point's raw/ directory."""
    return RAW_NAME.format(host=host)


NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCP_ESTABLISHED = 1
INET_DIAG_INFO, INET_DIAG_VEGASINFO, INET_DIAG_CONG, INET_DIAG_BBRINFO = 2, 3, 4, 16
# idiag_ext is a u8: BBRINFO (16) has no bit of its own; the kernel answers VEGASINFO's bit
# with whatever info the socket's CC keeps (inet_diag.h: "request as INET_DIAG_VEGASINFO").
EXTENSIONS = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_VEGASINFO - 1)) | (1 << (INET_DIAG_CONG - 1))

NLMSGHDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
DIAG_REQ = struct.Struct("=BBBxI48s")  # inet_diag_req_v2: family, protocol, ext, pad, states, sockid
# inet_diag_msg: family, state, timer, retrans; sockid (sport, dport big-endian; src, dst; if;
# cookie); expires, rqueue, wqueue, uid, inode
DIAG_MSG = struct.Struct("=BBBB2s2s16s16sI8sIIIII")
RTATTR = struct.Struct("=HH")
NLMSGERR = struct.Struct("=i")
# struct tcp_info (uapi linux/tcp.h, as Linux 6.1 and 6.12 send it), field by field: the
# fields this sampler records by their names in the record, "" for those it skips
TCP_INFO = (("state", "B"), ("", "B"), ("", "B"), ("", "B"), ("", "B"), ("", "B"), ("", "B"),
            ("app_limited_bits", "B"), ("", "I"), ("", "I"), ("mss", "I"), ("", "I"), ("unacked", "I"),
            ("", "I"), ("lost", "I"), ("retrans", "I"), ("", "I"), ("", "I"), ("", "I"), ("", "I"),
            ("", "I"), ("", "I"), ("", "I"), ("srtt_us", "I"), ("rttvar_us", "I"), ("ssthresh", "I"),
            ("cwnd", "I"), ("", "I"), ("", "I"), ("", "I"), ("", "I"), ("total_retrans", "I"),
            ("pacing_rate", "Q"), ("", "Q"), ("bytes_acked", "Q"), ("", "Q"), ("", "I"), ("", "I"),
            ("", "I"), ("min_rtt_us", "I"), ("", "I"), ("", "I"), ("delivery_rate", "Q"), ("", "Q"),
            ("", "Q"), ("", "Q"), ("delivered", "I"), ("", "I"), ("bytes_sent", "Q"), ("bytes_retrans", "Q"),
            ("", "I"), ("reord_seen", "I"))


def _tcp_info_layout() -> list[tuple[str, int, str]]:
    offset, layout = 0, []
    for name, kind in TCP_INFO:
        if name:
            layout.append((name, offset, kind))
        offset += struct.calcsize("=" + kind)
    return layout


TCP_INFO_FIELDS = _tcp_info_layout()  # (name, offset, struct code) of each field recorded

# struct tcp_bbr_info (uapi inet_diag.h). v1 (Linux 6.1, 6.12): bw_lo, bw_hi (bytes/s),
# min_rtt (us), pacing_gain, cwnd_gain (<< 8), 20 bytes. v3 (google/bbr v3) appends
# bw_hi_lsb/msb, bw_lo_lsb/msb (bytes/s), u8 mode, phase, unused, version, then
# inflight_lo, inflight_hi, extra_acked (packets), 52 bytes.
BBR_V1 = struct.Struct("=5I")
BBR_V3 = struct.Struct("=9I4B3I")
BBR_UNIT = 256  # the gains' fixed point (BBR_SCALE 8)
U32_UNSET, U64_UNSET = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF  # v3: bound not (or no longer) set
BBR_MODES = ("STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT")  # enum bbr_mode (tcp_bbr.c)
# enum tcp_bbr_phase (v3's inet_diag.h): what get_info reports as bbr_phase, the mode with
# PROBE_BW's cycle (BBR_BW_PROBE_UP/DOWN/CRUISE/REFILL) folded in
BBR_PHASES = ("INVALID", "STARTUP", "DRAIN", "PROBE_RTT", "PROBE_BW_UP", "PROBE_BW_DOWN", "PROBE_BW_CRUISE",
              "PROBE_BW_REFILL")


def _name(names: tuple[str, ...], value: int) -> str:
    return names[value] if value < len(names) else f"UNKNOWN_{value}"


def decode_bbr_info(data: bytes) -> dict:
    """tcp_bbr_info as the kernel sent it, its length telling the layout: 20 bytes or more
    is v1's, 52 or more v3's (a longer one: fields appended later, not read). v1 built
    against v3's header (the testbed kernel's bbr beside bbr3) sends 52 bytes too, the tail
    zeroed (its get_info clears the struct and returns its size): version 0, read as v1.
    Rates in bit/s, min_rtt in us, gains as ratios, inflight bounds and extra_acked in
    packets, an unset bound None, mode and phase by their enum's names."""
    if len(data) < BBR_V1.size:
        raise ValueError(f"tcp_bbr_info of {len(data)} bytes: shorter than v1's {BBR_V1.size}")
    bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain = BBR_V1.unpack_from(data)
    info = {"version": 1, "bw_bps": ((bw_hi << 32) | bw_lo) * 8, "min_rtt_us": min_rtt,
            "pacing_gain": round(pacing_gain / BBR_UNIT, 4), "cwnd_gain": round(cwnd_gain / BBR_UNIT, 4)}
    if len(data) < BBR_V3.size:
        return info
    (hi_lsb, hi_msb, lo_lsb, lo_msb, mode, phase, _, version,
     inflight_lo, inflight_hi, extra_acked) = BBR_V3.unpack_from(data)[5:]
    if version == 0:
        return info
    bw_hi_bytes, bw_lo_bytes = (hi_msb << 32) | hi_lsb, (lo_msb << 32) | lo_lsb
    info.update({
        "version": version, "bw_hi_bps": bw_hi_bytes * 8,
        "bw_lo_bps": None if bw_lo_bytes == U64_UNSET else bw_lo_bytes * 8,
        "inflight_hi_pkts": None if inflight_hi == U32_UNSET else inflight_hi,
        "inflight_lo_pkts": None if inflight_lo == U32_UNSET else inflight_lo,
        "extra_acked_pkts": extra_acked, "mode": _name(BBR_MODES, mode), "phase": _name(BBR_PHASES, phase),
    })
    return info


def dump_request(seq: int) -> bytes:
    body = DIAG_REQ.pack(socket.AF_INET, socket.IPPROTO_TCP, EXTENSIONS, 1 << TCP_ESTABLISHED, bytes(48))
    return NLMSGHDR.pack(NLMSGHDR.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body


def _attributes(data: bytes, offset: int, end: int) -> dict[int, bytes]:
    attrs = {}
    while offset + RTATTR.size <= end:
        length, kind = RTATTR.unpack_from(data, offset)
        if length < RTATTR.size:
            break
        attrs[kind] = data[offset + RTATTR.size:offset + length]
        offset += (length + 3) & ~3
    return attrs


def decode_tcp_info(info: bytes) -> dict:
    """The recorded fields of a tcp_info; a field beyond a shorter struct (an older kernel) is
    None. Rates in bytes/s and times in us, as the kernel keeps them; app_limited is the
    delivery rate's flag (bit 0 of its byte)."""
    out = {}
    for name, offset, kind in TCP_INFO_FIELDS:
        fits = len(info) >= offset + struct.calcsize("=" + kind)
        out[name] = struct.unpack_from("=" + kind, info, offset)[0] if fits else None
    bits = out.pop("app_limited_bits")
    out["app_limited"] = None if bits is None else bool(bits & 1)
    return out


def record(message: bytes, t: float) -> dict:
    """One socket of a dump (an inet_diag_msg and its attributes) as its JSON line's fields."""
    _, _, _, _, sport, dport, src, dst = DIAG_MSG.unpack_from(message)[:8]
    attrs = _attributes(message, DIAG_MSG.size, len(message))
    local = f"{socket.inet_ntoa(src[:4])}:{int.from_bytes(sport, 'big')}"
    peer = f"{socket.inet_ntoa(dst[:4])}:{int.from_bytes(dport, 'big')}"
    cc = attrs.get(INET_DIAG_CONG, b"").split(b"\0", 1)[0].decode() or None
    bbr = attrs.get(INET_DIAG_BBRINFO)
    return {"t": round(t, 6), "local": local, "peer": peer, "cc": cc,
            **decode_tcp_info(attrs.get(INET_DIAG_INFO, b"")),
            "bbr": None if bbr is None else decode_bbr_info(bbr), "bbr_raw": None if bbr is None else bbr.hex()}


def sample(nl: socket.socket, peers: set[str], seq: int) -> list[dict]:
    """Dump the namespace's established IPv4 TCP sockets once; the records of those whose
    peer (address:port) is in PEERS."""
    t = time.time()
    nl.sendto(dump_request(seq), (0, 0))
    found = []
    while True:
        data = nl.recv(1 << 16)
        offset = 0
        while offset + NLMSGHDR.size <= len(data):
            length, kind, _, _, _ = NLMSGHDR.unpack_from(data, offset)
            if kind == NLMSG_DONE:
                return found
            if kind == NLMSG_ERROR:
                errno = -NLMSGERR.unpack_from(data, offset + NLMSGHDR.size)[0]
                raise OSError(errno, f"sock_diag dump refused: errno {errno}")
            rec = record(data[offset + NLMSGHDR.size:offset + length], t)
            if rec["peer"] in peers:
                found.append(rec)
            offset += (length + 3) & ~3


def open_socket() -> socket.socket:
    """A sock_diag netlink socket, in the calling thread's network namespace for its life."""
    return socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG)


def as_lines(records: list[dict]) -> str:
    """RECORDS as the sampler's file keeps them, one JSON line each."""
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)


def run(peers: set[str], interval: float, out, once: bool = False) -> int:
    """Sample every INTERVAL seconds (on a fixed grid: a slow sample does not shift the next
    ones) until SIGTERM or SIGINT; return the number of samples taken."""
    stopping = threading.Event()  # a signal wakes the wait between samples at once
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    taken = 0
    with open_socket() as nl:
        due = time.monotonic()
        while not stopping.is_set():
            out.write(as_lines(sample(nl, peers, taken + 1)))
            out.flush()  # a SIGKILL after a stuck stop loses no finished sample
            taken += 1
            if once:
                break
            due += interval
            stopping.wait(max(0.0, due - time.monotonic()))
    return taken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tcp_diag", description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", action="append", required=True, help="ADDR:PORT of a connection to sample")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    parser.add_argument("--out", default="-", help="where the JSON lines go (default: stdout)")
    parser.add_argument("--once", action="store_true", help="take one sample and exit")
    args = parser.parse_args(argv)
    if args.interval <= 0:
        parser.error("--interval must be above 0")
    if args.out == "-":
        run(set(args.peer), args.interval, sys.stdout, args.once)
    else:
        with open(args.out, "w") as out:
            run(set(args.peer), args.interval, out, args.once)
    return 0


if __name__ == "__main__":
    sys.exit(main())
