"""Turn the traffic tools' raw output (iperf3, ss, ping) into plain frozen data (the
machine's own, tc, pcap, cyclictest and /proc/stat, in system_output.py).

This module is the "samples" arrow: it knows every quirk of the tools' text
formats so that metrics and plots never see a string. It does no I/O; callers
read files and pass text in. Anything not understood raises ParseError with a
message that names the problem, because a silently half-parsed run is worse
than a failed one.

Formats were checked against real captures in tests/fixtures (iperf3 3.12,
iproute2 6.1 ss/tc, iputils ping); see tests/fixtures/capture.sh.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bbrlab.errors import ParseError

# ---------------------------------------------------------------- short flows (shortflows.py)

SHORTFLOW_FIELDS = {"id": str, "group": int, "class": str, "cc": str, "size": int, "at": (int, float),
                    "completed": bool}


def parse_shortflows(text: str, name: str) -> tuple[list[dict], dict | None]:
    """The sending program's JSON lines: (one record per flow, its summary line or None if it
    was killed before writing one). A bad line raises ParseError naming NAME and its line."""
    records, summary = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            raise ParseError(f"{name}:{number}: not a JSON line: {line[:60]!r}") from None
        if isinstance(doc, dict) and isinstance(doc.get("summary"), dict):
            summary = doc["summary"]
            continue
        if not isinstance(doc, dict):
            raise ParseError(f"{name}:{number}: expected a flow record, got {line[:60]!r}")
        for key, kind in SHORTFLOW_FIELDS.items():
            if not isinstance(doc.get(key), kind) or (kind is int and isinstance(doc.get(key), bool)):
                raise ParseError(f"{name}:{number}: field {key!r} missing or not a {getattr(kind, '__name__', 'number')}")
        if doc["completed"] and not all(isinstance(doc.get(k), (int, float)) for k in ("start", "established", "end")):
            raise ParseError(f"{name}:{number}: a completed flow without start, established and end times")
        records.append(doc)
    return records, summary


# ---------------------------------------------------------------- iperf3


@dataclass(frozen=True)
class Interval:
    """One iperf3 reporting interval (seconds relative to the test start)."""

    start: float
    end: float
    bytes: int
    bits_per_second: float
    retransmits: int | None  # sender side only
    snd_cwnd: int | None  # bytes, from streams[0]; sender side only
    rtt_ms: float | None  # smoothed RTT of streams[0]; sender side only


@dataclass(frozen=True)
class Iperf3Result:
    """The parts of one iperf3 -J report that bbrlab uses."""

    role: str  # "sender" or "receiver", as seen from the process that wrote it
    start: float  # epoch seconds; iperf3 3.12 only gives whole seconds
    cc: str | None
    duration: float  # measured seconds of this side's totals
    intervals: tuple[Interval, ...]
    bytes_sent: int
    bytes_received: int
    retransmits: int | None


def load_json(text: str, what: str) -> Any:
    """json.loads with a ParseError that says which tool's output was broken."""
    if not text.strip():
        raise ParseError(f"{what} output is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"{what} output is not valid JSON (truncated?): {exc}") from exc


def _key(obj: Any, *path: str) -> Any:
    """Walk nested dicts; a missing key is a ParseError naming the full path."""
    for i, name in enumerate(path):
        if not isinstance(obj, dict) or name not in obj:
            raise ParseError(f"iperf3 JSON lacks {'.'.join(path[: i + 1])}")
        obj = obj[name]
    return obj


def _iperf3_role(doc: dict) -> str:
    """Whether this process sent the data: iperf3 marks its own sums "sender"."""
    sender = doc.get("end", {}).get("sum_sent", {}).get("sender")
    if sender is None:
        sums = [iv.get("sum", {}) for iv in doc.get("intervals", [])]
        sender = next((s["sender"] for s in sums if "sender" in s), None)
    if sender is None:
        raise ParseError("iperf3 JSON has no 'sender' flag to tell its role")
    return "sender" if sender else "receiver"


def _iperf3_interval(raw: dict) -> Interval:
    """One intervals[] entry: totals from .sum, cwnd/RTT from the first stream."""
    total = _key(raw, "sum")
    streams = raw.get("streams") or [{}]
    first = streams[0]
    rtt_us = first.get("rtt")
    return Interval(
        start=float(_key(total, "start")),
        end=float(_key(total, "end")),
        bytes=int(_key(total, "bytes")),
        bits_per_second=float(_key(total, "bits_per_second")),
        retransmits=total.get("retransmits"),
        snd_cwnd=first.get("snd_cwnd"),
        rtt_ms=None if rtt_us is None else rtt_us / 1000.0,
    )


def parse_iperf3(text: str) -> Iperf3Result:
    """Parse iperf3 3.12 -J output written by either the client or the server.

    - role: the JSON's own "sender" flag, so -R clients and servers both work.
    - start: start.timestamp.timesecs. iperf3 3.12 has no sub-second start
      time anywhere in its JSON (timesecs is an integer, "time" is to the
      second), so callers that need precision must record wall clock themselves.
    - cc: end.sender_tcp_congestion when present (a client reports the sending
      socket's), else end.receiver_tcp_congestion (a server only knows its own
      socket, which iperf3 sets to the client's -C).
    - duration: seconds of end.sum_sent (sender) or end.sum_received (receiver).
    - intervals: omitted (warm-up) intervals are dropped.
    An "error" key in the JSON raises ParseError carrying iperf3's message.
    """
    doc = load_json(text, "iperf3")
    if not isinstance(doc, dict):
        raise ParseError("iperf3 JSON is not an object")
    if "error" in doc:
        raise ParseError(f"iperf3 reported an error: {doc['error']}")
    role = _iperf3_role(doc)
    end = _key(doc, "end")
    own_sum = _key(end, "sum_sent" if role == "sender" else "sum_received")
    intervals = tuple(
        _iperf3_interval(raw)
        for raw in _key(doc, "intervals")
        if not raw.get("sum", {}).get("omitted", False)
    )
    return Iperf3Result(
        role=role,
        start=float(_key(doc, "start", "timestamp", "timesecs")),
        cc=end.get("sender_tcp_congestion") or end.get("receiver_tcp_congestion"),
        duration=float(_key(own_sum, "seconds")),
        intervals=intervals,
        bytes_sent=int(_key(end, "sum_sent", "bytes")),
        bytes_received=int(_key(end, "sum_received", "bytes")),
        retransmits=end["sum_sent"].get("retransmits"),
    )


# ---------------------------------------------------------------- sampler blocks

def stamped_blocks(text: str, what: str) -> list[tuple[float, list[str]]]:
    """Split sampler output ("### <epoch>" then the tool's lines) into blocks.

    Blank lines are dropped; text before the first header or a header whose
    time is not a number is a ParseError (the sampler, not the tool, is broken).
    """
    blocks: list[tuple[float, list[str]]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        where = f"{what} sampler line {lineno}"
        if line.startswith("###"):
            try:
                blocks.append((float(line.removeprefix("### ")), []))
            except ValueError:
                raise ParseError(f"{where}: bad block header {line!r}") from None
        elif line.strip():
            if not blocks:
                raise ParseError(f"{where}: data before the first '### <time>' header")
            blocks[-1][1].append(line)
    return blocks


# ---------------------------------------------------------------- ss


@dataclass(frozen=True)
class SsSample:
    """tcp_info of one socket at one sampling instant (ss -t -i)."""

    t: float
    local: str  # "ip:port" exactly as ss prints it
    peer: str
    cc: str
    cwnd: int  # packets
    ssthresh: int | None
    srtt_ms: float
    rttvar_ms: float
    min_rtt_ms: float | None  # ss omits minrtt until the kernel has one
    pacing_rate_bps: float | None
    delivery_rate_bps: float | None
    send_rate_bps: float | None
    bytes_acked: int | None
    bytes_retrans: int | None
    retrans_total: int | None
    unacked: int | None
    bbr_bw_bps: float | None
    bbr_mrtt_ms: float | None
    bbr_pacing_gain: float | None
    bbr_cwnd_gain: float | None
    # Reordering the sender detected (tcpi_reord_seen): ss prints reord_seen only when it
    # is not zero, so a sample without it counts none.
    reord_seen: int = 0


# Bare words ss prints before the congestion control name (ss.c, tcp_show_info).
_SS_FLAGS = frozenset({"ts", "sack", "ecn", "ecnseen", "fastopen", "app_limited"})
# Fields whose value is the next whitespace-separated token.
_SS_SPACED = frozenset({"send", "pacing_rate", "delivery_rate"})
_RATE = re.compile(r"^([0-9.]+)([KMG]?)bps$")
_RATE_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}


def parse_rate(token: str) -> float:
    """'12.3Mbps' -> 12.3e6. ss 6.1 prints raw 'bps'; older ones scale to K/M/G."""
    match = _RATE.match(token.split("/")[0])  # "pacing_rate 1bps/2bps": rate/max
    if not match:
        raise ParseError(f"ss: bad rate {token!r}")
    return float(match.group(1)) * _RATE_SCALE[match.group(2)]


def _ss_fields(info: str) -> tuple[str | None, dict[str, str]]:
    """Split an ss info string into (cc name, {field: raw value})."""
    fields: dict[str, str] = {}
    cc: str | None = None
    tokens = iter(info.split())
    for tok in tokens:
        if tok in _SS_SPACED:
            fields[tok] = next(tokens, "")
        elif ":" in tok:
            name, value = tok.split(":", 1)
            fields.setdefault(name, value)
        elif cc is None and tok not in _SS_FLAGS:
            cc = tok
    return cc, fields


def _bbr_fields(raw: str) -> dict[str, str]:
    """'(bw:9.48Mbps,mrtt:40.2,pacing_gain:1,cwnd_gain:2)' -> dict of raw values."""
    pairs = (part.split(":", 1) for part in raw.strip("()").split(",") if ":" in part)
    return {name: value for name, value in pairs}


def _conv(name: str, raw: str, conv: Any) -> Any:
    """conv(raw), with a malformed value reported as a ParseError naming the field."""
    try:
        return conv(raw)
    except ValueError:
        raise ParseError(f"ss: bad value for {name}: {raw!r}") from None


def _opt(fields: dict[str, str], name: str, conv: Any) -> Any:
    """Convert an optional field: None when ss did not print it."""
    return _conv(name, fields[name], conv) if name in fields else None


def _ss_sample(t: float, local: str, peer: str, info: str) -> SsSample:
    """Build one SsSample; cwnd and rtt are required since every TCP socket has them."""
    cc, f = _ss_fields(info)
    if cc is None or "cwnd" not in f or "rtt" not in f:
        raise ParseError(f"ss: socket {local} -> {peer} at {t} lacks cc/cwnd/rtt: {info!r}")
    srtt, _, rttvar = f["rtt"].partition("/")
    # retrans:<now outstanding>/<total>; the total is what experiments compare.
    retrans_total = f["retrans"].partition("/")[2] if "retrans" in f else None
    bbr = _bbr_fields(f.get("bbr", ""))
    return SsSample(
        t=t, local=local, peer=peer, cc=cc,
        cwnd=_conv("cwnd", f["cwnd"], int),
        ssthresh=_opt(f, "ssthresh", int),
        srtt_ms=_conv("rtt", srtt, float),
        rttvar_ms=_conv("rtt", rttvar, float),
        min_rtt_ms=_opt(f, "minrtt", float),
        pacing_rate_bps=_opt(f, "pacing_rate", parse_rate),
        delivery_rate_bps=_opt(f, "delivery_rate", parse_rate),
        send_rate_bps=_opt(f, "send", parse_rate),
        bytes_acked=_opt(f, "bytes_acked", int),
        bytes_retrans=_opt(f, "bytes_retrans", int),
        retrans_total=None if retrans_total is None else _conv("retrans", retrans_total, int),
        unacked=_opt(f, "unacked", int),
        bbr_bw_bps=_opt(bbr, "bw", parse_rate),
        bbr_mrtt_ms=_opt(bbr, "mrtt", float),
        bbr_pacing_gain=_opt(bbr, "pacing_gain", float),
        bbr_cwnd_gain=_opt(bbr, "cwnd_gain", float),
        reord_seen=_opt(f, "reord_seen", int) or 0,
    )


def _ss_sockets(lines: list[str]) -> list[tuple[str, str, str]]:
    """Group ss lines into (local, peer, info) per socket.

    A socket line starts at column 0: "Recv-Q Send-Q local peer" (with
    "state established" ss prints no State column; if a State column is
    present it is skipped). Its info follows on lines starting with whitespace.
    """
    sockets: list[tuple[str, str, list[str]]] = []
    for line in lines:
        if line[:1].isspace():
            if not sockets:
                raise ParseError(f"ss: info line without a socket line: {line.strip()!r}")
            sockets[-1][2].append(line)
            continue
        cols = line.split()
        if cols and not cols[0].isdigit():
            cols = cols[1:]  # a State column (ss run without a state filter)
        if len(cols) < 4 or not (cols[0].isdigit() and cols[1].isdigit()):
            raise ParseError(f"ss: unexpected socket line {line!r}")
        sockets.append((cols[2], cols[3], [" ".join(cols[4:])]))
    return [(local, peer, " ".join(info)) for local, peer, info in sockets]


def parse_ss(text: str) -> list[SsSample]:
    """Parse sampler blocks of `ss -H -t -i -n state established dst <ip>`.

    Returns one SsSample per socket per block, in file order. Empty blocks
    (no socket yet or any more) give nothing. Unknown ss fields are ignored,
    since ss adds fields across versions.
    """
    samples: list[SsSample] = []
    for t, lines in stamped_blocks(text, "ss"):
        for local, peer, info in _ss_sockets(lines):
            samples.append(_ss_sample(t, local, peer, info))
    return samples


# ---------------------------------------------------------------- ping


@dataclass(frozen=True)
class PingSample:
    """One echo reply: receive time (epoch, from ping -D), sequence, RTT."""

    t: float
    seq: int
    rtt_ms: float


_PING_REPLY = re.compile(
    r"^\[(?P<t>\d+(?:\.\d+)?)\] \d+ bytes from \S+: icmp_seq=(?P<seq>\d+)"
    r" .*time=(?P<rtt>[0-9.]+) ms"
)


def data_socket(samples: list) -> list:
    """Of one peer's socket samples (ss's or the BBR sampler's: each has .local and
    .bytes_acked), those of the socket that carried the data: iperf3's control connection
    goes to the same port, and acks next to nothing."""
    if not samples:
        return []
    acked: dict[str, int] = {}
    for s in samples:
        acked[s.local] = max(acked.get(s.local, 0), s.bytes_acked or 0)
    data_local = max(acked, key=acked.get)
    return [s for s in samples if s.local == data_local]


def parse_ping(text: str) -> list[PingSample]:
    """Parse `ping -D -n -i 0.1 <ip>` output into replies.

    Headers, the summary, "no answer yet", errors and duplicate replies (DUP!)
    are skipped; losses are what is missing, see ping_loss(). A reply line
    without the -D timestamp is a ParseError, since it cannot be placed in time.
    """
    samples: list[PingSample] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if "bytes from" not in line or "DUP!" in line:
            continue
        match = _PING_REPLY.match(line)
        if not match:
            raise ParseError(f"ping line {lineno}: reply without -D timestamp or time=: {line!r}")
        samples.append(
            PingSample(float(match["t"]), int(match["seq"]), float(match["rtt"]))
        )
    return samples


def ping_loss(samples: list[PingSample], first_seq: int, last_seq: int) -> int:
    """Number of sequence numbers in [first_seq, last_seq] that got no reply.

    The caller picks the range (e.g. from the summary or the send schedule),
    because trailing losses are invisible in the replies alone. icmp_seq wraps
    at 65536 (1.8 h at 0.1 s): keep runs shorter or split them.
    """
    if last_seq < first_seq:
        raise ValueError(f"last_seq {last_seq} < first_seq {first_seq}")
    seen = {s.seq for s in samples if first_seq <= s.seq <= last_seq}
    return (last_seq - first_seq + 1) - len(seen)
