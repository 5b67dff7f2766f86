"""The course lab kit (labs/): each lab's manifest, its commands, and `bbrlab lab check`.

A lab is a folder labs/N-NAME/ with a manifest (lab.yaml), the student's handout, the
instructor's key and the lab's own experiment files. The manifest lists the runs a
student makes, in order; the handout gives them as commands, which `commands` writes
(the tests hold the handout to them and run them in the testbed VM).

`check` tells a TA whether a student's runs can be graded: every run of the lab is
there, was made with the lab's parameters (its quick or its full profile, no --set),
finished every point, and was measured by an emulator that kept up (no CPU-bound point,
no bottleneck below its rate, no point at a rate this machine failed its calibration
at). It does not grade answers: a claim that did not reproduce is a finding, not a fault.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..schema import experiment as spec
from ..schema.checks import check_keys
from ..schema import yaml_loader
from ..schema.root import ROOT, require
from ..errors import BbrlabError, SpecError, did_you_mean
from ..store.results import MEASUREMENT, RunDir, read_json
from ..verdicts import claims
from ..verdicts.set_aside import SET_ASIDE

LABS = ROOT / "labs"
MANIFEST = "lab.yaml"
LAB_KEYS = {"lab", "name", "title", "runs"}
RUN_KEYS = {"file", "quick", "why"}
SHOWN_DIFFERENCES = 2  # a wrong run names this many of its parameters that differ


@dataclass(frozen=True)
class LabRun:
    file: Path  # the lab's experiment file
    quick: bool  # the handout runs its quick profile
    why: str  # what the run is for, in a few words

    def command(self, root: Path) -> str:
        """The handout's command for this run, from the project's root ROOT."""
        return f"sudo ./bbrlab run {self.file.relative_to(root)}" + (" --quick" if self.quick else "")


@dataclass(frozen=True)
class Lab:
    number: int
    name: str
    title: str
    folder: Path
    runs: tuple[LabRun, ...]

    @property
    def label(self) -> str:
        return f"lab {self.number} ({self.name})"

    def commands(self, root: Path = LABS.parent) -> list[str]:
        """The lab's commands as the handout gives them: its runs, the report of its runs
        (verdicts, numbers, figures on one page), then the check."""
        files = " ".join(str(r.file.relative_to(root)) for r in self.runs)
        return [r.command(root) for r in self.runs] + [
            f"./bbrlab report {files} --out results/lab{self.number}-report.md",
            f"./bbrlab lab check {self.name} results"]


def load(folder: Path) -> Lab:
    """The lab in FOLDER, its manifest checked and its experiment files loadable."""
    path = folder / MANIFEST
    raw = check_keys(yaml_loader.read(path), LAB_KEYS, str(path))
    for key in ("lab", "name", "title", "runs"):
        if key not in raw:
            raise SpecError(f"{path}: {key}: required")
    runs = []
    for i, item in enumerate(raw["runs"] or []):
        item = check_keys(item, RUN_KEYS, f"{path}: runs.{i}")
        file = folder / str(item.get("file", ""))
        if not file.is_file():
            raise SpecError(f"{path}: runs.{i}.file: no such experiment file {file.name}")
        runs.append(LabRun(file, bool(item.get("quick", False)), str(item.get("why", ""))))
    if not runs:
        raise SpecError(f"{path}: runs: at least one run")
    return Lab(int(raw["lab"]), str(raw["name"]), str(raw["title"]), folder, tuple(runs))


def labs(root: Path = LABS) -> list[Lab]:
    """Every lab of the kit, in order."""
    return sorted((load(p.parent) for p in require(root).glob(f"*/{MANIFEST}")), key=lambda lab: lab.number)


def find(name: str, root: Path = LABS) -> Lab:
    """The lab NAME names: its number, its name, its folder's name, or a folder's path."""
    if Path(name).is_dir() and (Path(name) / MANIFEST).is_file():
        return load(Path(name))
    kit = labs(root)
    for lab in kit:
        if name in (str(lab.number), lab.name, lab.folder.name):
            return lab
    known = [lab.name for lab in kit]
    raise SpecError(f"unknown lab {name!r}{did_you_mean(name, known)} (labs: "
                    + ", ".join(f"{lab.number} {lab.name}" for lab in kit) + ")")


# ------------------------------------------------------------------- lab check

@dataclass(frozen=True)
class Finding:
    run: LabRun
    experiment: str
    path: Path | None  # the run judged (None: none found)
    problem: str | None  # None: accepted
    detail: str  # what was accepted, or how to fix the problem

    def line(self) -> str:
        where = f" {self.path}" if self.path else ""
        if self.problem is None:
            return f"  ok    {self.experiment}{where}: {self.detail}"
        return f"  FAIL  {self.experiment}{where}: {self.problem}" + (f" ({self.detail})" if self.detail else "")


def differences(ran: dict, lab: dict) -> list[str]:
    """The measured parameters (spec.MEASURED_KEYS) in which spec RAN differs from LAB's,
    as "KEY is X, the lab's Y"."""
    a = spec.flatten({k: ran[k] for k in spec.MEASURED_KEYS if k in ran})
    b = spec.flatten({k: lab[k] for k in spec.MEASURED_KEYS if k in lab})
    return [f"{key} is {a.get(key, 'unset')}, the lab's {b.get(key, 'unset')}"
            for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]


def _profiles(run: LabRun) -> dict[str, spec.Experiment]:
    """The lab file's profiles a student may have run: {"quick": ..., "full": ...}."""
    return {"quick": spec.load(run.file, quick=True), "full": spec.load(run.file)}


