"""Two runs side by side: `bbrlab compare A B`.

Grid points are matched by their sweep values (repetitions averaged, as metrics.json
does); for each match the chosen metrics of A and B, B - A and B / A; the points only one
run has are named. Where the runs' setups differ (rtt 40ms vs 30ms, another kernel:
differences.py), a line says how and each matched point's heading repeats it. Where points
were repeated, each side's 95% interval and whether B's mean lies within the spread of A's
repetitions (an A/B of two kernels). A class metric (share, retransmit_rate) is compared
per CC. The overlay figure (plots.overlay) draws both runs' RTT and goodput over time on
the same axes. Reads results directories alone, like plot and report.
"""

from __future__ import annotations

from pathlib import Path

from ...analysis import stats
from ...verdicts.claims import average_repetitions, grid_points, point_name
from ...errors import SpecError, did_you_mean
from ...schema.metric_names import ALL_METRICS, CLAIMABLE, CLASS_METRICS
from ...store.results import RunDir
from . import differences
from ..figures.style import FORMATS  # what the overlay is written as: the --out file's extension says which

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


UNITS = {name: meta[0] for name, meta in {**ALL_METRICS, **CLASS_METRICS}.items()}


def matched(a: RunDir, b: RunDir, records: tuple[list[dict], list[dict]] | None = None
            ) -> tuple[list[tuple[dict, dict]], list[str], list[str]]:
    """(pairs of A's and B's grid points with the same sweep values, A's points only, B's only).
    RECORDS: A's and B's point records when the caller has read them already."""
    recs_a, recs_b = records or (a.point_records(), b.point_records())
    mine = {_key(r): r for r in average_repetitions(recs_a)}
    theirs = {_key(r): r for r in average_repetitions(recs_b)}
    if not mine or not theirs:
        raise SpecError(f"{(a if not mine else b).path}: no finished points to compare")
    pairs = [(mine[k], theirs[k]) for k in mine if k in theirs]
    return (pairs, [point_name(mine[k]) for k in mine if k not in theirs],
            [point_name(theirs[k]) for k in theirs if k not in mine])


def _fmt(value) -> str:
    return "–" if value is None else f"{value:.4g}"


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _rows(records: list[dict], name: str) -> dict[str, list[float]]:
    """NAME's values over a point's repetitions: the point's own metric, or, for a class
    metric the point does not have at its top (share, retransmit_rate, ...), one row per CC
    ("share[bbr]")."""
    if any(_number(r["metrics"].get(name)) for r in records):
        return {name: [r["metrics"][name] for r in records if _number(r["metrics"].get(name))]}
    rows: dict[str, list[float]] = {}
    if name in CLASS_METRICS:
        for r in records:
            for cc, mets in sorted((r["metrics"].get("by_cc") or {}).items()):
                if _number(mets.get(name)):
                    rows.setdefault(f"{name}[{cc}]", []).append(mets[name])
    return rows


def _spread(va: list[float], vb: list[float]) -> tuple[str, bool | None]:
    """The repetitions' columns: each side's 95% half-width (Student's t) and whether B's
    mean lies within the range of A's repetitions (None: A has one)."""
    half = [stats.interval(v) for v in (va, vb)]
    text = " ".join(f"{'±' + _fmt(iv.mean - iv.low) if iv.n > 1 else '':>9s}" for iv in half)
    if len(va) < 2:
        return f"{text} {'':>6s}", None
    within = min(va) <= half[1].mean <= max(va)
    return f"{text} {'yes' if within else 'NO':>6s}", within


def _heading(a: RunDir, b: RunDir) -> tuple[list[str], str]:
    """(the lines naming A and B, and, where their setups differ, the line that says how;
    the words each matched point's heading adds: "" when they do not differ). Points are
    matched by their sweep values alone: two setups' points are still set side by side,
    but never without saying that they are two setups."""
    differ = differences.between([a, b])
    if not differ.keys:
        return [f"A: {a.path}", f"B: {b.path}"], ""
    notes = [differ.note(0), differ.note(1)]
    return ([f"A: {a.path} ({notes[0]})", f"B: {b.path} ({notes[1]})", differ.line()],
            f", A ({notes[0]}) vs B ({notes[1]})")


def table(a: RunDir, b: RunDir, metrics: list[str]) -> list[str]:
    """The comparison as text lines: per matched point, each metric's A, B, B - A, B / A
    (means over repetitions). Where a point was repeated: each mean's 95% interval and
    whether B's mean lies within the spread of A's repetitions, counted at the end; this is
    how two kernels or two builds are told apart from run-to-run noise."""
    records = (a.point_records(), b.point_records())  # read once: both the means and the repetitions
    pairs, only_a, only_b = matched(a, b, records)
    groups = [{_key(g[0]): g for g in grid_points(recs)} for recs in records]
    repeated = any(len(g) > 1 for side in groups for g in side.values())
    lines, paired = _heading(a, b)
    judged: list[tuple[str, bool]] = []
    extra = f" {'A ±95%':>9s} {'B ±95%':>9s} {'in A':>6s}" if repeated else ""
    for ra, rb in pairs:
        ga, gb = (side[_key(ra)] for side in groups)
        lines += ["", f"{point_name(ra)}{paired}:",
                  f"  {'metric':24s} {'A':>10s} {'B':>10s} {'B - A':>10s} {'B / A':>8s}{extra}"]
        for name in metrics:
            rows_a, rows_b = _rows(ga, name), _rows(gb, name)
            for row in list(dict.fromkeys([*rows_a, *rows_b])):
                va, vb = rows_a.get(row, []), rows_b.get(row, [])
                ma, mb = (sum(v) / len(v) if v else None for v in (va, vb))
                both = ma is not None and mb is not None
                delta = mb - ma if both else None
                if delta is not None and abs(delta) <= 1e-12 * max(abs(ma), abs(mb)):
                    delta = 0.0  # a mean of the same values summed in another order
                ratio = f"{mb / ma:8.3f}" if both and ma else f"{'–':>8s}"
                unit = UNITS[name]
                line = f"  {row:24s} {_fmt(ma):>10s} {_fmt(mb):>10s} {_fmt(delta):>10s} {ratio}"
                if repeated and both:
                    cols, within = _spread(va, vb)
                    line += cols
                    if within is not None:
                        judged.append((f"{point_name(ra)}: {row}", within))
                lines.append(f"{line}  {unit}")
    if not pairs:
        lines += ["", "no point of A has the sweep values of a point of B"]
    if only_a:
        lines.append(f"only in A: {', '.join(only_a)}")
    if only_b:
        lines.append(f"only in B: {', '.join(only_b)}")
    if judged:
        outside = [name for name, within in judged if not within]
        lines += ["", f"B's mean lies within the range of A's repetitions for {len(judged) - len(outside)} of "
                  f"{len(judged)} values" + (f"; outside it: {'; '.join(outside)}" if outside else "")]
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
