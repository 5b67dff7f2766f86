"""From a point's raw files to its time series (series.json) and numbers (metrics.json).

Times in series are seconds since the point's time zero (the first flow's scheduled
start); samples taken before it (the idle path) have negative times.
"""

from __future__ import annotations

from pathlib import Path

from . import metrics as m
from . import (aqm_metrics, bbr_state, classes, cpu_metrics, fairness, fct, irtt_output, mahimahi_log, mathis,
               quic_flows, senders, system_output, tcp_diag_output, tool_output, trace_metrics)
from ..errors import ParseError
from ..store.results import read_json
from ..schema.experiment import PAYLOAD_BYTES, Point
from ..emulation.topo import BOTTLENECK_HANDLE, FlowPlan, Plan
from ..traffic import tcp_diag
from ..traffic import irtt_probe

BBR_LT_ROUNDS = 48  # round trips Linux BBR holds its long-term bw (bbr_lt_bw_max_rtts)
BBR_BW_FILTER_ROUNDS = 10  # round trips its max filter keeps a bw sample (bbr_bw_rtts)
# A backlogged bottleneck that sends below 85% of its rate is the emulator's limit, not the
# CC's (measured on a 2-vCPU TCG guest: 0.87-0.99 at 10 Mbit/s, 0.75-0.77 at 100 Mbit/s).
LINK_DELIVERY_MIN = 0.85
LINK_DELIVERY_MIN_SECONDS = 1.0  # backlogged time needed to judge it
PEAK_WINDOW = 0.1  # seconds: the window over which the link's highest rate is judged

# The metrics.json keys this module writes itself (the modules it calls declare theirs: METRICS in
# each); units and meanings in schema/metric_names.py, held to exactly what the writers declare.
METRICS = (
    "link_mbps", "base_rtt_ms", "loss", "buffer_pkts", "bdp_pkts", "full_buffer_rtt_ms", "ideal_goodput_mbps",
    "mathis_goodput_mbps", "duration_s", "flows", "goodput_mbps", "steady_goodput_mbps", "utilization", "steady_utilization",
    "goodput_vs_ideal", "payload_capacity_mbps", "steady_link_efficiency", "retransmits", "retransmit_rate", "groups",
    "bbr_bw_p50_mbps", "bbr_bw_held_share", "bbr_bw_ratio", "jain_mean", "jain_final", "convergence_s", "rtt_mean_ms",
    "rtt_min_ms", "rtt_p5_ms", "rtt_p25_ms", "rtt_p50_ms", "rtt_p75_ms", "rtt_p95_ms", "rtt_p99_ms", "rtt_max_ms",
    "rtt_p50_over_base", "steady_rtt_p50_ms", "steady_rtt_p95_ms", "idle_rtt_ms", "idle_rtt_error_ms", "idle_rtt_min_ms",
    "idle_rtt_spread_ms", "delay_variation_ms", "variation_over_min_rtt", "reordering_events", "queue_p50_pkts",
    "queue_max_pkts", "bottleneck_drops", "emulator_drops", "link_busy", "link_delivery_by_rate", "link_delivery", "link_short",
    "link_peak_100ms_mbps", "link_peak_ratio", "link_gap_max_ms", "link_gap_p99_ms", "link_peak_beyond_pause",
    "adapt_targets_mbps", "adapt_times_s", "adapt_time_max_s", "why_missing")


def held_share_visible(rtt: float, ss_interval: float) -> bool:
    """Whether ss samples ss_interval apart can tell BBR's long-term mode from its max filter.

    Long-term mode holds one bw for BBR_LT_ROUNDS round trips, which must span HELD_SAMPLES
    samples; the max filter keeps a sample for BBR_BW_FILTER_ROUNDS, which must not span the
    HELD_SAMPLES - 1 intervals between them, or a steady flow reads as held (measured at
    500 ms RTT: 0.75 held at 0.001% loss).
    """
    return (BBR_LT_ROUNDS * rtt >= m.HELD_SAMPLES * ss_interval
            and BBR_BW_FILTER_ROUNDS * rtt < (m.HELD_SAMPLES - 1) * ss_interval)


def _read(path: Path) -> str:
    return path.read_text() if path.is_file() else ""


