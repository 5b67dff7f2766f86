"""The Mathis et al. model: the goodput a loss-based (Reno-like) flow reaches under random loss.

Mathis, Semke, Mahdavi, Ott, "The Macroscopic Behavior of the TCP Congestion Avoidance
Algorithm", CCR 27(3), 1997: a flow that halves its window on each loss and grows it by
one segment per round trip settles at

    goodput = MSS / RTT x C / sqrt(p),    C = sqrt(3/2) ~ 1.22 (one ACK per segment)

for small independent loss p. It bounds what Reno and (in its Reno-friendly region, at low
BDPs) CUBIC can carry; BBR v1 does not react to isolated losses and is not bounded by it.
The model knows no link: above the link's rate the link is the limit (`capped_mbps`).
"""

from __future__ import annotations

import math

MSS_BYTES = 1448  # TCP payload per segment with timestamps (1500-byte MTU)
C_PER_ACK = math.sqrt(3 / 2)  # the model's constant with one ACK per segment


def goodput_mbps(rtt_s: float, loss: float, mss_bytes: int = MSS_BYTES) -> float | None:
    """The model's goodput (Mbit/s) at round-trip time RTT_S and loss probability LOSS
    (a fraction); None without loss, where the model says nothing."""
    if loss <= 0 or rtt_s <= 0:
        return None
    return mss_bytes * 8 / rtt_s * C_PER_ACK / math.sqrt(loss) / 1e6


def capped_mbps(rtt_s: float, loss: float, link_mbps: float, mss_bytes: int = MSS_BYTES) -> float | None:
    """The model's goodput, but never above what the link carries at that loss: rate x (1 - p)."""
    model = goodput_mbps(rtt_s, loss, mss_bytes)
    return None if model is None else min(model, link_mbps * (1 - loss))
