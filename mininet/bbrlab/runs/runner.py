"""Run an experiment: every point of its grid, resumable, with progress and provenance.

Points that share a topology shape reuse one live network (reconfigured between points),
so the suite's wall time stays close to the sum of its flows' durations.
"""

from __future__ import annotations

import dataclasses
import random
import signal
import time
from dataclasses import replace
from pathlib import Path

from .. import log
from ..analysis import analyze as analysis
from ..verdicts import claims
from ..store import metadata
from ..output.reports import summary
from ..verdicts import judge
from ..errors import BbrlabError, ParseError, TestbedError
from ..emulation.mahimahi import Chain
from ..emulation.net import Testbed
from ..store.results import FORMAT_VERSION, RunDir, point_fields, write_atomic, write_json
from ..traffic.sampling import Samplers
from ..emulation.schedule import LinkSchedule
from ..traffic.shortflow_traffic import SENDER_LEAD, ShortFlows
from ..schema.experiment import Experiment, Point
from ..emulation.topo import build_plan
from ..traffic.iperf import KERNEL_SYN_RETRIES, Traffic, grace_seconds
from ..traffic.tools import TOOLS

IDLE_LEAD = 1.0  # seconds of idle-path pings before the first flow starts


class Interrupted(BbrlabError):
    pass


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


class Progress:
    """One line per point with an ETA from the measured overhead so far."""

    def __init__(self, total_points: int, total_seconds: float):
        self.total_points = total_points
        self.remaining = total_seconds
        self.done = 0
        self.started = time.monotonic()
        self.flow_seconds_done = 0.0

    def extend(self, points: list[Point]) -> None:
        """Count POINTS in too: points added as the run goes (repeat: auto)."""
        self.total_points += len(points)
        self.remaining += sum(p.duration for p in points)

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
        log.info(f"[{bar}] {self.done}/{self.total_points} {point.id}: {status}; "
                 f"elapsed {elapsed:.0f}s, eta {eta:.0f}s")


def _flow_fields(flow) -> dict:
    """A flow's plan as the record keeps it: a picoquic build only where one was chosen."""
    fields = dataclasses.asdict(flow)
    if fields.get("build") is None:
        fields.pop("build", None)
    return fields


def _point_record(point: Point, plan, timings: dict, snapshot: dict, events: list) -> dict:
    return {
        "format": FORMAT_VERSION,
        **point_fields(point),
        "flow_plan": [_flow_fields(f) for f in plan.flows],
        "workloads": [dataclasses.asdict(w) for w in plan.workloads],
        "summary": plan.summary,
        "timings": timings,
        "events": events,
        "testbed": snapshot,
    }


def run_point(testbed: Testbed, point: Point, plan, folder: Path) -> dict:
    """Run one configured point in FOLDER/raw; returns the point's timing record."""
    raw = folder / "raw"
    slowest = point.link.lowest_rate
    loss = max([point.link.round_trip_loss] + [g.loss for g in point.flows if g.loss is not None])
    grace = grace_seconds(point.link.full_buffer_seconds(slowest), loss,
                          max([point.link.rtt] + [g.rtt for g in point.flows if g.rtt]),
                          int(point.sysctls.get("net.ipv4.tcp_syn_retries", KERNEL_SYN_RETRIES)))
    traffic = Traffic(testbed, plan.flows, plan.events, raw, point.sampling.iperf_interval, grace, TOOLS)
    samplers = Samplers(testbed, plan, raw, point.sampling.interval, point.sampling.ss_interval,
                        point.sampling.pcap, point.sampling.link_pcap, point.sampling.irtt)
    link_schedule = LinkSchedule(testbed, plan.schedule, raw)  # a trace's rates (schedule.py); else idle
    shorts = ShortFlows(testbed, plan, raw, grace)  # classes of many short flows (flows.*.workload)
    chain = Chain(testbed, plan.mahimahi, raw)  # Mahimahi's shells around the senders; else nothing
    begun = time.monotonic()
    try:
        chain.start()
        traffic.start_servers()
        shorts.start_sinks()
        samplers.start()
        lead = IDLE_LEAD + (SENDER_LEAD if plan.workloads else 0.0)
        t0 = time.monotonic() + lead
        t0_epoch = time.time() + lead
        shorts.launch(t0_epoch)  # started within the lead, its flows timed from t0
        link_schedule.start(t0)
        traffic.run(t0)
        shorts.wait(t0)
        end = time.monotonic() - t0
    finally:
        link_schedule.stop()
        samplers.stop()
        shorts.stop()
        traffic.stop()
        chain.stop()
    link_schedule.check()
    launches = {fr.flow.id: fr.launched_at for fr in traffic.runs}
    return {"t0": t0_epoch, "launches": launches, "end": end, "run_seconds": time.monotonic() - begun,
            "events": traffic.event_log}


