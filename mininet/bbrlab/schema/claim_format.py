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

CLAIM_KEYS = {"id", "text", "metric", "where", "vs", "min", "max", "relative_to", "source", "conditions"}
# What a claim's `where` and `vs` select on besides the sweep axes (claims.facts adds them):
# the point's AQM among them, swept or not (a claim on a droptail queue's backlog selects
# `aqm: fifo` and judges nothing of a run under an AQM, where that backlog never forms).
CLAIM_FACTS = ("cc", "loss", "aqm", *CLASS_SELECTORS)
# What a claim's `conditions` (the ones its source states) may bound besides: the path's BDP
# in packets, and its min RTT as measured idle before the flows (ping: the path's own floor,
# which no sender on it can see below).
CONDITION_FACTS = ("bdp_pkts", "min_rtt")
# Who states a claim: `source: "KIND: where it says so"`, KIND one of paper, slides, post, rfc,
# code (a comment in the authors' own source) and reproduction (those who reproduced them), or
# `testbed`: this testbed's own observation, which reports keep apart from the authors' claims.
# A claim without one is the file's own.
SOURCE_KINDS = ("paper", "slides", "post", "rfc", "code", "reproduction", "testbed")
OWN = "testbed"


def _bdps(value: Any, key: str) -> float:
    """`buffer_bdp: 8` (a number of BDPs, as metrics give the buffer)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(f"{key}: expected a number of BDPs, got {value!r}")
    return float(value)


# What a claim compares as numbers (sweep parameters and the buffer in BDPs), with their parsers.
NUMERIC_PARAMS = {"loss": units.fraction, "rtt": units.duration, "rate": units.rate, "jitter": units.duration,
                  "delay_variation": units.duration, "buffer_bdp": _bdps, "bdp_pkts": _bdps,
                  "min_rtt": units.duration}


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
    source: str = OWN  # SOURCE_KINDS: "paper: ...", or testbed (this testbed's own observation)
    conditions: dict | None = None  # the source's stated conditions: a point outside them is not judged

    @property
    def kind(self) -> str:
        return self.source.split(":", 1)[0]


def _source(value: Any, key: str) -> str:
    """`testbed`, or "KIND: reference" (KIND one of SOURCE_KINDS)."""
    if value is None:
        return OWN
    kind, _, ref = str(value).partition(":") if isinstance(value, str) else ("", "", "")
    if kind.strip() not in SOURCE_KINDS or (kind.strip() != OWN and not ref.strip()):
        raise SpecError(f"{key}: expected `testbed` (this testbed's own observation) or \"KIND: reference\" with "
                        f"KIND one of {', '.join(SOURCE_KINDS[:-1])} (e.g. \"paper: BBR, ACM Queue 2016, figure 8\"), "
                        f"got {value!r}")
    return f"{kind.strip()}: {ref.strip()}" if ref.strip() else OWN


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
        if bounds["min"] is not None and bounds["max"] is not None and bounds["min"] > bounds["max"]:
            raise SpecError(f"{key}: min {bounds['min']:g} is above max {bounds['max']:g}: no value can pass")
        ids = [c.id for c in claims]
        if item["id"] in ids:
            raise SpecError(f"{key}.id: {item['id']!r} is claims.{ids.index(item['id'])}'s id too: give each "
                            "claim its own (verdicts name claims by id)")
        conditions = (_selection(item["conditions"], f"{key}.conditions", selectable + CONDITION_FACTS)
                      if item.get("conditions") is not None else None)
        claims.append(Claim(item["id"], item["text"].strip(), metric, where, vs, bounds["min"], bounds["max"], relative_to,
                            _source(item.get("source"), f"{key}.source"), conditions))
    return tuple(claims)


# ---------------------------------------------------------------- which points a claim selects
# A point is known by its facts (sweep parameters typed, cc, loss, buffer_bdp) and the traffic
# classes it holds; verdicts/claims.py builds both from a run's records, claim_points.py from
# the planned points. Both select with these two functions.

def typed(key: str, value: Any) -> Any:
    """A point's sweep value as a claim compares it: a number in its unit where KEY is one of
    NUMERIC_PARAMS, else as written (a `rate` of short flows, `20/s`, is not a link's rate)."""
    if key not in NUMERIC_PARAMS:
        return value
    try:
        return NUMERIC_PARAMS[key](value, key)
    except SpecError:
        return value


def same_value(path: str, value: Any) -> Any:
    """VALUE of the sweep key PATH as compared, not as spelled (1.0% is 1%, 10000kbit is 10Mbit):
    a number in its unit, else the text a point's id gives it."""
    value = typed(path.rsplit(".", 1)[-1], value)
    if isinstance(value, bool) or str(value).lower() in ("true", "false"):  # true, True: YAML's booleans
        return str(value).lower()
    return round(value, 12) if isinstance(value, float) else str(value)


def matches(fact: dict, where: dict) -> bool:
    """Whether FACT (parameter -> typed value) has what WHERE asks: a value, a list of
    values, or {min, max}, each read in its unit."""
    for key, want in where.items():
        if key not in fact:
            return False
        have = fact[key]
        parse = NUMERIC_PARAMS.get(key)
        if isinstance(want, dict):
            if not isinstance(have, (int, float)):
                raise SpecError(f"where.{key}: min and max compare numbers, and {key} takes values like "
                                f"{have!r}: list the values instead")
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


def selects(fact: dict, present: dict, where: dict) -> bool:
    """Whether WHERE selects a point with facts FACT that holds the traffic classes PRESENT
    ({"group": indices as text, "cc": its CCs, "class": names}): `group: N`, `class: NAME`, or
    `cc: NAME` inside a point that mixes CCs pick one class of the point (classes.scope)."""
    rest = {}
    for key, want in where.items():
        if (key in ("group", "class") or (key == "cc" and len(present["cc"]) > 1)) and not isinstance(want, dict):
            if not any(str(o) in present[key] for o in (want if isinstance(want, list) else [want])):
                return False
        else:
            rest[key] = want
    return matches(fact, rest)
