"""Claims: the paper's statements, checked against the measured metrics of a run.

A claim selects grid points (`where`), reads one metric, and bounds it (`min`/`max`),
either absolutely, relative to another metric of the same point (`relative_to`), or as a
ratio to a matching point (`vs`: same parameters except those named in vs). With no
point selected a claim is not evaluated.

Each check is judged on its grid point's repetitions, not on their mean alone: the
Student-t interval of the mean (stats.py) must lie wholly on the passing side to hold,
wholly on the failing side to fail; one that straddles a bound is inconclusive, and so is
every check on a point the emulator cannot be trusted with (CPU-bound, its link below its
rate, or at a rate this machine failed its fidelity check at): such a point counts
neither for nor against a claim. A claim fails when one of its checks fails, else is
inconclusive when one of them is, else holds; the experiment is "reproduced" when every
evaluated claim holds, "not reproduced" when one fails, else "inconclusive", and the
verdict's `why` says what it rests on.
"""

from __future__ import annotations

from collections import defaultdict

from ..analysis import classes, stats
from ..schema.claim_format import OWN, Claim, selects, typed
from ..schema import aqm_format
from .set_aside import GATED, SET_ASIDE


# The link's values a claim's `where` may name when a run does not sweep them (a --set, a
# narrowed profile): the point's own configuration, in the units `typed` gives.
LINK_FACTS = ("rtt", "rate", "jitter", "delay_variation")


def facts(record: dict) -> dict:
    """What `where` can select on: the point's sweep parameters, typed, and the link's own
    values it does not sweep (a claim on `rtt: {max: 1ms}` is about the RTT the point ran,
    whether or not it was an axis), and so its pacing, its link's shaper and its AQM."""
    result = {}
    for key, value in record["params"].items():
        result[key] = typed(key, value)
    link = record.get("link") or {}
    for key in LINK_FACTS:
        if key not in result and isinstance(link.get(key), (int, float)) and not isinstance(link.get(key), bool):
            result[key] = float(link[key])
    for key, value in (("pacing", record.get("pacing")), ("shaper", link.get("shaper")),
                       ("aqm", aqm_format.record_kind(record))):
        if key not in result and isinstance(value, str):  # fixed by the file or by --set
            result[key] = value
    ccs = sorted({g["cc"] for g in record["flows"]})
    result.setdefault("cc", ccs[0] if len(ccs) == 1 else "+".join(ccs))
    result.setdefault("loss", record["metrics"].get("loss", 0.0))
    return result


def _selects(record: dict, where: dict) -> bool:
    """Whether WHERE selects RECORD's point: its facts, the buffer in BDPs (`buffer_bdp`), and
    a traffic class the point has (`group: N`, `class: NAME`, or `cc: NAME` inside a point that mixes CCs;
    the claim then reads that class's metrics: classes.scope)."""
    fact = _all_facts(record)
    present = {"group": [str(i) for i in range(len(record["flows"]))], "cc": sorted({g["cc"] for g in record["flows"]}),
               "class": [g.get("name") or f"g{i + 1}" for i, g in enumerate(record["flows"])]}
    return selects(fact, present, where)


def _all_facts(record: dict) -> dict:
    """facts(), and what a claim's where or conditions read of its metrics besides."""
    fact = facts(record)
    mets, buffer = record["metrics"], (record.get("link") or {}).get("buffer") or {}
    if buffer.get("unit") == "bdp":  # as written: 8bdp is 8, whatever the packets it rounds to
        fact["buffer_bdp"] = float(buffer["value"])
    elif mets.get("bdp_pkts") and mets.get("buffer_pkts") is not None:
        fact["buffer_bdp"] = round(mets["buffer_pkts"] / mets["bdp_pkts"], 2)
    if isinstance(mets.get("bdp_pkts"), (int, float)):  # a source's conditions may bound the path's BDP
        fact["bdp_pkts"] = float(mets["bdp_pkts"])
    if isinstance(mets.get("idle_rtt_min_ms"), (int, float)):  # and its measured floor of RTT
        fact["min_rtt"] = mets["idle_rtt_min_ms"] / 1e3
    return fact


def _params_key(record: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in record["params"].items()))


