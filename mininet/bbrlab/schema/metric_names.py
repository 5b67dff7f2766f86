"""The names of the metrics a point's analysis writes (metrics.json), with unit and meaning.

Plain data on the lowest floor: spec.py checks a claim's metric against it when the file
is loaded, analysis.py writes exactly these names (a unit test holds it to that), and the
format reference (docs/experiment-format.md) lists them.
"""

from __future__ import annotations

# name -> (unit, meaning). Units: Mbit/s, ms, s, pkt, count, fraction (0-1), ratio, bool, list.
METRICS: dict[str, tuple[str, str]] = {
    # the link as configured
    "link_mbps": ("Mbit/s", "the bottleneck's configured rate"),
    "base_rtt_ms": ("ms", "the configured base RTT (link.rtt)"),
    "loss": ("fraction", "the configured random loss"),
    "buffer_pkts": ("pkt", "the bottleneck's buffer"),
    "bdp_pkts": ("pkt", "the bandwidth-delay product"),
    "full_buffer_rtt_ms": ("ms", "the RTT behind a full buffer (what a buffer-filling CC reaches)"),
    "ideal_goodput_mbps": ("Mbit/s", "the goodput the rate allows at the configured loss (a trace: what it "
                           "offered after startup while the flows ran, trace_offered_mbps, not its file's average)"),
    "mathis_goodput_mbps": ("Mbit/s", "the Mathis et al. model's goodput at the base RTT and the loss "
                            "(a Reno-like flow's; null without loss)"),
    "duration_s": ("s", "from the first flow's start to the last flow's end"),
    # goodput
    "flows": ("list", "one row per flow: goodput, retransmits, BBR's model"),
    "goodput_mbps": ("Mbit/s", "all flows' bytes over the whole run"),
    "steady_goodput_mbps": ("Mbit/s", "all flows' goodput after the startup period"),
    "utilization": ("fraction", "goodput_mbps / link_mbps"),
    "steady_utilization": ("fraction", "steady_goodput_mbps / link_mbps"),
    "goodput_vs_ideal": ("ratio", "steady_goodput_mbps / ideal_goodput_mbps"),
    "payload_capacity_mbps": ("Mbit/s", "what the link carries as TCP payload (1448-byte segments)"),
    "steady_link_efficiency": ("fraction", "steady_goodput_mbps / payload_capacity_mbps"),
    "retransmits": ("count", "segments the senders retransmitted"),
    "retransmit_rate": ("fraction", "retransmitted segments / segments sent (1448-byte segments plus retransmissions)"),
    # BBR's model (one BBR flow)
    "bbr_bw_p50_mbps": ("Mbit/s", "BBR's median bandwidth estimate after startup"),
    "bbr_bw_held_share": ("fraction", "share of samples where BBR's estimate held still (Linux BBR v1's "
                          "long-term mode; only for a flow that lost packets, where ss's interval at the RTT "
                          "the flow saw can tell that mode from the max filter)"),
    "bbr_bw_ratio": ("ratio", "bbr_bw_p50_mbps / link_mbps"),
    # fairness (several flows)
    "jain_mean": ("fraction", "Jain's fairness index while all flows ran"),
    "jain_final": ("fraction", "Jain's fairness index over the last 20% (at least 5 s)"),
    "convergence_s": ("s", "from the last flow's start until Jain's index held >= 0.9 for 2 s"),
    # RTT (ping across the bottleneck)
    "rtt_mean_ms": ("ms", "mean RTT while the flows ran"),
    "rtt_min_ms": ("ms", "lowest RTT while the flows ran"),
    "rtt_p5_ms": ("ms", "5th percentile RTT while the flows ran"),
    "rtt_p25_ms": ("ms", "25th percentile RTT while the flows ran"),
    "rtt_p50_ms": ("ms", "median RTT while the flows ran"),
    "rtt_p75_ms": ("ms", "75th percentile RTT while the flows ran"),
    "rtt_p95_ms": ("ms", "95th percentile RTT while the flows ran"),
    "rtt_p99_ms": ("ms", "99th percentile RTT while the flows ran"),
    "rtt_max_ms": ("ms", "highest RTT while the flows ran"),
    "rtt_p50_over_base": ("ratio", "rtt_p50_ms / base_rtt_ms"),
    "steady_rtt_p50_ms": ("ms", "median RTT after the startup period"),
    "steady_rtt_p95_ms": ("ms", "95th percentile RTT after the startup period"),
    "idle_rtt_ms": ("ms", "median RTT of the idle path before the flows"),
    "idle_rtt_error_ms": ("ms", "idle_rtt_ms - base_rtt_ms"),
    "idle_rtt_min_ms": ("ms", "lowest RTT of the idle path: the path's real base RTT"),
    "idle_rtt_spread_ms": ("ms", "the idle path's p90 - p10 RTT: the emulator's noise plus any configured variation"),
    "delay_variation_ms": ("ms", "the configured link.delay_variation"),
    "variation_over_min_rtt": ("ratio", "delay_variation_ms / idle_rtt_min_ms"),
    "reordering_events": ("count", "reordering the senders detected (ss reord_seen, summed over flows)"),
    # the bottleneck
    "queue_p50_pkts": ("pkt", "median backlog of the bottleneck's queue"),
    "queue_max_pkts": ("pkt", "highest backlog of the bottleneck's queue"),
    "bottleneck_drops": ("count", "packets the bottleneck's queue dropped (an AQM's drops and overflows)"),
    "emulator_drops": ("count", "packets Mahimahi's chain dropped outside its link (a TUN device's queue or ring "
                                "while a shell was late; the point is then set aside); none without the chain"),
    "queue_delay_p50_ms": ("ms", "median wait in the bottleneck's queue after startup: its backlog at the link rate"),
    "queue_delay_p95_ms": ("ms", "95th percentile wait in the bottleneck's queue after startup"),
    "owd_data_p50_ms": ("ms", "median one-way delay of the probe (sampling.irtt) from the senders' side to the "
                        "receivers', after startup"),
    "owd_data_p95_ms": ("ms", "95th percentile of the same"),
    "owd_return_p50_ms": ("ms", "median one-way delay of the probe back, from the receivers' side, after startup"),
    "owd_return_p95_ms": ("ms", "95th percentile of the same"),
    "owd_loss": ("fraction", "share of the probe's packets lost either way while the flows ran (sampling.irtt)"),
    "aqm_ce_marks": ("count", "packets the AQM marked with ECN's CE instead of dropping them (tc -s)"),
    "aqm_delay_p50_ms": ("ms", "median of the AQM's own queue-delay reading (CAKE's average sojourn, "
                         "CoDel's last sojourn, PIE's estimate)"),
    "link_busy": ("fraction", "frames sent / (rate x time) after the startup period"),
    "link_delivery_by_rate": ("list", "per configured rate: what the link sent while packets waited"),
    "link_delivery": ("fraction", "the lowest of link_delivery_by_rate"),
    "link_short": ("bool", "link_delivery below what a faithful emulator sends"),
    "sender_short": ("bool", "bulk flows left a plain link (no loss, no variation, a FIFO of 1 BDP or more) "
                     "under 85% busy: their sending hosts held them back, e.g. late pacing timers"),
    "link_peak_100ms_mbps": ("Mbit/s", "highest rate over any 100 ms (sampling.link_pcap)"),
    "link_peak_ratio": ("ratio", "link_peak_100ms_mbps / the rate then configured"),
    "link_gap_max_ms": ("ms", "longest pause between two frames leaving the bottleneck"),
    "link_gap_p99_ms": ("ms", "99th percentile pause between two frames leaving the bottleneck"),
    "link_peak_beyond_pause": ("ratio", "link_peak_ratio beyond what the longest pause held back"),
    # rate changes (link.changes)
    "adapt_targets_mbps": ("list", "the rate each change's adaptation is judged against"),
    "adapt_times_s": ("list", "how long the flows took to follow each change"),
    "adapt_time_max_s": ("s", "the longest of adapt_times_s"),
    # why a metric is null, in words the verdict gives instead of "missing"
    "why_missing": ("mapping", "metric name -> why it has no value (adapt_time_max_s: the change whose "
                    "new rate the flows never held 85% of for 1 s)"),
    # the emulator's CPU
    "cpu_busy_mean": ("fraction", "mean busy share of all CPUs while the flows ran"),
    "cpu_busy_max": ("fraction", "highest busy share of all CPUs"),
    "cpu_core_busy_max": ("fraction", "mean busy share of the busiest CPU"),
    "cpu_bound": ("bool", "the emulator was CPU-bound (its numbers cannot be trusted)"),
}

