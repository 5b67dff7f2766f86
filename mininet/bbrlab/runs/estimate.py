"""Before a run: how long it will take and where its results will go, from what this
machine's earlier runs cost (their verdict.json's overhead). Reads results alone."""

from __future__ import annotations

from pathlib import Path

from ..store.results import RunDir, read_json
from ..spec.experiment import Experiment, Point


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


def lines(exp: Experiment, points: list[Point], root: Path, shard: dict | None = None) -> list[str]:
    """What a run of POINTS of EXP (on SHARD, shard.record) will cost and where it will write, as text."""
    flows = sum(p.duration for p in points)
    cost = measured_overhead(root, exp.name)
    if cost is None:
        wall = "wall time: not measured on this machine yet (each point costs its flows plus setup and analysis)"
    else:
        per, where = cost
        wall = (f"wall time: about {(flows + per * len(points)) / 60:.1f} min ({per:.0f} s per point beyond "
                f"its flows, as measured in {where})")
    resumable = RunDir.find_resumable(root, exp.name, exp.identity, shard)
    if resumable is not None:
        done = len(resumable.finished_points())
        goes = f"results: resumes {resumable.path} ({done} points done there)"
    else:
        goes = f"results: a new run directory under {root / exp.name}"
    return [f"{len(points)} point(s), {flows / 60:.1f} min of flows; {wall}", goes]
