"""Claims as an experiment file declares them, checked when the file is loaded: the metric
(and `relative_to`) against the names the analysis writes (metric_names.py), `where` and
`vs` against what a point can be selected on (the sweep axes, cc and loss) with their
values read in their units. A typo fails here, not after a run as "not evaluated".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import units
from .checks import check_keys
from ..errors import SpecError, did_you_mean
from .metric_names import CLAIMABLE, CLASS_SELECTORS

CLAIM_KEYS = {"id", "text", "metric", "where", "vs", "min", "max", "relative_to"}
# What a claim's `where` and `vs` select on besides the sweep axes (claims.facts adds them).
CLAIM_FACTS = ("cc", "loss", *CLASS_SELECTORS)
# Sweep parameters a claim compares as numbers, with their unit parsers.
NUMERIC_PARAMS = {"loss": units.fraction, "rtt": units.duration, "rate": units.rate, "jitter": units.duration}


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    metric: str
    where: dict
    vs: dict | None
    min: float | None
    max: float | None
    relative_to: str | None


def _metric(value: Any, key: str) -> str:
    if value not in CLAIMABLE:
        # the analysis names percentiles pN: a "median" means p50
        usual = re.sub("median", "p50", re.sub("average|avg", "mean", str(value)))
        raise SpecError(f"{key}: {value!r} is not a metric the analysis writes{did_you_mean(usual, CLAIMABLE)} "
                        "(the list: docs/experiment-format.md)")
    return value


def _selection(value: Any, key: str, selectable: tuple) -> dict:
    """A claim's `where` or `vs`: sweep axis (or cc, loss) -> a value, a list, or {min, max}."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpecError(f"{key}: expected a mapping of parameter to value")
    for name, want in value.items():
        here = f"{key}.{name}"
        if name not in selectable:
            raise SpecError(f"{here}: not a sweep axis of this experiment{did_you_mean(name, selectable)} "
                            f"(where and vs take: {', '.join(selectable)})")
        parse = NUMERIC_PARAMS.get(name)
        if isinstance(want, dict):
            check_keys(want, {"min", "max"}, here)
            values = [(f"{here}.{b}", v) for b, v in want.items()]
        else:
            values = [(here, v) for v in (want if isinstance(want, list) else [want])]
        for where, v in values:
            if parse:
                parse(v, where)
    return dict(value)


def parse(raw: Any, selectable: tuple = CLAIM_FACTS) -> tuple[Claim, ...]:
    """The claims, checked against what the analysis writes and what a point can be
    selected on (SELECTABLE: the sweep axes, cc and loss): a typo fails here, not after a run."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SpecError("claims: expected a list")
    claims = []
    for i, item in enumerate(raw):
        key = f"claims.{i}"
        item = check_keys(item, CLAIM_KEYS, key)
        for required in ("id", "text", "metric"):
            if not isinstance(item.get(required), str):
                raise SpecError(f"{key}.{required}: required text")
        metric = _metric(item["metric"], f"{key}.metric")
        relative_to = item.get("relative_to")
        if relative_to is not None:
            _metric(relative_to, f"{key}.relative_to")
        bounds = {b: item.get(b) for b in ("min", "max")}
        if all(v is None for v in bounds.values()):
            raise SpecError(f"{key}: give min or max")
        for b, v in bounds.items():
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise SpecError(f"{key}.{b}: expected a number, got {v!r}")
        where = _selection(item.get("where"), f"{key}.where", selectable)
        vs = _selection(item.get("vs"), f"{key}.vs", selectable) if item.get("vs") is not None else None
        claims.append(Claim(item["id"], item["text"], metric, where, vs, bounds["min"], bounds["max"], relative_to))
    return tuple(claims)