def grid_points(records: list[dict]) -> list[list[dict]]:
    """Records grouped by grid point (their params, in any order): one list per point,
    its repetitions, in the order the points first appear."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in records:
        groups[_params_key(r)].append(r)
    return list(groups.values())


def average_repetitions(records: list[dict]) -> list[dict]:
    """One record per grid point: numeric metrics averaged over repetitions (n kept)."""
    merged = []
    for group in grid_points(records):
        base = dict(group[0])
        mets = dict(group[0]["metrics"])
        for key, value in group[0]["metrics"].items():
            vals = [g["metrics"].get(key) for g in group]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
                mets[key] = sum(vals) / len(vals)
                if len(vals) > 1:
                    mean = mets[key]
                    sd = (sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) ** 0.5
                    mets[f"{key}_ci95"] = 1.96 * sd / len(vals) ** 0.5
            elif isinstance(vals[0], bool):
                mets[key] = any(vals)
        mets["repetitions"] = len(group)
        base["metrics"] = mets
        merged.append(base)
    return merged


def point_name(record: dict) -> str:
    """A point as verdicts name it: its sweep values ("loss=1%, cc=bbr"), or "point"."""
    return ", ".join(f"{k}={v}" for k, v in record["params"].items()) or "point"


# Why a check is inconclusive: its interval straddles a bound, its point is untrusted, or
# its point failed to run.
STRADDLES = "interval straddles the bound"
FAILED_POINT = "the point failed"
# A claim whose points all lie outside the conditions its source states: not judged (neither
# reproduced nor not), and said so.
OUTSIDE = "outside its stated conditions"
# The one command that measures the emulator again, named wherever a gate is reported: a figure
# script's action works from the host without knowing Vagrant (it runs in the VM when it must)
RECALIBRATE = "measure again: sudo ./figure5.sh calibrate (inside the VM or on a testbed host: sudo bbrlab calibrate)"


def _by_repetition(group: list[dict], metric: str, where: dict | None = None) -> dict[int, float]:
    """METRIC's value in each repetition of a grid point that has it, by repetition number
    (of the class WHERE picks, when it picks one: classes.scope)."""
    values = {}
    for i, record in enumerate(group):
        value = classes.scope(record["metrics"], where or {}).get(metric)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            values[record.get("repetition", i + 1)] = float(value)
    return values


def _bound_text(claim: Claim, scale: float | None) -> str:
    parts = []
    for name, op in (("min", ">="), ("max", "<=")):
        value = getattr(claim, name)
        if value is not None:
            parts.append(f"{op} {value:g}" + (f" x {claim.relative_to} ({scale:g})" if scale is not None else ""))
    return " and ".join(parts)


def _judged(check: dict, claim: Claim, iv: stats.Interval, shown: float = 1.0) -> dict:
    """CHECK with interval IV's mean, bounds, n and status (SHOWN: the scale its numbers
    are given in; the bounds are compared unscaled, with IV's own scale)."""
    return dict(check, value=round(iv.mean * shown, 4), low=round(iv.low * shown, 4),
                high=round(iv.high * shown, 4), n=iv.n, status=stats.classify(iv, claim.min, claim.max))


def _missing(check: dict, metric: str, records: list[dict] = ()) -> dict:
    """CHECK failed for want of METRIC: why, when the analysis said (metrics' why_missing)."""
    why = next((r["metrics"].get("why_missing", {}).get(metric) for r in records
                if r["metrics"].get("why_missing", {}).get(metric)), None)
    return dict(check, value=None, n=0, status=stats.FAILS, note=f"{metric}: {why}" if why else f"{metric} missing")


def _point_check(claim: Claim, group: list[dict]) -> dict:
    """One grid point's check: the interval of its repetitions' values (relative_to: of each
    repetition's value over its own relative_to metric, shown at their mean scale)."""
    label = point_name(group[0])
    check = {"point": label, "points": [label]}
    values = _by_repetition(group, claim.metric, claim.where)
    if not claim.relative_to:
        if not values:
            return _missing(check, claim.metric, group)
        return _judged(dict(check, bound=_bound_text(claim, None)), claim, stats.interval(list(values.values())))
    scales = {rep: s for rep, s in _by_repetition(group, claim.relative_to, claim.where).items() if s > 0}
    if not scales:
        return _missing(check, claim.relative_to, group)
    reps = [rep for rep in values if rep in scales]
    if not reps:
        return _missing(check, claim.metric, group)
    shown = sum(scales[rep] for rep in reps) / len(reps)
    return _judged(dict(check, bound=_bound_text(claim, shown)), claim,
                   stats.interval([values[rep] / scales[rep] for rep in reps]), shown)


