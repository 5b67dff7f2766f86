"""Run an experiment: every point of its grid, resumable, with progress and provenance.

Points that share a topology shape reuse one live network (reconfigured between points),
so the suite's wall time stays close to the sum of its flows' durations.
"""

from __future__ import annotations

import dataclasses
import random
import signal
import sys
import time
from pathlib import Path

from . import analysis, metadata, summary
from .errors import BbrlabError, ParseError, TestbedError
from .net import Testbed
from .results import FORMAT_VERSION, RunDir, write_atomic, write_json
from .sampling import Samplers
from .spec import Experiment, Point
from .topo import build_plan
from .traffic import Traffic, grace_seconds

IDLE_LEAD = 1.0  # seconds of idle-path pings before the first flow starts


class Interrupted(BbrlabError):
    pass


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


class Progress:
    """One line per point with an ETA from the measured overhead so far."""

    def __init__(self, total_points: int, total_seconds: float, stream=sys.stderr):
        self.total_points = total_points
        self.remaining = total_seconds
        self.done = 0
        self.started = time.monotonic()
        self.flow_seconds_done = 0.0
        self.stream = stream

    def point(self, point: Point, status: str) -> None:
        self.done += 1
        self.remaining -= point.duration
        self.flow_seconds_done += point.duration
        elapsed = time.monotonic() - self.started
        ratio = elapsed / self.flow_seconds_done if self.flow_seconds_done else 1.0
        eta = self.remaining * ratio
        width = 24
        filled = int(width * self.done / max(self.total_points, 1))
        bar = "#" * filled + "." * (width - filled)
        print(f"[{bar}] {self.done}/{self.total_points} {point.id}: {status}; "
              f"elapsed {elapsed:.0f}s, eta {eta:.0f}s", file=self.stream, flush=True)


def _point_record(point: Point, plan, timings: dict, snapshot: dict, events: list) -> dict:
    return {
        "format": FORMAT_VERSION,
        "id": point.id,
        "params": point.params,
        "repetition": point.repetition,
        "link": dataclasses.asdict(point.link),
        "pacing": point.pacing,
        "flows": [dataclasses.asdict(g) for g in point.flows],
        "flow_plan": [dataclasses.asdict(f) for f in plan.flows],
        "summary": plan.summary,
        "timings": timings,
        "events": events,
        "testbed": snapshot,
    }


def run_point(testbed: Testbed, point: Point, plan, folder: Path) -> dict:
    """Run one configured point in FOLDER/raw; returns the point's timing record."""
    raw = folder / "raw"
    slowest = min([point.link.rate] + [c.rate for c in point.link.changes])
    grace = grace_seconds(point.link.full_buffer_seconds(slowest))
    traffic = Traffic(testbed, plan.flows, plan.events, raw, point.sampling.iperf_interval, grace)
    samplers = Samplers(testbed, plan, raw, point.sampling.interval, point.sampling.ss_interval,
                        point.sampling.pcap, point.sampling.link_pcap)
    begun = time.monotonic()
    try:
        traffic.start_servers()
        samplers.start()
        t0 = time.monotonic() + IDLE_LEAD
        t0_epoch = time.time() + IDLE_LEAD
        traffic.run(t0)
        end = time.monotonic() - t0
    finally:
        samplers.stop()
        traffic.stop()
    launches = {fr.flow.id: fr.launched_at for fr in traffic.runs}
    return {"t0": t0_epoch, "launches": launches, "end": end, "run_seconds": time.monotonic() - begun,
            "events": traffic.event_log}


def order_points(exp: Experiment, seed: int, shuffle: bool) -> list[Point]:
    """Seeded random order (so slow drifts don't line up with a sweep axis), grouped by shape."""
    points = list(exp.points)
    if shuffle:
        random.Random(seed).shuffle(points)
    shapes = {}
    for p in points:
        shapes.setdefault(build_plan(p).shape, []).append(p)
    return [p for group in shapes.values() for p in group]


