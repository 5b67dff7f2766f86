"""The short-flow workload's program, started inside the testbed's hosts as iperf3 is.

    python3 shortflows.py sink --port P
    python3 shortflows.py send --schedule FILE --out FILE [--zero EPOCH]

`sink` (one process per receiving host) accepts any number of connections with one
selector: each connection carries an 8-byte length and then that many bytes; when the
last one is in, the sink writes one byte back and closes. `send` (one process per sending
host) opens the schedule's connections at their times (seconds after --zero, wall clock:
every namespace shares it), sets TCP_CONGESTION to the flow's CC before connecting, writes
the length and the bytes without blocking, and records per flow, as one JSON line:
when it was due and when it connected, when its data phase began (the connection established) and ended (the
sink's byte arrived), the bytes TCP had acknowledged, the CC read back from the socket,
and whether it completed. Flows still open at the schedule's deadline are written as
unfinished, never dropped. The last line is a summary with the process's CPU seconds.

Data flows from sender to sink: the sender is the server of a download. The sink closes
first, so TIME_WAIT stays on the sink's side and a sender may bind the same client port
(the block where the testbed's random loss applies) again soon after.

Only the standard library: it runs by path inside any host, without the package.
"""

from __future__ import annotations

import argparse
import collections
import errno
import json
import resource
import selectors
import signal
import socket
import struct
import sys
import time

HEADER = struct.Struct("!Q")
CONFIRM = b"\x01"
CHUNK = 256 * 1024
# struct tcp_info (linux/tcp.h): offsets of the fields read
TCPI_TOTAL_RETRANS, TCPI_BYTES_ACKED = 100, 120
TCP_INFO_LEN = 232


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return round(usage.ru_utime + usage.ru_stime, 4)


def tcp_counters(sock: socket.socket) -> tuple[int | None, int | None]:
    """(bytes acknowledged, segments retransmitted) from TCP_INFO, or (None, None)."""
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
    except OSError:
        return None, None
    if len(info) < TCPI_BYTES_ACKED + 8:
        return None, None
    retrans = struct.unpack_from("I", info, TCPI_TOTAL_RETRANS)[0]
    acked = struct.unpack_from("Q", info, TCPI_BYTES_ACKED)[0]
    return acked, retrans


def _raise_files_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# ---------------------------------------------------------------- sink


class _Incoming:
    __slots__ = ("head", "left")

    def __init__(self):
        self.head = b""
        self.left: int | None = None


def sink(port: int, out=sys.stdout, stop_after: float | None = None) -> dict:
    """Serve until SIGTERM/SIGINT (or STOP_AFTER seconds); returns and prints a summary."""
    _raise_files_limit()
    stopping = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.append(True))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(4096)
    listener.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, None)
    buf = bytearray(CHUNK)
    counts = {"accepted": 0, "completed": 0, "aborted": 0, "bytes": 0}
    until = None if stop_after is None else time.monotonic() + stop_after
    while not stopping and (until is None or time.monotonic() < until):
        for key, _ in sel.select(timeout=0.5):
            if key.data is None:
                _accept(listener, sel, counts)
            else:
                _receive(key.fileobj, key.data, sel, buf, counts)
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    summary = dict(counts, role="sink", cpu_s=cpu_seconds())
    out.write(json.dumps({"summary": summary}) + "\n")
    out.flush()
    return summary


def _accept(listener, sel, counts) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:  # EMFILE and the like: the sender sees the flow fail
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                return
            raise
        conn.setblocking(False)
        sel.register(conn, selectors.EVENT_READ, _Incoming())
        counts["accepted"] += 1


def _finish(conn, sel, counts, key: str) -> None:
    sel.unregister(conn)
    conn.close()
    counts[key] += 1


def _receive(conn, state: _Incoming, sel, buf: bytearray, counts) -> None:
    try:
        n = conn.recv_into(buf)
    except (BlockingIOError, InterruptedError):
        return
    except OSError:
        _finish(conn, sel, counts, "aborted")
        return
    if n == 0:
        _finish(conn, sel, counts, "aborted")
        return
    data = memoryview(buf)[:n]
    if state.left is None:
        need = HEADER.size - len(state.head)
        state.head += bytes(data[:need])
        data = data[need:]
        if len(state.head) < HEADER.size:
            return
        state.left = HEADER.unpack(state.head)[0]
    state.left -= len(data)
    counts["bytes"] += len(data)
    if state.left <= 0:
        try:
            conn.send(CONFIRM)
        except OSError:
            _finish(conn, sel, counts, "aborted")
            return
        _finish(conn, sel, counts, "completed")


