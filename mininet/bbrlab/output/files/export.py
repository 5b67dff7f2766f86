"""Tidy tables of runs for one's own analysis: `bbrlab export RUN... --format csv`.

Three CSV files, each readable in one call (pandas.read_csv, R's read.csv):
    points.csv  one row per point (each repetition): labels, then numbers in SI units
    flows.csv   one row per flow of each point
    series.csv  every time series in long format: point, series, subject, t_s, value, unit
and, for runs with short flows (flows.*.workload):
    shortflows.csv  one row per short flow: class, CC, size, times, FCT, slowdown, completed
Numbers are SI (bit/s, seconds, bytes, packets, fractions); a column's name says its
unit (`_bps`, `_s`); the sweep values as written stay beside them as `param_*` labels.
Time series share one clock: seconds from the point's time zero (its first flow's start).
Reads results directories alone, like plot and report.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ...errors import BbrlabError
from ...schema.metric_names import METRICS
from ...store.results import RunDir, write_atomic

# A unit as the analysis writes it -> (factor to SI, the SI column suffix replacing its own)
_SI = {"Mbit/s": (1e6, "_bps"), "ms": (1e-3, "_s")}
_SUFFIX = {"_mbps": "Mbit/s", "_ms": "ms"}


def si_name(name: str) -> tuple[str, float]:
    """('goodput_mbps') -> ('goodput_bps', 1e6): a metric's SI column and its factor."""
    for suffix, unit in _SUFFIX.items():
        if name.endswith(suffix):
            factor, si = _SI[unit]
            return name[: -len(suffix)] + si, factor
    return name, 1.0


def _scaled(value, factor: float):
    """VALUE in SI: numbers times FACTOR (kept whole when it is 1), to 12 significant digits."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or factor == 1.0:
        return value
    return float(f"{value * factor:.12g}")


def _number(value) -> float | int | str:
    if isinstance(value, bool):
        return int(value)
    return "" if value is None else value


def _labels(run: RunDir, record: dict) -> dict:
    return {"experiment": run.path.parent.name, "run": run.path.name, "point": record["id"],
            "repetition": record.get("repetition", 1)}


def _point_row(run: RunDir, record: dict) -> dict:
    link = record.get("link") or {}
    buffer = link.get("buffer") or {}
    row = _labels(run, record)
    row.update({f"param_{k}": v for k, v in record["params"].items()})
    row.update({"pacing": record.get("pacing", ""), "rate_bps": link.get("rate"), "rtt_s": link.get("rtt"),
                "buffer_value": buffer.get("value"), "buffer_unit": buffer.get("unit"),
                "loss": link.get("loss"), "jitter_s": link.get("jitter")})
    for name, value in record["metrics"].items():
        if METRICS.get(name, ("",))[0] == "list" or isinstance(value, (list, dict)):
            continue  # flows and per-rate lists have tables of their own
        column, factor = si_name(name)
        row[column] = _scaled(value, factor)
    return row


def _flow_rows(run: RunDir, record: dict) -> list[dict]:
    rows = []
    for flow in record["metrics"].get("flows") or []:
        row = _labels(run, record)
        for name, value in flow.items():
            column, factor = si_name(name)
            row["flow" if name == "id" else column] = _scaled(value, factor)
        rows.append(row)
    return rows


# A series' unit as stored -> (factor to SI, SI unit)
_SERIES_UNITS = {"throughput": (1e6, "bit/s"), "pacing_mbps": (1e6, "bit/s"), "delivery_mbps": (1e6, "bit/s"),
                 "bbr_bw_mbps": (1e6, "bit/s"), "cwnd": (1.0, "pkt"), "srtt_ms": (1e-3, "s"),
                 "rtt": (1e-3, "s"), "queue": (1.0, "pkt"), "link_sent": (1e6, "bit/s"),
                 "link_rate": (1e6, "bit/s"), "cpu": (1.0, "fraction"), "jain": (1.0, "fraction")}


def _series_name(name: str) -> str:
    """The series' SI name: srtt_ms -> srtt, pacing_mbps -> pacing."""
    for suffix in ("_mbps", "_ms"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _series_rows(run: RunDir, record: dict) -> list[dict]:
    try:
        series = run.series(record["id"])
    except BbrlabError:
        return []  # a copy without series.json: points and flows still export
    labels = _labels(run, record)
    found: list[tuple[str, str, list]] = []
    for flow, per in (series.get("flows") or {}).items():
        found += [(name, flow, pts) for name, pts in per.items() if isinstance(pts, list)]
    for group, pts in (series.get("rtt") or {}).items():
        found.append(("rtt", group, pts))
    found += [(name, "link", series[name]) for name in ("queue", "link_sent", "link_rate", "cpu", "jain")
              if isinstance(series.get(name), list)]
    rows = []
    for name, subject, pts in found:
        if name not in _SERIES_UNITS:
            continue
        factor, unit = _SERIES_UNITS[name]
        rows += [dict(labels, series=_series_name(name), subject=subject, t_s=t, value=_scaled(v, factor), unit=unit)
                 for t, v in pts]
    return rows


def _short_rows(run: RunDir, record: dict) -> list[dict]:
    """Every short flow of the point (series.json's rows), in SI units."""
    try:
        rows = run.series(record["id"]).get("shortflows") or []
    except BbrlabError:
        return []
    out = []
    for flow in rows:
        row = dict(_labels(run, record), flow=flow["id"])
        for name, value in flow.items():
            if name != "id":
                column, factor = si_name(name)
                row[column] = _scaled(value, factor)
        out.append(row)
    return out


def _csv(rows: list[dict]) -> str:
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _number(row.get(c)) for c in columns})
    return text.getvalue()


def folder(out: Path) -> Path:
    """OUT, where export's files go, or a one-line BbrlabError when a file is there."""
    if out.exists() and not out.is_dir():
        raise BbrlabError(f"{out}: a file is there; export writes its files (points.csv, flows.csv, series.csv, "
                          "or .flent.gz) into a folder: give --out a folder's name")
    return out


def export(runs: list[RunDir], out: Path) -> list[Path]:
    """Write points.csv, flows.csv and series.csv for RUNS into OUT (and shortflows.csv when
    they have short flows); return their paths."""
    folder(out)
    points, flows, series, shorts = [], [], [], []
    for run in runs:
        records = run.point_records()
        if not records:
            raise BbrlabError(f"{run.path}: no finished points to export")
        for record in records:
            points.append(_point_row(run, record))
            flows += _flow_rows(run, record)
            series += _series_rows(run, record)
            shorts += _short_rows(run, record)
    written = []
    tables = [("points.csv", points), ("flows.csv", flows), ("series.csv", series)]
    for name, rows in tables + ([("shortflows.csv", shorts)] if shorts else []):
        path = out / name
        write_atomic(path, _csv(rows))
        written.append(path)
    return written
