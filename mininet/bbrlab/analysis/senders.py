"""Whether the sending hosts, not the congestion control, held a point's flows back.

On a plain link (a fixed rate, no configured loss, no delay variation, a FIFO of at least
one BDP) bulk flows that cover the run keep the bottleneck busy whatever their congestion
control: a loss-based one fills the buffer, BBR probes up to the rate. When they leave it
idle there, the sender could not send what its congestion control allowed: under software
virtualization its pacing timers fire late (measured: a paced BBR flow at 0.46 of a
10 Mbit/s link, its queue near empty, where the same link carried CUBIC at 0.96). Such a
point is set aside, as a CPU-bound one is: it measured the emulator, not the CC.
"""

from __future__ import annotations

from ..emulation.topo import Plan
from ..schema.aqm_format import FIFO
from ..schema.experiment import Point

BUSY_MIN = 0.85  # the link busy at least this share after startup, as link-busy claims ask
COVER_SLACK = 0.5  # seconds the flows' union may fall short of the run's end (the last flow's close)
# the metrics.json keys this module writes (schema/metric_names.py)
METRICS = ("sender_short",)


def plain(point: Point) -> bool:
    """POINT's link is one on which any CC keeps bulk flows' bottleneck busy."""
    link = point.link
    return (link.loss == 0 and all(not g.loss for g in point.flows) and not link.jitter
            and not link.delay_variation and not link.changes and link.trace is None and link.slot is None
            and link.aqm.kind == FIFO and link.buffer_packets >= link.bdp_packets
            and all(g.workload is None and g.size is None for g in point.flows))


def covered(plan: Plan, startup: float) -> bool:
    """PLAN's flows, all time-bounded, leave no gap from STARTUP to the last one's end."""
    spans = sorted((f.start, f.start + f.duration) for f in plan.flows if f.duration is not None)
    if not spans or len(spans) != len(plan.flows):
        return False
    reached = startup
    for start, end in spans:
        if start > reached:
            return False
        reached = max(reached, end)
    return reached >= max(end for _, end in spans) - COVER_SLACK


def summarize(point: Point, plan: Plan, out: dict) -> None:
    """Into OUT: sender_short, the flows below the plain link's rate by their hosts' doing."""
    busy = out.get("link_busy")
    out["sender_short"] = bool(busy is not None and busy < BUSY_MIN and plain(point)
                               and covered(plan, point.sampling.startup))
