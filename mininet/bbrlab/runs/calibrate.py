"""`bbrlab calibrate`: what this machine's emulator can be trusted with, measured.

Three things, stored with the machine's identity in /var/lib/bbrlab/calibration/<key>.json
(BBRLAB_CALIBRATION_DIR), whatever results directory a run writes to:
- the guest's timer lateness (cyclictest: how late a 1 ms timer fires), which is what
  makes a token-bucket shaper lose sending time and a delay line add RTT;
- the `fidelity` experiment at 10, 50 and 100 Mbit/s: the bottleneck's delivery while
  backlogged, its highest rate over any 100 ms, one CUBIC flow's efficiency, BBR's own
  bandwidth estimate against the rate, and the idle path's RTT error;
- the envelope: the rates at which every target held. A run records the calibration it
  used (run.json), and its points above the envelope are judged "inconclusive".

A calibration is made once per machine (kernel, CPUs, virtualization, CPU model, memory)
and reused. The first run on a new machine makes it by itself, only up to the rate that run
needs (figure 5: 10 Mbit/s, a minute instead of three); a later run at a higher rate measures
the rates still missing and the calibration keeps them all. `bbrlab calibrate` measures every
rate at once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
import time
from pathlib import Path

from .. import log
from ..analysis import system_output
from ..output.reports.calibration_table import table
from ..schema import aqm_format as aqms
from ..schema import experiment as spec
from ..schema.root import ROOT
from ..errors import BbrlabError, ParseError
from ..store import host_load
from ..store.results import RunDir, read_json, write_json

FORMAT = 6  # 2: BBR's estimate judged from below too; 3: from below against the payload capacity;
# 4: the points kept, so that a calibration measured up to one rate extends to higher ones;
# 5: under an AQM one CUBIC flow's efficiency is recorded, not judged (CUBIC's back-off);
# 6: under an AQM the link is judged by how busy BACKLOG_FLOWS CUBIC flows keep it
BBR_BW_FLOOR = round(0.9 * spec.PAYLOAD_BYTES / spec.FRAME_BYTES, 3)  # 0.861
EXPERIMENT = ROOT / "experiments" / "fidelity.yaml"
# The targets every measured rate must meet (docs/design.md "The bottleneck"), and the CC whose
# points measure each: only CUBIC keeps the buffer backlogged (BBR drains it on purpose,
# so its queue empties between samples and its goodput dips in ProbeRTT).
TARGETS = {
    "link_delivery": ("min", 0.98, "cubic"),  # the backlogged link sends its rate
    # no 100 ms window above the rate, beyond what the longest pause of the guest held back
    # (pauses of 10-20 ms happen here: caught up, they read as 1.1-1.2; lost, as rate)
    "link_peak_beyond_pause": ("max", 1.03, None),
    # BBR's median estimate near the rate: above it, short samples overshot (a bursty
    # shaper); far below it, BBR's own pacing starved (measured: 0.42 at 50 Mbit/s with the
    # host's CPUs busy with other work, while CUBIC still got 0.99 of the link). The
    # estimate counts payload, so its floor is 90% of the payload capacity (0.861 x the rate).
    "bbr_bw_ratio": ("range", (BBR_BW_FLOOR, 1.05), "bbr"),
    "steady_link_efficiency": ("min", 0.95, "cubic"),  # one CUBIC flow gets the payload capacity
}
# Under an AQM one flow does not keep the link backlogged, whatever the link does: CUBIC backs
# off to the AQM's short queue and leaves it idle a while (measured 0.871-0.957 of the payload
# capacity at 10-50 Mbit/s, from run to run), and no queue outlasts a sample to prove the
# link's delivery. The link is judged there under a load that keeps it busy whatever one CC
# does: BACKLOG_FLOWS CUBIC flows at once, each rate's extra point, must keep it busy after
# startup (link_busy: the bottleneck's own byte counter over the rate x the time) as one
# CUBIC flow must use a droptail link (0.95: the flows' own idle moments count against it)
BACKLOG_FLOWS = 4
BACKLOGGED = f"cubic x{BACKLOG_FLOWS}"
AQM_TARGETS = {"link_busy": ("min", 0.95, BACKLOGGED)}
# Under an AQM (a calibration path of its own), the AQM must also do its job: one backlogged
# CUBIC flow's standing queue within this many times the AQM's target (RFC 8290's 5 ms: 15 ms)
AQM_QUEUE_FACTOR = 3
# A rate that misses a target is measured again before it is declared unfaithful: one flow
# starved by a transient on the host must not fail the machine (each attempt is kept)
ATTEMPTS = 2
CYCLICTEST_SECONDS = 5
NOT_CALIBRATED = "not calibrated above"  # a gate that says how far the machine was measured, not a failure


def store() -> Path:
    return Path(os.environ.get("BBRLAB_CALIBRATION_DIR", "/var/lib/bbrlab/calibration"))


def machine() -> dict:
    """What makes two machines emulate alike: the kernel, the CPUs and how they are given."""
    model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kib = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal:"))
    except (OSError, StopIteration, ValueError):
        mem_kib = 0
    try:
        virt = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        virt = ""
    return {"hostname": platform.node(), "kernel": platform.release(), "cpus": os.cpu_count(),
            "virtualization": virt or "none", "cpu_model": model, "memory_gib": round(mem_kib / 2**20)}


def machine_key(ident: dict) -> str:
    text = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def path_for(key: str, path: str | None = None) -> Path:
    """Where the calibration of machine KEY is stored: the droptail bottleneck's, or that of
    PATH (aqm.calibration_path: an AQM and its shaper) beside it."""
    return store() / (f"{key}-{path}.json" if path else f"{key}.json")


def load(ident: dict | None = None, path: str | None = None) -> dict | None:
    """This machine's stored calibration (of PATH's bottleneck design), or None."""
    found = path_for(machine_key(ident or machine()), path)
    if not found.is_file():
        return None
    try:
        cal = read_json(found)
    except BbrlabError:
        return None
    return cal if cal.get("format") == FORMAT else None


def timer_lateness(seconds: int = CYCLICTEST_SECONDS) -> dict:
    """How late a 1 ms timer fires here (cyclictest, one thread at real-time priority)."""
    argv = ["cyclictest", "-q", "-D", str(seconds), "-i", "1000", "-t", "1", "-p", "80", "-h", "20000", "-m"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 30)
    except FileNotFoundError:
        raise BbrlabError("calibrate: cyclictest is missing; install it with: apt-get install rt-tests") from None
    except subprocess.TimeoutExpired:
        raise BbrlabError(f"calibrate: cyclictest did not end within {seconds + 30} s") from None
    if proc.returncode != 0:
        raise BbrlabError(f"calibrate: cyclictest failed ({proc.returncode}): {proc.stderr.strip()[:200]}")
    try:
        return system_output.parse_cyclictest(proc.stdout)
    except ParseError as exc:
        raise BbrlabError(f"calibrate: {exc}") from None


# One CUBIC flow's goodput says nothing of the link under an AQM (see BACKLOG_FLOWS)
NOT_UNDER_AQM = ("steady_link_efficiency",)


def targets(under_aqm: bool) -> dict:
    """The targets of a path: TARGETS, and AQM_TARGETS under an AQM."""
    return {**TARGETS, **AQM_TARGETS} if under_aqm else TARGETS


def _load(rec: dict) -> str:
    """Who a fidelity point's flows are: "cubic", "bbr", or BACKLOGGED."""
    cc = "+".join(sorted({g["cc"] for g in rec["flows"]}))
    flows = sum(g.get("count", 1) for g in rec["flows"])
    return cc if flows == 1 else f"{cc} x{flows}"


