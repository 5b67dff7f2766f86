"""Two runs side by side: `bbrlab compare A B`.

Grid points are matched by their sweep values (repetitions averaged, as metrics.json
does); for each match the chosen metrics of A and B, B - A and B / A; the points only one
run has are named. The overlay figure (plots.overlay) draws both runs' RTT and goodput
over time on the same axes. Reads results directories alone, like plot and report.
"""

from __future__ import annotations

from pathlib import Path

from ..verdicts.claims import average_repetitions, point_name
from ..errors import SpecError, did_you_mean
from ..spec.metric_names import CLAIMABLE, METRICS
from ..store.results import RunDir
from .style import FORMATS  # what the overlay is written as: the --out file's extension says which

# What a comparison shows unless told otherwise: goodput, delay, queue, losses, fairness.
DEFAULT_METRICS = ("steady_goodput_mbps", "steady_utilization", "rtt_p50_ms", "rtt_p95_ms", "queue_p50_pkts",
                   "retransmits", "jain_final", "link_busy")


def check_metrics(names: list[str]) -> list[str]:
    for name in names:
        if name not in CLAIMABLE:
            raise SpecError(f"--metric {name}: not a metric the analysis writes{did_you_mean(name, CLAIMABLE)}")
    return names


def _key(record: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in record["params"].items()))


def matched(a: RunDir, b: RunDir) -> tuple[list[tuple[dict, dict]], list[str], list[str]]:
    """(pairs of A's and B's grid points with the same sweep values, A's points only, B's only)."""
    mine = {_key(r): r for r in average_repetitions(a.point_records())}
    theirs = {_key(r): r for r in average_repetitions(b.point_records())}
    if not mine or not theirs:
        raise SpecError(f"{(a if not mine else b).path}: no finished points to compare")
    pairs = [(mine[k], theirs[k]) for k in mine if k in theirs]
    return (pairs, [point_name(mine[k]) for k in mine if k not in theirs],
            [point_name(theirs[k]) for k in theirs if k not in mine])


def _fmt(value) -> str:
    return "–" if value is None else f"{value:.4g}"


def table(a: RunDir, b: RunDir, metrics: list[str]) -> list[str]:
    """The comparison as text lines: per matched point, each metric's A, B, B - A, B / A."""
    pairs, only_a, only_b = matched(a, b)
    lines = [f"A: {a.path}", f"B: {b.path}"]
    for ra, rb in pairs:
        lines += ["", f"{point_name(ra)}:", f"  {'metric':24s} {'A':>10s} {'B':>10s} {'B - A':>10s} {'B / A':>8s}"]
        for name in metrics:
            va, vb = ra["metrics"].get(name), rb["metrics"].get(name)
            if va is None and vb is None:
                continue
            both = isinstance(va, (int, float)) and isinstance(vb, (int, float))
            delta = vb - va if both else None
            ratio = f"{vb / va:8.3f}" if both and va else f"{'–':>8s}"
            unit = METRICS[name][0]
            lines.append(f"  {name:24s} {_fmt(va):>10s} {_fmt(vb):>10s} {_fmt(delta):>10s} {ratio}  {unit}")
    if not pairs:
        lines += ["", "no point of A has the sweep values of a point of B"]
    if only_a:
        lines.append(f"only in A: {', '.join(only_a)}")
    if only_b:
        lines.append(f"only in B: {', '.join(only_b)}")
    return lines


def figure_path(a: RunDir, b: RunDir, out: str | None) -> Path:
    """Where the overlay goes: OUT, whose extension says its format (png, svg or pdf), or
    beside run A (results/NAME/compare-STAMP-vs-NAME-STAMP.png), never into the current folder."""
    if out is None:
        return a.path.parent / f"compare-{a.path.name}-vs-{b.path.parent.name}-{b.path.name}.png"
    path = Path(out)
    if path.suffix.lower().lstrip(".") not in FORMATS:
        raise SpecError(f"--out {out}: the figure is written as {', '.join(FORMATS)}: give a file name "
                        "ending in .png, .svg or .pdf")
    return path
