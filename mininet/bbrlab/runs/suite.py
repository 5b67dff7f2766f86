"""The suite: every experiment, shortest first, continued where it stopped; on a shard
(`bbrlab suite --shard K/N`), this host's part of the whole suite's grid (shard.py)."""

from __future__ import annotations

import time
from pathlib import Path

from .. import log
from . import shard as sharding
from ..errors import BbrlabError, SpecError, did_you_mean
from ..schema import experiment as spec
from ..schema.catalog import name_of, refuse_any
from ..schema.datasets import FETCH, MissingData
from ..verdicts import reference_numbers
from ..store import metadata
from ..store.results import RunDir


def experiments(folder: Path, quick: bool = False) -> list[spec.Experiment]:
    """Every experiment in FOLDER, shortest first (first results come soonest)."""
    exps, lacking = loadable(folder, quick)
    for name, exc in lacking.items():
        raise SpecError(f"{name} {exc.needs}")
    return exps


def loadable(folder: Path, quick: bool = False) -> tuple[list[spec.Experiment], dict[str, MissingData]]:
    """Every experiment in FOLDER this checkout has the data for, shortest first, and
    {name: what it lacks} for the others (a trace fetch-data provides, not there)."""
    refuse_any(folder)  # two files of one name would write into one results folder
    exps, lacking = load_each(sorted(folder.glob("*.yaml")), quick)
    return sorted(exps, key=lambda e: (sum(p.duration for p in e.points), e.name)), lacking


def load_each(paths: list[Path], quick: bool = False) -> tuple[list[spec.Experiment], dict[str, MissingData]]:
    """The experiment files PATHS loaded, in order, but for those lacking data: {name: what}."""
    exps, lacking = [], {}
    for path in paths:
        try:
            exps.append(spec.load(path, quick=quick))
        except MissingData as exc:
            lacking[name_of(path)] = exc  # by its name, as the loaded ones go
    return exps, lacking


def chosen(exps: list[spec.Experiment], lacking: dict[str, MissingData], names: list[str]):
    """(EXPS, LACKING) narrowed to NAMES (all when there are none); an unknown name is an error."""
    if not names:
        return exps, lacking
    known = {e.name for e in exps} | set(lacking)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SpecError(f"unknown experiment(s) {', '.join(unknown)}{did_you_mean(unknown[0], known)} "
                        f"(known: {', '.join(sorted(known))})")
    return [e for e in exps if e.name in names], {n: exc for n, exc in lacking.items() if n in names}


def needs(lacking: dict[str, MissingData]) -> dict[str, str]:
    """{name: what it needs} of experiments LACKING data."""
    return {name: exc.needs for name, exc in lacking.items()}


def say_lacking(why: dict[str, str], doing: str) -> None:
    """One line per experiment left out ({name: why}): what it needs, how to get it."""
    for name, text in why.items():
        log.warning(f"bbrlab: {doing} {name}, which {text}")


def kernel_lacking(exps: list[spec.Experiment]) -> dict[str, str]:
    """{name: what it needs} of the experiments whose congestion controls this kernel does not
    offer even after loading their modules (bbr3 on Debian's 6.1): the whole suite runs the
    others and names these, where an experiment asked for by name is refused by the preflight."""
    from ..emulation import preflight

    ccs = {e.name: {g.cc for p in e.points for g in p.flows if g.tool == "iperf3"} for e in exps}
    absent = set(preflight.missing_ccs(set().union(*ccs.values())))  # the modules are tried once
    out = {}
    for name, wanted in ccs.items():
        missing = sorted(wanted & absent)
        if missing:
            hints = preflight.cc_hints(missing)
            out[name] = (f"needs congestion control(s) {', '.join(missing)}, which kernel {preflight.release()} "
                         "does not offer" + (f": {'; '.join(hints)}" if hints else ""))
    return out


def runnable_here(exps: list[spec.Experiment]) -> tuple[list[spec.Experiment], dict[str, str]]:
    """(EXPS but those this kernel cannot run, {name: what it needs} of those), each of them
    named in one line."""
    off = kernel_lacking(exps)
    say_lacking(off, "suite: skipping")
    return [e for e in exps if e.name not in off], off


def say_missing_references(exps: list[spec.Experiment]) -> None:
    """One line per experiment whose reference file is not here (it runs, compared with none)."""
    for exp in exps:
        note = reference_numbers.note(exp.name, exp.reference)
        if note:
            log.warning(f"bbrlab: {note}")


def write_report(root: Path, exps: list[spec.Experiment], lacking: dict[str, MissingData],
                 out: Path | None = None, runs: dict[str, RunDir] | None = None,
                 not_here: dict[str, str] | None = None) -> Path:
    """The report on EXPS, naming in it those LACKING left out for want of data and those
    NOT_HERE ({name: what it needs}) this kernel cannot run; RUNS: the run to report on for
    some of them (an archive's) instead of the newest."""
    from ..output.reports import report  # matplotlib's figures: only when a report is written

    return report.write(root, exps, out, skipped=needs(lacking), runs=runs, not_here=not_here)


