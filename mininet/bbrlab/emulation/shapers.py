"""The bottleneck's shaper as data: the tc commands that give r1's egress its rate and buffer.

Four designs, compared by measurement (`bbrlab calibrate`, docs/design.md "The bottleneck"):

- ``netem``: ``netem rate R limit BUF`` alone. netem gives each packet a departure time
  from the previous packet's (length / rate after it), so a timer that fires late releases
  the packets already due at once and the link catches up by itself: it sends its rate on
  average however late the guest's timers are. Its queue (``limit``, in packets) is the
  buffer. No delay is set here: the delay lines are separate netems after the bottleneck.
- ``htb``: an htb class at the rate over a pfifo/bfifo leaf. Tokens accrue only up to
  ``burst``, so a timer later than burst / rate loses sending time for good (measured: a
  1 ms burst let a 100 Mbit/s link send 0.94 of its rate in a TCG guest); a burst large
  enough to cover the lateness lets short delivery-rate samples overshoot the rate.
- ``tbf``: a token bucket over a pfifo/bfifo child: the same trade-off as htb.
- ``cake``: CAKE alone, its own shaper (``bandwidth``) and queue; only with link.aqm: cake.
- ``mahimahi``: no qdisc here at all: Mahimahi's mm-link is the bottleneck, inside the
  chain of shells the senders run in (mahimahi.py); r1 only forwards.

With an AQM (link.aqm, aqm_qdisc.py) the AQM replaces the fifo leaf: htb's leaf or tbf's child.
Not netem's child: netem holds the packets its rate delays in its own queue, before the child,
so the AQM never sees a queue (measured: CoDel dropped nothing while CUBIC's RTT sat 100 ms
above the base).

Each design names the qdisc that holds the buffer ``BOTTLENECK_HANDLE`` (sampled for
backlog and bytes sent), and gives the command that moves the rate while flows run.
"""

from __future__ import annotations

from . import aqm_qdisc as aqms
from ..schema.experiment import FRAME_BYTES, Link

SHAPERS = ("netem", "htb", "tbf", "cake", "mahimahi")
BOTTLENECK_HANDLE = "10:"  # the qdisc that holds the buffer; sampled for backlog


def token_burst(rate_bps: float, burst: int | None, burst_time: float | None = None) -> int:
    """Bytes htb/tbf may send back to back: BURST if given, else BURST_TIME (default 1 ms)
    at the rate, at least two frames (tc's default is computed for HZ timers and is too
    small at high rates; a burst should cover how late the guest's timers fire)."""
    if burst is not None:
        return burst
    return max(2 * FRAME_BYTES, int(rate_bps / 8 * (burst_time or 0.001)))


def _fifo(link: Link) -> tuple[str, ...]:
    if link.buffer.unit == "bytes":
        return ("bfifo", "limit", str(int(link.buffer.value)))
    return ("pfifo", "limit", str(link.buffer_packets))


def _leaf(link: Link) -> tuple[str, ...]:
    """The qdisc under htb or tbf that holds the buffer: the AQM (aqm_qdisc.py), else a fifo."""
    return aqms.args(link) if link.aqm.kind != "fifo" else _fifo(link)


def _netem(verb: str, dev: str, rate_bps: float, link: Link) -> tuple[str, ...]:
    # limit counts packets; a buffer given in bytes becomes the full frames it holds
    return ("tc", "qdisc", verb, "dev", dev, "root", "handle", BOTTLENECK_HANDLE, "netem",
            "limit", str(link.buffer_packets), "rate", f"{int(rate_bps)}bit")


def _htb_class(verb: str, dev: str, rate_bps: float, link: Link) -> tuple[str, ...]:
    b = str(token_burst(rate_bps, link.burst, link.burst_time))
    return ("tc", "class", verb, "dev", dev, "parent", "1:", "classid", "1:1", "htb",
            "rate", f"{int(rate_bps)}bit", "ceil", f"{int(rate_bps)}bit",
            "burst", b, "cburst", b, "quantum", str(FRAME_BYTES))


def _tbf(verb: str, dev: str, rate_bps: float, link: Link) -> tuple[str, ...]:
    # tbf passes its limit on to a fifo child (also on `change`), in the child's own unit:
    # give it the fifo's, or a rate change would resize the buffer (an AQM child ignores it)
    return ("tc", "qdisc", verb, "dev", dev, "root", "handle", "1:", "tbf",
            "rate", f"{int(rate_bps)}bit", "burst", str(token_burst(rate_bps, link.burst, link.burst_time)),
            "limit", _fifo(link)[-1])


def setup(dev: str, link: Link) -> tuple[tuple[str, ...], ...]:
    """The commands that make DEV the bottleneck of LINK (link.shaper says which design)."""
    if link.shaper == "mahimahi":  # the chain around the senders is the bottleneck (mahimahi.py)
        return ()
    if link.shaper == "cake":  # CAKE alone: its own shaper and queue
        return (("tc", "qdisc", "replace", "dev", dev, "root", "handle", BOTTLENECK_HANDLE) + aqms.args(link, link.rate),)
    if link.shaper == "netem":  # a droptail buffer only (schema/link.py refuses an AQM under netem)
        return (_netem("replace", dev, link.rate, link),)
    leaf = ("tc", "qdisc", "replace", "dev", dev, "parent", "1:1", "handle", BOTTLENECK_HANDLE) + _leaf(link)
    if link.shaper == "tbf":
        return (_tbf("replace", dev, link.rate, link), leaf)
    return (
        ("tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "1"),
        _htb_class("replace", dev, link.rate, link),
        leaf,
    )


def rate_change(dev: str, link: Link, rate_bps: float) -> tuple[str, ...]:
    """The command that moves LINK's bottleneck on DEV to RATE_BPS while flows run."""
    if link.shaper == "cake":
        return ("tc", "qdisc", "change", "dev", dev, "root", "handle", BOTTLENECK_HANDLE, "cake",
                "bandwidth", f"{int(rate_bps)}bit")
    if link.shaper == "netem":
        return _netem("change", dev, rate_bps, link)
    if link.shaper == "tbf":
        return _tbf("change", dev, rate_bps, link)
    return _htb_class("change", dev, rate_bps, link)