def _under_aqm(kinds) -> bool:
    """Whether a calibration judges an AQM's path: one of its points' AQM KINDS is not tc's FIFO."""
    return any(kind != aqms.FIFO for kind in kinds)


def _judge(metrics: dict, cc: str, under_aqm: bool = False) -> list[str]:
    """The targets a point of CC (_load) misses, as short texts (a metric it lacks is not
    judged, nor, UNDER_AQM, what one CUBIC flow's back-off decides: NOT_UNDER_AQM)."""
    missed = []
    for name, (kind, bound, who) in targets(under_aqm).items():
        value = metrics.get(name)
        if value is None or who not in (None, cc) or (under_aqm and name in NOT_UNDER_AQM):
            continue
        if kind == "range" and not bound[0] <= value <= bound[1]:
            missed.append(f"{name} {value:.3f} outside [{bound[0]:g}, {bound[1]:g}]")
        elif (kind == "min" and value < bound) or (kind == "max" and value > bound):
            missed.append(f"{name} {value:.3f} {'<' if kind == 'min' else '>'} {bound:g}")
    return missed


def _worst(kind: str, a: float, b: float) -> float:
    """The worse of two points' values of a target of KIND: the lower of a minimum, the
    higher of a maximum, the farther from 1 of a range around the rate."""
    if kind == "range":
        return max(a, b, key=lambda v: abs(v - 1))
    return (min if kind == "min" else max)(a, b)


