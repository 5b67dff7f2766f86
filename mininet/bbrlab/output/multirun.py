"""Several runs on one figure: `bbrlab plot --kind KIND RUN1 RUN2 ...` (as flent's
`-i a -i b -p KIND`). Each run's points are drawn by the plot kind as if they were one
run's, with a sweep axis of their own, `run`, whose value says how that run's parameters
differ from the others' (rate=20Mbit, rtt=30ms); runs on different links are allowed
wherever the kind can draw them. Each run keeps its own verdict: this figure judges none.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..errors import BbrlabError
from ..spec import experiment as spec
from ..store.results import RunDir
from . import plots
from .style import formats, variant

SEPARATOR = " | "  # between a run's label and its point's id in the figure's records


def _short(key: str) -> str:
    """link.rate -> rate, flows.0.cc -> cc: the names --set takes, where they are unique."""
    return key.split(".")[-1]


def labels(raws: list[dict], stamps: list[str]) -> list[str]:
    """Each run's label: the parameters in which its spec differs from the others', in the
    order the first spec gives them (claims, plot, title and notes do not count); runs
    that differ in none are told apart by their folders' names."""
    ignored = ("claims", "plot", "title", "description", "notes", "quick", "reference")
    flats = [{k: v for k, v in spec.flatten(raw).items() if not k.startswith(ignored)} for raw in raws]
    keys = list(dict.fromkeys(k for flat in flats for k in flat))
    differing = [k for k in keys if len({repr(flat.get(k)) for flat in flats}) > 1]
    shorts = [_short(k) for k in differing]
    names = [s if shorts.count(s) == 1 else k for s, k in zip(shorts, differing)]
    out = []
    for flat, stamp in zip(flats, stamps):
        text = ", ".join(f"{n}={flat.get(k, '-')}" for n, k in zip(names, differing))
        out.append(text or stamp)
    if len(set(out)) < len(out):  # the same parameters twice: repetitions of one setup
        out = [f"{text} ({stamp})" if text != stamp else stamp for text, stamp in zip(out, stamps)]
    if len(set(out)) < len(out):  # one run given twice: told apart by its place
        out = [f"{text} #{i}" for i, text in enumerate(out, 1)]
    return out


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
        name, _, pid = point_id.partition(SEPARATOR)
        return _renamed(self.runs[name].series(pid), self.ccs[name])

    def point_records(self) -> list[dict]:
        records = []
        for name, run in self.runs.items():
            for rec in run.point_records():
                rec = _renamed(rec, self.ccs[name])
                rec["id"] = f"{name}{SEPARATOR}{rec['id']}"
                rec["params"] = {"run": name, **rec.get("params", {})}
                records.append(rec)
        return records


def check(dirs: list[str], kind: str | None, out: str | None, format_text: str) -> None:
    """What `plot` needs to draw several runs together, each lack said in one line."""
    from ..errors import SpecError
    from .plot_kinds import PLOTS

    if len(dirs) < 2:
        raise SpecError("plot --out: for several runs drawn together (plot --kind KIND RUN1 RUN2 ... --out FILE)")
    if not kind:
        raise SpecError(f"plot: several runs are drawn together as one plot kind: add --kind KIND "
                        f"(one of: {', '.join(PLOTS)})")
    if out is not None and Path(out).suffix.lower().lstrip(".") not in formats(format_text):
        raise SpecError(f"plot --out {out}: its extension is not among --format {format_text}")


def draw(runs: list[RunDir], kind: str, out: Path | None, chosen: tuple[str, ...] = ("png",)) -> Path:
    """RUNS drawn together as plot kind KIND into OUT (default: beside the first run,
    runs-KIND.png); returns the path of the first format."""
    from .plot_kinds import PLOTS

    if PLOTS[kind].one_point:
        several = ", ".join(k for k, v in PLOTS.items() if not v.one_point)
        raise BbrlabError(f"plot --kind {kind}: draws one point's flows, not several runs (several runs: {several})")
    raws = [spec.load_raw(run.path / "spec.yaml") for run in runs]
    names = labels(raws, [f"{run.path.parent.name}/{run.path.name}" for run in runs])
    together = RunSet(runs, names)
    records = together.point_records()
    if not records:
        raise BbrlabError("plot: none of these runs has a finished point")
    missing = plots.missing_series(kind, together, records)
    if missing:
        raise BbrlabError(f"plot --kind {kind}: these runs lack the series it draws "
                          f"({', '.join(missing[:3])}{' …' if len(missing) > 3 else ''})")
    first = spec.build(raws[0], default_name=runs[0].path.parent.name)
    exp = dataclasses.replace(first, axes={"run": names, **first.axes},
                              title=f"{len(runs)} runs: " + "; ".join(names), plot_title=None)
    verdict = {"verdict": "not evaluated", "why": ["several runs on one figure: each keeps its own verdict"],
               "claims": [], "cpu_bound_points": [], "link_short_points": []}
    fig = plots.figure(exp, together, records, verdict, kind)
    base = out or runs[0].path / f"runs-{kind}.png"
    return plots.save(fig, base, chosen)
