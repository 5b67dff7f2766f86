"""A finished run's points analyzed again from their raw files (`bbrlab plot --reanalyze`):
an analysis fixed after a run reaches the run's numbers without measuring again.
"""

from __future__ import annotations

from .analyze import analyze
from ..errors import BbrlabError, ParseError
from ..store.results import RunDir, read_json, write_json
from ..schema.experiment import Experiment
from ..emulation.topo import build_plan


def reanalyze(rundir: RunDir, exp: Experiment) -> int:
    """Derive every finished point's series and metrics again from its raw files.

    An analysis fixed after a run reaches the run's numbers without measuring again: the
    raw tool output is what was measured, series.json and metrics.json are derived from
    it. Every point is checked first, so a run is never left half old, half new.
    Returns the number of points analyzed.
    """
    by_id = {p.id: p for p in exp.every_point}  # with the repetitions `repeat: auto` added
    done = sorted(rundir.finished_points())
    if not done:
        raise BbrlabError(f"{rundir.path}: no finished points to analyze")
    for pid in done:
        folder = rundir.points_dir / pid
        if pid not in by_id:
            raise BbrlabError(f"{folder}: this point is not in the run's spec.yaml; cannot analyze it again")
        if not (folder / "raw").is_dir():
            raise BbrlabError(f"{folder}: no raw/ directory (a copy without the tools' raw output?); "
                              "analyze it where the run's raw files are")
    results = []
    for pid in done:
        folder = rundir.points_dir / pid
        record = read_json(folder / "point.json")
        try:
            t = record["timings"]
            results.append((folder, *analyze(by_id[pid], build_plan(by_id[pid]), folder,
                                             t["t0"], t["launches"], t["end"], t.get("events"))))
        except KeyError as exc:
            raise BbrlabError(f"{folder / 'point.json'}: no timing field {exc}; cannot analyze it again") from None
        except ParseError as exc:
            raise BbrlabError(f"{folder}: {exc}") from None
    for folder, series, mets in results:
        write_json(folder / "series.json", series)
        write_json(folder / "metrics.json", mets)
    return len(results)