def _iperf3_pair(raw: Path, flow_id: str) -> tuple[tool_output.Iperf3Result, tool_output.Iperf3Result]:
    """Both ends' iperf3 results; if either failed, one error that quotes both ends."""
    results, errors = {}, []
    for role in ("client", "server"):
        try:
            results[role] = tool_output.parse_iperf3(_read(raw / f"iperf3-{flow_id}-{role}.json"))
        except ParseError as exc:
            errors.append(f"{role}: {exc}")
    if errors:
        raise ParseError(f"flow {flow_id}: " + "; ".join(errors))
    return results["server"], results["client"]


def _maybe_round(value: float | None, digits: int, unit: float = 1.0) -> float | None:
    return None if value is None else round(value / unit, digits)


def _round(series, digits=4):
    return [[round(t, 3), round(v, digits)] for t, v in series]


def _bbr_model(point: Point, flow: FlowPlan, ss: list, t0: float, offset: float, retransmitted: bool) -> dict:
    """A BBR flow's row entries read from its ss samples SS (none for another CC): when it
    left startup, its bandwidth estimate then and after, and the share of it held."""
    startup = point.sampling.startup
    model = [(s.t - t0, s.bbr_pacing_gain, s.bbr_bw_bps) for s in ss
             if s.bbr_pacing_gain is not None and s.bbr_bw_bps is not None]
    if model:
        bbr = m.bbr_model(model, offset + startup)
        # the max filter spans round trips of the RTT the flow saw (its queue included), and
        # the long-term mode engages only on losses: without a retransmission a held estimate
        # is the filter, not that mode
        steady_srtt = [s.srtt_ms / 1e3 for s in ss if s.t - t0 >= offset + startup and s.srtt_ms]
        rtt = m.percentile(steady_srtt, 50) if steady_srtt else point.flows[flow.group].rtt or point.link.rtt
        visible = retransmitted and held_share_visible(rtt, point.sampling.ss_interval)
        return {
            "bbr_left_startup_by_s": _maybe_round(bbr["left_startup_by_s"], 3),
            "bbr_bw_at_startup_exit_mbps": _maybe_round(bbr["bw_at_startup_exit_bps"], 4, 1e6),
            "bbr_bw_p50_mbps": _maybe_round(bbr["bw_p50_bps"], 4, 1e6),
            "bbr_bw_held_share": _maybe_round(bbr["bw_held_share"], 3) if visible else None,
        }
    return {}


def _sockets(raw: Path, flow: FlowPlan) -> tuple[list, list]:
    """The flow's sender's socket samples (tool_output.SsSample) and BBR states, from its host's
    netlink sampler (tcp_diag.py); a point recorded before it had ss's text per flow and BBR's
    state per host (bbr_diag.py)."""
    name = tcp_diag.raw_name(flow.sender)
    if (raw / name).is_file():
        records = tcp_diag_output.json_lines(_read(raw / name), name)  # decoded once for both
        return tcp_diag_output.samples(records), bbr_state.states(records)
    legacy = f"bbr-{flow.sender}.jsonl"
    return tool_output.parse_ss(_read(raw / f"ss-{flow.id}.txt")), bbr_state.parse_bbr(_read(raw / legacy), legacy)