def _by_shape(points: list[Point]) -> list[Point]:
    """POINTS in their order, but grouped by topology shape (one live network per shape)."""
    shapes: dict = {}
    for p in points:
        shapes.setdefault(build_plan(p).shape, []).append(p)
    return [p for group in shapes.values() for p in group]


def order_points(exp: Experiment, seed: int, shuffle: bool) -> list[Point]:
    """Seeded random order (so slow drifts don't line up with a sweep axis), grouped by shape."""
    points = list(exp.points)
    if shuffle:
        random.Random(seed).shuffle(points)
    return _by_shape(points)


class Bench:
    """The live network: one Testbed, reconfigured for each point of the same shape."""

    def __init__(self):
        self.testbed: Testbed | None = None

    def ready(self, plan) -> Testbed:
        if self.testbed is None:
            self.testbed = Testbed(plan)
            self.testbed.__enter__()
        else:
            self.testbed.configure(plan)
        return self.testbed

    def close(self) -> None:
        if self.testbed is not None:
            testbed, self.testbed = self.testbed, None
            testbed.__exit__(None, None, None)


def _run_and_commit(point: Point, rundir: RunDir, bench: Bench, progress: Progress, session: dict) -> bool:
    """Run POINT and commit it into RUNDIR; False when it failed (kept hidden, the run goes on)."""
    plan = build_plan(point)
    if bench.testbed is not None and bench.testbed.plan.shape != plan.shape:
        bench.close()
    staging = rundir.staging(point.id)
    try:
        t_setup = time.monotonic()
        testbed = bench.ready(plan)
        setup = time.monotonic() - t_setup
        snapshot = testbed.snapshot()
        timing = run_point(testbed, point, plan, staging)
        t_analysis = time.monotonic()
        series, mets = analysis.analyze(point, plan, staging, timing["t0"], timing["launches"], timing["end"],
                                        timing["events"])
        timing.update({"setup_seconds": round(setup, 3), "configured_seconds": point.duration,
                       "analysis_seconds": round(time.monotonic() - t_analysis, 3)})
        write_json(staging / "point.json", _point_record(point, plan, timing, snapshot, timing["events"]))
        write_json(staging / "series.json", series)
        write_json(staging / "metrics.json", mets)
        rundir.commit_point(staging, point.id)
        status = f"goodput {mets['goodput_mbps']:.2f} Mbit/s"
        if "flows_completed" in mets:
            status = (f"{mets['flows_completed']} of {mets['flows_planned']} short flows completed, "
                      f"median FCT {mets['fct_p50_ms'] or 0:.0f} ms")
        if "rtt_p50_ms" in mets:
            status += f", median RTT {mets['rtt_p50_ms']:.1f} ms"
        if mets.get("cpu_bound"):
            status += ", CPU-BOUND"
        progress.point(point, status)
        return True
    except (TestbedError, ParseError) as exc:  # this point failed; the others still run
        rundir.discard(staging, keep_as=point.id)
        progress.point(point, f"FAILED: {exc}")
        session.setdefault("failed", []).append({"point": point.id, "error": str(exc)})
        bench.close()
        return False
    except BaseException:
        rundir.discard(staging)
        raise


def more_repetitions(exp: Experiment, rundir: RunDir, allowed: set[str] | None = None) -> tuple[int, list[Point]]:
    """`repeat: auto`'s next round, judged from RUNDIR: (how many claim checks straddle their
    bound, the points to run: one more repetition of every grid point such a check rests on
    that has fewer than exp.repeat_max). Checks set aside as untrusted are not repeated: more
    runs of a CPU-bound point decide nothing. ALLOWED: the only grid points (as verdicts name
    them) that may be added to (a run of --only)."""
    count, wanted = judge.undecided(rundir, exp, allowed)
    points = []
    for p in exp.points:
        name = claims.point_name({"params": p.params})
        if p.repetition == 1 and name in wanted:
            points.append(replace(p, repetition=wanted[name] + 1))
    return count, _by_shape(points)


def repeat_until_decided(exp: Experiment, rundir: RunDir, run, progress: Progress,
                         allowed: set[str] | None = None) -> int:
    """`repeat: auto`: once every planned point is in, while a claim check's interval
    straddles its bound and its grid points have fewer than exp.repeat_max repetitions,
    run one more repetition of them (RUN(point) -> committed?) and judge again. The added
    repetitions are ordinary points of the run (their ids end in repN), so a resumed run
    counts them. Returns how many points were added."""
    added = 0
    while {p.id for p in exp.points} <= rundir.finished_points():  # a partial run is judged when complete
        count, points = more_repetitions(exp, rundir, allowed)
        if not points:
            break
        rounds: dict[int, list[str]] = {}
        for p in points:
            rounds.setdefault(p.repetition, []).append(claims.point_name({"params": p.params}))
        checks = f"{count} checks straddle their bounds" if count != 1 else "1 check straddles its bound"
        adding = "; ".join(f"repetition {k} of {', '.join(names)}" for k, names in sorted(rounds.items()))
        log.info(f"repeat: auto: {checks}; adding {adding}")
        progress.extend(points)
        committed = [run(p) for p in points]
        added += sum(committed)
        if not any(committed):  # every one failed: trying the same again would loop
            break
    return added


