"""Claims: the paper's statements, checked against the measured metrics of a run.

A claim selects points (`where`), reads one metric, and bounds it (`min`/`max`), either
absolutely, relative to another metric of the same point (`relative_to`), or as a ratio
to a matching point (`vs`: same parameters except those named in vs). A claim
holds when every selected point satisfies it; with no point selected it is not evaluated.
Repetitions are averaged first.
"""

from __future__ import annotations

from collections import defaultdict

from . import units
from .analysis import LINK_DELIVERY_MIN
from .errors import SpecError
from .spec import Claim

# Parameters whose values are compared as numbers, with their unit parsers.
_NUMERIC = {"loss": units.fraction, "rtt": units.duration, "rate": units.rate, "jitter": units.duration}


def facts(record: dict) -> dict:
    """What `where` can select on: the point's sweep parameters, typed."""
    result = {}
    for key, value in record["params"].items():
        result[key] = _NUMERIC[key](value, key) if key in _NUMERIC else value
    ccs = sorted({g["cc"] for g in record["flows"]})
    result.setdefault("cc", ccs[0] if len(ccs) == 1 else "+".join(ccs))
    result.setdefault("loss", record["metrics"].get("loss", 0.0))
    return result


def _matches(fact: dict, where: dict) -> bool:
    for key, want in where.items():
        if key not in fact:
            return False
        have = fact[key]
        parse = _NUMERIC.get(key)
        if isinstance(want, dict):
            for bound, limit in want.items():
                limit = parse(limit, f"where.{key}.{bound}") if parse else limit
                if bound == "min" and not have >= limit - 1e-12:
                    return False
                if bound == "max" and not have <= limit + 1e-12:
                    return False
                if bound not in ("min", "max"):
                    raise SpecError(f"where.{key}: unknown bound {bound!r} (use min, max)")
        else:
            options = want if isinstance(want, list) else [want]
            if parse:
                if not any(abs(have - parse(o, f"where.{key}")) < 1e-12 for o in options):
                    return False
            elif str(have) not in [str(o) for o in options]:
                return False
    return True


