"""Guides (the configured rate, the base RTT, what a full buffer holds) where several runs
share a panel (multirun.py): one line per value the runs have, never the first run's for
all. Where every run has the same value there is one line, labelled as in one run's figure;
where they differ, each value's legend entry names the runs that have it ("base RTT 30 ms,
run 2 (rtt 30ms)"), the first value's line drawn as one run's would be and each other in a
lighter shade of it: its dash still says which guide it is, its shade whose. A panel's
title says such a value the same way: once where shared, else each with its runs.
"""

from __future__ import annotations

from typing import Callable, Hashable

from .style import RUN_AXIS

LIGHTER = (0.45, 0.7, 0.25, 0.6)  # how far towards white the second, third, ... value's guide goes


def run_of(record: dict) -> str | None:
    """The run RECORD was drawn for, where several runs share the figure; else None."""
    return (record.get("params") or {}).get(RUN_AXIS)


def short(run: str) -> str:
    """A run's place without its differences ("run 2 (rtt 30ms)" -> "run 2"): a panel's
    title has room for little; the legend names the run in full."""
    return run.split(" (", 1)[0]


def grouped(records: list[dict], value: Callable[[dict], Hashable]) -> list[tuple[Hashable, list]]:
    """Each distinct VALUE(record) over RECORDS with the runs that have it (None for one
    run's records), in the order first met: the first run's value first."""
    groups: dict[Hashable, list] = {}
    for rec in records:
        runs = groups.setdefault(value(rec), [])
        if run_of(rec) not in runs:
            runs.append(run_of(rec))
    return list(groups.items())


def lines(records: list[dict], value: Callable[[dict], Hashable], label: Callable[[Hashable], str],
          color: str = "black", ls="--") -> list[tuple[Hashable, dict]]:
    """One guide per distinct VALUE(record) of RECORDS: (the value, its line's keyword
    arguments). Its label is LABEL(value), followed by the runs that have it where the runs
    differ in it (None where an earlier line's label says the same); every line is LS, the
    first value's COLOR and each other's a lighter shade of it."""
    groups = grouped(records, value)
    out, said = [], set()
    for k, (found, runs) in enumerate(groups):
        named = [run for run in runs if run] if len(groups) > 1 else []
        text = ", ".join([label(found), *named])
        out.append((found, {"label": None if text in said else text, "color": _shade(color, k), "ls": ls}))
        said.add(text)
    return out


def _shade(color: str, k: int) -> str:
    """The K-th value's guide's colour: COLOR for the first (K = 0), lighter for the others."""
    if k == 0:
        return color
    from matplotlib.colors import to_hex, to_rgb

    depth = LIGHTER[(k - 1) % len(LIGHTER)]
    return to_hex([c + (1 - c) * depth for c in to_rgb(color)])


def said(records: list[dict], value: Callable[[dict], Hashable], fmt: Callable[[Hashable], str]) -> str:
    """VALUE over RECORDS as a title says it: once where they share it ("40 ms"), else each
    value with the runs that have it ("40 ms (run 1), 30 ms (run 2)")."""
    groups = grouped(records, value)
    if len(groups) == 1:
        return fmt(groups[0][0])
    return ", ".join(fmt(found) + (f" ({', '.join(short(r) for r in runs if r)})" if any(runs) else "")
                     for found, runs in groups)