def _rate_row(rate: float, recs: list[dict]) -> dict:
    """The envelope's row of one measured RATE from its points' records RECS: the worst of
    each fidelity number, what missed its target, and whether all held."""
    row: dict = {"rate_mbps": rate / 1e6, "missed": []}
    under_aqm = _under_aqm(aqms.record_kind(rec) for rec in recs)
    for rec in recs:
        cc = _load(rec)
        mets = rec["metrics"]
        for name, (kind, _, who) in targets(under_aqm).items():
            if mets.get(name) is not None and who in (None, cc):
                old = row.get(name)  # the worst of the points that measure it
                row[name] = mets[name] if old is None else _worst(kind, old, mets[name])
        row["missed"] += [f"{cc}: {text}" for text in _judge(mets, cc, under_aqm)]
        target = rec["link"].get("aqm_target_s")
        if target and cc == "cubic":  # an AQM's path: does it hold CUBIC's queue near its target?
            row["aqm_target_ms"] = target * 1e3
            queue = mets.get("queue_delay_p50_ms")
            if queue is None:
                row["missed"].append("cubic: the queue's delay not measured under the AQM")
            elif queue > AQM_QUEUE_FACTOR * target * 1e3:
                row["missed"].append(f"cubic: queue_delay_p50_ms {queue:.1f} > {AQM_QUEUE_FACTOR} x the AQM's "
                                     f"target {target * 1e3:g} ms")
        for name in ("link_peak_ratio", "idle_rtt_error_ms", "link_gap_max_ms", "cpu_busy_mean",
                     "cpu_core_busy_max") + (("queue_delay_p50_ms",) if cc == "cubic" else ()):
            if mets.get(name) is not None:
                row[name] = max(row.get(name, mets[name]), mets[name])
    if row.get("link_delivery") is None and row.get("steady_link_efficiency") is not None:
        # no sample's queue covered a whole interval: the link sent at least what one
        # greedy CUBIC flow received (its share of the payload capacity)
        row["link_delivery"] = row["steady_link_efficiency"]
        row["link_delivery_from"] = "CUBIC's goodput"
        if under_aqm:  # an AQM keeps the queue shorter than a sample: CUBIC's back-off to a
            # queue of a few ms idles the link for a while (measured 0.95-0.97 at 50 Mbit/s
            # and 20 ms), which is CUBIC's doing, not the link's: recorded, not judged
            row["link_delivery_from"] += " (not judged under an AQM)"
        else:
            row["missed"] += [f"cubic: {t}" for t in _judge({"link_delivery": row["link_delivery"]}, "cubic")]
    # a target no point measured is not met: nothing showed the link meets it
    row["missed"] += [f"{name} not measured" for name in targets(under_aqm) if row.get(name) is None]
    row["faithful"] = not row["missed"]
    return row