def average_repetitions(records: list[dict]) -> list[dict]:
    """One record per grid point: numeric metrics averaged over repetitions (n kept)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in records:
        groups[tuple(sorted((k, str(v)) for k, v in r["params"].items()))].append(r)
    merged = []
    for group in groups.values():
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


def _bound_text(claim: Claim, scale: float | None) -> str:
    parts = []
    for name, op in (("min", ">="), ("max", "<=")):
        value = getattr(claim, name)
        if value is not None:
            parts.append(f"{op} {value:g}" + (f" x {claim.relative_to} ({scale:g})" if scale is not None else ""))
    return " and ".join(parts)


def _check(value: float, claim: Claim, scale: float) -> bool:
    if claim.min is not None and not value >= claim.min * scale:
        return False
    return claim.max is None or value <= claim.max * scale


def point_name(record: dict) -> str:
    """A point as verdicts name it: its sweep values ("loss=1%, cc=bbr"), or "point"."""
    return ", ".join(f"{k}={v}" for k, v in record["params"].items()) or "point"


def evaluate_claim(claim: Claim, records: list[dict]) -> dict:
    checks = []
    for rec in records:
        fact = facts(rec)
        if not _matches(fact, claim.where):
            continue
        value = rec["metrics"].get(claim.metric)
        label = point_name(rec)
        if claim.vs is not None:
            varying = set(claim.vs)  # a where-only key (rate=10Mbit) must match, not vary
            partners = [o for o in records if _matches(facts(o), claim.vs)
                        and all(str(o["params"].get(k)) == str(v) for k, v in rec["params"].items() if k not in varying)]
            for other in partners:
                denom = other["metrics"].get(claim.metric)
                if value is None or not denom:
                    checks.append({"point": label, "value": None, "ok": False, "note": f"{claim.metric} missing"})
                    continue
                ratio = value / denom
                other_label = ", ".join(f"{k}={v}" for k, v in other["params"].items())
                checks.append({"point": f"{label} vs {other_label}", "value": round(ratio, 4),
                               "detail": f"{value:.4g} / {denom:.4g}", "ok": _check(ratio, claim, 1.0)})
            continue
        scale = 1.0
        if claim.relative_to:
            scale = rec["metrics"].get(claim.relative_to)
            if scale is None:
                checks.append({"point": label, "value": None, "ok": False, "note": f"{claim.relative_to} missing"})
                continue
        if value is None:
            checks.append({"point": label, "value": None, "ok": False, "note": f"{claim.metric} missing"})
            continue
        checks.append({"point": label, "value": round(value, 4),
                       "bound": _bound_text(claim, scale if claim.relative_to else None),
                       "ok": _check(value, claim, scale)})
    if not checks:
        status = "not evaluated"
    else:
        status = "holds" if all(c["ok"] for c in checks) else "fails"
    return {"id": claim.id, "text": claim.text, "metric": claim.metric, "status": status, "checks": checks}


def _top_rate(record: dict) -> float:
    link = record.get("link") or {}
    return max([link.get("rate", 0.0)] + [c["rate"] for c in link.get("changes") or []])


def verdict(claims: tuple[Claim, ...], records: list[dict], gate: dict | None = None) -> dict:
    """All claims of an experiment, and the overall word on whether it reproduced.

    GATE (summary.fidelity_gate): the rate from which the emulator failed its fidelity
    check on this machine; points at that rate or above cannot be trusted either."""
    merged = average_repetitions(records)
    results = [evaluate_claim(c, merged) for c in claims]
    evaluated = [r for r in results if r["status"] != "not evaluated"]

    def flagged(test) -> list[str]:
        return [point_name(r) for r in merged if test(r)]

    cpu_bound = flagged(lambda r: r["metrics"].get("cpu_bound"))
    link_short = flagged(lambda r: r["metrics"].get("link_short"))
    beyond = flagged(lambda r: _top_rate(r) >= gate["rate_bps"]) if gate else []
    if not evaluated:
        overall = "not evaluated"
    elif all(r["status"] == "holds" for r in evaluated):
        overall = "reproduced"
    else:
        overall = "not reproduced"
    reasons = (["CPU-bound"] if cpu_bound else []) + (["link below its rate"] if link_short or beyond else [])
    if reasons and overall != "not evaluated":
        overall += f" (inconclusive: {', '.join(reasons)})"
    return {"verdict": overall, "claims": results, "cpu_bound_points": cpu_bound, "link_short_points": link_short,
            "fidelity_gate": dict(gate, points=beyond) if beyond else None,
            "holds": sum(r["status"] == "holds" for r in results),
            "fails": sum(r["status"] == "fails" for r in results)}


def _some(labels: list[str], shown: int = 3) -> str:
    more = len(labels) - shown
    return ", ".join(labels[:shown]) + (f" and {more} more" if more > 0 else "")


def verdict_lines(v: dict) -> list[str]:
    lines = [f"verdict: {v['verdict']}"]
    done = v.get("points") or {}
    if done and done["finished"] < done["total"]:  # a run still to be resumed: say what it rests on
        lines[0] = f"verdict ({done['finished']} of {done['total']} points so far): {v['verdict']}"
    for r in v["claims"]:
        mark = {"holds": "PASS", "fails": "FAIL", "not evaluated": "n/a "}[r["status"]]
        # a failing claim shows the checks that failed first: they are the ones to read
        checks = sorted(r["checks"], key=lambda c: bool(c.get("ok", True))) if r["status"] == "fails" else r["checks"]
        values = "; ".join(
            f"{c['point']}: {c['value'] if c['value'] is not None else c.get('note')}" for c in checks[:4])
        if len(checks) > 4:
            values += f"; {len(checks) - 4} more"
        lines.append(f"  [{mark}] {r['text']}" + (f"  ({values})" if values else ""))
    if v["cpu_bound_points"]:
        lines.append(f"  warning: CPU-bound points (emulation not trustworthy): {', '.join(v['cpu_bound_points'])}")
    gate = v.get("fidelity_gate")
    if gate:
        lines.append(f"  warning: this machine's emulator failed its fidelity check at {gate['rate_bps'] / 1e6:g} Mbit/s "
                     f"({gate['failed']}); not trustworthy at that rate or above: {_some(gate['points'])}")
    if v.get("link_short_points"):
        lines.append(f"  warning: the backlogged bottleneck sent below {LINK_DELIVERY_MIN:.0%} of its rate "
                     "(the emulator's limit): "
                     + ", ".join(v["link_short_points"]))
    return lines