# ---------------------------------------------------------------- sender


class _Flow:
    __slots__ = ("spec", "sock", "record", "sent", "total", "header")

    def __init__(self, spec: dict):
        self.spec = spec
        self.sock: socket.socket | None = None
        self.sent = 0
        self.total = HEADER.size + int(spec["size"])
        self.header = HEADER.pack(int(spec["size"]))
        self.record = {"id": spec["id"], "group": spec.get("group", 0), "class": spec.get("class", ""),
                       "cc": spec["cc"], "size": int(spec["size"]), "at": spec["at"], "due": None, "cc_set": None,
                       "start": None, "established": None, "end": None, "bytes_acked": None,
                       "retrans": None, "completed": False, "error": None}


def _connect(flow: _Flow, dst: str, port: int, block: tuple[int, int] | None) -> socket.socket:
    """A socket with the flow's CC, connecting from its client port (or the next free one of
    the port BLOCK (first, size): an earlier flow's connection may still hold it)."""
    cport = int(flow.spec.get("cport") or 0)
    tries = 16 if cport and block else 1
    for k in range(tries):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, flow.spec["cc"].encode())
            if cport:
                here = cport if not block else block[0] + (cport - block[0] + k) % block[1]
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("0.0.0.0", here))
            sock.setblocking(False)
            code = sock.connect_ex((dst, port))
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EADDRINUSE and k + 1 < tries:
                continue
            raise
        if code in (0, errno.EINPROGRESS):
            return sock
        sock.close()
        if code not in (errno.EADDRNOTAVAIL, errno.EADDRINUSE) or k + 1 == tries:
            raise OSError(code, errno.errorcode.get(code, str(code)))
    raise OSError(errno.EADDRNOTAVAIL, "no free client port")


def _open(flow: _Flow, dst: str, port: int, sel, block: tuple[int, int] | None = None) -> None:
    flow.record["start"] = time.time()
    try:
        flow.sock = _connect(flow, dst, port, block)
    except OSError as exc:
        _close(flow, sel, error=exc.strerror or str(exc))
        return
    sel.register(flow.sock, selectors.EVENT_WRITE, flow)


def _counters(flow: _Flow) -> None:
    acked, flow.record["retrans"] = tcp_counters(flow.sock)
    # the SYN takes one sequence number, the length header 8 bytes: payload only
    flow.record["bytes_acked"] = None if acked is None else max(0, acked - 1 - HEADER.size)


def _close(flow: _Flow, sel, error: str | None = None, completed: bool = False) -> None:
    """Close FLOW's socket (its counters read first, unless read at its completion)."""
    sock = flow.sock
    if sock is not None:
        if flow.record["end"] is None:
            _counters(flow)
        try:
            sel.unregister(sock)
        except (KeyError, ValueError):
            pass
        sock.close()
        flow.sock = None
    flow.record["completed"] = completed
    flow.record["error"] = None if completed else error


def _writable(flow: _Flow, sel, zeros: memoryview) -> None:
    sock = flow.sock
    if flow.record["established"] is None:
        code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if code:
            _close(flow, sel, error=errno.errorcode.get(code, str(code)))
            return
        flow.record["established"] = time.time()
        flow.record["cc_set"] = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()
    try:
        while flow.sent < flow.total:
            if flow.sent < HEADER.size:
                piece = flow.header[flow.sent:] + bytes(zeros[:min(CHUNK, flow.total) - HEADER.size])  # once a flow
            else:
                piece = zeros[:min(CHUNK, flow.total - flow.sent)]
            n = sock.send(piece)
            flow.sent += n
            if n < len(piece):
                return
    except (BlockingIOError, InterruptedError):
        return
    except OSError as exc:
        _close(flow, sel, error=exc.strerror or str(exc))
        return
    sel.modify(sock, selectors.EVENT_READ, flow)