def _still_undecided(exp: Experiment, rundir: RunDir) -> list[Point]:
    """The repetitions `repeat: auto` would still add to a run whose planned points are all
    in (outside --only, or after one failed); said, so the run stays resumable for them."""
    if not {p.id for p in exp.points} <= rundir.finished_points():
        return []
    points = more_repetitions(exp, rundir)[1]
    if points:
        names = ", ".join(claims.point_name({"params": p.params}) for p in points)
        log.warning(f"repeat: auto: {names} may need more repetitions; the run stays resumable: "
                    "run it again to add them")
    return points


def _open_run(exp: Experiment, root: Path, resume: bool, planned: set, cli: list[str] | None,
              calibration: dict | None, shard: dict | None) -> tuple[RunDir, dict]:
    """The run directory EXP's points go into, resumed (when RESUME finds one of the same
    identity, testbed and shard) or new, and its run.json, marked running for a new session."""
    here = metadata.testbed_of(exp)
    rundir = RunDir.find_resumable(root, exp.name, exp.identity, shard, here) if resume else None
    if rundir is not None:
        rundir.adopt_spec(exp.source, exp.identity)  # today's claims judge it when it finishes
        meta = metadata.read_run(rundir)
        finished = rundir.finished_points()
        extra = len(finished - planned)
        log.info(f"resuming {rundir.path} ({len(finished & planned)} of {len(planned)} points done"
                 + (f", and {extra} added by repeat: auto" if extra else "") + ")")
    else:
        rundir = RunDir.create(root, exp.name)
        write_atomic(rundir.path / "spec.yaml", exp.source)
        meta = metadata.new_run(exp, exp.identity, cli or [], here)
        if shard is not None:
            meta["shard"] = shard
    meta["status"] = "running"
    meta.setdefault("sessions", []).append({"started": time.time(), "git": metadata.git_revision()})
    if calibration is not None:
        meta["calibration"] = calibration
        meta["sessions"][-1]["calibration"] = calibration["key"]
    write_json(rundir.path / "run.json", meta)
    return rundir, meta


def run_experiment(exp: Experiment, root: Path, resume: bool = True, shuffle: bool = True,
                   cli: list[str] | None = None, subset: list[Point] | None = None,
                   calibration: dict | None = None, shard: dict | None = None, figure: bool = True) -> RunDir:
    """Run EXP's points (only those of SUBSET, if given) into a new or resumed run directory;
    then, for `repeat: auto`, more repetitions where a claim is undecided.

    CALIBRATION (calibrate.py): this machine's measured envelope, recorded in run.json;
    the points beyond it are judged inconclusive. SHARD (shard.record): this host's part
    of the grid, recorded in run.json: only its points are planned, only a run of the same
    part is resumed, and `repeat: auto` is left to the merged run (shard.py). FIGURE: draw
    the run's figure when it ends (`bbrlab plot` draws it later otherwise)."""
    wanted = {p.id for p in subset} if subset is not None else None
    planned = set(shard["points"]) if shard is not None else {p.id for p in exp.points}
    if shard is not None:
        wanted = planned & wanted if wanted is not None else planned
    rundir, meta = _open_run(exp, root, resume, planned, cli, calibration, shard)

    done = rundir.finished_points()
    todo = [p for p in order_points(exp, exp.seed, shuffle)
            if p.id not in done and (wanted is None or p.id in wanted)]
    progress = Progress(len(todo), sum(p.duration for p in todo))
    previous_int = signal.getsignal(signal.SIGINT)
    previous_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    session = meta["sessions"][-1]
    started = time.monotonic()
    bench = Bench()

    def run(point: Point) -> bool:
        return _run_and_commit(point, rundir, bench, progress, session)

    undecided: list[Point] = []  # repetitions repeat: auto would still add: the run stays resumable
    try:
        for point in todo:
            run(point)
        if exp.adaptive and shard is None:
            allowed = None if subset is None else {claims.point_name({"params": p.params}) for p in subset}
            repeat_until_decided(exp, rundir, run, progress, allowed)
            undecided = _still_undecided(exp, rundir)
    except KeyboardInterrupt:
        meta["status"] = "interrupted"
        raise Interrupted(f"interrupted; finished points are kept in {rundir.path} "
                          f"(run the same command again to finish the rest)") from None
    finally:
        bench.close()
        signal.signal(signal.SIGTERM, previous_term)
        signal.signal(signal.SIGINT, previous_int)
        session["wall_seconds"] = round(time.monotonic() - started, 3)
        session["points_run"] = progress.done
        if meta["status"] == "running":
            meta["status"] = "complete" if planned <= rundir.finished_points() and not undecided else "incomplete"
        write_json(rundir.path / "run.json", meta)
    summary.finish(rundir, exp, figure=figure)
    return rundir