def shards(exps: list[spec.Experiment], shard: sharding.Shard) -> dict[str, dict]:
    """{experiment: its part of SHARD (shard.record)}: the suite's points are dealt as one
    grid, so the hosts finish together; an experiment with no point here is left out."""
    mine = sharding.points_of([p for e in exps for p in e.points], shard)
    parts = {e.name: [p for p in mine if p.experiment == e.name] for e in exps}
    return {name: sharding.record(shard, points) for name, points in parts.items() if points}


def state(exp: spec.Experiment, root: Path, resume: bool, shard: dict | None = None):
    """(EXP's points a suite still has to run, its finished run with this spec or None).

    A suite continues where it stopped: an experiment whose newest run with the same spec
    (and the same SHARD, shard.record) is complete is done, an unfinished one is resumed
    (--fresh: everything runs again)."""
    points = [p for p in exp.points if shard is None or p.id in shard["points"]]
    found = RunDir.find_same_spec(root, exp.name, exp.identity, shard, metadata.testbed_of(exp)) if resume else None
    if found is None:
        return points, None
    rundir, complete = found
    if complete:
        return [], rundir
    done = rundir.finished_points()
    return [p for p in points if p.id not in done], None


def left_to_run(states: dict) -> tuple[int, float]:
    """(points, seconds of flows) that STATES ({name: (points to run, finished run or None)}) leave to run."""
    return sum(len(todo) for todo, _ in states.values()), sum(p.duration for todo, _ in states.values() for p in todo)


def run_each(exps: list[spec.Experiment], root: Path, states: dict, calibration: dict | None, folder: Path,
             resume: bool, cli: list[str], parts: dict | None = None) -> tuple[dict, list[str]]:
    """Run the points STATES ({name: (points to run, finished run or None)}) leaves of each
    experiment, in order, with progress and the suite's eta on stderr; a finished run gets its
    verdict and figure if it lacks them, and is judged again by today's file if its claims,
    plot or title were edited (FOLDER holds the experiment files it was judged by).
    ({name: verdict}, [names that failed to run]); runner.Interrupted goes to the caller."""
    from ..output.reports import summary
    from ..verdicts import judge
    from . import runner
    from ..store.results import read_json

    points_left, remaining = left_to_run(states)
    verdicts, failed = {}, []
    started, flows_done, points_done = time.monotonic(), 0.0, 0
    for n, exp in enumerate(exps, 1):
        left, finished = states[exp.name]
        todo = sum(p.duration for p in left)
        eta = ""
        if points_done:  # the flows still to run, plus each point's overhead as measured so far
            per_point = max(0.0, time.monotonic() - started - flows_done) / points_done
            eta = f"; suite eta {(remaining + per_point * points_left) / 60:.0f} min"
        if finished is not None:
            log.info(f"\n=== [{n}/{len(exps)}] {exp.name}: done ({finished.path}; --fresh runs it again)")
            ran, _ = judge.judging_specs(finished, folder)
            if not all((finished.path / f).is_file() for f in ("verdict.json", f"{exp.name}.png")):
                summary.finish(finished, ran)  # its points are all there: its own verdict and figure
            rejudged = summary.rejudged_files(finished, exp.name)["spec"]
            if exp.source != ran.source and not (rejudged.is_file() and rejudged.read_text() == exp.source):
                summary.rejudge(finished, exp, f"with today's {exp.name}.yaml")  # claims, plot or title edited
            verdicts[exp.name] = summary.current_verdict(finished, exp.name)[0]
            continue
        log.info(f"\n=== [{n}/{len(exps)}] {exp.name}: {exp.title} ({len(left)} points, "
                 f"{todo / 60:.1f} min of flows to run{eta})")
        flows_done += todo
        remaining -= todo
        points_done += len(left)
        points_left -= len(left)
        try:
            rundir = runner.run_experiment(exp, root, resume=resume, cli=cli, calibration=calibration,
                                           shard=parts and parts[exp.name])
        except runner.Interrupted:
            raise
        except BbrlabError as exc:  # one broken experiment does not stop the suite
            log.error(f"bbrlab: {exp.name}: {exc}")
            failed.append(exp.name)
            continue
        verdicts[exp.name] = read_json(rundir.path / "verdict.json")
    return verdicts, failed


def summarise(verdicts: dict, report: Path | None, failed: list[str], lacking: list[str]) -> bool:
    """The suite's last lines: its cost, each verdict, the report, what failed or lacked data
    (FETCH gets it). True when something failed or was left out for want of data."""
    walls = [v["overhead"]["wall_seconds"] for v in verdicts.values()]
    flows = [v["overhead"]["configured_flow_seconds"] for v in verdicts.values()]
    log.info(f"\nsuite: {sum(walls):.0f} s wall for {sum(flows):.0f} s of flows "
             f"(overhead ratio {sum(walls) / sum(flows):.2f})" if sum(flows) else "")
    for name, v in verdicts.items():
        print(f"  {name:14s} {v['verdict']}")
    if report:
        print(f"report: {report}")
    if failed:
        log.error(f"bbrlab: failed to run: {', '.join(failed)}")
    if lacking:
        log.warning(f"bbrlab: not run for want of data: {', '.join(lacking)} (run `{FETCH}`)")
    return bool(failed or lacking)
