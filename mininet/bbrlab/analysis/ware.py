"""The Ware et al. coexistence model: BBR's share of a bottleneck against loss-based flows.

Ware, Mukerjee, Seshan, Sherry, "Modeling BBR's Interactions with Loss-Based Congestion
Control", IMC 2019 (REFERENCE.md section 5). Competing with loss-based flows (CUBIC,
Reno), BBR is limited by its in-flight cap, 2 x its estimated BDP, not by its bandwidth
estimate; the loss-based flows fill the rest of the buffer.

- Simple form: in a deep buffer BBR in aggregate gets about half the link, whatever the
  number of loss-based flows (the full form's limit as the buffer grows, ProbeRTT aside).
- Full form: the loss-based flows' share while BBR is not in ProbeRTT is
  p = 1/2 - 1/(2X) - 4N/q, and BBR's share over the flows' life is
  (1 - p)(d - T_probe) / d, with T_probe = (q/c + 0.2 s + l)(d / 10): each ProbeRTT (one
  every 10 s) lasts as long as the buffer takes to drain, plus 200 ms, plus one RTT, and
  leaves the link to the loss-based flows.

Units: X the buffer in BDPs; q the buffer in packets; c the link's capacity in packets per
second (so q/c is the time a full buffer takes to drain, seconds); l the base RTT (s); d
how long the flows compete (s); N the number of BBR flows. p is clamped to [0, 1/2]: in a
buffer under about one BDP the formula goes negative, where BBR takes nearly everything.
The paper reports a median error of 5% against CUBIC.
"""

from __future__ import annotations

from dataclasses import dataclass

PACKET_BYTES = 1500
PROBE_RTT_S = 0.2  # the time BBR stays in ProbeRTT at 4 packets, beyond draining the queue
PROBE_RTT_EVERY_S = 10.0


@dataclass(frozen=True)
class Prediction:
    bbr: float  # BBR's aggregate share of the link over the flows' life
    loss_based: float  # the loss-based flows' (1 - bbr)
    p: float  # the loss-based share while BBR is not in ProbeRTT (clamped)
    probe_fraction: float  # T_probe / d: the time BBR spends in ProbeRTT


def share(buffer_bdp: float, rate_bps: float, rtt_s: float, duration_s: float, n_bbr: int = 1,
          packet_bytes: int = PACKET_BYTES) -> Prediction:
    """The full form for a buffer of BUFFER_BDP BDPs on a RATE_BPS link with base RTT RTT_S,
    flows competing for DURATION_S seconds, N_BBR BBR flows."""
    if buffer_bdp <= 0 or rate_bps <= 0 or rtt_s <= 0 or duration_s <= 0 or n_bbr < 1:
        raise ValueError("the model needs a positive buffer, rate, RTT, duration and at least one BBR flow")
    c = rate_bps / 8 / packet_bytes  # packets per second
    q = buffer_bdp * c * rtt_s  # the buffer in packets
    p = min(0.5, max(0.0, 0.5 - 1 / (2 * buffer_bdp) - 4 * n_bbr / q))
    t_probe = (q / c + PROBE_RTT_S + rtt_s) * (duration_s / PROBE_RTT_EVERY_S)
    probe = min(1.0, t_probe / duration_s)
    bbr = (1 - p) * (1 - probe)
    return Prediction(bbr=bbr, loss_based=1 - bbr, p=p, probe_fraction=probe)
