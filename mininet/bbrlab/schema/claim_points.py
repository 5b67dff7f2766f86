"""Which planned points each claim selects, before anything runs.

A claim that can select no point of its file's grid (`where: {cc: reno}` on a BBR-CUBIC
sweep, `vs: {cc: cubic}` on a file of one CC) would only ever be "not evaluated": it is
refused when the file is loaded. `--dry-run` lists every claim with the points it selects.
The selection is the verdict's own (claim_format.selects), on the facts a planned point already
has: its sweep parameters, CCs, loss and buffer.
"""

from __future__ import annotations

from dataclasses import replace

from . import units
from .claim_format import Claim, selects, typed
from ..errors import SpecError

SHOWN = 4  # points named per claim in a listing; the rest are counted


def _facts(point) -> tuple[dict, dict]:
    """(facts, classes present) of a planned POINT, as verdicts/claims.py reads them from its record."""
    fact = {k: typed(k, v) for k, v in point.params.items()}
    ccs = sorted({g.cc for g in point.flows})
    fact.setdefault("cc", ccs[0] if len(ccs) == 1 else "+".join(ccs))
    fact.setdefault("loss", point.link.loss)
    fact.setdefault("pacing", point.pacing)  # as verdicts/claims.py: fixed, or pinned by --set
    fact.setdefault("shaper", point.link.shaper)
    fact.setdefault("aqm", point.link.aqm.kind)
    link = point.link
    if link.buffer.unit == "bdp":
        fact["buffer_bdp"] = float(link.buffer.value)
    elif round(link.bdp_packets, 2):
        fact["buffer_bdp"] = round(link.buffer_packets / round(link.bdp_packets, 2), 2)
    present = {"group": [str(i) for i in range(len(point.flows))], "cc": ccs,
               "class": [g.name or f"g{i + 1}" for i, g in enumerate(point.flows)]}
    return fact, present


def _name(point) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.params.items()) or "point"


def selected(claim: Claim, points) -> list[tuple]:
    """The checks CLAIM would make on POINTS (one per grid point; repetitions aside): (point,)
    for each point `where` selects, or (point, other) for each pair a `vs` claim compares."""
    grid = list({_name(p): p for p in points}.values())
    facts = {id(p): _facts(p) for p in grid}
    chosen = [p for p in grid if selects(*facts[id(p)], claim.where)]
    if claim.vs is None:
        return [(p,) for p in chosen]
    varying = set(claim.vs)  # as verdicts pair them: the same parameters but those vs names
    return [(p, o) for p in chosen for o in grid if selects(*facts[id(o)], claim.vs)
            and all(str(o.params.get(k)) == str(v) for k, v in p.params.items() if k not in varying)]


def _shown(point, key: str) -> list:
    """KEY's values in POINT as the file writes them (a class key: every class the point has)."""
    fact, present = _facts(point)
    if key in ("group", "class") or (key == "cc" and len(present["cc"]) > 1):
        return present[key]
    if key in point.params:
        return [point.params[key]]
    if key == "loss":
        return [units.fmt_fraction(point.link.loss)]
    return [f"{fact[key]:g}" if isinstance(fact.get(key), float) else fact.get(key)]


def _values(points, keys) -> str:
    """The values the grid has for KEYS: 'cc: bbr, cubic; loss: 0%, 1%'."""
    seen: dict[str, list[str]] = {}
    for p in points:
        for key in keys:
            for value in _shown(p, key):
                if value is not None and str(value) not in seen.setdefault(key, []):
                    seen[key].append(str(value))
    return "; ".join(f"{k}: {', '.join(v)}" for k, v in seen.items() if v)


def _mapping(selection: object) -> str:
    """A `where` or `vs` as the file writes it: {cc: bbr, loss: {min: 1%}}."""
    if isinstance(selection, dict):
        return "{" + ", ".join(f"{k}: {_mapping(v)}" for k, v in selection.items()) + "}"
    if isinstance(selection, list):
        return "[" + ", ".join(map(_mapping, selection)) + "]"
    return str(selection)


def check(claims: tuple[Claim, ...], points) -> None:
    """A SpecError for the first claim that selects no point of POINTS (a file's whole grid)."""
    for i, claim in enumerate(claims):
        if selected(claim, points):
            continue
        if claim.vs is not None and selected(replace(claim, vs=None), points):
            raise SpecError(f"claims.{i} ({claim.id}): vs {_mapping(claim.vs)} pairs no point of the grid with one "
                            f"that differs from it in {', '.join(claim.vs)} alone (the grid has "
                            f"{_values(points, claim.vs)}): it could never be evaluated")
        raise SpecError(f"claims.{i} ({claim.id}): where {_mapping(claim.where)} selects no point of the grid "
                        f"(the grid has {_values(points, claim.where) or 'no such values'}): it could never be "
                        "evaluated")


def lines(claims: tuple[Claim, ...], points) -> list[str]:
    """--dry-run's listing: each claim and the points (or pairs of points) it selects among POINTS."""
    if not claims:
        return []
    out = ["claims (the points each one selects):"]
    for claim in claims:
        checks = [" vs ".join(_name(p) for p in check) for check in selected(claim, points)]
        more = f"; and {len(checks) - SHOWN} more" if len(checks) > SHOWN else ""
        shown = "; ".join(checks[:SHOWN]) + more if checks else "none of these points (not evaluated)"
        out.append(f"  {claim.id} ({len(checks)}): {shown}")
    return out
