"""The last arrow of a run: finished points -> merged metrics, claims' verdict, figure.

Reads the results directory alone (no testbed, no Mininet), so `bbrlab plot` can redraw
a run anywhere, years later. A run's own verdict.json and metrics.json are written by the run alone;
judging it again with other claims writes verdict-rejudged.json (and its figure) beside.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from .. import log
from ..verdicts import claims
from ..store import metadata
from . import plots
from ..spec import experiment as spec
from ..errors import BbrlabError, SpecError
from ..store.results import RunDir, read_json, write_atomic, write_json
from ..spec.experiment import Experiment

FIDELITY = "fidelity"  # the experiment that measures the emulator alone


def fidelity_gate(rundir: RunDir, exp: Experiment) -> dict | None:
    """The emulator's limit on the machine the run was measured on, from the calibration
    it recorded (calibrate.py): points at the gate's rate or above cannot be trusted.

    Whether one flow's goodput falls short because of its congestion control or because
    the emulator cannot carry the rate is not visible in that point alone (a slow sender
    path leaves the bottleneck's queue empty); the calibration settles it per machine.
    """
    if exp.name == FIDELITY:
        return None
    cal = metadata.read_run(rundir).get("calibration")
    gate = (cal or {}).get("gate")
    if not gate:
        return None
    out = {"rate_bps": float(gate["rate_bps"]), "run": cal.get("file"),
           "failed": f"calibration {cal.get('key')}: {gate['failed']}"}
    paths = {path: {"rate_bps": float(c["gate"]["rate_bps"]), "failed": f"calibration of {path}: {c['gate']['failed']}"}
             for path, c in (cal.get("paths") or {}).items() if c.get("gate")}
    return dict(out, paths=paths) if paths else out


def undecided(rundir: RunDir, exp: Experiment, allowed: set[str] | None = None) -> tuple[int, dict[str, int]]:
    """`repeat: auto`'s reading of RUNDIR: (how many claim checks straddle their bound,
    {grid point as verdicts name it: its highest repetition so far} of the points such a
    check rests on that have fewer than exp.repeat_max repetitions). Checks set aside as
    untrusted do not count: more runs of a CPU-bound point decide nothing. ALLOWED: the
    only grid points that may be named (a run of --only)."""
    records = rundir.point_records()
    straddling = claims.straddling(claims.verdict(exp.claims, records, fidelity_gate(rundir, exp)))
    done: dict[str, list[int]] = {}
    for record in records:
        done.setdefault(claims.point_name(record), []).append(record["repetition"])
    return len(straddling), {name: max(done.get(name, [0])) for check in straddling for name in check["points"]
                             if len(done.get(name, ())) < exp.repeat_max and (allowed is None or name in allowed)}


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


def judged_with(exp: Experiment) -> str:
    """The fingerprint of the spec a verdict was judged with (its claims, plot and title)."""
    return hashlib.sha256(exp.source.encode()).hexdigest()[:16]


def stale(rundir: RunDir, exp: Experiment) -> bool:
    """Whether RUNDIR's own verdict.json was judged with another spec than EXP (its
    spec.yaml edited by hand since); a verdict older than the fingerprint counts as EXP's."""
    seen = read_json(rundir.path / "verdict.json").get("judged_with")
    return seen is not None and seen != judged_with(exp)


def _judge(rundir: RunDir, exp: Experiment) -> tuple[list[dict], list[dict], dict]:
    """(records, repetitions averaged, verdict) of RUNDIR's finished points judged by EXP."""
    records = rundir.point_records()
    if not records:
        raise BbrlabError(f"{rundir.path}: no finished points to summarize")
    merged = claims.average_repetitions(records)
    v = claims.verdict(exp.claims, records, fidelity_gate(rundir, exp))
    # the planned points, and any repetitions `repeat: auto` added beyond them
    total = len({p.id for p in exp.points} | rundir.finished_points())
    v["points"] = {"finished": len(records), "total": total}
    meta = metadata.read_run(rundir)
    v["overhead"] = metadata.overhead(meta, records)
    v["judged_with"] = judged_with(exp)
    return records, merged, v


def _metrics(merged: list[dict]) -> dict:
    return {"points": [{"params": r["params"], "metrics": r["metrics"]} for r in merged]}


def _show(v: dict, figure: Path) -> dict:
    v["figure"] = str(figure)
    print("\n".join(claims.verdict_lines(v)))
    print(f"figure: {figure}")
    return v


def finish(rundir: RunDir, exp: Experiment, formats: tuple[str, ...] = ("png",)) -> dict:
    """The run's own summary, written once when its points are done: metrics.json,
    verdict.json and the figure, from the results directory alone."""
    records, merged, v = _judge(rundir, exp)
    write_json(rundir.path / "metrics.json", _metrics(merged))
    write_json(rundir.path / "verdict.json", v)
    return _show(v, plots.draw(exp, rundir, records, v, formats=formats))


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
    records, merged, v = _judge(rundir, exp)
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


def judging_specs(rundir: RunDir, folder: Path) -> tuple[Experiment, Experiment | None]:
    """(the spec RUNDIR ran with, from its spec.yaml; today's experiment file in FOLDER or its quick
    profile when that measures what the run measured, else None: a --set run, or a file
    changed since). Today's claims, plot or title then judge the run again, beside its own
    verdict (summary.rejudge); the run's spec.yaml and verdict.json stay as they are."""
    ran = spec.build(spec.load_raw(rundir.path / "spec.yaml"), default_name=rundir.path.parent.name)
    path = folder / f"{ran.name}.yaml"
    for quick in (False, True):
        try:
            today = spec.load(path, quick=quick)
        except SpecError:  # no such file, or one that no longer parses
            break
        if today.identity == ran.identity:
            return ran, today
    return ran, None
