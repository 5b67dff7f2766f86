"""One QUIC connection (`tool: picoquic`): its metrics row and series, with the names and
units of the TCP flows' (analyze.py) where the meaning is the same.

- goodput: the bytes the client received over its connection's duration, as the client
  reports them (what the post's figure 1 sorts); over time, the stream bytes the server
  saw acknowledged per interval (picoquic_output.py), which add up to the same bytes;
- cwnd in packets of the largest 1-RTT packet sent, smoothed RTT, pacing rate, and the
  RTT samples themselves (`rtt_sample_ms`: the post's figure 2), from the server's qlog;
- bbr_phase: picoquic's BBR state, by the names of its bbr.c (bbr1.c for bbr1), from the
  qlog; for the 2024 builds, whose qlog lacks it, from their binary log (cc.csv), and none
  without it (a connection not shown to change state is not shown to stay in STARTUP);
- cpu_s: the CPU seconds of the connection's server and client processes (the post tells
  a CPU-bound stack from a control-bound one), and cpu_share: of one core, over the
  connection's duration;
- from the server's performance log: the CC that ran (checked against the one asked for),
  and the shares of its packet trains that pacing, or the cwnd, held back;
- pacing_p50_mbps: the median pacing rate over the connection after the startup period, the
  rate its CC asked for (set against goodput: a pacer the machine holds back sends below it).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from . import metrics as m
from . import picoquic_output, tool_output
from ..errors import ParseError
from ..emulation.topo import FlowPlan
from ..schema import picoquic_builds
from ..schema.experiment import Point


FINE = 0.1  # seconds: the bins of acked_mbps


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise ParseError(f"{path.name}: {exc.strerror}") from None


def _bins(delivered: tuple, width: float, end: float) -> list[tool_output.Interval]:
    """DELIVERED (t, bytes), t from the connection's start, in WIDTH-second intervals up to END."""
    count = max(1, int(end / width) + (end % width > 1e-9))
    totals = [0] * count
    for t, size in delivered:
        totals[min(int(t / width), count - 1)] += size
    out = []
    for k, size in enumerate(totals):
        start, stop = k * width, min((k + 1) * width, end)
        if stop > start:
            out.append(tool_output.Interval(start=start, end=stop, bytes=size,
                                            bits_per_second=size * 8 / (stop - start),
                                            retransmits=None, snd_cwnd=None, rtt_ms=None))
    return out


def _thin(points: list, step: float) -> list:
    """At most one point per STEP seconds (the first of each), the last one kept."""
    out, next_t = [], None
    for t, v in points:
        if next_t is None or t >= next_t:
            out.append([round(t, 4), v])
            next_t = t + step
    if points and out[-1][0] != round(points[-1][0], 4):
        out.append([round(points[-1][0], 4), points[-1][1]])
    return out


def _logs(flow: FlowPlan, raw: Path) -> tuple:
    """FLOW's picoquic logs in RAW, read: the client's output, the server's output and the
    clock line in it, the server's qlog and its performance log (checked: the CC that ran)."""
    client = picoquic_output.parse_client(_read(raw / f"picoquic-{flow.id}-client.txt"))
    server_text = _read(raw / f"picoquic-{flow.id}-server.txt")
    clock = picoquic_output.parse_clock(server_text)
    logs = sorted((raw / f"picoquic-{flow.id}").glob("*.server.qlog"))
    if clock is None or len(logs) != 1:
        raise ParseError(f"flow {flow.id}: expected one server qlog and its clock line, found "
                         f"{len(logs)} qlog(s){'' if clock is not None else ' and no clock line'}")
    qlog = picoquic_output.parse_qlog(_read(logs[0]), logs[0].name)
    perf_log = raw / f"picoquic-{flow.id}" / picoquic_builds.PERF_LOG
    # (runs made before the server kept its performance log have none: nothing to read back)
    perf = picoquic_output.parse_perflog(_read(perf_log)) if perf_log.exists() else {"cc": None}
    if perf["cc"] not in (flow.cc, None):  # read back from picoquic's own log: the CC that really ran
        raise ParseError(f"flow {flow.id}: picoquic's server ran {perf['cc']}, not {flow.cc}")
    # and the build that ran, by the version its performance log names (PQ_v), else the one its
    # server printed at start (the default build's pin moves with time: a run of an earlier
    # one keeps the version it ran in its rows)
    version = perf.get("PQ_v") or picoquic_output.parse_version(server_text)
    if flow.build is not None and version != picoquic_builds.BUILDS[flow.build].version:
        raise ParseError(f"flow {flow.id}: picoquic {version or '(no version printed)'} ran, not build "
                         f"{flow.build} ({picoquic_builds.BUILDS[flow.build].version})")
    return client, server_text, clock, _with_states(qlog, flow, raw, server_text), perf


def _with_states(qlog, flow: FlowPlan, raw: Path, server_text: str):
    """QLOG, with the CC's states from the binary log's CSV for a build whose qlog lacks them
    (traffic/picoquic.py writes it), or None for them when there is no CSV (a run made before
    the testbed read the binary logs). A failed read is the run's error, as the server's
    output says it."""
    if picoquic_builds.get(flow.build).logs_states:
        return qlog
    for line in server_text.splitlines():
        if line.startswith(picoquic_builds.LOG_READ_FAILED):
            raise ParseError(f"flow {flow.id}: the CC's states: {line}")
    csv = raw / f"picoquic-{flow.id}" / picoquic_builds.CC_LOG
    return replace(qlog, states=picoquic_output.parse_cc_csv(_read(csv), csv.name) if csv.exists() else None)


