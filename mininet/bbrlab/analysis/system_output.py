"""Turn the machine's own raw output (tc -s -j qdisc, tcpdump's pcap, cyclictest, /proc/stat)
into plain frozen data, as tool_output.py does for the traffic tools' output: no I/O, and
ParseError with a message that names the problem for anything not understood.

tc's format was checked against real captures in tests/fixtures (iproute2 6.1; see
tests/fixtures/capture.sh), pcap's against libpcap's files in both byte orders and resolutions.
"""

from __future__ import annotations

import struct
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import Any

from bbrlab.errors import ParseError

from .tool_output import load_json, stamped_blocks


# ---------------------------------------------------------------- tc


@dataclass(frozen=True)
class QdiscSample:
    """Counters of one qdisc at one sampling instant (tc -s -j qdisc show)."""

    t: float
    kind: str
    handle: str
    parent: str  # "root" for the root qdisc, else e.g. "1:10"
    backlog_bytes: int
    backlog_pkts: int  # tc's "qlen"
    drops: int
    sent_bytes: int
    sent_pkts: int
    overlimits: int
    requeues: int
    options: dict
    # the qdisc's own statistics (an AQM's marks, drops and delays; CAKE's per-tin "tins")
    xstats: dict = field(default_factory=dict)


def parse_tc_json(text: str) -> list[dict]:
    """Parse one `tc [-s] -j qdisc show` call: a JSON list of qdisc objects."""
    doc = load_json(text, "tc")
    if not isinstance(doc, list) or not all(isinstance(q, dict) for q in doc):
        raise ParseError("tc JSON is not a list of qdisc objects")
    return doc


# the keys every qdisc's JSON has; the rest are its own statistics (QdiscSample.xstats)
_QDISC_COMMON = {"kind", "handle", "root", "parent", "refcnt", "options", "bytes", "packets", "drops",
                 "overlimits", "requeues", "backlog", "qlen", "offloaded"}


def _qdisc_sample(t: float, raw: dict) -> QdiscSample:
    """One qdisc object; tc 6.1 marks the root with "root": true, no "parent"."""
    def need(name: str) -> Any:
        if name not in raw:
            qdisc = f"{raw.get('kind')} {raw.get('handle')}"
            raise ParseError(f"tc: qdisc {qdisc} lacks {name!r} (tc run without -s?)")
        return raw[name]

    return QdiscSample(
        t=t,
        kind=need("kind"),
        handle=need("handle"),
        parent="root" if raw.get("root") else need("parent"),
        backlog_bytes=int(need("backlog")),
        backlog_pkts=int(need("qlen")),
        drops=int(need("drops")),
        sent_bytes=int(need("bytes")),
        sent_pkts=int(need("packets")),
        overlimits=int(need("overlimits")),
        requeues=int(need("requeues")),
        options=dict(raw.get("options", {})),
        xstats={k: v for k, v in raw.items() if k not in _QDISC_COMMON},
    )


def parse_tc_qdiscs(text: str) -> list[QdiscSample]:
    """Parse sampler blocks of `tc -s -j qdisc show dev <if>`.

    One QdiscSample per qdisc per block. An empty block (tc printed nothing,
    e.g. the device was already gone at teardown) gives no samples.
    """
    samples: list[QdiscSample] = []
    for t, lines in stamped_blocks(text, "tc"):
        if lines:
            samples.extend(_qdisc_sample(t, raw) for raw in parse_tc_json("\n".join(lines)))
    return samples


# ---------------------------------------------------------------- pcap

PCAP_MAGIC = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
              b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}


