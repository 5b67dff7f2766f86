"""picoquic's output, parsed (traffic/picoquic.py writes it): the quicperf client's report
and the server's qlog of one connection.

The qlog (picoquic's loglib/qlog.c, at the commit ansible/roles/picoquic pins) is one JSON
document; its events are [time, category, type, data], TIME in microseconds from the
trace's reference_time, which is picoquic's clock (CLOCK_MONOTONIC in Linux). The server
sends the data, so its qlog holds the sender's view: every 1-RTT packet sent with its
stream frames, every ACK received, and on each change the CC's cwnd, pacing rate, smoothed
and latest RTT, and its state (`congestion_state_updated`: for BBR, its state in the low
byte). Like tool_output.py, this module does no I/O, and a document it cannot read raises
ParseError naming what it lacks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from bbrlab.errors import ParseError

# picoquic's BBRv3 (picoquic/bbr.c, picoquic_bbr_alg_state_t) and BBRv1 (bbr1.c) states
BBR_STATES = ("STARTUP", "DRAIN", "PROBE_BW_DOWN", "PROBE_BW_CRUISE", "PROBE_BW_REFILL", "PROBE_BW_UP",
              "PROBE_RTT", "STARTUP_LONG_RTT", "STARTUP_RESUME")
BBR1_STATES = ("STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT", "STARTUP_LONG_RTT")
STATE_NAMES = {"bbr": BBR_STATES, "bbr1": BBR1_STATES}
# picoquic's congestion_algorithm_number (picoquic_internal.h; c4.c), as its performance log gives it
CC_NUMBERS = {1: "newreno", 2: "cubic", 3: "dcubic", 4: "fast", 5: "bbr", 6: "prague", 7: "bbr1", 8: "c4"}


@dataclass(frozen=True)
class ClientReport:
    """The quicperf client's report, and the wrapper's clock and CPU lines."""

    ok: bool  # the client said "Client exit with code = 0"
    download_bytes: int
    seconds: float  # Connection_duration_sec: from the connection's start to its close
    started: float  # epoch seconds the client was started, and when it ended
    ended: float
    cpu_seconds: float | None  # user + system


@dataclass(frozen=True)
class Qlog:
    """One connection's server qlog, times in seconds on picoquic's (monotonic) clock."""

    reference: float  # seconds: the trace's time zero
    delivered: tuple[tuple[float, int], ...]  # (t, stream bytes newly acknowledged by an ACK received at t)
    metrics: tuple[tuple[float, dict], ...]  # (t, the fields metrics_updated changed)
    # (t, the CC's new state, its low byte); None where they were not recorded
    states: tuple[tuple[float, int], ...] | None
    retransmits: int | None  # picoquic's own count, from its closing message
    mtu: int  # the largest 1-RTT packet sent, bytes


def _number(text: str, label: str, kind=float):
    found = re.search(rf"^{label}:\s*(\S+)\s*$", text, re.M)
    if not found:
        raise ParseError(f"no {label} in the client's report")
    try:
        return kind(found.group(1))
    except ValueError:
        raise ParseError(f"{label}: not a number: {found.group(1)!r}") from None


def parse_client(text: str) -> ClientReport:
    """The client's stdout: quicperf's numbers, `epoch START END` and bash's `times`."""
    epoch = re.search(r"^epoch (\d+\.\d+) (\d+\.\d+)$", text, re.M)
    if not epoch:
        raise ParseError("the client's wrapper wrote no `epoch` line (killed before it ended?)")
    ok = re.search(r"^Client exit with code = 0$", text, re.M) is not None
    times = re.findall(r"^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$", text, re.M)
    cpu = None
    if times:  # the last line of `times`: the children's user and system time
        um, us, sm, ss = times[-1]
        cpu = 60 * int(um) + float(us) + 60 * int(sm) + float(ss)
    if not ok:
        reason = re.findall(r"^Client exit.*$|^.*[Ee]rror.*$", text, re.M)
        raise ParseError(f"the client failed: {reason[-1] if reason else 'no exit line'}")
    return ClientReport(ok=ok, download_bytes=_number(text, "Download_bytes", int),
                        seconds=_number(text, "Connection_duration_sec"), started=float(epoch.group(1)),
                        ended=float(epoch.group(2)), cpu_seconds=cpu)


def parse_server_cpu(text: str) -> float | None:
    """The server's CPU seconds (user + system), as traffic/picoquic.py appends them."""
    found = re.findall(r"^cpu ([\d.]+) ([\d.]+)$", text, re.M)
    return float(found[-1][0]) + float(found[-1][1]) if found else None


def parse_version(text: str) -> str | None:
    """The version picoquicdemo printed when it started: "Starting Picoquic server (v1.1.25.1)
    on port ..." (its server), "Starting Picoquic (v1.1.25.1) connection to ..." (its client)."""
    found = re.search(r"^Starting Picoquic (?:server )?\(v([^)\s]+)\)", text, re.M)
    return found.group(1) if found else None


def parse_clock(text: str) -> float | None:
    """Epoch minus monotonic seconds, as traffic/picoquic.py notes them in the server's file."""
    found = re.findall(r"^clock ([\d.]+) ([\d.]+)$", text, re.M)
    return float(found[-1][0]) - float(found[-1][1]) if found else None


