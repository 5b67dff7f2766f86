"""`bbrlab merge`: the shards of one sweep (`--shard K/N`, shard.py) combined into one run
directory, judged, plotted, reported and exported like a run of the whole grid.

- Shards that measure different specs (their identity), with another measurement version,
  or that split the grid into different numbers of shards are refused, in one line.
- A point finished in two shards (a host that came back after a spare took its shard over)
  is kept once, from the first directory given that holds it, and said.
- A planned point no shard finished is named with the shard that should have run it; the
  merged run is then "incomplete", and resumable on one host like any run.
- `repeat: auto` is judged here, on the whole grid: a check still straddling its bound
  leaves the merged run incomplete, and the command that adds its repetitions is printed.

The shards' directories are never modified: finished points are hard-linked (copied across
file systems) into a new run directory, each through a hidden directory renamed into place
(results.py); run.json says "merging" until the summary is written. A later rewrite of a
point's files (plot --reanalyze) replaces them by rename, so a shard's copy never changes.
Reads and writes results only (no testbed, no Mininet): it runs where the shards were collected.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .. import log
from .. import __version__
from ..schema import experiment as spec
from ..output.reports import summary
from ..verdicts import judge
from ..errors import BbrlabError
from .calibrate import NOT_CALIBRATED
from ..store.results import FORMAT_VERSION, MEASUREMENT, RunDir, read_json, write_atomic, write_json


class ShardRun:
    """One shard's run: its directory, run.json and the identity of what it measures."""

    def __init__(self, rundir: RunDir):
        self.rundir = rundir
        self.meta = read_json(rundir.path / "run.json")
        self.part = self.meta.get("shard")
        if not self.part:
            raise BbrlabError(f"merge: {rundir.path} is not a shard's run (run.json has no shard; "
                              "shards are run with --shard K/N)")
        # what its spec.yaml measures, and what the runner recorded (the merged run keeps it:
        # a trace's identity needs the trace file, which may be on the hosts only)
        self.identity = rundir.identity()
        self.digest = self.meta.get("spec_hash") or self.identity
        self.host = (self.meta.get("system") or {}).get("hostname") or "?"

    @property
    def name(self) -> str:
        return f"shard {self.part['index']}/{self.part['count']}"


def _testbed_text(testbed: dict | None) -> str:
    if not testbed:
        return "an unrecorded testbed"
    ccs = ", ".join(f"{cc} {build}" for cc, build in testbed.get("congestion_controls", {}).items())
    return f"kernel {testbed.get('kernel')} ({ccs})"


def _refuse_mismatch(shards: list[ShardRun]) -> None:
    first = shards[0]
    for other in shards[1:]:
        for ours, theirs in ((first.identity, other.identity), (first.digest, other.digest)):
            if ours != theirs:
                raise BbrlabError(f"merge: {first.rundir.path} measures spec {ours} but {other.rundir.path} "
                                  f"measures {theirs}: shards of different specs are not merged")
        ours, theirs = first.meta.get("measurement", 2), other.meta.get("measurement", 2)
        if ours != theirs:
            raise BbrlabError(f"merge: {first.rundir.path} is of measurement {ours} but {other.rundir.path} "
                              f"of {theirs}: runs measured differently are not merged")
        ours, theirs = first.meta.get("testbed"), other.meta.get("testbed")
        if ours != theirs:
            raise BbrlabError(f"merge: {first.rundir.path} ran on {_testbed_text(ours)} but {other.rundir.path} on "
                              f"{_testbed_text(theirs)}: runs on different kernels or CC builds are not merged")
        if other.part["count"] != first.part["count"]:
            raise BbrlabError(f"merge: {first.rundir.path} is {first.name} but {other.rundir.path} is "
                              f"{other.name}: shards of different splits are not merged")