def _readable(flow: _Flow, sel) -> None:
    """The sink's byte ends the flow; the sender then waits for the sink's close, so the
    sink closes first and keeps the TIME_WAIT (the client port is free again at once)."""
    try:
        data = flow.sock.recv(16)
    except (BlockingIOError, InterruptedError):
        return
    except OSError as exc:
        _close(flow, sel, error=exc.strerror or str(exc), completed=flow.record["end"] is not None)
        return
    if not data:  # the sink closed: after its confirmation, or without it
        _close(flow, sel, error="closed before the sink confirmed", completed=flow.record["end"] is not None)
    elif data[:1] == CONFIRM and flow.record["end"] is None:
        flow.record["end"] = time.time()
        _counters(flow)


def send(schedule: dict, out, zero: float | None = None) -> dict:
    """Run SCHEDULE's flows (see workload.py for its fields); one JSON line per flow to OUT."""
    _raise_files_limit()
    zero = time.time() if zero is None else zero
    stopping = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.append(True))
    dst, port = schedule["dst"], int(schedule["port"])
    sequential, gap = bool(schedule.get("sequential")), float(schedule.get("gap", 0.0))
    deadline = zero + float(schedule["deadline"])
    block = tuple(schedule["ports"]) if schedule.get("ports") else None
    pending = collections.deque(sorted((_Flow(f) for f in schedule["flows"]), key=lambda f: f.spec["at"]))
    sel = selectors.DefaultSelector()
    zeros = memoryview(bytes(CHUNK))
    opened: list[_Flow] = []
    lateness: list[float] = []
    next_at = zero + pending[0].spec["at"] if pending else deadline
    while (pending or sel.get_map()) and not stopping:
        now = time.time()
        if now >= deadline:
            break
        while pending and now >= next_at and not (sequential and sel.get_map()):
            flow = pending.popleft()
            opened.append(flow)
            # when it was due (a sequential flow: the gap after the previous one's end)
            flow.record["due"] = round(next_at - zero, 6)
            _open(flow, dst, port, sel, block)
            lateness.append(flow.record["start"] - next_at)
            if sequential:
                next_at = float("inf")  # set when this one ends
            elif pending:
                next_at = zero + pending[0].spec["at"]
        timeout = min(deadline, next_at) - time.time()
        for key, events in sel.select(timeout=max(0.0, min(timeout, 1.0))):
            if events & selectors.EVENT_WRITE:
                _writable(key.data, sel, zeros)
            elif events & selectors.EVENT_READ:
                _readable(key.data, sel)
        if sequential and pending and not sel.get_map() and next_at == float("inf"):
            next_at = time.time() + gap
    unfinished = [f for f in opened if f.sock is not None and f.record["end"] is None]
    for flow in opened:
        if flow.sock is not None:  # confirmed but not yet closed by the sink: complete
            _close(flow, sel, error="open at the deadline", completed=flow.record["end"] is not None)
    for flow in pending:
        flow.record["error"] = "not started before the deadline"
    for flow in opened + list(pending):
        out.write(json.dumps(flow.record, separators=(",", ":")) + "\n")
    late = sorted(lateness)
    summary = {"role": "send", "flows": len(opened) + len(pending), "started": len(opened),
               "completed": sum(f.record["completed"] for f in opened), "unfinished": len(unfinished),
               "not_started": len(pending), "cpu_s": cpu_seconds(),
               "late_p50_ms": round(1e3 * late[len(late) // 2], 3) if late else None,
               "late_p99_ms": round(1e3 * late[min(len(late) - 1, int(0.99 * len(late)))], 3) if late else None,
               "late_max_ms": round(1e3 * late[-1], 3) if late else None}
    out.write(json.dumps({"summary": summary}) + "\n")
    out.flush()
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shortflows", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="role", required=True)
    s = sub.add_parser("sink", help="accept connections, read each to its length, confirm with one byte")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--stop-after", type=float, default=None, help="seconds (default: until SIGTERM)")
    c = sub.add_parser("send", help="open the schedule's connections on time and record each")
    c.add_argument("--schedule", required=True, help="the schedule's JSON file (workload.py writes it)")
    c.add_argument("--out", required=True, help="where the JSON lines go")
    c.add_argument("--zero", type=float, default=None, help="time zero, epoch seconds (default: now)")
    args = parser.parse_args(argv)
    if args.role == "sink":
        sink(args.port, stop_after=args.stop_after)
        return 0
    with open(args.schedule) as f:
        schedule = json.load(f)
    with open(args.out, "w") as out:
        send(schedule, out, args.zero)
    return 0


if __name__ == "__main__":
    sys.exit(main())