def _flow(point: Point, flow: FlowPlan, raw: Path, t0: float, launched: float) -> tuple[dict, dict, list, tuple]:
    """One iperf3 flow: its metrics row, its series, its goodput over time, and its
    receiver's intervals with the time its data started. launched: seconds after t0 when
    its client started."""
    startup = point.sampling.startup
    server, client = _iperf3_pair(raw, flow.id)
    sockets, states = _sockets(raw, flow)
    ss = tool_output.data_socket([s for s in sockets if s.peer == f"{flow.dst}:{flow.port}"])
    # iperf3's intervals count from its test start, which follows the launch by the
    # handshakes: several RTTs, seconds behind a deep queue at a slow rate. The first
    # sample of the data socket with data acked places it within one ss interval.
    acked = [x.t - t0 for x in ss if (x.bytes_acked or 0) > 0]
    offset = max(launched, acked[0] - point.sampling.ss_interval / 2) if acked else launched
    # a test's last interval is often a fraction of one: its rate is noise, not a sample
    whole = [iv for iv in server.intervals if iv.end - iv.start >= 0.5 * point.sampling.iperf_interval]
    tput = [(t + offset, bps) for t, bps in m.throughput_series(whole or server.intervals)]
    seconds = server.duration or client.duration
    goodput = m.goodput_bps(server.bytes_received, seconds) if seconds > 0 else 0.0
    try:
        flow_steady = m.steady_goodput_bps(server.intervals, startup)
    except ValueError:  # a flow shorter than the startup period
        flow_steady = goodput
    flow_series = {
        "cc": flow.cc, "group": flow.group, "start": round(launched, 4), "data_start": round(offset, 4),
        "throughput": _round([(t, v / 1e6) for t, v in tput]),
        "cwnd": _round([(s.t - t0, s.cwnd) for s in ss], 1),
        "srtt_ms": _round([(s.t - t0, s.srtt_ms) for s in ss], 3),
        "pacing_mbps": _round([(s.t - t0, (s.pacing_rate_bps or 0) / 1e6) for s in ss]),
        "delivery_mbps": _round([(s.t - t0, (s.delivery_rate_bps or 0) / 1e6) for s in ss]),
        "bbr_bw_mbps": _round([(s.t - t0, s.bbr_bw_bps / 1e6) for s in ss if s.bbr_bw_bps is not None]),
    }
    # BBR's own state: v3's phase and bounds, which ss cannot decode
    flow_series.update(bbr_state.flow_series(states, f"{flow.dst}:{flow.port}", t0))
    row = {
        "id": flow.id, "cc": flow.cc, "group": flow.group, "start_s": round(launched, 3),
        "data_start_s": round(offset, 3),
        "seconds": round(seconds, 3), "bytes": server.bytes_received,
        "goodput_mbps": round(goodput / 1e6, 4), "steady_goodput_mbps": round(flow_steady / 1e6, 4),
        "retransmits": client.retransmits, "completion_s": round(seconds, 3) if flow.size else None,
        "sent_bytes": client.bytes_sent,
        # reordering the sender detected (a counter: its last sample holds the total)
        "reord_seen": max((s.reord_seen for s in ss), default=0),
    }
    row.update(_bbr_model(point, flow, ss, t0, offset, bool(client.retransmits)))
    return row, flow_series, tput, (offset, server.intervals)


def _goodput(point: Point, flow_rows: list, series: dict, placed: list, total_bytes: int, end: float,
             out: dict) -> None:
    """The flows' goodput together: over the run and after startup, against the rate, the
    ideal under the loss and the payload capacity; per flow group and per CC (classes.py)."""
    startup = point.sampling.startup
    link = point.link
    out["flows"] = flow_rows
    span = max(end, 1e-9)
    out["goodput_mbps"] = round(total_bytes * 8 / span / 1e6, 4)
    try:
        out["steady_goodput_mbps"] = round(m.aggregate_steady_goodput_bps(placed, startup) / 1e6, 4)
    except ValueError:  # every flow shorter than the startup period
        out["steady_goodput_mbps"] = out["goodput_mbps"]
    out["utilization"] = round(out["goodput_mbps"] / out["link_mbps"], 4)
    out["steady_utilization"] = round(out["steady_goodput_mbps"] / out["link_mbps"], 4)
    out["goodput_vs_ideal"] = round(out["steady_goodput_mbps"] / out["ideal_goodput_mbps"], 4)
    # What the link can carry as TCP payload: 1448-byte segments (MSS with timestamps) in
    # 1514-byte frames (1500-byte packets on Mahimahi's link). A faithful emulator lets one
    # greedy flow reach it after startup.
    out["payload_capacity_mbps"] = round(out["link_mbps"] * PAYLOAD_BYTES / link.wire_bytes, 4)
    out["steady_link_efficiency"] = round(out["steady_goodput_mbps"] / out["payload_capacity_mbps"], 4)
    # per flow group and per CC: goodput, shares, srtt percentiles, retransmits (classes.py)
    out.update(classes.per_class(flow_rows, series["flows"], [g.rtt or link.rtt for g in point.flows], startup,
                                 out["payload_capacity_mbps"], [g.name or f"g{i + 1}" for i, g in enumerate(point.flows)]))
    out["retransmits"] = sum(r["retransmits"] or 0 for r in flow_rows)
    out["retransmit_rate"] = m.retransmit_rate(flow_rows, PAYLOAD_BYTES)
    out["reordering_events"] = sum(r["reord_seen"] or 0 for r in flow_rows)


