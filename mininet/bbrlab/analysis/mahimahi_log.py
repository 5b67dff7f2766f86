"""mm-link's uplink log (Mahimahi 0.96, emulation/mahimahi.py) read as the bottleneck's counters.

The log has a header (`# init timestamp: <epoch ms>`, `# queue: droptail [packets=N]`), then
one line per event, in the order mm-link handled them, at millisecond times from the init
timestamp: `T + SIZE` a packet arrived, `T - SIZE DELAY` one left (fully sent), `T # 1504` a
delivery opportunity. mm-link logs no drop: its droptail queue is replayed here with the
same rule (a packet is taken when the queue's bytes and packets stay within the limits),
so every arrival is known to be queued or dropped.

samples() gives the same counters tc gives for a qdisc (system_output.QdiscSample), on a
regular grid, so the bottleneck's queue, what it sent and whether it delivered its rate are
computed as for every other shaper (analyze.py).

The log stamps each departure with the delivery opportunity it was due (mm-link's
`rationalize`), not when the packet left: after a late wake-up the overdue packets leave at
once under their scheduled times. When what left mm-link was captured (its egress TUN,
sampling.link_pcap), on_the_wire() counts what was sent from the capture instead.
"""

from __future__ import annotations

import bisect
import dataclasses
import gzip
import itertools
import json
import re
from collections import deque
from pathlib import Path

from ..emulation.mahimahi_plan import DROPS_FILE, UPLINK_LOG  # noqa: F401 - where the run keeps them
from ..errors import ParseError
from .system_output import QdiscSample

LIMIT = re.compile(r"(bytes|packets)=(\d+)")


def _header(lines: list[str]) -> tuple[int, dict]:
    init, limits = None, {}
    for line in lines:
        if line.startswith("# init timestamp:"):
            init = int(line.split(":", 1)[1])
        elif line.startswith("# queue:"):
            limits = {k: int(v) for k, v in LIMIT.findall(line)}
    if init is None:
        raise ParseError("mm-link log: no '# init timestamp' line (not an mm-link log?)")
    return init, limits


def read(path: Path) -> str:
    with gzip.open(path, "rt", errors="replace") as fh:
        return fh.read()


def samples(text: str, interval: float, handle: str) -> list[QdiscSample]:
    """The uplink queue's counters every INTERVAL seconds (epoch times), as a qdisc's."""
    lines = text.splitlines()
    head = [line for line in lines[:20] if line.startswith("#")]
    init, limits = _header(head)
    max_bytes, max_pkts = limits.get("bytes"), limits.get("packets")
    step = max(1, round(interval * 1000))
    queue: deque[int] = deque()
    qbytes = drops = sent_bytes = sent_pkts = 0
    out: list[QdiscSample] = []
    next_t = None

    def emit(upto: int) -> None:
        nonlocal next_t
        while next_t is not None and next_t <= upto:
            out.append(QdiscSample(t=(init + next_t) / 1000, kind="mahimahi", handle=handle, parent="root",
                                   backlog_bytes=qbytes, backlog_pkts=len(queue), drops=drops,
                                   sent_bytes=sent_bytes, sent_pkts=sent_pkts, overlimits=0, requeues=0,
                                   options=dict(limits)))
            next_t += step

    for n, line in enumerate(lines, 1):
        if not line or line[0] == "#":
            continue
        parts = line.split()
        try:
            t, kind, size = int(parts[0]), parts[1], int(parts[2])
        except (IndexError, ValueError):
            if n == len(lines):  # the last line, cut when the chain was stopped
                break
            raise ParseError(f"mm-link log line {n}: cannot read {line[:60]!r}") from None
        if next_t is None:
            next_t = t
        emit(t - 1)  # samples before this event: one at T holds every event up to and at T
        if kind == "+":
            if (max_bytes is None or qbytes + size <= max_bytes) and (max_pkts is None or len(queue) + 1 <= max_pkts):
                queue.append(size)
                qbytes += size
            else:
                drops += 1
        elif kind == "-":
            if queue:
                qbytes -= queue.popleft()
            sent_bytes += size
            sent_pkts += 1
    if next_t is not None:
        emit(next_t)
    return out


def on_the_wire(samples: list[QdiscSample], packets: list[tuple[float, int]]) -> list[QdiscSample]:
    """SAMPLES with what mm-link sent counted from PACKETS, (epoch seconds, IP bytes) as they
    were captured leaving it, not from its log's schedule; the queue stays the log's."""
    packets = sorted(packets)
    times = [t for t, _ in packets]
    sent = [0, *itertools.accumulate(n for _, n in packets)]
    out = []
    for q in samples:
        k = bisect.bisect_right(times, q.t)
        out.append(dataclasses.replace(q, sent_bytes=sent[k], sent_pkts=k))
    return out


def emulator_drops(path: Path) -> int | None:
    """Packets the chain dropped outside its link (PATH: DROPS_FILE, emulation/mahimahi.py):
    in a TUN device's queue or ring while a shell was late, never the loss it was told to
    make nor the droptail's; the senders' own queue (the innermost device's) not counted.
    None without the file (no chain, or a run older than it)."""
    if not path.is_file():
        return None
    try:
        devices = json.loads(path.read_text())
        return sum(d["rx_dropped"] + d["tx_dropped"] + (0 if d["senders"] else d["qdisc_drops"]) for d in devices)
    except (ValueError, KeyError, TypeError) as e:
        raise ParseError(f"{path.name}: not the chain's drop counters ({e})") from None
