"""ReBBR's emulator as the bottleneck: Mahimahi 0.96's shells, chained as ReBBR chained them
(jervisfm/rebbr, mahimahi/bbr_experiment.py, the run of its published figure 8):

    mm-delay D  mm-loss uplink P [downlink Q]  mm-link UP DOWN [droptail queue]  -- holder

Each shell makes a network namespace of its own behind a TUN device and NATs it to the one
outside; the chain starts in the sender host (snd1), as Mahimahi's own user (setuid shells
run by an unprivileged uid, as Mahimahi requires). Its innermost command is a holder that
only waits: every program of the point's senders (iperf3 clients, ping, ss, the BBR state
sampler) is started inside the holder's namespace (`nsenter --net`, as root), so what they
send crosses mm-link's uplink queue (the bottleneck: the link's rate, one delivery
opportunity of up to 1504 bytes per line of a trace file), then mm-loss, then mm-delay, and
their ACKs the same shells backwards. Nothing else of the testbed's path shapes or delays:
r1 and r2 only forward (shapers.py, topo.py).

Faithful to ReBBR: mm-delay takes half the RTT (whole ms) each way; mm-loss drops uplink
packets i.i.d. (std::bernoulli_distribution: every packet of the direction, control
connections and pings too, as in ReBBR, unlike netem's filtered lines here); the trace has
one line per 12000 bits of the rate, spread as ReBBR's _generate_trace spread them (8, 8 and 9
lines in each 3 ms at 100 Mbit/s). Unlike ReBBR,
the uplink queue is a droptail of the link's buffer (ReBBR's was unbounded: its 6.25 MB
receive window kept its flows under 2.5 BDP in flight), and the TUN devices' own queues are
pfifo_fast (ReBBR's Ubuntu default), except the innermost one under `pacing: fq`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import TestbedError

BIN = Path(os.environ.get("BBRLAB_MAHIMAHI_BIN", "/usr/local/lib/mahimahi/bin"))
SHELLS = ("mm-delay", "mm-loss", "mm-link")
DNSMASQ = "/usr/sbin/dnsmasq"  # the path Mahimahi's configure found (dnsmasq-base), run by every shell
USER = "nobody"  # the real uid the setuid shells run as (Mahimahi refuses to run as root)
GROUP = "nogroup"
HOLDER = ("sleep", "infinity")  # the chain's innermost command: only holds its namespace
UPLINK_LOG = "mahimahi-uplink.log.gz"  # mm-link's own log of the uplink, compressed after the run
DROPS_FILE = "mahimahi-drops.json"  # what each TUN device of the chain dropped (not the link's droptail)
TRACE_BITS = 12000  # bits of the rate per trace line, as ReBBR's traces (mm-link sends 1504 bytes a line)
MAX_PERIOD_MS = 60_000  # a trace repeats after at most this long
TUN_QUEUE = "pfifo_fast"


@dataclass(frozen=True)
class ChainPlan:
    """The chain of one point: where it runs and what each shell is given."""

    host: str  # the sender host the chain starts in
    delay_ms: int  # mm-delay: each way
    up_loss: float  # mm-loss uplink (the data direction)
    down_loss: float  # mm-loss downlink (ACKs), with link.loss_direction: both
    rate_bps: float
    queue_bytes: int | None  # droptail of the buffer: bytes, or
    queue_packets: int | None  # packets
    sender_qdisc: str  # the innermost TUN's root qdisc: fq (pacing: fq) or pfifo_fast
    sysctls: tuple[tuple[str, str], ...]  # the sender host's, set again in the innermost namespace

    def shells(self, trace: Path, uplink_log: Path) -> list[str]:
        """The chain's argv up to its command (the shells by path)."""
        argv = [str(BIN / "mm-delay"), str(self.delay_ms)]
        if self.up_loss or self.down_loss:
            argv += [str(BIN / "mm-loss"), "uplink", f"{self.up_loss:.6g}"]
            if self.down_loss:  # a second shell: mm-loss takes one direction
                argv += [str(BIN / "mm-loss"), "downlink", f"{self.down_loss:.6g}"]
        queue = (f"bytes={self.queue_bytes}" if self.queue_bytes is not None else f"packets={self.queue_packets}")
        argv += [str(BIN / "mm-link"), str(trace), str(trace), f"--uplink-log={uplink_log}",
                 "--uplink-queue=droptail", f"--uplink-queue-args={queue}"]
        return argv

    def describe(self) -> str:
        loss = f"mm-loss uplink {self.up_loss:.6g}" + (f" downlink {self.down_loss:.6g}" if self.down_loss else "")
        queue = f"{self.queue_bytes} B" if self.queue_bytes is not None else f"{self.queue_packets} packets"
        return (f"Mahimahi 0.96 in {self.host}: mm-delay {self.delay_ms}, {loss}, mm-link at "
                f"{self.rate_bps / 1e6:g} Mbit/s (a trace line per {TRACE_BITS} bits), droptail uplink of {queue}; "
                f"innermost TUN queue {self.sender_qdisc}")


def chain_plan(point, host: str) -> ChainPlan:
    """POINT's chain, started in HOST (a Point whose link.shaper is mahimahi)."""
    link = point.link
    loss = link.loss
    by_bytes = link.buffer.unit == "bytes"
    return ChainPlan(
        host=host, delay_ms=round(link.rtt / 2 * 1000), up_loss=loss,
        down_loss=loss if link.loss_direction == "both" else 0.0, rate_bps=link.rate,
        queue_bytes=int(link.buffer.value) if by_bytes else None,
        queue_packets=None if by_bytes else link.buffer_packets,
        sender_qdisc="fq" if point.pacing == "fq" else TUN_QUEUE,
        sysctls=tuple(sorted((k, str(v)) for k, v in point.sysctls.items())))


def trace_lines(rate_bps: float) -> list[int]:
    """mm-link's trace for RATE_BPS: the millisecond of each delivery opportunity over one
    period, a line per TRACE_BITS of the rate, spread evenly. The period is the shortest that
    holds a whole number of lines (3 ms for 100 Mbit/s: 25 lines), at most MAX_PERIOD_MS."""
    bits = int(round(rate_bps))
    if bits < TRACE_BITS:
        raise TestbedError(f"Mahimahi's link needs at least {TRACE_BITS} bit/s (one opportunity a second)")
    g = math.gcd(bits, TRACE_BITS * 1000)
    period, lines = TRACE_BITS * 1000 // g, bits // g
    if period > MAX_PERIOD_MS:
        period, lines = MAX_PERIOD_MS, round(bits * MAX_PERIOD_MS / (TRACE_BITS * 1000))
    return [-(-k * period // lines) for k in range(1, lines + 1)]
