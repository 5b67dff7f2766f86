"""flent data files of runs: `bbrlab export RUN... --format flent`, one `.flent.gz` per point.

flent (tohojo/flent; Debian's package, 2.1.1) redraws its plots from such a file alone
(`flent -i FILE -p totals -o out.png`, `flent -i FILE -f stats`): gzipped JSON with
version, x_values, results (series -> values on x_values, null where there is none),
raw_values (series -> the samples as measured, each {t: epoch seconds, KEY: value}) and
metadata. A point is written as flent's `tcp_nup` test (N TCP uploads with ping), so that
test's plots apply (totals, upload, ping, ping_cdf, tcp_cwnd, tcp_rtt, tcp_pacing, and
delay and cpu through its qdisc and cpu stats mixins). The series, under flent's names:

    TCP upload::N        the Nth flow's goodput, Mbit/s (flows in their plan's order); its
                         raw values also hold the flow's ss samples under the names of
                         flent's ss runner: tcp_cwnd (packets), tcp_rtt (ms), and
                         tcp_pacing_rate, tcp_delivery_rate, tcp_bbr_bw (Mbit/s)
    TCP upload sum, avg  the flows together at each x, as flent computes them
    Ping (ms) ICMP       the first flow group's ping; the other groups' as flent's extra
                         ping hosts: "Ping (ms) ICMP g2 (extra)", ...
    qdisc_stats_HOST     the bottleneck's queue: backlog_pkts, and delay (ms) as bbrlab's
                         queue_delay series has it
    cpu_stats_localhost  the emulating machine's busy CPU share, as flent's load (0-1)

x is seconds from the first sample; the flows start DELAY seconds later (bbrlab's time zero,
after the idle path's ping), as they do in flent's own tests. On the grid, a series is
interpolated linearly between its samples, as flent's aggregator does, and null outside
them or across a hole. The metadata holds the kernel, CC per flow (SERIES_META's
CONG_CONTROL and the test's cc_algos), and, under BBRLAB, the point as bbrlab recorded it:
link, flows, testbed (qdiscs, offloads, sysctls), metrics, versions.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path

from ... import __version__
from ...errors import BbrlabError
from ...store.results import RunDir, read_json, write_atomic
from .export import folder

TEST = "tcp_nup"  # flent's test whose series and plots these files fill
FILE_VERSION = 4  # flent's FILEFORMAT_VERSION (resultset.py) this writer follows
SUFFIX = ".flent.gz"
UPLOAD, PING = "TCP upload::{}", "Ping (ms) ICMP"
CPU_HOST = "localhost"  # one machine emulates every host: its CPU is the one measured
# Grid values bridge at most this many of a series' own sampling intervals (flent's
# aggregator bridges five steps); a longer gap is a hole and stays null.
HOLE_INTERVALS = 5
DEFAULT_STEP = 0.2  # flent's default step, for a point without repeated samples
# A flow's ss series in bbrlab -> the raw keys of flent's ss runner (same units)
SS_KEYS = {"cwnd": "tcp_cwnd", "srtt_ms": "tcp_rtt", "pacing_mbps": "tcp_pacing_rate",
           "delivery_mbps": "tcp_delivery_rate", "bbr_bw_mbps": "tcp_bbr_bw"}


def file_name(run: RunDir, record: dict) -> str:
    """EXPERIMENT-RUN-POINT.flent.gz, with the point id's = , . made _ (as flent names files)."""
    point = re.sub(r"[^A-Za-z0-9-]+", "_", record["id"])
    return f"{run.path.parent.name}-{run.path.name}-{point}{SUFFIX}"


def _pairs(points) -> list[tuple[float, float]]:
    return sorted((float(t), v) for t, v in points or [] if v is not None)


