"""The last arrow of a run: finished points -> merged metrics, claims' verdict, figure.

Reads the results directory alone (no testbed, no Mininet), so `bbrlab plot` can redraw
a run anywhere, years later. A run's own verdict.json and metrics.json are written by the run alone;
judging it again with other claims writes verdict-rejudged.json (and its figure) beside.
"""

from __future__ import annotations

import time
from pathlib import Path

from ... import log
from ...verdicts import claims, judge
from ..figures import plots
from ...errors import BbrlabError
from ...store.results import RunDir, read_json, write_atomic, write_json
from ...schema.experiment import Experiment

# A re-judgement's files, beside the run's own (which stay as the run wrote them).
REJUDGED = "-rejudged"


def rejudged_files(rundir: RunDir, name: str) -> dict[str, Path]:
    """Where a re-judgement of RUNDIR (experiment NAME) writes: verdict, metrics, the spec
    that judged, and the figure drawn from that verdict."""
    return {"verdict": rundir.path / f"verdict{REJUDGED}.json", "metrics": rundir.path / f"metrics{REJUDGED}.json",
            "spec": rundir.path / f"spec{REJUDGED}.yaml", "figure": rundir.path / f"{name}{REJUDGED}.png"}


def current_verdict(rundir: RunDir, name: str) -> tuple[dict, bool]:
    """RUNDIR's verdict as it stands today, and whether it is a re-judgement: the newest
    re-judgement when there is one, else the run's own verdict.json."""
    rejudged = rejudged_files(rundir, name)["verdict"]
    if rejudged.is_file():
        return read_json(rejudged), True
    return read_json(rundir.path / "verdict.json"), False


def _metrics(merged: list[dict]) -> dict:
    return {"points": [{"params": r["params"], "metrics": r["metrics"]} for r in merged]}


def _show(v: dict, figure: Path | None, rundir: RunDir | None = None) -> dict:
    print("\n".join(claims.verdict_lines(v)))
    if figure is None:
        print(f"figure: not drawn (--no-figure): bbrlab plot {rundir.path}")
        return v
    v["figure"] = str(figure)
    print(f"figure: {figure}")
    return v


def finish(rundir: RunDir, exp: Experiment, formats: tuple[str, ...] = ("png",), figure: bool = True) -> dict:
    """The run's own summary, written once when its points are done: metrics.json,
    verdict.json and (FIGURE) the figure, from the results directory alone."""
    records, merged, v = judge.judge(rundir, exp)
    write_json(rundir.path / "metrics.json", _metrics(merged))
    write_json(rundir.path / "verdict.json", v)
    return _show(v, plots.draw(exp, rundir, records, v, formats=formats) if figure else None, rundir)


def redraw(rundir: RunDir, exp: Experiment, formats: tuple[str, ...] = ("png",)) -> dict:
    """Draw the figure again from the run's own verdict.json, which stays as it is."""
    v = read_json(rundir.path / "verdict.json")
    for stale in rejudged_files(rundir, exp.name).values():  # judged as the run was: no other word stands
        stale.unlink(missing_ok=True)
    return _show(v, plots.draw(exp, rundir, rundir.point_records(), v, formats=formats))


def rejudge(rundir: RunDir, exp: Experiment, why: str, formats: tuple[str, ...] = ("png",)) -> dict:
    """Judge RUNDIR again with EXP (today's claims, or points analyzed again) and draw it,
    beside the run's own summary: verdict.json and metrics.json stay as the run wrote them.
    WHY says what differs; it is recorded in the new verdict."""
    records, merged, v = judge.judge(rundir, exp)
    files = rejudged_files(rundir, exp.name)
    v["rejudged"] = {"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "why": why,
                     "original": {"verdict": read_json(rundir.path / "verdict.json")["verdict"]}
                     if (rundir.path / "verdict.json").is_file() else None}
    write_atomic(files["spec"], exp.source)
    write_json(files["metrics"], _metrics(merged))
    write_json(files["verdict"], v)
    figure = plots.draw(exp, rundir, records, v, name=exp.name + REJUDGED, formats=formats)
    log.info(f"re-judged ({why}): {files['verdict'].name} and {figure.name} written beside the run's own "
             "verdict.json and metrics.json, which are kept as the run wrote them")
    return _show(v, figure)


def draw_kind(rundir: RunDir, exp: Experiment, kind: str, formats: tuple[str, ...] = ("png",)) -> Path:
    """Draw RUNDIR as plot kind KIND (any registered kind, not only the experiment's own),
    with the verdict as it stands today, into NAME-KIND.png beside the run's figure."""
    records = rundir.point_records()
    missing = plots.missing_series(kind, rundir, records)
    if missing:
        raise BbrlabError(f"plot --kind {kind}: {rundir.path} lacks the series it draws "
                          f"({', '.join(missing[:3])}{' …' if len(missing) > 3 else ''})")
    verdict = current_verdict(rundir, exp.name)[0]
    figure = plots.draw(exp, rundir, records, verdict, name=f"{exp.name}-{kind}", formats=formats, kind=kind)
    print(f"figure: {figure}")
    return figure
