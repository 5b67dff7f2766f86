"""The suite: every experiment, shortest first, continued where it stopped; on a shard
(`bbrlab suite --shard K/N`), this host's part of the whole suite's grid (shard.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from . import shard as sharding
from ..errors import SpecError, did_you_mean
from ..spec import experiment as spec
from ..spec.catalog import name_of, refuse_any
from ..spec.datasets import MissingData
from ..verdicts import references
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


def say_lacking(lacking: dict[str, MissingData], doing: str) -> None:
    """One line per experiment left out for want of data: what it needs, how to get it."""
    for name, exc in lacking.items():
        print(f"bbrlab: {doing} {name}, which {exc.needs}", file=sys.stderr)


def say_missing_references(exps: list[spec.Experiment]) -> None:
    """One line per experiment whose reference file is not here (it runs, compared with none)."""
    for exp in exps:
        note = references.note(exp.name, exp.reference)
        if note:
            print(f"bbrlab: {note}", file=sys.stderr)


def write_report(root: Path, exps: list[spec.Experiment], lacking: dict[str, MissingData],
                 out: Path | None = None) -> Path:
    """The report on EXPS, naming in it those LACKING left out for want of data."""
    from ..output import report  # matplotlib's figures: only when a report is written

    return report.write(root, exps, out, skipped={name: exc.needs for name, exc in lacking.items()})


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
