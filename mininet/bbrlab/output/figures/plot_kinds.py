"""The plot kinds, each declared once: its name, what it shows, the function that draws it and
the per-point series (series.json) it reads. flent's PLOTS tables are the model: a figure
is data, so `plot --kind` can draw any kind, and no plotting module imports another to
find one.

A drawing function takes (plt, exp, rundir, records) and returns a matplotlib Figure; a
kind that shades the points the emulator cannot be trusted with also takes `untrusted`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import plots_aqm, plots_bbr, plots_classes, plots_fct, plots_field, plots_links, plots_loss, plots_paper, plots_quic


@dataclass(frozen=True)
class PlotKind:
    name: str
    doc: str  # one line for the format reference (docs/experiment-format.md)
    draw: Callable
    series: tuple[str, ...] = ()  # series.json keys the kind reads; () = metrics.json only
    marks_untrusted: bool = False  # draw() takes the untrusted points' names
    one_point: bool = False  # draws one point's flows (the first): not for several runs together


PLOTS = {kind.name: kind for kind in (
    PlotKind("rtt_timeseries", "RTT over time of every point on one axis, and the RTT's CDF (figure 5)",
             plots_paper.rtt_timeseries, ("rtt",)),
    PlotKind("throughput_timeseries", "each flow's throughput over time, Jain's fairness index below (figure 6)",
             plots_paper.throughput_timeseries, ("flows", "link_rate"), one_point=True),
    PlotKind("loss_goodput", "goodput against random loss (log x) per congestion control, the ideal line (figure 8)",
             plots_loss.loss_goodput),
    PlotKind("sweep_normalized", "goodput / rate against loss, one line per value of the other axis, per CC",
             plots_loss.sweep_normalized, marks_untrusted=True),
    PlotKind("rate_step", "delivered throughput against the bottleneck's configured rate steps, per CC",
             plots_paper.rate_step, ("flows", "link_rate")),
    PlotKind("link_fidelity", "per configured rate, what the backlogged bottleneck sent against it",
             plots_paper.link_fidelity, ("flows", "link_rate")),
    PlotKind("buffer_rtt", "median RTT (bar: p5-p95) against the buffer in BDPs, per CC", plots_paper.buffer_rtt),
    PlotKind("buffer_retransmits", "retransmission rate and goodput against the buffer in BDPs, per CC and number "
             "of flows (IETF 101's 1.5-BDP line)", plots_loss.buffer_retransmits),
    PlotKind("coexist_share", "each CC's share of the link against the buffer, the Ware et al. model beside it",
             plots_field.coexist_share),
    PlotKind("class_share", "per point, each class's share of the goodput against its fair share, one bar per CC "
             "and class; each class's median smoothed RTT below", plots_classes.class_share),
    PlotKind("trace_replay", "the rate a trace offered and what the bottleneck delivered, per update interval",
             plots_field.trace_replay, ("link_rate", "flows")),
    PlotKind("aggregation_goodput",
             "goodput and median RTT against the base RTT per CC, one column per slotted direction",
             plots_links.aggregation_goodput),
    PlotKind("jitter_goodput", "goodput against the delay variation per CC and base RTT, the emulator's noise shaded",
             plots_links.jitter_goodput),
    PlotKind("aqm_latency", "per CC, CDFs of a sparse probe's RTT and the flows' own RTT under load, one colour "
             "per AQM; goodput and the queue's median delay below", plots_aqm.aqm_latency, ("rtt", "flows")),
    PlotKind("headend", "per rate, a sparse probe's RTT under load, the flow's own RTT and goodput against the "
             "buffer in ms, one colour per AQM and one line style per CC", plots_aqm.headend),
    PlotKind("fct_cdf", "short flows: FCT CDF per class and CC, and each flow's slowdown against its size (log-log)",
             plots_fct.fct_cdf, ("shortflows",)),
    PlotKind("bbr_state", "per BBR flow over time: its phase (v3's own; v1's from its pacing gain), cwnd and "
             "inflight_hi (packets), smoothed RTT; v1 and v3 in their own colours", plots_bbr.bbr_state, ("flows",)),
    PlotKind("quic_rates", "Each connection's rate (QUIC's or TCP's), sorted, per CC; a panel per base RTT "
             "and delay variation (Huitema 2024, figure 1)", plots_quic.quic_rates, marks_untrusted=True),
    PlotKind("quic_timeline", "one QUIC connection per point over 4 s: pacing rate and throughput, RTT samples, "
             "BBR's state (Huitema 2024, figure 2)", plots_quic.quic_timeline, ("flows",)),
)}