def envelope(records: list[dict]) -> dict:
    """Per measured rate, the fidelity numbers of its points and whether all targets held;
    the highest rate up to which every rate held, and the gate for the rest.

    RECORDS: the fidelity run's point records (params, link, flows, metrics)."""
    by_rate: dict[float, list[dict]] = {}
    for rec in records:
        by_rate.setdefault(float(rec["link"]["rate"]), []).append(rec)
    rows = []
    for rate in sorted(by_rate):
        rows.append(_rate_row(rate, by_rate[rate]))
    faithful_up_to = None
    for row in rows:
        if not row["faithful"]:
            break
        faithful_up_to = row["rate_mbps"] * 1e6
    failing = next((r for r in rows if not r["faithful"]), None)
    if failing is not None:
        gate = {"rate_bps": failing["rate_mbps"] * 1e6, "failed": "; ".join(failing["missed"])}
    elif rows:  # nothing measured above the top rate: not vouched for
        top = rows[-1]["rate_mbps"] * 1e6
        gate = {"rate_bps": top * (1 + 1e-9), "failed": f"{NOT_CALIBRATED} {top / 1e6:g} Mbit/s"}
    else:
        gate = None
    idle = [r["idle_rtt_error_ms"] for r in rows if r.get("idle_rtt_error_ms") is not None]
    return {"rates": rows, "faithful_up_to_bps": faithful_up_to, "gate": gate,
            "idle_rtt_error_ms": max(idle) if idle else None}


def summary_for_run(cal: dict) -> dict:
    """What a run records of the calibration it was judged against."""
    return {"key": cal["key"], "created": cal["created"], "shaper": cal["shaper"], "path": cal.get("path"),
            "faithful_up_to_bps": cal["faithful_up_to_bps"], "gate": cal["gate"],
            "timer": cal["timer"], "idle_rtt_error_ms": cal["idle_rtt_error_ms"], "file": cal["file"]}


@functools.lru_cache(maxsize=1)
def _fidelity():  # the fidelity experiment as written (read once: ensure asks for its rates and times)
    return spec.load(EXPERIMENT)


def fidelity_rates() -> list[float]:
    """The rates the fidelity experiment measures, lowest first (bit/s)."""
    return sorted({p.link.rate for p in _fidelity().points})


def rates_needed(top_bps: float | None, rates: list[float]) -> list[float]:
    """Which of RATES vouch for a run whose highest rate is TOP_BPS: every rate below it and
    the first at or above it (all of them when TOP_BPS is None or above the highest)."""
    if top_bps is None:
        return list(rates)
    above = [r for r in rates if r >= top_bps * (1 - 1e-9)]
    return [r for r in rates if r < top_bps * (1 - 1e-9)] + above[:1]


def _measured(cal: dict) -> set[float]:
    return {round(row["rate_mbps"] * 1e6) for row in cal["rates"]}


def _compact(record: dict) -> dict:
    """What the envelope reads of a fidelity point, kept in the calibration so that a later
    extension to higher rates judges all rates together."""
    aqm, kind = record["link"].get("aqm") or {}, aqms.record_kind(record)
    target = aqms.Aqm(kind, tuple(map(tuple, aqm.get("params") or ()))).target
    return {"id": record.get("id"), "link": {"rate": record["link"]["rate"], "aqm": kind,
                                             "aqm_target_s": target},
            "flows": [{"cc": g["cc"], "count": g.get("count", 1)} for g in record["flows"]],
            "metrics": record["metrics"]}


