"""The last arrow of a run: finished points -> merged metrics, claims' verdict, figure.

Reads the results directory alone (no testbed, no Mininet), so `bbrlab plot` can redraw
a run anywhere, years later.
"""

from __future__ import annotations

from . import claims, metadata, plots
from .errors import BbrlabError
from .results import RunDir, write_json
from .spec import Experiment

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
    return {"rate_bps": float(gate["rate_bps"]), "run": cal.get("file"),
            "failed": f"calibration {cal.get('key')}: {gate['failed']}"}


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