# Written by classes.py for every point: its traffic classes (flow groups, CCs).
CLASS_LISTS: dict[str, tuple[str, str]] = {
    "groups": ("list", "per flow group: class, cc, rtt_ms and the class metrics below"),
    "by_cc": ("list", "per congestion control: the class metrics below"),
}
RTT_PERCENTILES = (50, 95, 99)
# What a claim reads of one class: `where: {group: N}` or `{cc: NAME}` inside a mixed point.
CLASS_METRICS: dict[str, tuple[str, str]] = {
    "flows": ("count", "the class's flows"),
    "goodput_mbps": ("Mbit/s", "the class's bytes over the whole run"),
    "steady_goodput_mbps": ("Mbit/s", "the class's goodput after the startup period"),
    "share": ("fraction", "the class's share of what every flow delivered after startup"),
    "capacity_share": ("fraction", "the class's steady goodput / payload_capacity_mbps"),
    "retransmits": ("count", "segments the class's senders retransmitted"),
    "retransmit_rate": ("fraction", "the class's retransmitted segments / segments sent"),
    **{f"srtt_p{q}_ms": ("ms", f"{q}th percentile of the class's smoothed RTT (ss) after startup")
       for q in RTT_PERCENTILES},
}
# What a claim's `where` may name besides the sweep axes, cc and loss (verdicts/claims.facts).
CLASS_SELECTORS = ("group", "class", "buffer_bdp")
# Written by trace_metrics.py for a point whose link replays a trace (link.trace).
TRACE_METRICS: dict[str, tuple[str, str]] = {
    "trace_mbps": ("Mbit/s", "the trace's average rate (as scaled by link.rate)"),
    "trace_offered_mbps": ("Mbit/s", "what the schedule offered while the bottleneck was sampled"),
    "link_delivered_mbps": ("Mbit/s", "what the bottleneck sent over the same samples"),
    "trace_delivery": ("ratio", "link_delivered_mbps / trace_offered_mbps"),
    "trace_backlogged_delivery": ("ratio", "sent / offered over the samples with packets waiting"),
    "trace_backlogged_s": ("s", "how long the bottleneck had packets waiting"),
    "schedule_updates": ("count", "rate updates written"),
    "schedule_skipped": ("count", "updates passed over by a late wake-up (the newest applied)"),
    "schedule_late_p50_ms": ("ms", "median lateness of the updates written"),
    "schedule_late_p99_ms": ("ms", "99th percentile lateness of the updates written"),
    "schedule_late_max_ms": ("ms", "the latest update"),
}
# Written by trace_metrics.py for every point: whether its link kept to what was planned for it.
SCHEDULE_METRICS: dict[str, tuple[str, str]] = {
    "change_late_max_s": ("s", "how long after its planned time the latest rate change (link.changes) "
                          "was in force"),
    "off_schedule": ("bool", "the link did not keep its schedule: a rate change in force over 0.5 s late, "
                     "or 1% or more of a trace's updates skipped (its numbers cannot be trusted)"),
}
# Written by fct.py for a point with short flows (flows.*.workload): for all its short flows
# at the point's level, and for each class in its `groups` entry (`where: {group: N}`).
FCT_BUCKETS = (("to100k", 100_000), ("to1m", 1_000_000), ("to3m", 3_000_000), ("over3m", float("inf")))
FCT_PERCENTILES = (50, 95, 99)
_BUCKET_TEXT = {"to100k": "objects up to 100 KB", "to1m": "objects over 100 KB up to 1 MB",
                "to3m": "objects over 1 MB up to 3 MB", "over3m": "objects over 3 MB"}