def _interval(points: list) -> float | None:
    """The median time between a series' samples (None: fewer than two)."""
    gaps = sorted(b[0] - a[0] for a, b in zip(points, points[1:]) if b[0] > a[0])
    return gaps[len(gaps) // 2] if gaps else None


def _on_grid(points: list, times: list[float], step: float) -> list:
    """POINTS' values at TIMES (both ascending): linear between two samples no more than
    HOLE_INTERVALS of the series' intervals apart, else None."""
    gap = HOLE_INTERVALS * max(step, _interval(points) or step)
    out, i = [], 0
    for x in times:
        while i < len(points) and points[i][0] < x - 1e-9:
            i += 1
        if i < len(points) and abs(points[i][0] - x) <= 1e-9:
            out.append(points[i][1])
        elif 0 < i < len(points) and points[i][0] - points[i - 1][0] <= gap:
            (ta, va), (tb, vb) = points[i - 1], points[i]
            out.append(round(va + (vb - va) * (x - ta) / (tb - ta), 6))
        else:
            out.append(None)
    return out


def _merge(columns: dict[str, list]) -> list[dict]:
    """Raw entries {t, KEY: value, ...}, one per sample time, from KEY -> [(t, value)]."""
    by_time: dict[float, dict] = {}
    for key, points in columns.items():
        for t, v in points:
            by_time.setdefault(t, {"t": t})[key] = v
    return [by_time[t] for t in sorted(by_time)]


def _combined(columns: list[list], how) -> list:
    """Per x, HOW of the values that are there (None where none is), as flent's computed series."""
    return [how([v for v in vs if v is not None]) if any(v is not None for v in vs) else None
            for vs in zip(*columns)]


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _bottleneck(record: dict) -> tuple[str, str]:
    for iface, info in ((record.get("testbed") or {}).get("interfaces") or {}).items():
        if info.get("role") == "bottleneck":
            return info.get("host") or "bottleneck", iface
    return "bottleneck", "bottleneck"


def _measured(record: dict, series: dict) -> tuple[dict, dict, dict, dict, int]:
    """A point's series as flent's: {name: (samples, units)}, its raw values, SERIES_META,
    TEST_PARAMETERS, and the number of upload flows."""
    measured: dict[str, tuple[list, str]] = {}  # flent series on the grid -> (samples, units)
    raw: dict[str, list[dict]] = {}
    series_meta: dict[str, dict] = {}
    params: dict[str, str] = {}
    rows = {r["id"]: r for r in record["metrics"].get("flows") or []}
    flows = list((series.get("flows") or {}).items())
    for n, (flow_id, per) in enumerate(flows, 1):
        name, row = UPLOAD.format(n), rows.get(flow_id, {})
        measured[name] = (_pairs(per.get("throughput")), "Mbits/s")
        raw[name] = _merge({"val": measured[name][0], **{k: _pairs(per.get(s)) for s, k in SS_KEYS.items()}})
        series_meta[name] = {"CONG_CONTROL": per.get("cc"), "MEAN_VALUE": row.get("goodput_mbps"),
                             "TCP_RETRANSMIT": row.get("retransmits"), "BYTES_RECVD": row.get("bytes"),
                             "BBRLAB_FLOW": flow_id, "BBRLAB_GROUP": per.get("group")}
    if flows:
        params.update(upload_streams=str(len(flows)), cc_algos=",".join(str(p.get("cc")) for _, p in flows))
    groups = list((series.get("rtt") or {}).items())
    for n, (group, points) in enumerate(groups):
        name = PING if n == 0 else f"{PING} {group} (extra)"
        measured[name] = (_pairs(points), "ms")
        raw[name] = _merge({"val": measured[name][0]})
        values = [v for _, v in measured[name][0]]
        series_meta[name] = {"MEAN_VALUE": round(sum(values) / len(values), 3) if values else None,
                             "BBRLAB_GROUP": group}
    if len(groups) > 1:
        params["ping_hosts"] = ",".join(g for g, _ in groups[1:])
    if series.get("queue"):
        host, iface = _bottleneck(record)
        name = f"qdisc_stats_{host}"
        columns = {"backlog_pkts": _pairs(series["queue"]), "delay": _pairs(series.get("queue_delay"))}
        measured.update({f"{name}::{k}": (v, u) for (k, v), u in zip(columns.items(), ("packets", "ms")) if v})
        raw[name] = _merge(columns)
        params.update(qdisc_stats_hosts=host, qdisc_stats_interfaces=iface)
    if series.get("cpu"):
        name = f"cpu_stats_{CPU_HOST}"
        measured[f"{name}::load"] = (_pairs(series["cpu"]), "misc")
        raw[name] = _merge({"load": measured[f"{name}::load"][0]})
        params["cpu_stats_hosts"] = CPU_HOST
    return measured, raw, series_meta, params, len(flows)


def _metadata(run: RunDir, record: dict, run_meta: dict, grid: tuple, params: dict, series_meta: dict) -> dict:
    """The data file's metadata: flent's keys, and bbrlab's own under BBRLAB. GRID: time zero,
    the grid's start, its step, its length and the last sample's time."""
    t0, start, step, total, last = grid
    system = run_meta.get("system") or {}
    senders = [f.get("sender") for f in record.get("flow_plan") or []]
    sysctls = ((record.get("testbed") or {}).get("sysctls") or {}).get(senders[0] if senders else None)
    hosts = list(dict.fromkeys(f["dst"] for f in record.get("flow_plan") or [] if f.get("dst"))) or ["localhost"]
    name = file_name(run, record)
    metadata = {
        "NAME": TEST, "TITLE": f"{run.path.parent.name} {record['id']}", "DATA_FILENAME": name,
        "TIME": _iso(t0 + start), "T0": _iso(t0 + start),
        "HOST": hosts[0], "HOSTS": hosts, "LOCAL_HOST": (senders or [system.get("hostname")])[0], "IP_VERSION": 4,
        "LENGTH": round((record.get("timings") or {}).get("end", last), 3),
        "TOTAL_LENGTH": total, "DELAY": round(-start, 3), "STEP_SIZE": step,
        "TEST_PARAMETERS": params, "SERIES_META": series_meta,
        "KERNEL_NAME": "Linux" if system.get("kernel") else None, "KERNEL_RELEASE": system.get("kernel"),
        "SYSCTLS": sysctls,
        "BBRLAB": {
            "version": run_meta.get("bbrlab"), "git": run_meta.get("git"), "exported_by": __version__,
            "experiment": run.path.parent.name, "title": run_meta.get("title"), "run": run.path.name,
            "point": record["id"], "params": record.get("params"), "repetition": record.get("repetition", 1),
            "time_zero": t0, "summary": record.get("summary"), "link": record.get("link"),
            "pacing": record.get("pacing"), "flows": record.get("flow_plan"), "events": record.get("events"),
            "testbed": record.get("testbed"), "system": system or None,
            "metrics": {k: v for k, v in record["metrics"].items() if k != "flows"},
        },
    }
    return metadata


def point_data(run: RunDir, record: dict, run_meta: dict) -> dict:
    """The flent data file of one finished point, as the JSON object flent loads."""
    try:
        series = run.series(record["id"])
    except BbrlabError as exc:
        raise BbrlabError(f"{exc}; a flent file is made of the point's time series") from None
    t0 = series["t0"]
    measured, raw, series_meta, params, n_flows = _measured(record, series)
    every = [t for points, _ in measured.values() for t, _ in points]
    if not every:
        raise BbrlabError(f"{run.points_dir / record['id']}: no samples to write")
    # the probe's samples set the grid, else the first flow's (a series is (samples, units))
    probe = next((pts for pts, _ in (measured.get(PING, ([], "")), measured.get(UPLOAD.format(1), ([], ""))) if pts), [])
    step = float(f"{_interval(probe) or DEFAULT_STEP:.2g}")  # ping's timer runs a little late: 0.102 -> 0.1
    start = min(0.0, min(every))  # the idle path's first ping, before time zero
    x_values = [round(k * step, 6) for k in range(int(math.floor((max(every) - start) / step + 1e-9)) + 1)]
    times = [start + x for x in x_values]
    results = {name: _on_grid(points, times, step) for name, (points, _) in measured.items()}
    uploads = [results[UPLOAD.format(n)] for n in range(1, n_flows + 1)]
    if uploads:
        results["TCP upload sum"] = _combined(uploads, lambda vs: round(math.fsum(vs), 6))
        results["TCP upload avg"] = _combined(uploads, lambda vs: round(math.fsum(vs) / len(vs), 6))
        measured.update({k: ([], "Mbits/s") for k in ("TCP upload sum", "TCP upload avg")})
    for name, (_, units) in measured.items():
        series_meta.setdefault(name, {})["UNITS"] = units
    for entries in raw.values():
        for entry in entries:
            entry["t"] = round(t0 + entry["t"], 6)

    metadata = _metadata(run, record, run_meta, (t0, start, step, x_values[-1], max(every)), params, series_meta)
    return {"version": FILE_VERSION, "x_values": x_values, "results": results, "raw_values": raw,
            "metadata": metadata}


def export(runs: list[RunDir], out: Path) -> list[Path]:
    """Write one flent data file per finished point of RUNS into OUT; return their paths."""
    folder(out)
    written: list[Path] = []
    for run in runs:
        records = run.point_records()
        if not records:
            raise BbrlabError(f"{run.path}: no finished points to export")
        run_meta = read_json(run.path / "run.json")
        for record in records:
            path = out / file_name(run, record)
            if path in written:
                raise BbrlabError(f"{path}: two points of the runs given have this file name")
            data = json.dumps(point_data(run, record, run_meta), sort_keys=True, allow_nan=False)
            write_atomic(path, gzip.compress(data.encode(), mtime=0))
            written.append(path)
    return written