def parse_qlog(text: str, name: str) -> Qlog:
    try:
        doc = json.loads(text)
        trace = doc["traces"][0]
        events = trace["events"]
        reference = float(trace["common_fields"]["reference_time"]) / 1e6
    except json.JSONDecodeError as exc:
        raise ParseError(f"{name}: not a complete qlog ({exc.msg} at character {exc.pos})") from None
    except (KeyError, IndexError, TypeError, ValueError):
        raise ParseError(f"{name}: a qlog without traces[0].events and common_fields.reference_time") from None
    if trace.get("configuration", {}).get("time_units", "us") != "us":
        raise ParseError(f"{name}: time units {trace['configuration']['time_units']!r}, expected us")
    sent: dict[int, int] = {}  # 1-RTT packet number -> stream bytes it carried
    acked: list[list[int]] = []  # the packet numbers acknowledged so far, as sorted disjoint ranges
    delivered, metrics, states = [], [], []
    retransmits, mtu = None, 0
    for event in events:
        if not isinstance(event, list) or len(event) < 4:
            raise ParseError(f"{name}: an event that is not [time, category, type, data]: {str(event)[:80]}")
        t, kind, data = event[0] / 1e6, event[-2], event[-1]
        if kind == "packet_sent" and data.get("packet_type") == "1RTT":
            header = data.get("header", {})
            mtu = max(mtu, header.get("packet_size", 0))
            frames = data.get("frames", ())
            sent[header.get("packet_number")] = sum(f.get("length", 0) for f in frames if f.get("frame_type") == "stream")
        elif kind == "packet_received" and data.get("packet_type") == "1RTT":
            fresh = 0
            for frame in data.get("frames", ()):
                for low, high in frame.get("acked_ranges", ()) if frame.get("frame_type") == "ack" else ():
                    for a, b in _newly_acked(acked, low, high):
                        fresh += sum(sent.get(pn, 0) for pn in range(a, b + 1))
            if fresh:
                delivered.append((t, fresh))
        elif kind == "metrics_updated":
            metrics.append((t, data))
        elif kind == "congestion_state_updated":
            states.append((t, int(data.get("new", 0)) & 0xFF))
        elif kind == "message" and str(data.get("message", "")).startswith("Closed."):
            found = re.search(r"Retrans= (\d+)", data["message"])
            retransmits = int(found.group(1)) if found else None
    if not sent:
        raise ParseError(f"{name}: no 1-RTT packet sent")
    return Qlog(reference=reference, delivered=tuple(delivered), metrics=tuple(metrics), states=tuple(states),
                retransmits=retransmits, mtu=mtu)


def _newly_acked(acked: list[list[int]], low: int, high: int) -> list[tuple[int, int]]:
    """The parts of [LOW, HIGH] not yet in ACKED (sorted, disjoint, inclusive ranges), which
    then covers them too. An ACK frame repeats ranges acknowledged before: only holes left
    by lost packets split ACKED, so it stays short and each packet is counted once."""
    new, cur = [], low
    for a, b in acked:
        if b < cur:
            continue
        if a > high:
            break
        if a > cur:
            new.append((cur, a - 1))
        cur = b + 1
        if cur > high:
            break
    if cur <= high:
        new.append((cur, high))
    if new:
        merged: list[list[int]] = []
        for a, b in sorted(acked + [[low, high]]):
            if merged and a <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        acked[:] = merged
    return new


def parse_cc_csv(text: str, name: str) -> tuple[tuple[float, int], ...]:
    """(t in seconds, the CC's state) at each change of state in picolog_t's CSV of a binary
    log (-f csv: "time, ..., cc_state, ..." per CC update, time in us from its first event)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ParseError(f"{name}: empty (picolog_t read no binary log)")
    names = [n.strip() for n in lines[0].split(",")]
    if "time" not in names or "cc_state" not in names:
        raise ParseError(f"{name}: no time and cc_state columns (not picolog_t's -f csv)")
    at, col = names.index("time"), names.index("cc_state")
    states, last = [], 0  # a connection starts in its first state (0)
    for line in lines[1:]:
        values = [v.strip() for v in line.split(",")]
        try:
            t, state = int(values[at]) / 1e6, int(values[col]) & 0xFF
        except (IndexError, ValueError):
            raise ParseError(f"{name}: a line without a time and a cc_state: {line[:80]}") from None
        if state != last:
            states.append((t, state))
            last = state
    return tuple(states)


def parse_perflog(text: str) -> dict:
    """The server's performance log (-F; picoquic's performance_log.c): a header line of
    column names, then one line per connection. Returns the last connection's columns as
    numbers where they are, with `cc` the name of the CC that ran (from `ccalgo`)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        raise ParseError("the server's performance log has no connection line (it writes one when the connection closes)")
    names = [n.strip() for n in lines[0].split(",")]
    values = [v.strip() for v in lines[-1].split(",")]
    if len(values) != len(names):
        raise ParseError(f"the server's performance log: {len(values)} values under {len(names)} columns")
    row: dict = {}
    for name, value in zip(names, values):
        try:
            row[name] = float(value) if "." in value else int(value)
        except ValueError:
            row[name] = value
    if "ccalgo" not in row:
        raise ParseError("the server's performance log has no ccalgo column")
    row["cc"] = CC_NUMBERS.get(row["ccalgo"], f"algorithm {row['ccalgo']}")
    return row
