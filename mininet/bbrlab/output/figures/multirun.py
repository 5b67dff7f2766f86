"""Several runs on one figure: `bbrlab plot --kind KIND RUN1 RUN2 ...` (as flent's
`-i a -i b -p KIND`). Each run's points are drawn by the plot kind as if they were one
run's, with a sweep axis of their own, `run`, whose value is the run's label: its place
and how its setup differs from the others' ("run 2 (rtt 30ms)", differences.py). Each
run's CCs are drawn under names of their own, and every label a kind gives a CC ends with
that run's label (style.runs_named), so each run's curves, bars and panels say which run
they are in every kind. The title names the runs; the parameter line gives what all runs
share once and each run's own beside its name; a line on stdout says how they differ. A
kind's guides (a configured rate, a base RTT, what a full buffer holds) are each run's own
where the runs differ in them, and its panels' titles say each run's value (guides.py).
Runs on different links are allowed wherever the kind can draw them. Each run keeps its
own verdict: this figure judges none.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ...errors import BbrlabError
from ...verdicts.set_aside import POINT_LISTS
from ...schema import experiment as spec
from ...store.results import RunDir
from ..reports import differences
from . import plots
from .style import RUN_AXIS, RUN_SEPARATOR, formats, runs_named, variant


def _renamed(obj, names: dict[str, str]):
    """OBJ (a record, its metrics or its series) with each CC in NAMES renamed where the plot
    kinds read a CC: "cc" fields and by_cc's keys."""
    if isinstance(obj, list):
        return [_renamed(v, names) for v in obj]
    if not isinstance(obj, dict):
        return obj
    out = {}
    for key, value in obj.items():
        if key == "cc" and isinstance(value, str):
            out[key] = names.get(value, value)
        elif key == "by_cc" and isinstance(value, dict):
            out[key] = {names.get(cc, cc): _renamed(v, names) for cc, v in value.items()}
        else:
            out[key] = _renamed(value, names)
    return out


class RunSet:
    """The runs as the one run a plot kind draws: each record's id and params carry its
    run's label, series are read from the run the record came from, and the CCs of every
    run but the first are drawn in their own shades (style.variant), labelled with the run."""

    def __init__(self, runs: list[RunDir], names: list[str]):
        self.runs = dict(zip(names, runs))
        self.path = runs[0].path
        self.ccs: dict[str, dict[str, str]] = {}
        for k, (name, run) in enumerate(self.runs.items()):
            found = {g["cc"] for rec in run.point_records() for g in rec.get("flows", [])}
            self.ccs[name] = {cc: variant(cc, k) for cc in sorted(found)}

    def series(self, point_id: str) -> dict:
        name, _, pid = point_id.partition(RUN_SEPARATOR)
        return _renamed(self.runs[name].series(pid), self.ccs[name])

    def point_records(self) -> list[dict]:
        records = []
        for name, run in self.runs.items():
            for rec in run.point_records():
                rec = _renamed(rec, self.ccs[name])
                rec["id"] = f"{name}{RUN_SEPARATOR}{rec['id']}"
                rec["params"] = {RUN_AXIS: name, **rec.get("params", {})}
                records.append(rec)
        return records


def check(dirs: list[str], kind: str | None, out: str | None, format_text: str) -> None:
    """What `plot` needs to draw several runs together, each lack said in one line."""
    from ...errors import SpecError
    from .plot_kinds import PLOTS

    if len(dirs) < 2:
        raise SpecError("plot --out: for several runs drawn together (plot --kind KIND RUN1 RUN2 ... --out FILE)")
    if not kind:
        raise SpecError(f"plot: several runs are drawn together as one plot kind: add --kind KIND "
                        f"(one of: {', '.join(PLOTS)})")
    if out is not None and Path(out).suffix.lower().lstrip(".") not in formats(format_text):
        raise SpecError(f"plot --out {out}: its extension is not among --format {format_text}")


def draw(runs: list[RunDir], kind: str, out: Path | None, chosen: tuple[str, ...] = ("png",)) -> tuple[Path, str]:
    """RUNS drawn together as plot kind KIND into OUT (default: beside the first run,
    runs-KIND.png); returns (the path of the first format, the line saying how the runs'
    setups differ: "" when they do not)."""
    fig, differ = figure(runs, kind)
    return plots.save(fig, out or runs[0].path / f"runs-{kind}.png", chosen), differ


def figure(runs: list[RunDir], kind: str):
    """(RUNS drawn together as plot kind KIND: a matplotlib Figure, the line saying how the
    runs' setups differ)."""
    from .plot_kinds import PLOTS

    if PLOTS[kind].one_point:
        several = ", ".join(k for k, v in PLOTS.items() if not v.one_point)
        raise BbrlabError(f"plot --kind {kind}: draws one point's flows, not several runs (several runs: {several})")
    differ = differences.between(runs)
    names = differ.labels
    together = RunSet(runs, names)
    records = together.point_records()
    if not records:
        raise BbrlabError("plot: none of these runs has a finished point")
    missing = plots.missing_series(kind, together, records)
    if missing:
        raise BbrlabError(f"plot --kind {kind}: these runs lack the series it draws "
                          f"({', '.join(missing[:3])}{' …' if len(missing) > 3 else ''})")
    built = [spec.build(spec.load_raw(run.path / "spec.yaml"), default_name=run.path.parent.name) for run in runs]
    exp = dataclasses.replace(built[0], axes={**built[0].axes, RUN_AXIS: names}, plot_title=None,
                              title=f"{' and '.join(dict.fromkeys(e.name for e in built))}, {len(runs)} runs: "
                              + ", ".join(names))
    verdict = {"verdict": "not evaluated", "why": ["several runs on one figure: each keeps its own verdict"],
               "claims": [], **{key: [] for key in POINT_LISTS}}
    with runs_named({cc: name for name, ccs in zip(names, together.ccs.values()) for cc in ccs.values()}):
        fig = plots.figure(exp, together, records, verdict, kind, params_text(runs, built))
    return fig, differ.line()


def params_text(runs: list[RunDir], built: list) -> str:
    """The figure's parameter lines for several runs (BUILT: their experiments): the parts all
    runs share, then each run's own beside its place ("run 2: base RTT 30 ms, buffer 50 pkt
    (2 BDP)"): no run's parameters are given as everyone's."""
    parts = []
    for run, exp in zip(runs, built):
        records = run.point_records()
        parts.append(plots.params_parts(records, exp.axes) if records else ["no finished point"])
    shared = [p for p in parts[0] if all(p in other for other in parts[1:])]
    own = [(f"run {k}", [p for p in mine if p not in shared]) for k, mine in enumerate(parts, 1)]
    lines = [", ".join(shared)] if shared else []
    return "\n".join(lines + [f"{name}: {', '.join(mine)}" for name, mine in own if mine])