def measure(root: Path, quick: bool = False, overrides: list[str] = (), rates: list[float] | None = None,
            extend: dict | None = None, path: str | None = None, figure: bool = True) -> dict:
    """Measure this machine now and store the result; returns the calibration.

    RATES: only these of the fidelity experiment's rates (default: all). EXTEND: a stored
    calibration of this machine that the new rates join (its timer and points are kept).
    PATH: the bottleneck design measured (aqm.calibration_path), the droptail one if None.
    FIGURE: draw each fidelity run's figure."""
    ident = machine()
    key = machine_key(ident)
    if extend is not None:
        timer = extend["timer"]
    else:
        log.info(f"calibrate: timer lateness (cyclictest, {CYCLICTEST_SECONDS} s) ...")
        timer = timer_lateness()
    chosen = [_rates_set(rates)] if rates else []
    exps = _experiments(path, chosen, overrides, quick)
    exp = exps[0]
    log.info(f"calibrate: the bottleneck alone at {', '.join(f'{r / 1e6:g}' for r in sorted({p.link.rate for p in exp.points}))}"
             f" Mbit/s, {sum(len(e.points) for e in exps)} points "
             f"({sum(p.duration for e in exps for p in e.points):.0f} s of flows"
             f"{f'; under the AQM also {BACKLOGGED} at each rate' if len(exps) > 1 else ''}) ...")
    runs, points = _run(root, exps, figure)
    points += extend["points"] if extend else []
    points, attempts, more = _measure_failed_again(root, exp, points, quick, overrides, path, figure)
    runs += more
    env = envelope(points)
    for row in env["rates"]:  # what each rate's earlier attempts missed, beside its last
        row["attempts"] = [a["missed"] for a in (extend or {}).get("attempts", {}).get(f"{row['rate_mbps']:g}", [])
                           + attempts.get(f"{row['rate_mbps']:g}", [])]
    shapers = sorted({p.link.shaper for p in exp.points})
    queues = sorted({p.link.aqm.kind for p in exp.points})
    cal = {"format": FORMAT, "key": key, "path": path, "queue": "+".join(queues), "machine": ident,
           "created": extend["created"] if extend else time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "shaper": "+".join(shapers), "timer": timer,
           "targets": {k: list(v) for k, v in targets(_under_aqm(queues)).items()},
           "run": runs[0], "runs": (extend["runs"] if extend else []) + runs,
           "attempts": {**(extend or {}).get("attempts", {}), **attempts}, "headroom": (extend or {}).get("headroom"),
           "quick": quick or bool(extend and extend["quick"]), "overrides": list(overrides), "points": points, **env}
    if extend is not None:
        cal["extended"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    target = path_for(key, path)
    cal["file"] = str(target)
    if overrides:  # a what-if (another shaper, a burst): kept beside, never used as the envelope
        target = target.with_name(f"{target.stem}-{time.strftime('%Y%m%d-%H%M%S')}-whatif.json")
        cal["file"] = str(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    cal = json.loads(json.dumps(cal))  # as every later run reads it
    write_json(target, cal)
    return cal


def _measure_failed_again(root: Path, exp, points: list[dict], quick: bool, overrides: list[str],
                          path: str | None, figure: bool = True) -> tuple[list[dict], dict, list[str]]:
    """POINTS with each rate of EXP that missed a target measured again, up to ATTEMPTS in
    all; the earlier attempts ({rate in Mbit/s: [{missed, points}]}) and the runs made."""
    attempts: dict[str, list] = {}
    runs: list[str] = []
    for attempt in range(2, ATTEMPTS + 1):
        mine = {round(p.link.rate) for p in exp.points}
        failed = [r for r in envelope(points)["rates"] if not r["faithful"] and round(r["rate_mbps"] * 1e6) in mine]
        if not failed:
            break
        again = [r["rate_mbps"] * 1e6 for r in failed]
        log.info(f"calibrate: {', '.join(f'{r / 1e6:g}' for r in again)} Mbit/s missed a target "
                 f"({'; '.join(failed[0]['missed'])}); measuring again (attempt {attempt} of {ATTEMPTS}) ...")
        made, new = _run(root, _experiments(path, [_rates_set(again)], overrides, quick), figure)
        runs += made
        points, earlier = _replace_rates(points, new, again)
        for row in failed:
            rate = round(row["rate_mbps"] * 1e6)
            attempts.setdefault(f"{row['rate_mbps']:g}", []).append(
                {"missed": row["missed"], "points": [p for p in earlier if round(p["link"]["rate"]) == rate]})
    return points, attempts, runs


def _experiments(path: str | None, sets: list[str], overrides: list[str], quick: bool) -> list:
    """The fidelity experiment of PATH narrowed by SETS, and under an AQM its backlogged
    points: BACKLOG_FLOWS CUBIC flows at each rate, as long as the others (in the quick
    profile's 8 s after startup their slow start's losses still showed: 0.948-0.969 busy at
    10 Mbit/s, against 0.990-0.995 in 15 s), their link_busy from the bottleneck's own counter."""
    base = (aqms.path_sets(path) if path else []) + list(overrides) + list(sets)  # a what-if's rates narrowed
    exps = [spec.load(EXPERIMENT, base, quick=quick)]
    if _under_aqm(p.link.aqm.kind for p in exps[0].points):
        backlog = ["cc=cubic", f"count={BACKLOG_FLOWS}", "sampling.ss_interval=5s"]
        exps.append(spec.load(EXPERIMENT, base + backlog, quick=quick))
    return exps


def _run(root: Path, exps: list, figure: bool) -> tuple[list[str], list[dict]]:
    """Run the fidelity experiments EXPS into ROOT: the runs made and their points (_compact).
    FIGURE: draw the first's figure (the backlogged points' numbers are in the table)."""
    from . import runner  # Mininet: only when measuring

    runs, points = [], []
    for i, exp in enumerate(exps):
        rundir: RunDir = runner.run_experiment(exp, root, resume=False, cli=["calibrate"], figure=figure and i == 0)
        runs.append(str(rundir.path))
        points += [_compact(r) for r in rundir.point_records()]
    return runs, points


def _rates_set(rates: list[float]) -> str:
    """The --set that narrows the fidelity experiment to RATES."""
    return f"rate=[{','.join(f'{r / 1e6:g}Mbit' for r in rates)}]"


def _replace_rates(points: list[dict], new: list[dict], rates: list[float]) -> tuple[list[dict], list[dict]]:
    """POINTS with the points of RATES replaced by NEW (a later attempt at them), and the
    points replaced."""
    again = {round(r) for r in rates}
    earlier = [p for p in points if round(p["link"]["rate"]) in again]
    return [p for p in points if round(p["link"]["rate"]) not in again] + new, earlier


def ensure(root: Path, top_bps: float | None = None, path: str | None = None, figure: bool = True) -> dict:
    """This machine's calibration (of PATH's design, aqm.calibration_path; droptail if None) for a
    run whose highest rate is TOP_BPS: the stored one when it covers that rate, else a measurement
    of the rates it lacks (a later run at a higher rate adds those), into ROOT. One that failed
    below TOP_BPS is not extended: its gate stands; one that failed while the host was busy
    (store/host_load) is measured again. FIGURE: draw the fidelity runs' figures."""
    rates, cal = fidelity_rates(), load(path=path)
    needed = rates_needed(top_bps, rates)
    what = f"calibration of {path}" if path else "calibration"
    failed = cal is not None and any(not row["faithful"] for row in cal["rates"])
    busy = host_load.failed_while_busy(cal, failed)  # a starved flow, not the machine, may have failed it
    if cal is not None and not busy:
        missing = [r for r in needed if round(r) not in _measured(cal)]
        if not missing or cal["faithful_up_to_bps"] is None or failed:
            return cal
        log.info(f"bbrlab: this machine's {what} stops at {max(_measured(cal)) / 1e6:g} Mbit/s; measuring "
                 f"{', '.join(f'{r / 1e6:g}' for r in missing)} Mbit/s too (about {_minutes(missing)} min, once)")
        cal = measure(root, rates=missing, extend=cal, path=path, figure=figure)
    else:
        why = (f"this machine's {what} failed while {busy}; measuring it again" if busy
               else f"this machine has no {what} yet; measuring it first")
        log.info(f"bbrlab: {why} at {', '.join(f'{r / 1e6:g}' for r in needed)} Mbit/s (about {_minutes(needed)} min, "
                 "once per machine; a run at a higher rate adds that rate; `sudo ./figure5.sh calibrate` or "
                 "`sudo bbrlab calibrate` measures all again)")
        cal = measure(root, rates=needed if needed != rates else None, path=path, figure=figure)
    log.info("\n".join(table(cal)))
    return cal


def _minutes(rates: list[float]) -> str:
    """The expected time of measuring RATES: each point's flows plus about 10 s around them."""
    seconds = sum(p.duration + 10 for p in _fidelity().points if round(p.link.rate) in {round(r) for r in rates})
    return f"{max(1, round(seconds / 60))}"
