"""Which of an experiment's points a run runs: --only's sweep values (--shard's part of the
grid is shard.py's)."""

from __future__ import annotations

from . import experiment as spec
from .claim_format import same_value
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


def _matches(axis: str, have: object, wanted: list[str]) -> bool:
    return same_value(axis, have) in [same_value(axis, w) for w in wanted]


def select(exp: spec.Experiment, only: dict[str, list[str]]) -> list[spec.Point]:
    """The points whose sweep parameters match ONLY ({axis label: values as written}):
    any of an axis's values, on every axis named; values are compared in their units."""
    for key in only:
        if key not in exp.axes:
            raise SpecError(f"--only {key}: not a sweep axis of {exp.name}{did_you_mean(key, exp.axes)} "
                            f"(axes: {', '.join(exp.axes) or 'none'})")
    chosen = [p for p in exp.points if all(_matches(k, p.params[k], vals) for k, vals in only.items())]
    if not chosen:
        values = "; ".join(f"{k}: {', '.join(map(str, exp.axes[k]))}" for k in only)
        raise SpecError(f"--only {', '.join(f'{k}={v}' for k, vals in only.items() for v in vals)}: "
                        f"no point of {exp.name} matches (values: {values})")
    for key, vals in only.items():
        unmatched = [v for v in vals if not any(_matches(key, a, [v]) for a in exp.axes[key])]
        if unmatched:
            raise SpecError(f"--only {key}={unmatched[0]}: not a value of {key} in {exp.name} "
                            f"(values: {', '.join(map(str, exp.axes[key]))})")
    return chosen


def with_action(exp: spec.Experiment, only: dict[str, list[str]], action: str | None,
                overrides: list[str] = ()) -> dict[str, list[str]]:
    """ONLY with a figure script's CC action (`figure5.sh bbr`: the points of cc=bbr), or a
    SpecError when the action and the options ask for different points, said as the action."""
    if action is None:
        return only
    runs = f"the action {action} runs the points of cc={action}"
    if "cc" not in exp.axes:
        fixed = [t for t in overrides or () if t.partition("=")[0].strip().split(".")[-1] == "cc"]
        ccs = sorted({g.cc for p in exp.points for g in p.flows})
        raise SpecError(f"{runs}, but {exp.name} has no cc sweep{' with --set ' + fixed[0] if fixed else ''} "
                        f"(every point runs {', '.join(ccs)}): use the action all")
    others = [v for v in only.get("cc", []) if not _matches("cc", action, [v])]
    if others:
        raise SpecError(f"{runs}, but --only cc={others[0]} asks for other points: use the action all with "
                        f"--only cc={others[0]}, or the action {others[0]}")
    if not any(_matches("cc", value, [action]) for value in exp.axes["cc"]):
        raise SpecError(f"{runs}, but {exp.name} has none (cc: {', '.join(map(str, exp.axes['cc']))}): "
                        "use the action all")
    return {**only, "cc": [action]}
