"""How many flows this machine carries at each faithful rate before a point is set aside.

`bbrlab calibrate` measures it after the rates' fidelity: at each rate the calibration
judged faithful, PROBE_CC flows through the same bottleneck (the fidelity experiment's
quick profile, without its frame capture, which no other experiment makes, and without its
claims: a probe measures the machine, not a claim), 2, 4, 8, ... at once until a point is set
aside as a verdict would set it aside (verdicts/set_aside.py: CPU-bound, analysis/cpu_metrics; or its
senders held back by late pacing timers, or its link below its rate) or the largest count
asked for is reached. The answer is kept in the calibration ("headroom"), and a run's points
with more flows at a rate than it carries are named before they run (`--dry-run` and the
run's first lines): they are likely set aside, so a verdict on them would say nothing.

BBR is the probe: each of its flows paces with a timer of its own, the most any kernel
CC costs per flow (4 BBR flows at 20 Mbit/s cost this 2-CPU guest 0.83-0.90 CPU-s per
second, 4 CUBIC flows at 10 Mbit/s 0.57-0.78; docs/design.md, "What the testbed's own
sampling costs").
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .. import log
from ..schema import aqm_format as aqms
from ..schema import experiment as spec
from ..schema import flows
from ..schema.root import ROOT
from ..store.results import write_json
from ..verdicts.set_aside import SET_ASIDE

EXPERIMENT = ROOT / "experiments" / "fidelity.yaml"
PROBE_CC = "bbr"
UP_TO = 16  # the most flows probed by default (figure 5's paper profile runs 8 at once)


def counts(up_to: int) -> list[int]:
    """The flow counts probed up to UP_TO: 2, 4, 8, ... and UP_TO itself."""
    out, n = [], 2
    while n < up_to:
        out.append(n)
        n *= 2
    return out + ([up_to] if up_to >= 2 else [])


def set_aside(metrics: dict) -> list[str]:
    """Why a verdict would set aside a point of these METRICS for the machine's sake
    (verdicts/set_aside.py; a probe's link runs at one rate, so it is never off a schedule)."""
    return [a.reason for key, a in SET_ASIDE.items() if metrics.get(key)]


def _single(cal: dict, rate: float) -> list[str]:
    """Why one flow at RATE was already set aside in the calibration's own points (none: it was not)."""
    return sorted({why for p in cal.get("points", []) if round(p["link"]["rate"]) == round(rate)
                   and sum(g["count"] for g in p["flows"]) == 1 for why in set_aside(p["metrics"])})


def measure(root: Path, cal: dict, up_to: int = UP_TO, path: str | None = None) -> dict:
    """The headroom of calibration CAL's machine at each of its faithful rates, probing up to
    UP_TO flows (PATH: the bottleneck design calibrated, aqm.calibration_path); the probes' runs go to ROOT."""
    from . import runner  # Mininet: only when measuring

    rates: dict[str, dict] = {}
    for row in (r for r in cal["rates"] if r["faithful"]):
        rate = row["rate_mbps"] * 1e6
        single = _single(cal, rate)
        carries, probes = (0 if single else 1), []
        for n in counts(up_to) if carries else []:
            log.info(f"calibrate: headroom at {rate / 1e6:g} Mbit/s, {n} {PROBE_CC} flows at once ...")
            sets = (aqms.path_sets(path) if path else []) + [
                f"rate={rate / 1e6:g}Mbit", f"cc={PROBE_CC}", f"count={n}", "sampling.link_pcap=false"]
            exp = dataclasses.replace(spec.load(EXPERIMENT, sets, quick=True), claims=())
            rundir = runner.run_experiment(exp, root, resume=False, cli=["calibrate", "headroom"], figure=False)
            mets = next(iter(rundir.point_records()))["metrics"]
            probes.append({"flows": n, "run": str(rundir.path), "set_aside": set_aside(mets),
                           **{k: mets.get(k) for k in ("cpu_busy_mean", "cpu_core_busy_max", "link_busy")}})
            if probes[-1]["set_aside"]:
                break
            carries = n
        bound = probes[-1]["set_aside"] if probes else single
        rates[f"{rate / 1e6:g}"] = {"carries": carries, "probed_up_to": up_to, "probes": probes, "why": bound,
                                    "bound_at": (probes[-1]["flows"] if probes else 1) if bound else None}
    return {"cc": PROBE_CC, "profile": "quick", "rates": rates}


def add(root: Path, cal: dict, up_to: int = UP_TO, path: str | None = None) -> dict:
    """CAL with its headroom measured (up to UP_TO flows) and stored in its file."""
    cal = {**cal, "headroom": measure(root, cal, up_to, path)}
    write_json(Path(cal["file"]), cal)
    return cal


def _row(head: dict, rate: float) -> tuple[float, dict] | None:
    """The headroom row that vouches for RATE: the lowest probed rate at or above it (flows at
    a higher rate cost more), or None above them all (the calibration's gate speaks there)."""
    rows = sorted((float(k) * 1e6, v) for k, v in head["rates"].items())
    return next(((r, v) for r, v in rows if r >= rate * (1 - 1e-9)), None)


def told(cal: dict | None, points: list[spec.Point]) -> list[str]:
    """What `run --dry-run` says of POINTS' flows: the warnings, or how to measure the
    headroom when CAL (this machine's calibration) has none and a point has several flows."""
    if cal is not None and not cal.get("headroom") and any(flows.long_flows(p.flows) > 1 for p in points):
        return ["headroom: this machine's calibration has not measured how many flows it carries before "
                "a point is set aside (CPU-bound); `sudo ./figure5.sh calibrate` (or `sudo bbrlab calibrate`) measures it"]
    return warnings(cal, points)


def warnings(cal: dict | None, points: list[spec.Point]) -> list[str]:
    """One line per flow count and rate of POINTS with more flows than CAL's headroom
    carries: the points likely set aside on this machine (none when CAL has no headroom)."""
    head = (cal or {}).get("headroom")
    over: dict[tuple[int, float, float], list[str]] = {}
    for p in points if head else []:
        rate = p.link.top_rate
        found, n = _row(head, rate), flows.long_flows(p.flows)
        if found is not None and found[1]["bound_at"] is not None and n > found[1]["carries"]:
            over.setdefault((n, rate, found[0]), []).append(p.id)
    out = []
    for (n, rate, at), ids in sorted(over.items()):
        row = head["rates"][f"{at / 1e6:g}"]
        probe = next((q for q in row["probes"] if q["flows"] == row["bound_at"]), None)
        busy = f", CPUs {probe['cpu_busy_mean']:.2f} busy" if probe and probe.get("cpu_busy_mean") is not None else ""
        out.append(f"warning: {len(ids)} point(s) with {n} flows at {rate / 1e6:g} Mbit/s exceed this machine's "
                   f"headroom: {row['carries']} {head['cc']} flow(s) at {at / 1e6:g} Mbit/s ({row['bound_at']}: "
                   f"{', '.join(row['why'])}{busy}; calibration {cal['key']}); they are likely set aside "
                   f"(e.g. {ids[0]})")
    return out
