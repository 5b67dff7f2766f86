"""Which of an experiment's points a run runs: --only's sweep values (--shard's part of the
grid is shard.py's)."""

from __future__ import annotations

from . import experiment as spec
from ..errors import SpecError, did_you_mean


def parse_only(texts: list[str]) -> dict[str, list[str]]:
    """--only AXIS=VALUE options -> {axis label: [values as written]}; several values of one
    axis are a union (--only loss=1% --only loss=10% keeps both)."""
    only: dict[str, list[str]] = {}
    for text in texts or []:
        key, sep, value = text.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise SpecError(f"--only {text}: expected AXIS=VALUE, e.g. --only cc=bbr")
        values = only.setdefault(key.strip(), [])
        if value.strip() not in values:
            values.append(value.strip())
    return only


def select(exp: spec.Experiment, only: dict[str, list[str]]) -> list[spec.Point]:
    """The points whose sweep parameters match ONLY ({axis label: values as written}):
    any of an axis's values, on every axis named."""
    for key in only:
        if key not in exp.axes:
            raise SpecError(f"--only {key}: not a sweep axis of {exp.name}{did_you_mean(key, exp.axes)} "
                            f"(axes: {', '.join(exp.axes) or 'none'})")
    chosen = [p for p in exp.points if all(str(p.params[k]) in vals for k, vals in only.items())]
    if not chosen:
        values = "; ".join(f"{k}: {', '.join(map(str, exp.axes[k]))}" for k in only)
        raise SpecError(f"--only {', '.join(f'{k}={v}' for k, vals in only.items() for v in vals)}: "
                        f"no point of {exp.name} matches (values: {values})")
    for key, vals in only.items():
        unmatched = [v for v in vals if v not in map(str, exp.axes[key])]
        if unmatched:
            raise SpecError(f"--only {key}={unmatched[0]}: not a value of {key} in {exp.name} "
                            f"(values: {', '.join(map(str, exp.axes[key]))})")
    return chosen