def run_experiment(exp: Experiment, root: Path, resume: bool = True, shuffle: bool = True,
                   cli: list[str] | None = None, subset: list[Point] | None = None,
                   calibration: dict | None = None) -> RunDir:
    """Run EXP's points (only those of SUBSET, if given) into a new or resumed run directory.

    CALIBRATION (calibrate.py): this machine's measured envelope, recorded in run.json;
    the points beyond it are judged inconclusive."""
    wanted = {p.id for p in subset} if subset is not None else None
    rundir = RunDir.find_resumable(root, exp.name, exp.identity) if resume else None
    if rundir is not None:
        rundir.adopt_spec(exp.source, exp.identity)  # today's claims judge it when it finishes
        meta = metadata.read_run(rundir)
        print(f"resuming {rundir.path} ({len(rundir.finished_points())} of {len(exp.points)} points done)",
              file=sys.stderr)
    else:
        rundir = RunDir.create(root, exp.name)
        write_atomic(rundir.path / "spec.yaml", exp.source)
        meta = metadata.new_run(exp, exp.identity, cli or [])
    meta["status"] = "running"
    meta.setdefault("sessions", []).append({"started": time.time(), "git": metadata.git_revision()})
    if calibration is not None:
        meta["calibration"] = calibration
        meta["sessions"][-1]["calibration"] = calibration["key"]
    write_json(rundir.path / "run.json", meta)

    done = rundir.finished_points()
    todo = [p for p in order_points(exp, exp.seed, shuffle)
            if p.id not in done and (wanted is None or p.id in wanted)]
    progress = Progress(len(todo), sum(p.duration for p in todo))
    previous_int = signal.getsignal(signal.SIGINT)
    previous_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    session = meta["sessions"][-1]
    started = time.monotonic()
    testbed: Testbed | None = None
    try:
        for point in todo:
            plan = build_plan(point)
            if testbed is not None and testbed.plan.shape != plan.shape:
                testbed.__exit__(None, None, None)
                testbed = None
            staging = rundir.staging(point.id)
            try:
                t_setup = time.monotonic()
                if testbed is None:
                    testbed = Testbed(plan)
                    testbed.__enter__()
                else:
                    testbed.configure(plan)
                setup = time.monotonic() - t_setup
                snapshot = testbed.snapshot()
                timing = run_point(testbed, point, plan, staging)
                t_analysis = time.monotonic()
                series, mets = analysis.analyze(point, plan, staging, timing["t0"], timing["launches"], timing["end"])
                timing.update({"setup_seconds": round(setup, 3), "configured_seconds": point.duration,
                               "analysis_seconds": round(time.monotonic() - t_analysis, 3)})
                write_json(staging / "point.json", _point_record(point, plan, timing, snapshot, timing["events"]))
                write_json(staging / "series.json", series)
                write_json(staging / "metrics.json", mets)
                rundir.commit_point(staging, point.id)
                status = f"goodput {mets['goodput_mbps']:.2f} Mbit/s"
                if "rtt_p50_ms" in mets:
                    status += f", median RTT {mets['rtt_p50_ms']:.1f} ms"
                if mets.get("cpu_bound"):
                    status += ", CPU-BOUND"
                progress.point(point, status)
            except (TestbedError, ParseError) as exc:  # this point failed; the others still run
                rundir.discard(staging, keep_as=point.id)
                progress.point(point, f"FAILED: {exc}")
                session.setdefault("failed", []).append({"point": point.id, "error": str(exc)})
                if testbed is not None:
                    testbed.__exit__(None, None, None)
                    testbed = None
            except BaseException:
                rundir.discard(staging)
                raise
    except KeyboardInterrupt:
        meta["status"] = "interrupted"
        raise Interrupted(f"interrupted; finished points are kept in {rundir.path} "
                          f"(run the same command again to finish the rest)") from None
    finally:
        if testbed is not None:
            testbed.__exit__(None, None, None)
        signal.signal(signal.SIGTERM, previous_term)
        signal.signal(signal.SIGINT, previous_int)
        session["wall_seconds"] = round(time.monotonic() - started, 3)
        session["points_run"] = progress.done
        if meta["status"] == "running":
            missing = len(exp.points) - len(rundir.finished_points())
            meta["status"] = "complete" if missing == 0 else "incomplete"
        write_json(rundir.path / "run.json", meta)
    summary.finish(rundir, exp)
    return rundir