FCT_METRICS: dict[str, tuple[str, str]] = {
    "flows_planned": ("count", "short flows in the schedule"),
    "flows_started": ("count", "short flows whose connection was opened"),
    "flows_completed": ("count", "short flows whose last byte was confirmed"),
    "flows_unfinished": ("count", "short flows not completed by the deadline (never started, failed or open)"),
    "completed_share": ("fraction", "flows_completed / flows_planned"),
    **{f"fct_p{q}_ms": ("ms", f"{q}th percentile flow completion time (data phase) of the completed flows")
       for q in FCT_PERCENTILES},
    **{f"slowdown_p{q}": ("ratio", f"{q}th percentile of FCT / (base RTT + bytes on the wire / rate), floored at 1 "
                          "(on a trace: the bytes through what it offered from the flow's start)")
       for q in FCT_PERCENTILES},
    **{name: entry for bucket, _ in FCT_BUCKETS for name, entry in {
        f"flows_{bucket}": ("count", f"short flows of {_BUCKET_TEXT[bucket]}"),
        **{f"fct_{bucket}_p{q}_ms": ("ms", f"{q}th percentile FCT of {_BUCKET_TEXT[bucket]}") for q in FCT_PERCENTILES},
        **{f"slowdown_{bucket}_p{q}": ("ratio", f"{q}th percentile slowdown of {_BUCKET_TEXT[bucket]}")
           for q in FCT_PERCENTILES}}.items()},
    "tput_over3m_p50_mbps": ("Mbit/s", "median throughput (size / FCT) of the completed objects over 3 MB"),
    "tput_over3m_mean_mbps": ("Mbit/s", "mean throughput (size / FCT) of the completed objects over 3 MB"),
    "shortflow_late_p99_ms": ("ms", "99th percentile of how late the sending programs opened flows"),
    "shortflow_cpu_s_per_flow": ("s", "CPU seconds of the sending and sink programs per flow"),
}
FCT_LISTS: dict[str, tuple[str, str]] = {
    "shortflow_programs": ("list", "per sending program: flows, completed, CPU seconds, lateness"),
}
# Everything a point's metrics.json may hold.
ALL_METRICS = {**METRICS, **CLASS_LISTS, **TRACE_METRICS, **SCHEDULE_METRICS, **FCT_METRICS, **FCT_LISTS}

# What a claim can bound (min/max) or divide by (relative_to): the numbers.
CLAIMABLE = tuple(dict.fromkeys(name for name, (unit, _) in {**ALL_METRICS, **CLASS_METRICS}.items()
                                if unit not in ("list", "bool", "mapping")))