def analyze(point: Point, plan: Plan, folder: Path, t0: float, launches: dict, end: float,
            events: list[dict] | None = None) -> tuple[dict, dict]:
    """Return (series, metrics) for one finished point.

    t0: epoch of time zero; launches: flow id -> epoch its client started;
    end: seconds after t0 when the last flow finished; events: the rate changes as they
    were fired (point.json's timings.events; None: not recorded).
    """
    raw = folder / "raw"
    link = point.link
    startup = point.sampling.startup
    series: dict = {"t0": t0, "flows": {}, "rtt": {}, "queue": [], "link_sent": [], "cpu": [], "link_rate": []}
    out: dict = {
        "link_mbps": link.rate / 1e6, "base_rtt_ms": link.rtt * 1e3, "loss": link.loss,
        "buffer_pkts": link.buffer_packets, "bdp_pkts": round(link.bdp_packets, 2),
        # The RTT a packet sees behind a full buffer: what a buffer-filling CC converges to.
        "full_buffer_rtt_ms": round((link.rtt + link.full_buffer_seconds()) * 1e3, 3),
        "ideal_goodput_mbps": m.ideal_goodput_bps(link.rate, link.loss) / 1e6,
        "mathis_goodput_mbps": _maybe_round(mathis.goodput_mbps(link.rtt, link.loss), 4),
        "duration_s": round(end, 3),
    }

    # -- flows: receiver-side goodput over time, sender-side retransmits and ss state
    flow_rows, per_flow_series, placed = [], [], []
    total_bytes = 0
    readers = {"iperf3": _flow, "picoquic": quic_flows.flow}  # by the flow's tool (spec.flows.TOOLS)
    for flow in plan.flows:
        row, flow_series, tput, started = readers[flow.tool](point, flow, raw, t0, launches[flow.id] - t0)
        flow_rows.append(row)
        series["flows"][flow.id] = flow_series
        per_flow_series.append(tput)
        placed.append(started)
        total_bytes += row["bytes"]
    _goodput(point, flow_rows, series, placed, total_bytes, end, out)
    if plan.workloads:
        _shortflows(point, plan, raw, t0, series, out)
    if len(flow_rows) == 1 and flow_rows[0].get("bbr_bw_p50_mbps") is not None:
        out["bbr_bw_p50_mbps"] = flow_rows[0]["bbr_bw_p50_mbps"]  # one BBR flow: what its model believed
        out["bbr_bw_held_share"] = flow_rows[0]["bbr_bw_held_share"]
        # above 1, short delivery-rate samples overshot the link: a bursty shaper
        out["bbr_bw_ratio"] = round(out["bbr_bw_p50_mbps"] / out["link_mbps"], 4)

    _fairness(point, per_flow_series, end, series, out)
    rtts_all = _rtt(plan, raw, t0, end, startup, series, out)
    if point.sampling.irtt:
        trips = {f"g{group + 1}": irtt_output.parse(_read(raw / irtt_probe.file_name(group)), irtt_probe.file_name(group))
                 for group, _, _ in plan.groups}
        irtt_output.summarize(trips, t0, startup, end, series, out)
    out["delay_variation_ms"] = round(link.delay_variation * 1e3, 4)
    if out.get("idle_rtt_min_ms"):  # against the smallest RTT the path really has (the emulator adds its own)
        out["variation_over_min_rtt"] = round(out["delay_variation_ms"] / out["idle_rtt_min_ms"], 4)
    _bottleneck(point, plan, raw, t0, end, series, out)
    _adaptation(point, per_flow_series, series, out)
    trace_metrics.kept(events, out)
    senders.summarize(point, plan, out)
    cpu_metrics.summarize(_read(raw / "cpu.txt"), t0, end, series, out)
    if not rtts_all and not flow_rows and not series.get("shortflows"):
        raise ParseError(f"{folder}: no samples at all")
    return series, out


