"""The suite: every experiment, shortest first, continued where it stopped; on a shard
(`bbrlab suite --shard K/N`), this host's part of the whole suite's grid (shard.py)."""

from __future__ import annotations

from pathlib import Path

from . import shard as sharding
from ..spec import experiment as spec
from ..spec.catalog import refuse_any
from ..store import metadata
from ..store.results import RunDir


def experiments(folder: Path, quick: bool = False) -> list[spec.Experiment]:
    """Every experiment in FOLDER, shortest first (first results come soonest)."""
    refuse_any(folder)  # two files of one name would write into one results folder
    exps = [spec.load(path, quick=quick) for path in sorted(folder.glob("*.yaml"))]
    return sorted(exps, key=lambda e: (sum(p.duration for p in e.points), e.name))


def shards(exps: list[spec.Experiment], shard: sharding.Shard) -> dict[str, dict]:
    """{experiment: its part of SHARD (shard.record)}: the suite's points are dealt as one
    grid, so the hosts finish together; an experiment with no point here is left out."""
    mine = sharding.points_of([p for e in exps for p in e.points], shard)
    parts = {e.name: [p for p in mine if p.experiment == e.name] for e in exps}
    return {name: sharding.record(shard, points) for name, points in parts.items() if points}


def state(exp: spec.Experiment, root: Path, resume: bool, shard: dict | None = None, here: bool = True):
    """(EXP's points a suite still has to run, its finished run with this spec or None).

    A suite continues where it stopped: an experiment whose newest run with the same spec
    (and the same SHARD, shard.record) is complete is done, an unfinished one is resumed
    (--fresh: everything runs again)."""
    points = [p for p in exp.points if shard is None or p.id in shard["points"]]
    testbed = metadata.testbed({g.cc for p in exp.points for g in p.flows}) if here else None
    found = RunDir.find_same_spec(root, exp.name, exp.identity, shard, testbed) if resume else None
    if found is None:
        return points, None
    rundir, complete = found
    if complete:
        return [], rundir
    done = rundir.finished_points()
    return [p for p in points if p.id not in done], None
