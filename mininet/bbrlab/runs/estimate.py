"""Before a run: how long it will take and where its results will go, from what this
machine's earlier runs cost (their verdict.json's overhead). Reads results alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..schema import ccs
from ..store.results import RunDir, read_json
from ..schema.experiment import Experiment, Point


def _per_point(run: RunDir) -> float | None:
    """Seconds a point of RUN cost beyond its flows (setup, idle probe, teardown, analysis)."""
    v = read_json(run.path / "verdict.json")
    over, done = v.get("overhead") or {}, (v.get("points") or {}).get("finished")
    if not done or over.get("wall_seconds") is None or over.get("configured_flow_seconds") is None:
        return None
    return max(0.0, over["wall_seconds"] - over["configured_flow_seconds"]) / done


def measured_overhead(root: Path, name: str) -> tuple[float, str] | None:
    """(seconds a point costs beyond its flows, where that was measured): the newest
    summarized run of NAME under ROOT, else the mean of every experiment's newest one."""
    own = RunDir.newest(root, name, marker="verdict.json")
    if own is not None and _per_point(own) is not None:
        return _per_point(own), f"{own.path.parent.name}/{own.path.name}"
    found = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        run = RunDir.newest(root, folder.name, marker="verdict.json") if folder.is_dir() else None
        cost = _per_point(run) if run is not None else None
        if cost is not None:
            found.append(cost)
    if not found:
        return None
    return sum(found) / len(found), f"the newest runs of {len(found)} experiment(s) under {root}"


# What a point costs beyond its flows (setup, idle probe, teardown, analysis) before this
# machine has measured it: measured in the testbed VM under TCG on 2 cores (2026-11-26,
# 7-13 s a point for figure 5, fidelity and cdn-mix's quick profiles).
DEFAULT_OVERHEAD_S = 10.0


def wall(exp: Experiment, points: list[Point], root: Path) -> tuple[float, float, str]:
    """(the lowest and the highest wall time of running POINTS of EXP, in seconds, and how
    the overhead per point was found). The highest counts every repetition `repeat: auto`
    may add (up to repeat_max); the two are equal for a fixed repeat."""
    flows = sum(p.duration for p in points)
    cost = measured_overhead(root, exp.name)
    per, where = cost if cost is not None else (
        DEFAULT_OVERHEAD_S, "this testbed's default: nothing measured under this results folder yet")
    if cost is not None:
        where = f"as measured in {where}"
    low = flows + per * len(points)
    high = low * exp.repeat_max / exp.repeat if exp.adaptive else low
    return low, high, f"{per:.0f} s per point beyond its flows, {where}"


def minutes(low: float, high: float) -> str:
    return f"{low / 60:.1f} min" if high <= low else f"{low / 60:.1f}-{high / 60:.1f} min"


def lines(exp: Experiment, points: list[Point], root: Path, shard: dict | None = None) -> list[str]:
    """What a run of POINTS of EXP (on SHARD, shard.record) will cost and where it will write, as text."""
    flows = sum(p.duration for p in points)
    low, high, how = wall(exp, points, root)
    more = " (the upper end: every repetition repeat: auto may add)" if high > low else ""
    wall_text = f"wall time: about {minutes(low, high)}{more} ({how})"
    resumable = RunDir.find_resumable(root, exp.name, exp.identity, shard)
    if resumable is not None:
        done = len(resumable.finished_points())
        goes = f"results: resumes {resumable.path} ({done} points done there)"
    else:
        goes = f"results: a new run directory under {root / exp.name}"
    needs = ccs.kernel_needs(ccs.kernel_ccs(points))
    return [f"{len(points)} point(s), {flows / 60:.1f} min of flows; {wall_text}", goes] + ([needs] if needs else [])


@dataclass(frozen=True)
class Size:
    """What a set of experiments plans, whatever a machine's runs cost: `suite --dry-run`
    ends with it, and the docs quote it (`bbrlab results-doc`)."""

    experiments: int
    points: int
    flow_seconds: float
    flow_seconds_max: float  # with every repetition `repeat: auto` may add

    def text(self) -> str:
        flows = minutes(self.flow_seconds, self.flow_seconds_max)
        return f"{self.experiments} experiments, {self.points} points, {flows} of flows"


def size(exps: list[Experiment], parts: dict | None = None) -> Size:
    """The Size of EXPS (PARTS: only this shard's points, shard.record per experiment)."""
    chosen = [[p for p in e.points if parts is None or p.id in parts[e.name]["points"]] for e in exps]
    flows = [sum(p.duration for p in points) for points in chosen]
    most = [f * e.repeat_max / e.repeat if e.adaptive else f for e, f in zip(exps, flows)]
    return Size(len(exps), sum(map(len, chosen)), sum(flows), sum(most))


def suite_lines(exps: list[Experiment], root: Path, parts: dict | None = None) -> list[str]:
    """`suite --dry-run`: each experiment's points (PARTS: only this shard's, shard.record
    per experiment), flows and wall time, and the sum."""
    out, total = [], [0.0, 0.0]
    for exp in exps:
        points = [p for p in exp.points if parts is None or p.id in parts[exp.name]["points"]]
        low, high, _ = wall(exp, points, root)
        total = [total[0] + low, total[1] + high]
        flows = sum(p.duration for p in points)
        out.append(f"{exp.name:16s} {len(points):4d} point(s), {flows / 60:6.1f} min of flows, "
                   f"about {minutes(low, high)} wall")
    return out + [f"suite: {size(exps, parts).text()}, about {minutes(*total)} wall (nothing run: --dry-run)"]


def repetitions(exp: Experiment) -> str:
    """", 3-8 repetitions (auto)" for a spec that adds repetitions where a claim is undecided."""
    return f", {exp.repeat}-{exp.repeat_max} repetitions (auto)" if exp.adaptive else ""


def listing(folder: Path, root: Path, quick: bool, names: dict[str, list[Path]]) -> list[str]:
    """`bbrlab list`: each experiment file in FOLDER with its points, flows and wall time
    (QUICK: its short profile), or what it needs, or why it is invalid. NAMES: the files
    by the experiment name they give (catalog.by_name), to mark two that share one."""
    from ..errors import SpecError
    from ..schema import experiment as spec
    from ..schema.datasets import MissingData
    from ..verdicts.reference_numbers import missing

    out = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            exp = spec.load(path, quick=quick)
            shared = [p.name for p in names.get(exp.name, []) if p != path]
            if shared:  # their runs would share one results folder
                out.append(f"{path.stem:16s} SAME NAME {exp.name} as {', '.join(shared)}: their runs would share "
                           f"results/{exp.name}/")
            secs = sum(p.duration for p in exp.points)
            points = f"{len(exp.points)} point{'s' if len(exp.points) > 1 else ''}"
            costs = f" (~{minutes(*wall(exp, list(exp.points), root)[:2])} wall)"
            lacking = missing(exp.reference)
            needs = ccs.kernel_needs(ccs.kernel_ccs(exp.points))
            out.append(f"{path.stem:16s} {points:>10s}, {secs / 60:6.1f} min of flows{costs}{repetitions(exp)}  "
                       f"{exp.title}" + (f" -- {lacking.needs}" if lacking else "")
                       + (f" -- {needs.removeprefix('kernel: ')}" if needs else ""))
        except MissingData as exc:  # listed all the same, with what it needs and how to get it
            out.append(f"{path.stem:16s} {exc.needs}")
        except SpecError as exc:
            out.append(f"{path.stem:16s} INVALID: {exc}")
    return out