def _shortflows(point: Point, plan: Plan, raw: Path, t0: float, series: dict, out: dict) -> None:
    """Short flows (fct.py): per-flow rows and FCT CDFs into series, FCT metrics for all of
    them and per class (beside the other classes in `groups`). A flow of the schedule that
    its program never wrote (killed) is counted as unfinished, never dropped."""
    records, programs = [], []
    for w in plan.workloads:
        name = f"shortflows-g{w.group + 1}.jsonl"
        found, summary = tool_output.parse_shortflows(_read(raw / name), name)
        schedule = raw / f"shortflows-schedule-g{w.group + 1}.json"
        planned = read_json(schedule)["flows"] if schedule.is_file() else []
        seen = {r["id"] for r in found}
        found += [dict(f, cc_set=None, start=None, established=None, end=None, completed=False,
                       error="no record (its program was stopped)") for f in planned if f["id"] not in seen]
        records += found
        programs.append({"group": w.group, "class": w.cls, **(summary or {"role": "send", "summary": "none"})})
    for sink in sorted(raw.glob("shortflows-sink-*.jsonl")):
        summary = tool_output.parse_shortflows(_read(sink), sink.name)[1]
        programs.append({"host": sink.stem.rsplit("-", 1)[-1], **(summary or {"role": "sink", "summary": "none"})})
    trace = plan.schedule.schedule.capacity_bits if plan.schedule else None  # judged against the trace
    rows = fct.rows(records, {w.group: w.rtt for w in plan.workloads}, point.link.rate, t0, trace)
    out.update(fct.summarize(rows))
    out.update(fct.programs(programs, rows))
    classes_ = [(w.group, w.cls, w.cc, w.rtt) for w in plan.workloads]
    out.update(groups=list(out.get("groups") or []) + fct.per_class(rows, classes_))
    series["shortflows"] = rows
    series["fct_cdf"] = fct.cdfs(rows)


def _fairness(point: Point, per_flow_series: list, end: float, series: dict, out: dict) -> None:
    """Fairness among concurrent flows: Jain's index over time, and when it converged."""
    if not (len(per_flow_series) > 1 and all(per_flow_series)):
        return
    aligned = fairness.align_series(per_flow_series, point.sampling.iperf_interval)
    jain = fairness.jain_over_time(aligned, aligned.active)
    series["jain"] = _round(jain)
    all_active_from = max(s[0][0] for s in per_flow_series)
    tail = [j for t, j in jain if t >= all_active_from]
    out["jain_mean"] = round(sum(tail) / len(tail), 4) if tail else None
    last = [j for t, j in jain if t >= end - max(5.0, 0.2 * end)]
    out["jain_final"] = round(sum(last) / len(last), 4) if last else None
    conv = fairness.convergence_time([(t, j) for t, j in jain if t >= all_active_from], 0.9, hold=2.0)
    out["convergence_s"] = round(conv - all_active_from, 3) if conv is not None else None


def _rtt(plan: Plan, raw: Path, t0: float, end: float, startup: float, series: dict, out: dict) -> list:
    """RTT seen by packets crossing the bottleneck (ping), idle before time zero."""
    rtts_all, idle = [], []
    for group, _, _ in plan.groups:
        samples = tool_output.parse_ping(_read(raw / f"ping-g{group + 1}.txt"))
        pts = [(s.t - t0, s.rtt_ms) for s in samples]
        series["rtt"][f"g{group + 1}"] = _round(pts, 3)
        idle += [r for t, r in pts if t < 0]
        rtts_all += [(t, r) for t, r in pts if 0 <= t <= end]
    if rtts_all:
        whole = m.summary([r for _, r in rtts_all])
        out.update({f"rtt_{k}_ms": round(v, 3) for k, v in whole.items() if k != "n"})
        steady_rtts = [r for t, r in rtts_all if t >= startup] or [r for _, r in rtts_all]
        out["rtt_p50_over_base"] = round(out["rtt_p50_ms"] / out["base_rtt_ms"], 4)  # BBR v1's cap: 2
        out["steady_rtt_p50_ms"] = round(m.percentile(steady_rtts, 50), 3)
        out["steady_rtt_p95_ms"] = round(m.percentile(steady_rtts, 95), 3)
    if idle:
        out["idle_rtt_ms"] = round(m.percentile(idle, 50), 3)
        out["idle_rtt_error_ms"] = round(out["idle_rtt_ms"] - out["base_rtt_ms"], 3)
        out["idle_rtt_min_ms"] = round(min(idle), 3)
        # the idle path's own spread: the emulator's noise, plus any configured variation
        out["idle_rtt_spread_ms"] = round(m.percentile(idle, 90) - m.percentile(idle, 10), 3)
    return rtts_all


