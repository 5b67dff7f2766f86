"""The bottleneck's AQM as tc arguments: the qdisc that holds the buffer (handle 10:) when
link.aqm is not fifo. shapers.py puts it where the chosen shaper wants it: as htb's leaf,
tbf's or netem's child, or alone at the root with CAKE's own shaper.

The buffer is the AQM's hard limit: `limit` in packets (fq_codel, codel, pie, fq_pie), in
bytes for RED, and CAKE's `memlimit`, which counts each packet's kernel allocation
(truesize) rather than its length, so the buffer's packets are given at CAKE_TRUESIZE each.
"""

from __future__ import annotations

from ..schema.aqm_format import Aqm
from ..schema.link import FRAME_BYTES, Link

# bytes of memory one full-size frame takes in CAKE's accounting (skb truesize of a
# 1514-byte frame received on a veth: a 2 KB data buffer plus the skb's own structures)
CAKE_TRUESIZE = 2816


def _us(seconds: float) -> str:
    return f"{round(seconds * 1e6)}us"


def _ecn(flag: bool) -> str:
    return "ecn" if flag else "noecn"


def args(link: Link, rate_bps: float | None = None) -> tuple[str, ...]:
    """The qdisc's kind and options (after `tc qdisc VERB dev D parent P handle 10:`).
    RATE_BPS: CAKE's own shaper rate, or None where another qdisc shapes (CAKE unlimited)."""
    aqm: Aqm = link.aqm
    p = dict(aqm.params)
    limit = str(link.buffer_packets)
    if aqm.kind == "fq_codel":
        return ("fq_codel", "limit", limit, "target", _us(p["target"]), "interval", _us(p["interval"]),
                "flows", str(p["flows"]), "quantum", str(p["quantum"]), _ecn(p["ecn"]))
    if aqm.kind == "codel":
        return ("codel", "limit", limit, "target", _us(p["target"]), "interval", _us(p["interval"]), _ecn(p["ecn"]))
    if aqm.kind == "pie":
        return ("pie", "limit", limit, "target", _us(p["target"]), "tupdate", _us(p["tupdate"]), _ecn(p["ecn"]))
    if aqm.kind == "fq_pie":
        return ("fq_pie", "limit", limit, "target", _us(p["target"]), "tupdate", _us(p["tupdate"]),
                "flows", str(p["flows"]), "quantum", str(p["quantum"]), _ecn(p["ecn"]))
    if aqm.kind == "red":
        limit_bytes = link.buffer_packets * FRAME_BYTES
        burst = max(1, int((2 * p["min"] + p["max"]) / (3 * FRAME_BYTES)))  # tc-red(8)'s rule of thumb
        return ("red", "limit", str(limit_bytes), "min", str(p["min"]), "max", str(p["max"]),
                "avpkt", str(FRAME_BYTES), "burst", str(burst), "probability", f"{p['probability']:g}",
                "bandwidth", f"{int(link.rate)}bit") + (("ecn",) if p["ecn"] else ())
    if aqm.kind == "cake":
        shaping = ("bandwidth", f"{int(rate_bps)}bit") if rate_bps else ("unlimited",)
        overhead = ("overhead", str(p["overhead"])) if p["overhead"] is not None else ("raw",)
        return ("cake", *shaping, "rtt", _us(p["interval"]), p["diffserv"], p["flow_mode"],
                "ack-filter" if p["ack_filter"] else "no-ack-filter", *overhead,
                "memlimit", str(link.buffer_packets * CAKE_TRUESIZE))
    raise ValueError(f"no AQM qdisc for {aqm.kind}")  # fifo is the shapers' own leaf
