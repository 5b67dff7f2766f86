"""The host's own load while a run measured: a run directory's host-load.json.

Under software virtualization the guest cannot see the host's load (steal time needs KVM), yet
every CPU second another program takes on the host is one the emulator did not get. vm/vm.sh
samples the host's /proc while a command runs in the VM (vm/hostload.sh: all CPUs' busy ticks
beside the VM's qemu process) and hands the samples to runs/hostload, which writes here, for
each of a run's sessions, the load over that session's own time. The run's verdict.json stays
as the run wrote it; this file says beside it whether other programs took BUSY_CPUS or more
while it measured (`bbrlab report` says so under the run's calibration line).

A sample is (epoch, total ticks, busy ticks, qemu ticks or None), all CPUs together.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import BbrlabError
from .results import RunDir, read_json, write_json

FILE = "host-load.json"
BUSY_CPUS = 0.5  # CPUs other programs may take before a run's numbers are in doubt (vm/hostload.sh's HOSTLOAD_BUSY)


@dataclass(frozen=True)
class Sample:
    epoch: float
    total: int
    busy: int
    qemu: int | None


def load_between(samples: list[Sample], cpus: int, start: float, end: float) -> dict | None:
    """The host's load from START to END (epochs): from the last sample at or before START (the
    first one, if none) to the first at or after END (the last one, if none); None when no time
    lies between them."""
    if not samples:
        return None
    ordered = sorted(samples, key=lambda s: s.epoch)
    before = next((s for s in reversed(ordered) if s.epoch <= start), ordered[0])
    after = next((s for s in ordered if s.epoch >= end), ordered[-1])
    ticks = after.total - before.total
    if after.epoch <= before.epoch or ticks <= 0:
        return None
    busy = cpus * (after.busy - before.busy) / ticks
    out = {"from": round(before.epoch, 1), "to": round(after.epoch, 1), "cpus": cpus, "busy_cpus": round(busy, 2),
           "vm_cpus": None, "other_cpus": None, "busy": None}
    if before.qemu is not None and after.qemu is not None:
        vm = min(busy, cpus * (after.qemu - before.qemu) / ticks)  # sampled a tick apart
        other = round(busy - vm, 2)
        out.update(vm_cpus=round(vm, 2), other_cpus=other, busy=other >= BUSY_CPUS)
    return out


def read(rundir: RunDir) -> dict | None:
    """RUNDIR's host load, or None where none was recorded (a run made without vm/vm.sh)."""
    path = rundir.path / FILE
    return read_json(path) if path.is_file() else None


def summary(others: list[float | None]) -> dict:
    """What a set of loads says together, from the CPUs other programs took in each (None where
    the VM's share was not known): the limit, the most they took, and whether that reached it."""
    known = [o for o in others if o is not None]
    top = max(known) if known else None
    return {"limit_cpus": BUSY_CPUS, "other_cpus_max": top, "busy": top is not None and top >= BUSY_CPUS}


def record(rundir: RunDir, started: float, load: dict) -> dict:
    """RUNDIR's host load with its session that STARTED (an epoch) measured as LOAD; kept."""
    have = read(rundir) or {}
    sessions = {**have.get("sessions", {}), f"{started:.3f}": load}
    out = {**summary([s.get("other_cpus") for s in sessions.values()]), "sessions": dict(sorted(sessions.items()))}
    write_json(rundir.path / FILE, out)
    return out


def line(rundir: RunDir) -> str | None:
    """One line on RUNDIR's host load: None where none was recorded."""
    have = read(rundir)
    if not have:
        return None
    if have.get("other_cpus_max") is None:
        return "host load: the VM's share not known (its qemu process not found)"
    if have["busy"]:
        return (f"host load: other programs on the host took up to {have['other_cpus_max']:.2f} CPUs while this run "
                f"measured ({have['limit_cpus']} or more puts its numbers in doubt: a starved flow, not the CC, may "
                "decide a claim); close them and run it again")
    return f"host load: quiet (other programs took at most {have['other_cpus_max']:.2f} CPUs while this run measured)"


def _run_files(folder: Path, depth: int) -> list[Path]:
    """The run.json files of the runs under FOLDER, at most DEPTH levels down: RunDir.create's
    <experiment>/<stamp>, under a root of their own such as the integration tests'
    <group>/; a run's own folders (its points) are not searched."""
    if (folder / "run.json").is_file():
        return [folder / "run.json"]
    if depth == 0:
        return []
    try:
        subs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    return [f for sub in subs for f in _run_files(sub, depth - 1)]


def runs_within(root: Path, first: float, last: float) -> list[tuple[RunDir, float, float]]:
    """The sessions of runs under ROOT (up to two levels deeper than <experiment>/<stamp>) that
    started from FIRST to LAST (epochs): (run, the session's start, its end: the start plus its
    wall time, or LAST for one that did not finish)."""
    found = []
    for meta_file in _run_files(root, 4):
        try:
            meta = read_json(meta_file)
        except BbrlabError:  # not a run's file: nothing to stamp
            continue
        sessions = meta.get("sessions") or [] if isinstance(meta, dict) else []
        for s in sessions:
            started = s.get("started")
            if isinstance(started, (int, float)) and first <= started <= last:
                wall = s.get("wall_seconds")
                found.append((RunDir(meta_file.parent), float(started),
                              started + wall if isinstance(wall, (int, float)) else last))
    return found


def failed_while_busy(cal: dict | None, failed: bool) -> str | None:
    """Why CAL (a stored calibration, FAILED at some rate) must be measured again before it gates
    a run: it failed while other programs on the host took BUSY_CPUS or more (runs/hostload
    recorded it); else None."""
    load = (cal or {}).get("host_load") or {}
    if not failed or not load.get("busy"):
        return None
    return f"other programs on the host took {load['other_cpus_max']:.2f} CPUs while it measured"