def parse_pcap_frames(data: bytes) -> list[tuple[float, int]]:
    """(epoch seconds, frame length on the wire) of every packet of a classic pcap file
    (tcpdump -w), in file order. Only the record headers are read: a capture cut short
    by its -s snap length keeps each frame's original length. A file cut off mid-record
    (tcpdump killed) keeps the complete records before the cut."""
    if len(data) < 24:
        raise ParseError("pcap: shorter than its 24-byte file header")
    if data[:4] not in PCAP_MAGIC:
        raise ParseError(f"pcap: unknown magic {data[:4].hex()} (not a tcpdump -w file?)")
    order, unit = PCAP_MAGIC[data[:4]]
    record = struct.Struct(order + "IIII")
    frames, offset = [], 24
    while offset + record.size <= len(data):
        sec, frac, caplen, wire = record.unpack_from(data, offset)
        offset += record.size + caplen
        if offset > len(data):
            break
        frames.append((sec + frac * unit, wire))
    return frames


def read_pcap_frames(path: Path) -> list[tuple[float, int]] | None:
    """parse_pcap_frames of the capture at PATH, or None when there is none."""
    return parse_pcap_frames(path.read_bytes()) if path.is_file() else None


# ---------------------------------------------------------------- cyclictest


def parse_cyclictest(text: str) -> dict:
    """Timer lateness from `cyclictest -q -h N` (rt-tests): its histogram lines
    ("<us> <count>") and its "# Min/Avg/Max Latencies" summary, in microseconds.
    Returns min_us, avg_us, p50_us, p99_us, max_us and samples."""
    hist: list[tuple[int, int]] = []
    summary: dict[str, float] = {}
    overflows = 0
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 2 and all(f.isdigit() for f in fields):
            hist.append((int(fields[0]), int(fields[1])))
        elif line.startswith("# ") and ":" in line:
            name, _, value = line[2:].partition(":")
            words = value.split()
            if name.strip() in ("Min Latencies", "Avg Latencies", "Max Latencies") and words and words[0].isdigit():
                summary[name.split()[0].lower()] = float(words[0])
            elif name.strip() == "Histogram Overflows" and words and words[0].isdigit():
                overflows = int(words[0])
    total = sum(n for _, n in hist) + overflows
    if not total or not {"min", "avg", "max"} <= set(summary):
        raise ParseError("cyclictest: no histogram or no Min/Avg/Max summary (run with -q -h N)")

    def quantile(q: float) -> float:
        seen = 0
        for us, n in hist:
            seen += n
            if seen >= q * total:
                return float(us)
        return summary["max"]  # in the overflow bucket: at most the largest seen

    return {"min_us": summary["min"], "avg_us": summary["avg"], "p50_us": quantile(0.5),
            "p99_us": quantile(0.99), "max_us": summary["max"], "samples": total}


# ---------------------------------------------------------------- /proc/stat


@dataclass(frozen=True)
class CpuTimes:
    """Aggregate CPU time counters (USER_HZ ticks) from the "cpu" line."""

    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int

    @property
    def total(self) -> int:
        """All ticks; guest time is already inside user/nice, so it is not added."""
        return sum(astuple(self))


def parse_proc_stat(text: str, name: str = "cpu") -> CpuTimes:
    """Read the line NAME of /proc/stat: "cpu" (all CPUs) or "cpu0", "cpu1", ...
    (missing trailing columns = 0)."""
    for line in text.splitlines():
        cols = line.split()
        if cols and cols[0] == name:
            try:
                values = [int(v) for v in cols[1:9]]
            except ValueError:
                raise ParseError(f"/proc/stat: bad cpu line {line!r}") from None
            if len(values) < 4:
                raise ParseError(f"/proc/stat: cpu line too short {line!r}")
            return CpuTimes(*(values + [0] * (8 - len(values))))
    raise ParseError(f"/proc/stat: no {name!r} line")


def cpu_busy_fraction(a: CpuTimes, b: CpuTimes) -> float:
    """Fraction of CPU time busy between snapshots a and b (taken later).

    Busy = total - idle - iowait: waiting on disk is not work the testbed did.
    """
    total = b.total - a.total
    if total <= 0:
        raise ValueError("cpu_busy_fraction: snapshot b is not later than a (no ticks elapsed)")
    idle = (b.idle + b.iowait) - (a.idle + a.iowait)
    return (total - idle) / total