def _ratio_check(claim: Claim, group: list[dict], other: list[dict]) -> dict:
    """A `vs` check: repetition i of GROUP over repetition i of OTHER (paired by repetition
    number, which a run's points share; only the repetitions both have), and the interval
    of those ratios."""
    names = [point_name(group[0]), point_name(other[0])]
    check = {"point": " vs ".join(names), "points": names}
    mine = _by_repetition(group, claim.metric, claim.where)
    theirs = _by_repetition(other, claim.metric, {**claim.where, **(claim.vs or {})})
    reps = [rep for rep in mine if theirs.get(rep)]
    if not reps:
        return _missing(check, claim.metric, group + other)
    num = sum(mine[rep] for rep in reps) / len(reps)
    den = sum(theirs[rep] for rep in reps) / len(reps)
    return _judged(dict(check, bound=_bound_text(claim, None), detail=f"{num:.4g} / {den:.4g}"), claim,
                   stats.interval([mine[rep] / theirs[rep] for rep in reps]))


def _set_aside(check: dict, untrusted: dict[str, list[str]]) -> dict:
    """CHECK as judged, unless a point it rests on is untrusted: then inconclusive, saying why."""
    reasons = list(dict.fromkeys(r for name in check["points"] for r in untrusted.get(name, ())))
    if reasons:
        note = ", ".join(reasons) + (f" ({check['note']})" if check.get("note") else "")
        return dict(check, status=stats.INCONCLUSIVE, note=note)
    if check["status"] == stats.INCONCLUSIVE:
        return dict(check, note=STRADDLES)
    return check


def _failed_checks(claim: Claim, failed: list[dict], outside: list[str]) -> list[dict]:
    """An undecided check for each point of FAILED (stand-ins of points that failed to run,
    judge.failed_points) that CLAIM selects: nothing was measured there. One that lies outside
    the conditions of the claim's source as it was set up (its BDP) joins OUTSIDE instead."""
    named, conditions = {}, claim.conditions or {}
    for f in failed:
        if not _selects(f, claim.where):
            continue
        if conditions and set(conditions) <= set(_all_facts(f)) and not _selects(f, conditions):
            outside.append(point_name(f))
            continue
        named.setdefault(point_name(f), f["error"])
    return [{"point": name, "points": [name], "status": stats.INCONCLUSIVE, "value": None,
             "note": f"{FAILED_POINT}: {error}"} for name, error in named.items()]


def evaluate_claim(claim: Claim, records: list[dict], untrusted: dict[str, list[str]] | None = None,
                   failed: list[dict] = ()) -> dict:
    """CLAIM judged on RECORDS (every repetition; grouped here by grid point). UNTRUSTED:
    point name -> why the emulator cannot be trusted with it; its checks are inconclusive.
    FAILED: stand-ins of the run's points that failed: a claim that selects one is undecided
    there (never "not evaluated", never decided by the rest alone)."""
    groups = grid_points(records)
    checks, outside = [], []
    for group in groups:
        if not _selects(group[0], claim.where):
            continue
        if claim.conditions and not _selects(group[0], claim.conditions):
            outside.append(point_name(group[0]))  # the source did not claim this point: not judged
            continue
        if claim.vs is None:
            checks.append(_point_check(claim, group))
            continue
        varying = set(claim.vs)  # a where-only key (rate=10Mbit) must match, not vary
        for other in groups:
            if _selects(other[0], claim.vs) and all(
                    str(other[0]["params"].get(k)) == str(v) for k, v in group[0]["params"].items()
                    if k not in varying):
                checks.append(_ratio_check(claim, group, other))
    checks = [_set_aside(c, untrusted or {}) for c in checks] + _failed_checks(claim, list(failed), outside)
    statuses = {c["status"] for c in checks}
    if not checks:
        status = OUTSIDE if outside else "not evaluated"
    else:
        status = next(s for s in (stats.FAILS, stats.INCONCLUSIVE, stats.HOLDS) if s in statuses)
    result = {"id": claim.id, "text": claim.text, "metric": claim.metric, "status": status, "checks": checks}
    if claim.source != OWN:
        result["source"] = claim.source
    if outside:
        result["outside"] = {"conditions": claim.conditions, "points": outside}
    return result


