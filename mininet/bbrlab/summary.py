"""The last arrow of a run: finished points -> merged metrics, claims' verdict, figure.

Reads the results directory alone (no testbed, no Mininet), so `bbrlab plot` can redraw
a run anywhere, years later.
"""

from __future__ import annotations

from . import claims, metadata, plots
from .errors import BbrlabError
from .results import RunDir, write_json
from .spec import Experiment


def finish(rundir: RunDir, exp: Experiment) -> dict:
    """Aggregate metrics, evaluate claims, draw the figure: from the results directory alone."""
    records = rundir.point_records()
    if not records:
        raise BbrlabError(f"{rundir.path}: no finished points to summarize")
    merged = claims.average_repetitions(records)
    write_json(rundir.path / "metrics.json", {"points": [
        {"params": r["params"], "metrics": r["metrics"]} for r in merged]})
    v = claims.verdict(exp.claims, records)
    meta = metadata.read_run(rundir)
    v["overhead"] = metadata.overhead(meta, records)
    write_json(rundir.path / "verdict.json", v)
    figure = plots.draw(exp, rundir, records, v)
    v["figure"] = str(figure)
    print("\n".join(claims.verdict_lines(v)))
    print(f"figure: {figure}")
    return v
