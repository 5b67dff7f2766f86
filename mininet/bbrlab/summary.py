"""The last arrow of a run: finished points -> merged metrics, claims' verdict, figure.

Reads the results directory alone (no testbed, no Mininet), so `bbrlab plot` can redraw
a run anywhere, years later.
"""

from __future__ import annotations

import sys

from . import claims, metadata, plots
from .errors import BbrlabError
from .results import RunDir, read_json, write_json
from .spec import Experiment

FIDELITY = "fidelity"  # the experiment that measures the emulator alone
FIDELITY_CLAIMS = ("link-delivers-its-rate", "backlogged-link-at-its-rate")
SAME_MACHINE = ("hostname", "kernel", "cpus", "virtualization")


def fidelity_gate(rundir: RunDir, exp: Experiment) -> dict | None:
    """The emulator's limit on this machine, if the fidelity experiment found one.

    Whether one flow's goodput falls short because of its congestion control or because
    the emulator cannot carry the rate is not visible in that point alone (a slow sender
    path leaves the bottleneck's queue empty). The newest fidelity run on the same machine
    settles it for every point at its rate or above.
    """
    if exp.name == FIDELITY:
        return None
    root = rundir.path.parent.parent
    fid = RunDir.newest(root, FIDELITY, marker="verdict.json")
    if fid is None:
        return None
    try:
        mine, theirs = metadata.read_run(rundir).get("system"), metadata.read_run(fid).get("system")
        if not mine or not theirs or any(mine.get(k) != theirs.get(k) for k in SAME_MACHINE):
            return None
        failed = [c for c in read_json(fid.path / "verdict.json")["claims"]
                  if c["id"] in FIDELITY_CLAIMS and c["status"] == "fails"]
        records = fid.point_records()
        if not failed or not records:
            return None
        values = "; ".join(f"{c['text']}: {c['checks'][0]['value']}" for c in failed if c["checks"])
        return {"rate_bps": float(records[0]["link"]["rate"]), "run": str(fid.path), "failed": values}
    except (BbrlabError, KeyError, IndexError, TypeError, ValueError) as exc:  # a damaged or older run
        print(f"bbrlab: warning: ignoring the fidelity run {fid.path}: {exc!r}", file=sys.stderr)
        return None


def finish(rundir: RunDir, exp: Experiment) -> dict:
    """Aggregate metrics, evaluate claims, draw the figure: from the results directory alone."""
    records = rundir.point_records()
    if not records:
        raise BbrlabError(f"{rundir.path}: no finished points to summarize")
    merged = claims.average_repetitions(records)
    write_json(rundir.path / "metrics.json", {"points": [
        {"params": r["params"], "metrics": r["metrics"]} for r in merged]})
    v = claims.verdict(exp.claims, records, fidelity_gate(rundir, exp))
    # the planned points, and any repetitions `repeat: auto` added beyond them
    total = len({p.id for p in exp.points} | rundir.finished_points())
    v["points"] = {"finished": len(records), "total": total}
    meta = metadata.read_run(rundir)
    v["overhead"] = metadata.overhead(meta, records)
    write_json(rundir.path / "verdict.json", v)
    figure = plots.draw(exp, rundir, records, v)
    v["figure"] = str(figure)
    print("\n".join(claims.verdict_lines(v)))
    print(f"figure: {figure}")
    return v