def gate_rates(gate: dict) -> str:
    """The rates a fidelity gate sets, as text: the droptail bottleneck's, then each AQM's own
    ("100 Mbit/s (under fq_codel-htb: 20)")."""
    paths = "; ".join(f"under {path}: {g['rate_bps'] / 1e6:g}" for path, g in (gate.get("paths") or {}).items())
    return f"{gate['rate_bps'] / 1e6:g} Mbit/s" + (f" ({paths})" if paths else "")


def _gate_of(record: dict, gate: dict) -> dict:
    """The gate that binds RECORD: its AQM's own calibration where the run recorded one
    (gate["paths"]), else the droptail bottleneck's."""
    return (gate.get("paths") or {}).get(aqm_format.record_path(record)) or gate


def _top_rate(record: dict) -> float:
    link = record.get("link") or {}
    return max([link.get("rate", 0.0)] + [c["rate"] for c in link.get("changes") or []])


def _some(labels: list[str], shown: int = 3) -> str:
    more = len(labels) - shown
    return ", ".join(labels[:shown]) + (f" and {more} more" if more > 0 else "")


def _check_text(c: dict) -> str:
    """A check's numbers: value, and its interval and n when there was more than one run."""
    if c.get("value") is None:
        return str(c.get("note"))
    text = str(c["value"])
    if c.get("n", 1) > 1:
        text += f" [{c['low']:.4g}, {c['high']:.4g}] n={c['n']}"
    return text


def _why(results: list[dict], flagged: dict[str, list[str]], gate: dict | None) -> list[str]:
    """Short texts on what the verdict rests on: failing checks, straddling ones, and the
    untrusted points that were set aside."""
    why = []
    for title, wanted in (("fails", lambda c: c["status"] == stats.FAILS),
                          (STRADDLES, lambda c: c.get("note") == STRADDLES),
                          ("not measured", lambda c: str(c.get("note", "")).startswith(FAILED_POINT))):
        found = [(r, c) for r in results for c in r["checks"] if wanted(c)]
        for r, c in found[:3]:
            bound = f" vs {c['bound']}" if c.get("bound") and c.get("value") is not None else ""
            why.append(f"{title}: {r['id']} {c['point']}: {_check_text(c)}{bound}")
        if len(found) > 3:
            why.append(f"{title}: and {len(found) - 3} more checks")
    used = {name for r in results for c in r["checks"] for name in c["points"]}
    gated = (f"at or above {gate_rates(gate)}, where this machine's emulator failed its fidelity check "
             f"({RECALIBRATE})" if gate else GATED)
    titles = {a.reason: a.title for a in SET_ASIDE.values()} | {GATED: gated}
    for reason, names in flagged.items():
        names = [n for n in names if n in used]
        if names:
            why.append(f"{titles[reason]}: {_some(names)}")
    return why


def verdict(claims: tuple[Claim, ...], records: list[dict], gate: dict | None = None, failed: list[dict] = ()) -> dict:
    """All claims of an experiment, and the overall word on whether it reproduced:
    exactly one of "reproduced", "not reproduced", "inconclusive", "not evaluated".

    GATE (judge.fidelity_gate): the rate from which the emulator failed its fidelity
    check on this machine; points at that rate or above cannot be trusted either."""
    groups = grid_points(records)

    def flagged(test) -> list[str]:
        return [point_name(g[0]) for g in groups if any(test(r) for r in g)]

    marked = {a.reason: flagged(lambda r, key=key: r["metrics"].get(key)) for key, a in SET_ASIDE.items()}
    marked[GATED] = flagged(lambda r: _top_rate(r) >= _gate_of(r, gate)["rate_bps"]) if gate else []
    untrusted: dict[str, list[str]] = defaultdict(list)
    for reason, names in marked.items():
        for name in names:
            untrusted[name].append(reason)
    results = [evaluate_claim(c, records, untrusted, failed) for c in claims]
    statuses = {r["status"] for r in results} - {"not evaluated", OUTSIDE}
    if not statuses:
        overall = "not evaluated"
    elif stats.FAILS in statuses:
        overall = "not reproduced"
    elif stats.INCONCLUSIVE in statuses:
        overall = "inconclusive"
    else:
        overall = "reproduced"
    count = {s: sum(r["status"] == s for r in results) for s in (stats.HOLDS, stats.FAILS, stats.INCONCLUSIVE)}
    if overall == "not evaluated":
        why = ["no claim selected a point of this run" if claims else "the experiment has no claims"]
        if any(r["status"] == OUTSIDE for r in results):
            why = ["this run's points lie outside the conditions the claims' sources state"]
    else:
        why = _why(results, marked, gate) if overall != "reproduced" else []
    return {"verdict": overall, "why": why,
            "claims": results, **{a.points: marked[a.reason] for a in SET_ASIDE.values()},
            "fidelity_gate": dict(gate, points=marked[GATED]) if marked[GATED] else None, **count}