def _bottleneck_samples(point: Point, raw: Path, frames: list | None) -> list:
    """The bottleneck's counters over the run: its qdisc's (tc), or mm-link's queue replayed
    from its own log when Mahimahi's chain was the bottleneck (what it sent counted from
    FRAMES, the capture of its egress, when there is one)."""
    if (raw / mahimahi_log.UPLINK_LOG).is_file():
        logged = mahimahi_log.samples(mahimahi_log.read(raw / mahimahi_log.UPLINK_LOG), point.sampling.interval,
                                      BOTTLENECK_HANDLE)
        return logged if frames is None else mahimahi_log.on_the_wire(logged, frames)
    return [q for q in system_output.parse_tc_qdiscs(_read(raw / "tc-bottleneck.txt")) if q.handle == BOTTLENECK_HANDLE]


def _bottleneck(point: Point, plan: Plan, raw: Path, t0: float, end: float, series: dict, out: dict) -> None:
    """The bottleneck's queue, how busy it was, and whether it sent at its rate (from its own
    counters, and from the frames that left it when they were captured)."""
    link = point.link
    startup = point.sampling.startup
    rate_steps = [(0.0, link.rate)] + [(c.at, c.rate) for c in link.changes]
    frames = system_output.read_pcap_frames(raw / "bottleneck.pcap")  # once: the chain's samples, the peak
    qsamples = _bottleneck_samples(point, raw, frames)
    out["emulator_drops"] = mahimahi_log.emulator_drops(raw / mahimahi_log.DROPS_FILE)
    if qsamples:
        series["queue"] = _round([(q.t - t0, q.backlog_pkts) for q in qsamples], 1)
        # what the bottleneck really sent, from its own byte counter between two samples
        series["link_sent"] = _round([((a.t + b.t) / 2 - t0, 8 * (b.sent_bytes - a.sent_bytes) / (b.t - a.t) / 1e6)
                                      for a, b in zip(qsamples, qsamples[1:]) if b.t > a.t])
        during = [q.backlog_pkts for q in qsamples if 0 <= q.t - t0 <= end] or [0]
        out["queue_p50_pkts"] = m.percentile(during, 50)
        out["queue_max_pkts"] = max(during)
        out["bottleneck_drops"] = qsamples[-1].drops - qsamples[0].drops
        rate_at = plan.schedule.schedule.rate_at if plan.schedule else aqm_metrics.stepwise(rate_steps)
        aqm_metrics.summarize(qsamples, rate_at, t0, startup, end, series, out)

    # how busy the link was while the flows were meant to run (after startup)
    planned = [f.start + f.duration for f in plan.flows if f.duration is not None]
    window_end = min(end, max(planned)) if planned and len(planned) == len(plan.flows) else end
    try:
        out["link_busy"] = round(m.link_busy([(q.t - t0, q.sent_bytes) for q in qsamples], rate_steps,
                                             startup, window_end), 4)
    except ValueError:  # a run shorter than its startup period, or no bottleneck samples
        out["link_busy"] = None
    # Did the emulated link deliver what it was told? Judged while it had a queue, at each
    # configured rate on its own (an emulator may keep up at 10 Mbit/s and not at 20).
    counter = [(q.t - t0, q.sent_bytes, q.backlog_bytes) for q in qsamples]
    by_rate = []
    bounds = [t for t, _ in rate_steps] + [window_end]
    for (t, bps), t_next in zip(rate_steps, bounds[1:]):
        try:
            ratio, covered = m.backlogged_delivery(counter, rate_steps, max(t, startup), min(t_next, window_end))
        except ValueError:
            continue
        if covered >= LINK_DELIVERY_MIN_SECONDS:
            by_rate.append({"from_s": t, "rate_mbps": bps / 1e6, "delivery": round(ratio, 4)})
    out["link_delivery_by_rate"] = by_rate
    out["link_delivery"] = min((d["delivery"] for d in by_rate), default=None)
    out["link_short"] = out["link_delivery"] is not None and out["link_delivery"] < LINK_DELIVERY_MIN
    series["link_rate"] = [[t, r / 1e6] for t, r in rate_steps]
    if plan.schedule:  # a trace replayed at the bottleneck: judged against its schedule
        traced, series["link_rate"] = trace_metrics.summarize(
            plan.schedule.schedule, _read(raw / "link-schedule.txt"), counter, startup, window_end, end,
            LINK_DELIVERY_MIN)
        out.update(traced)
        offered = traced.get("trace_offered_mbps")
        if offered:  # the ideal is what the trace offered the flows, not its file's average
            out["ideal_goodput_mbps"] = m.ideal_goodput_bps(offered * 1e6, link.loss) / 1e6
            out["goodput_vs_ideal"] = round(out["steady_goodput_mbps"] / out["ideal_goodput_mbps"], 4)
    peak = _link_peak(frames, t0, rate_steps, startup, window_end)
    if peak is not None:
        out["link_peak_100ms_mbps"], out["link_peak_ratio"] = round(peak[0] / 1e6, 4), round(peak[1], 4)
        out["link_gap_max_ms"], out["link_gap_p99_ms"] = round(peak[2] * 1e3, 3), round(peak[3] * 1e3, 3)
        out["link_peak_beyond_pause"] = round(m.peak_beyond_pause(peak[1], peak[2], PEAK_WINDOW), 4)