def _parameters(rundir: RunDir, meta: dict, profiles: dict[str, spec.Experiment]) -> tuple[str | None, str]:
    """(problem or None, the matching profile or the differences) of a run's parameters."""
    for profile, exp in profiles.items():
        if meta.get("spec_hash") == exp.identity:
            return None, profile
    ran = spec.load_raw(rundir.path / "spec.yaml")
    diffs = {profile: differences(ran, exp.raw) for profile, exp in profiles.items()}
    profile = min(diffs, key=lambda p: len(diffs[p]))
    named = diffs[profile][:SHOWN_DIFFERENCES] or ["its trace or a default differs"]
    more = len(diffs[profile]) - SHOWN_DIFFERENCES
    return ("not the lab's parameters: " + "; ".join(named) + (f" (and {more} more)" if more > 0 else "")
            + f" against its {profile} profile", "run the handout's command as written, without --set")


def _completeness(rundir: RunDir, meta: dict, command: str) -> str | None:
    if meta.get("shard"):
        return f"a shard ({meta['shard'].get('k')}/{meta['shard'].get('n')}) of the lab's run: merge the shards first"
    if meta.get("status") != "complete":
        done = len(rundir.finished_points())
        return (f"incomplete: {done} of {meta.get('points_total', '?')} points finished "
                f"(status {meta.get('status', 'unknown')}); resume with: {command}")
    return None


def _fidelity(rundir: RunDir, meta: dict) -> str | None:
    if not meta.get("calibration"):
        return "no calibration recorded: run `sudo ./bbrlab calibrate`, then the lab's command with --fresh"
    verdict = read_json(rundir.path / "verdict.json") if (rundir.path / "verdict.json").is_file() else None
    if verdict is None:
        return "no verdict.json: the run was never summarized (`./bbrlab plot DIR` writes it)"
    gate = verdict.get("fidelity_gate") or {}
    rate = claims.gate_rates(gate) if gate.get("rate_bps") else "its rate"
    for label, points in [(a.lab, verdict.get(a.points)) for a in SET_ASIDE.values()] + [
            (f"this machine's calibration found its emulator unfaithful from {rate}, the rate of", gate.get("points"))]:
        if points:
            named = "its one point" if points == ["point"] else ", ".join(points[:3]) + (
                f" and {len(points) - 3} more" if len(points) > 3 else "")
            return (f"the emulator did not keep up: {label} {named} (close other programs or give the VM "
                    "more CPUs, then run it again with --fresh)")
    return None


def _candidates(dirs: list[Path], experiment: str) -> list[RunDir]:
    """The runs of EXPERIMENT among DIRS (run directories, or results roots: their newest)."""
    found = []
    for d in dirs:
        if (d / "run.json").is_file():
            if read_json(d / "run.json").get("experiment") == experiment:
                found.append(RunDir(d))
        else:
            newest = RunDir.newest(d, experiment)
            if newest is not None:
                found.append(newest)
    return found


def judge(run: LabRun, dirs: list[Path], root: Path = LABS.parent,
          profiles: dict[str, spec.Experiment] | None = None) -> Finding:
    """The finding on the student's run of the lab's RUN among DIRS (PROFILES: RUN's file's
    profiles, when the caller has loaded them already)."""
    profiles = profiles or _profiles(run)
    name = profiles["full"].name
    command = run.command(root)
    found = _candidates(dirs, name)
    if not found:
        return Finding(run, name, None, "missing: no run of this experiment", f"run: {command}")
    rundir = found[-1]
    meta = read_json(rundir.path / "run.json")
    problem, detail = _parameters(rundir, meta, profiles)
    if problem:
        return Finding(run, name, rundir.path, problem, detail)
    profile = detail
    if meta.get("measurement", 2) != MEASUREMENT:
        return Finding(run, name, rundir.path, f"measured by an older bbrlab (measurement {meta.get('measurement', 2)})",
                       f"run it again: {command} --fresh")
    problem = _completeness(rundir, meta, command) or _fidelity(rundir, meta)
    if problem:
        return Finding(run, name, rundir.path, problem, "")
    points = len(rundir.finished_points())
    return Finding(run, name, rundir.path, None,
                   f"complete ({points} points), the lab's {profile} parameters, the emulator kept up")


def check(lab: Lab, dirs: list[Path], root: Path = LABS.parent) -> list[Finding]:
    """One finding per run of LAB: whether the student's runs under DIRS can be graded."""
    for d in dirs:
        if not d.is_dir():
            raise BbrlabError(f"{d}: no such results directory")
    profiles = [_profiles(r) for r in lab.runs]
    known = {p["full"].name for p in profiles}
    for d in dirs:
        if (d / "run.json").is_file() and read_json(d / "run.json").get("experiment") not in known:
            raise BbrlabError(f"{d}: a run of {read_json(d / 'run.json').get('experiment')}, not of {lab.label} "
                              f"(its runs: {', '.join(sorted(known))})")
    return [judge(r, dirs, root, p) for r, p in zip(lab.runs, profiles)]