def _phases(qlog, flow: FlowPlan, offset: float) -> list:
    """[time, BBR state name] at each change of picoquic's BBR state (none for another CC, nor
    where its states were not recorded)."""
    if qlog.states is None:
        return []
    names = picoquic_output.STATE_NAMES.get(flow.cc)
    phases, last = ([[round(offset, 4), names[0]]], 0) if names else ([], None)  # a connection starts in STARTUP
    for t, state in qlog.states:
        if names and state != last:
            phases.append([round(t + offset, 4), names[state] if state < len(names) else f"state {state}"])
            last = state
    return phases


def flow(point: Point, flow: FlowPlan, raw: Path, t0: float, launched: float) -> tuple[dict, dict, list, tuple]:
    """FLOW's row, series, goodput over time and (data start, intervals), as analyze._flow's."""
    client, server_text, clock, qlog, perf = _logs(flow, raw)
    offset = qlog.reference + clock - t0  # the connection's start, in seconds after t0
    end = max([client.seconds] + [t for t, _ in qlog.delivered])
    intervals = _bins(qlog.delivered, point.sampling.iperf_interval, end)
    tput = [(t + offset, bps) for t, bps in m.throughput_series(intervals)]
    goodput = client.download_bytes * 8 / client.seconds if client.seconds > 0 else 0.0
    try:
        steady = m.steady_goodput_bps(intervals, point.sampling.startup)
    except ValueError:  # a connection shorter than the startup period
        steady = goodput
    step = point.sampling.interval
    mtu = qlog.mtu

    def field(name: str, scale: float = 1.0, digits: int = 4) -> list:
        """A metric picoquic logs when it changes, thinned to one value per STEP, and held to the end."""
        points = _thin([(t + offset, round(d[name] * scale, digits)) for t, d in qlog.metrics if name in d], step)
        if points and points[-1][0] < round(end + offset, 4):
            points.append([round(end + offset, 4), points[-1][1]])
        return points

    rtts = [d["latest_rtt"] / 1e3 for _, d in qlog.metrics if "latest_rtt" in d]
    phases = _phases(qlog, flow, offset)
    series = {
        "cc": flow.cc, "tool": flow.tool, "group": flow.group, "start": round(launched, 4),
        "data_start": round(offset, 4),
        "throughput": [[round(t, 3), round(v / 1e6, 4)] for t, v in tput],
        # the same acknowledged bytes per 100 ms (FINE): the post's figure 2 follows them closely
        "acked_mbps": [[round(t + offset, 3), round(v / 1e6, 4)]
                       for t, v in m.throughput_series(_bins(qlog.delivered, FINE, end))],
        "cwnd": field("cwnd", 1 / mtu, 1), "srtt_ms": field("smoothed_rtt", 1e-3, 3),
        "rtt_sample_ms": field("latest_rtt", 1e-3, 3), "pacing_mbps": field("pacing_rate", 1e-6),
    }
    if phases:
        series.update({"bbr_version": 3 if flow.cc == "bbr" else 1, "bbr_phase": phases})
    server_cpu = picoquic_output.parse_server_cpu(server_text)
    cpu = None if server_cpu is None or client.cpu_seconds is None else server_cpu + client.cpu_seconds
    row = {
        "id": flow.id, "cc": flow.cc, "tool": flow.tool, "group": flow.group, "start_s": round(launched, 3),
        "data_start_s": round(offset, 3), "seconds": round(client.seconds, 3), "bytes": client.download_bytes,
        "goodput_mbps": round(goodput / 1e6, 4), "steady_goodput_mbps": round(steady / 1e6, 4),
        # picoquic's count of retransmissions: its performance log's, else its closing message's
        "retransmits": perf.get("retrans.", qlog.retransmits), "completion_s": round(client.seconds, 3),
        "sent_bytes": client.download_bytes, "reord_seen": None,  # QUIC's reordering: not counted here
        "rtt_sample_p50_ms": round(m.percentile(rtts, 50), 3) if rtts else None,
        "rtt_sample_min_ms": round(min(rtts), 3) if rtts else None,
        "cpu_s": _maybe(cpu), "cpu_server_s": _maybe(server_cpu), "cpu_client_s": _maybe(client.cpu_seconds),
        "cpu_share": round(cpu / client.seconds, 3) if cpu is not None and client.seconds > 0 else None,
        "cc_ran": perf["cc"],  # as picoquic's performance log names it
        "picoquic_version": perf.get("PQ_v") or picoquic_output.parse_version(server_text),  # the server's
        # the post's diagnosis: a connection pacing-limited rather than cwnd-limited
        "pacing_limited_share": _share(perf.get("tb_pacing"), perf.get("trains_s")),
        "cwnd_limited_share": _share(perf.get("tb_cwin"), perf.get("trains_s")),
        # the rate its CC asked for, against what it sent: a pacer held back by the machine
        # sends below it (the median over the connection after the startup period)
        "pacing_p50_mbps": _after(series["pacing_mbps"], offset + point.sampling.startup),
    }
    return row, series, tput, (offset, intervals)


def _after(values: list, start: float) -> float | None:
    """The median of a series's [time, value] pairs from START on, None when it has none."""
    later = [v for t, v in values if t >= start]
    return round(m.percentile(later, 50), 4) if later else None


def _maybe(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _share(part, whole) -> float | None:
    """PART / WHOLE of picoquic's packet-train counters, None when it lacks them."""
    return round(part / whole, 4) if isinstance(part, int) and isinstance(whole, int) and whole > 0 else None