def collect(paths: list[Path]) -> list[list[RunDir]]:
    """The merges PATHS ask for: run directories (run.json) are one merge; results roots
    give one per experiment, of each root's newest shard run and the newest run of every
    other shard of the same spec and split."""
    runs = [p for p in paths if (p / "run.json").is_file()]
    if runs and len(runs) != len(paths):
        raise BbrlabError("merge: give shards' run directories or results roots holding them, not both")
    if runs:
        return [[RunDir(p) for p in paths]]
    groups: dict[str, list[RunDir]] = {}
    for root in paths:
        if not root.is_dir():
            raise BbrlabError(f"merge: {root}: no such directory")
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            found = [ShardRun(r) for r in RunDir.runs(root, folder.name)
                     if read_json(r.path / "run.json").get("shard")]
            if not found:
                continue
            newest = found[-1]
            chosen: dict[int, ShardRun] = {}
            for s in found:  # oldest first: the newest of each shard stays
                if s.digest == newest.digest and s.part["count"] == newest.part["count"]:
                    chosen[s.part["index"]] = s
            groups.setdefault(folder.name, []).extend(chosen[i].rundir for i in sorted(chosen))
    if not groups:
        raise BbrlabError(f"merge: no shard's run under {', '.join(map(str, paths))}")
    return list(groups.values())


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or links refused
        shutil.copy2(src, dst)


def _calibration(shards: list[ShardRun]) -> tuple[dict | None, str | None]:
    """The calibration the merged run is judged against, and why when the shards' differ:
    the strictest envelope (the lowest gate) when they were measured on other machines."""
    known = [s.meta["calibration"] for s in shards if s.meta.get("calibration")]
    if not known:
        return None, None
    keys = sorted({c.get("key") for c in known})

    def rate(c: dict) -> float:
        return (c.get("gate") or {}).get("rate_bps", float("inf"))

    # a gate where the emulator failed binds every shard; one that only says how far a
    # machine was calibrated (calibration made up to what its first run needed) binds none
    # that another shard's calibration covers further
    failed = [c for c in known if c.get("gate") and not str(c["gate"].get("failed", "")).startswith(NOT_CALIBRATED)]
    strictest = min(failed, key=rate) if failed else max(known, key=rate)
    if len(keys) == 1:
        return strictest, None
    return strictest, (f"shards measured on {len(keys)} machines ({', '.join(map(str, keys))}): judged against "
                       f"the strictest envelope, {strictest.get('key')}")


def _provenance(shard: ShardRun, kept: list[str]) -> dict:
    meta = shard.meta
    return {"dir": str(shard.rundir.path), "index": shard.part["index"], "count": shard.part["count"],
            "host": shard.host, "system": meta.get("system"), "calibration": meta.get("calibration"),
            "git": meta.get("git"), "command": meta.get("command"), "status": meta.get("status"),
            "sessions": meta.get("sessions", []), "points": shard.part.get("points", []), "kept": kept}


def _missing(exp: spec.Experiment, shards: list[ShardRun], have: set[str]) -> list[dict]:
    """The planned points no shard finished, each with the shard that should have run it."""
    count = shards[0].part["count"]
    owners = {pid: s for s in shards for pid in s.part.get("points", [])}
    absent = [i for i in range(1, count + 1) if i not in {s.part["index"] for s in shards}]
    lost = []
    for pid in sorted({p.id for p in exp.points} - have):
        owner = owners.get(pid)
        lost.append({"point": pid, "shard": owner.name if owner else
                     f"shard {'/'.join(map(str, absent)) or '?'} of {count} (not given)",
                     "host": owner.host if owner else None, "dir": str(owner.rundir.path) if owner else None})
    return lost


