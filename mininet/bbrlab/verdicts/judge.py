"""When a run's claims are decided: the emulator's gate from the calibration the run recorded,
the judging of a run's finished points by an experiment's claims, the checks `repeat: auto`
must still decide, and which spec judges a run again.

Reads the results directory alone (no testbed, no Mininet); output/reports/summary.py writes and
draws what this decides.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from . import claims
from ..store import metadata
from ..schema import experiment as spec
from ..errors import BbrlabError, SpecError
from ..store.results import RunDir, point_fields, read_json
from ..schema.experiment import Experiment

FIDELITY = "fidelity"  # the experiment that measures the emulator alone


def fidelity_gate(rundir: RunDir, exp: Experiment) -> dict | None:
    """The emulator's limit on the machine the run was measured on, from the calibration
    it recorded (calibrate.py): points at the gate's rate or above cannot be trusted.

    Whether one flow's goodput falls short because of its congestion control or because
    the emulator cannot carry the rate is not visible in that point alone (a slow sender
    path leaves the bottleneck's queue empty); the calibration settles it per machine.
    """
    if exp.name == FIDELITY:
        return None
    cal = metadata.read_run(rundir).get("calibration")
    gate = (cal or {}).get("gate")
    if not gate:
        return None
    out = {"rate_bps": float(gate["rate_bps"]), "run": cal.get("file"),
           "failed": f"calibration {cal.get('key')}: {gate['failed']}"}
    paths = {path: {"rate_bps": float(c["gate"]["rate_bps"]), "failed": f"calibration of {path}: {c['gate']['failed']}"}
             for path, c in (cal.get("paths") or {}).items() if c.get("gate")}
    return dict(out, paths=paths) if paths else out


def undecided(rundir: RunDir, exp: Experiment, allowed: set[str] | None = None) -> tuple[int, dict[str, int]]:
    """`repeat: auto`'s reading of RUNDIR: (how many claim checks straddle their bound,
    {grid point as verdicts name it: its highest repetition so far} of the points such a
    check rests on that have fewer than exp.repeat_max repetitions). Checks set aside as
    untrusted do not count: more runs of a CPU-bound point decide nothing. ALLOWED: the
    only grid points that may be named (a run of --only)."""
    records = rundir.point_records()
    straddling = claims.straddling(claims.verdict(exp.claims, records, fidelity_gate(rundir, exp)))
    done: dict[str, list[int]] = {}
    for record in records:
        done.setdefault(claims.point_name(record), []).append(record["repetition"])
    return len(straddling), {name: max(done.get(name, [0])) for check in straddling for name in check["points"]
                             if len(done.get(name, ())) < exp.repeat_max and (allowed is None or name in allowed)}


def judged_with(exp: Experiment) -> str:
    """The fingerprint of the spec a verdict was judged with (its claims, plot and title)."""
    return hashlib.sha256(exp.source.encode()).hexdigest()[:16]


def stale(rundir: RunDir, exp: Experiment) -> bool:
    """Whether RUNDIR's own verdict.json was judged with another spec than EXP (its
    spec.yaml edited by hand since); a verdict older than the fingerprint counts as EXP's."""
    seen = read_json(rundir.path / "verdict.json").get("judged_with")
    return seen is not None and seen != judged_with(exp)


def judge(rundir: RunDir, exp: Experiment) -> tuple[list[dict], list[dict], dict]:
    """(records, repetitions averaged, verdict) of RUNDIR's finished points judged by EXP."""
    records = rundir.point_records()
    if not records:
        raise BbrlabError(f"{rundir.path}: no finished points to summarize")
    merged = claims.average_repetitions(records)
    v = claims.verdict(exp.claims, records, fidelity_gate(rundir, exp), failed_points(rundir, exp))
    # the planned points, and any repetitions `repeat: auto` added beyond them
    total = len({p.id for p in exp.points} | rundir.finished_points())
    v["points"] = {"finished": len(records), "total": total}
    meta = metadata.read_run(rundir)
    v["overhead"] = metadata.overhead(meta, records)
    v["judged_with"] = judged_with(exp)
    return records, merged, v


def failed_points(rundir: RunDir, exp: Experiment) -> list[dict]:
    """Stand-in records (params, link, flows; "error") of the points of EXP that failed in a
    session of RUNDIR and have not finished since: what a claim selecting them could not see."""
    done = rundir.finished_points()
    errors = {f["point"]: f["error"] for s in metadata.read_run(rundir).get("sessions", [])
              for f in s.get("failed", []) if f["point"] not in done}
    return [json.loads(json.dumps({**point_fields(p), "error": errors[p.id],  # and its path as it was set up
                                   "metrics": {"loss": p.link.loss, "bdp_pkts": round(p.link.bdp_packets, 2),
                                               "buffer_pkts": p.link.buffer_packets}},
                                  default=str))
            for p in exp.every_point if p.id in errors]


def judging_specs(rundir: RunDir, folder: Path) -> tuple[Experiment, Experiment | None]:
    """(the spec RUNDIR ran with, from its spec.yaml; today's experiment file in FOLDER or its quick
    profile when that measures what the run measured, else None: a --set run, or a file
    changed since). Today's claims, plot or title then judge the run again, beside its own
    verdict (output/summary.rejudge); the run's spec.yaml and verdict.json stay as they are."""
    ran = spec.build(spec.load_raw(rundir.path / "spec.yaml"), default_name=rundir.path.parent.name)
    path = folder / f"{ran.name}.yaml"
    for quick in (False, True):
        try:
            today = spec.load(path, quick=quick)
        except SpecError:  # no such file, or one that no longer parses
            break
        if today.identity == ran.identity:
            return ran, today
    return ran, None