def straddling(v: dict) -> list[dict]:
    """The checks of verdict V that are inconclusive only because their interval straddles
    a bound (more repetitions of their `points` may decide them)."""
    return [c for r in v["claims"] for c in r["checks"] if c.get("note") == STRADDLES]


def _status(c: dict) -> str:
    """A check's status (a verdict.json written before checks had one: from its "ok")."""
    return c.get("status") or (stats.HOLDS if c.get("ok") else stats.FAILS)


MARKS = {"holds": "PASS", "fails": "FAIL", "inconclusive": " ?? ", "not evaluated": "n/a ", OUTSIDE: "out "}
RANK = {stats.FAILS: 0, stats.INCONCLUSIVE: 1, stats.HOLDS: 2}


def _bounds(want) -> str:
    """A condition as text: "<= 62", ">= 1%", "in [a, b]" or "= x"."""
    if isinstance(want, dict):
        return " and ".join(f"{'>=' if b == 'min' else '<='} {v}" for b, v in want.items())
    return f"in {want}" if isinstance(want, list) else f"= {want}"


def verdict_lines(v: dict, why: bool = True) -> list[str]:
    """The verdict as text: the word, why (unless WHY is false), each claim with its checks'
    numbers (mean [low, high] n=K over repetitions), and warnings on untrusted points."""
    lines = [f"verdict: {v['verdict']}"]
    done = v.get("points") or {}
    if done and done["finished"] < done["total"]:  # a run still to be resumed: say what it rests on
        lines[0] = f"verdict ({done['finished']} of {done['total']} points so far): {v['verdict']}"
    if why:
        lines += [f"  why: {w}" for w in v.get("why") or []]
    own = [r for r in v["claims"] if "source" not in r]
    kept_apart = own and len(own) < len(v["claims"])  # the authors' claims, then the testbed's own
    for r in sorted(v["claims"], key=lambda r: "source" not in r) if kept_apart else v["claims"]:
        if kept_apart and r is next(c for c in v["claims"] if "source" in c):
            lines.append("  the authors' claims:")
        elif kept_apart and r is own[0]:
            lines.append("  this testbed's own observations:")
        if r["status"] == OUTSIDE:
            where = ", ".join(f"{k} {_bounds(w)}" for k, w in r["outside"]["conditions"].items())
            lines.append(f"  [{MARKS[OUTSIDE]}] {r['text']}  (outside its source's conditions, {where}: "
                         f"{_some(r['outside']['points'])})")
            continue
        # a claim that did not hold shows the checks that decided it first: they are the ones to read
        checks = r["checks"] if r["status"] == "holds" else sorted(r["checks"], key=lambda c: RANK[_status(c)])
        values = "; ".join(f"{c['point']}: {_check_text(c)}"
                           + (f" ({c['note']})" if c.get("note") and c.get("value") is not None
                              and c["note"] != STRADDLES else "")
                           for c in checks[:4])
        if len(checks) > 4:
            values += f"; {len(checks) - 4} more"
        lines.append(f"  [{MARKS[r['status']]}] {r['text']}" + (f"  ({values})" if values else ""))
    for a in SET_ASIDE.values():
        if v.get(a.points):
            lines.append(f"  warning: {a.warning}: {_some(v[a.points])}")
    gate = v.get("fidelity_gate")
    if gate:
        lines.append(f"  warning: this machine's emulator failed its fidelity check at {gate['rate_bps'] / 1e6:g} Mbit/s "
                     f"({gate['failed']}); not trustworthy at that rate or above: {_some(gate['points'])}; "
                     f"{RECALIBRATE}")
    return lines
