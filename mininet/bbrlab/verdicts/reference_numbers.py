"""Published numbers an experiment is compared with, read from where they are kept.

An experiment's `reference:` gives its numbers inline (`series: {cc: {loss %: goodput}}`)
or names a CSV file the project does not copy (`csv:`, e.g. ReBBR's results, read by path:
`$BBRLAB_REFERENCE`, when it is not set, is data/reference in the checkout, then
shared/reference beside it; `bbrlab fetch-data` gets ReBBR's; schema/datasets.py). The CSV has
the columns congestion_control, loss_rate (a fraction) and goodput_Mbps, as ReBBR's do.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ..schema import datasets, traces
from ..errors import SpecError


def csv_path(reference: dict) -> Path | None:
    """The file `reference.csv` names ($BBRLAB_REFERENCE expanded), or None."""
    if not reference.get("csv"):
        return None
    return traces.resolve(reference["csv"], "reference.csv")


def missing(reference: dict) -> datasets.MissingData | None:
    """What the reference lacks here when its CSV is one fetch-data provides and is not
    there (the figure and the report then go without it), else None."""
    path = csv_path(reference)
    try:
        if path is not None:
            datasets.check(path, "reference", "reference.csv")
    except datasets.MissingData as exc:
        return exc
    return None


def note(name: str, reference: dict) -> str | None:
    """One line when experiment NAME's reference file is missing here (missing), else None."""
    lacking = missing(reference)
    return f"{name} is compared with no reference here: it {lacking.needs}" if lacking else None


def read_csv(path: Path) -> dict[str, dict[float, float]]:
    """{cc: {loss in %: goodput in Mbit/s}} from a ReBBR-style CSV."""
    out: dict[str, dict[float, float]] = {}
    with open(path, newline="") as f:
        for number, row in enumerate(csv.DictReader(f, skipinitialspace=True), start=2):
            try:
                cc = row["congestion_control"].strip()
                out.setdefault(cc, {})[round(float(row["loss_rate"]) * 100, 6)] = float(row["goodput_Mbps"])
            except (KeyError, TypeError, ValueError, AttributeError):
                raise SpecError(f"{path}:{number}: expected congestion_control, loss_rate, goodput_Mbps") from None
    return out


def series(reference: dict) -> dict:
    """The reference's goodput by loss per CC: inline, or from its CSV when that file is
    there ({} when it is not: the report then goes without the comparison)."""
    if reference.get("series"):
        return reference["series"]
    path = csv_path(reference)
    if path is None or not path.is_file():
        return {}
    return read_csv(path)


def _link_text(rate: float | None, rtt: float | None, trace: str | None) -> str:
    parts = ([f"{rate / 1e6:g} Mbit/s"] if rate is not None else []) + (
        [f"{rtt * 1e3:g} ms"] if rtt is not None else []) + ([f"trace {trace}"] if trace else [])
    return ", ".join(parts)


def mismatch(reference: dict, records: list[dict]) -> str | None:
    """Why REFERENCE does not apply to the run of RECORDS (their links differ from the one
    its numbers were measured on, `reference.at`), or None when it does or says nothing."""
    at = reference.get("at") or {}
    if not at:
        return None
    ran = set()
    for rec in records:
        link = rec.get("link")
        if not link:  # a record that does not say its link (made by hand): nothing to compare
            continue
        ran.add((link.get("rate") if "rate" in at else None, link.get("rtt") if "rtt" in at else None,
                 Path(link["trace"]).name if "trace" in at and link.get("trace") else None))
    theirs = (at.get("rate"), at.get("rtt"), at.get("trace"))
    close = [r for r in ran if all(a is None or (b is not None and (a == b if isinstance(a, str) else
                                                                    abs(a - b) <= 1e-6 * max(abs(a), 1e-9)))
                                   for a, b in zip(theirs, r))]
    if not ran or len(close) == len(ran):
        return None
    source = reference.get("source", "the reference")
    here = "; ".join(sorted(_link_text(*r) or "no such link" for r in ran if r not in close))
    return f"{source} was measured at {_link_text(*theirs)}, this run at {here}: not comparable"