def _link_peak(captured: list | None, t0: float, rate_steps: list, start: float, end: float) -> tuple | None:
    """(highest rate over any 100 ms, its ratio to the rate then configured, the longest and
    the 99th-percentile pause between two frames) of the frames CAPTURED leaving the
    bottleneck between START and END, or None without a capture. A pause is where a late timer
    held the shaper: a shaper that catches up sends the held frames at once afterwards."""
    if captured is None:
        return None
    frames = [(t - t0, n) for t, n in captured if start <= t - t0 <= end]
    best = (0.0, 0.0)
    for i, (t_from, bps) in enumerate(rate_steps):  # each configured rate on its own
        t_to = rate_steps[i + 1][0] if i + 1 < len(rate_steps) else end
        part = [f for f in frames if t_from <= f[0] < t_to]
        try:
            peak = m.peak_window_bps(part, PEAK_WINDOW)
        except ValueError:
            continue
        if peak / bps > best[1]:
            best = (peak, peak / bps)
    if best[1] <= 0:
        return None
    gaps = [b[0] - a[0] for a, b in zip(frames, frames[1:])]
    return (*best, max(gaps), m.percentile(gaps, 99))


def _adaptation(point: Point, per_flow_series: list, series: dict, out: dict) -> None:
    """How fast the flows together followed each configured rate change."""
    link = point.link
    by_rate = out["link_delivery_by_rate"]
    if not (link.changes and per_flow_series):
        return
    total = fairness.align_series(per_flow_series, point.sampling.iperf_interval)
    agg = [(t, sum(v)) for t, v in zip(total.times, total.values)]
    times, targets = [], []
    delivered = {d["from_s"]: d["delivery"] for d in by_rate}
    previous = link.rate
    for change in link.changes:
        # the bandwidth a flow can find is what the link really sends at the new rate,
        # unless that would turn the step around (a link far below its rate: flagged)
        target = change.rate * min(1.0, delivered.get(change.at, 1.0))
        if target <= 0 or (target > previous) != (change.rate > previous):
            target = change.rate
        previous = change.rate
        times.append(fairness.adaptation_time(agg, change.at, target, frac=0.85, hold=1.0))
        targets.append(round(target / 1e6, 4))
    out["adapt_targets_mbps"] = targets
    out["adapt_times_s"] = [round(t, 3) if t is not None else None for t in times]
    out["adapt_time_max_s"] = None if None in times else round(max(times), 3)
    never = [(change.at, target) for change, target, t in zip(link.changes, targets, times) if t is None]
    if never:  # what the verdict says instead of "missing"
        out["why_missing"] = {"adapt_time_max_s": f"the flows never held 85% of {never[0][1]:g} Mbit/s for 1 s "
                                                  f"after the change at {never[0][0]:g} s"}