def merge(rundirs: list[RunDir], root: Path, cli: list[str] | None = None) -> RunDir:
    """Merge the shards' runs RUNDIRS into a new run under ROOT (module docstring)."""
    shards = [ShardRun(r) for r in rundirs]
    _refuse_mismatch(shards)
    exp = spec.build(spec.load_raw(shards[0].rundir.path / "spec.yaml"),
                     default_name=shards[0].rundir.path.parent.name)
    kept: dict[str, ShardRun] = {}
    overlaps = []
    for s in shards:
        for pid in sorted(s.rundir.finished_points()):
            if pid in kept:
                overlaps.append({"point": pid, "kept": str(kept[pid].rundir.path), "dropped": str(s.rundir.path)})
                log.warning(f"merge: {pid} finished in both {kept[pid].rundir.path} and {s.rundir.path}: kept the first")
            else:
                kept[pid] = s
    missing = _missing(exp, shards, set(kept))
    calibration, why = _calibration(shards)

    merged = RunDir.create(root, exp.name)
    write_json(merged.path / "run.json", {"status": "merging"})  # not complete until the end
    write_atomic(merged.path / "spec.yaml", (shards[0].rundir.path / "spec.yaml").read_bytes())
    for pid, s in sorted(kept.items()):
        staging = merged.staging(pid)
        shutil.copytree(s.rundir.points_dir / pid, staging, copy_function=_link_or_copy, dirs_exist_ok=True)
        merged.commit_point(staging, pid)
    first = shards[0].meta
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    meta = {
        "format": FORMAT_VERSION, "bbrlab": __version__, "experiment": exp.name, "title": exp.title,
        "spec_hash": shards[0].digest, "measurement": MEASUREMENT, "command": cli or [], "git": first.get("git") or "unknown",
        "created": now, "points_total": len(exp.points), "system": first.get("system", {}),
        # every shard's time: the report's wall time is the hosts' time together
        "sessions": [dict(sess, shard=s.name, host=s.host) for s in shards for sess in s.meta.get("sessions", [])],
        "status": "merging",
        "merged": {"at": now, "shards": [_provenance(s, sorted(p for p, o in kept.items() if o is s)) for s in shards],
                   "overlaps": overlaps, "missing": missing, "calibration": why},
    }
    if calibration is not None:
        meta["calibration"] = calibration
    write_json(merged.path / "run.json", meta)
    if why:
        log.warning(f"merge: {why}")
    summary.finish(merged, exp)
    meta["status"] = "complete" if not missing and not _undecided(exp, merged, root) else "incomplete"
    write_json(merged.path / "run.json", meta)
    _say(exp, merged, root, shards, missing)
    return merged


def _undecided(exp: spec.Experiment, merged: RunDir, root: Path) -> bool:
    """`repeat: auto` on the whole grid: whether a check still straddles its bound with
    points that may have more repetitions; if so, the command that adds them, said."""
    if not exp.adaptive:
        return False
    count, names = judge.undecided(merged, exp)
    if not names:
        return False
    checks = f"{count} checks straddle their bounds" if count != 1 else "1 check straddles its bound"
    log.warning(f"repeat: auto: {checks} ({'; '.join(sorted(names))}); the merged run stays resumable: on one "
                f"testbed host, `bbrlab --results {root} run {merged.path / 'spec.yaml'}` adds their repetitions")
    return True


def _say(exp: spec.Experiment, merged: RunDir, root: Path, shards: list[ShardRun], missing: list[dict]) -> None:
    done = len(merged.finished_points())
    log.info(f"merge: {len(shards)} shard(s) of {exp.name} into {merged.path}: {done} of {len(exp.points)} "
             "planned points")
    by_shard: dict[str, list[str]] = {}
    for m in missing:
        where = m["shard"] + (f" (host {m['host']}, {m['dir']})" if m["host"] else "")
        by_shard.setdefault(where, []).append(m["point"])
    for where, points in by_shard.items():
        log.warning(f"merge: missing {len(points)} point(s) of {where}: {', '.join(points)}")
    if missing:
        log.warning(f"merge: the merged run is incomplete: run the missing shard again (or `bbrlab --results "
                    f"{root} run {merged.path / 'spec.yaml'}` on one host)")


def merge_all(paths: list[Path], root: Path, cli: list[str] | None = None) -> tuple[list[RunDir], list[str]]:
    """Every merge PATHS ask for (collect), each into a new run under ROOT: (the merged runs,
    what stopped the others, e.g. a spec whose trace file this machine lacks). Mismatched
    shards are refused before anything is written."""
    groups = collect(paths)
    for group in groups:
        _refuse_mismatch([ShardRun(r) for r in group])
    merged, errors = [], []
    for group in groups:
        try:
            merged.append(merge(group, root, cli))
        except BbrlabError as exc:  # one experiment that cannot be merged here stops no other
            errors.append(f"{group[0].path.parent.name}: {exc}")
    return merged, errors
