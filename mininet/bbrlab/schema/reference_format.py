"""An experiment's `reference:` block: published numbers it is compared with (drawn and
tabled by output/, read from their files by verdicts/reference_numbers.py), and the link they were
measured on, so that they are shown only beside a run on that link."""

from __future__ import annotations

from pathlib import Path

from . import units
from ..errors import SpecError, did_you_mean

REFERENCE_KEYS = {"source", "series", "csv", "goodput_mbps", "at"}
REFERENCE_AT = {"rate": units.rate, "rtt": units.duration}  # and trace: a file's name


def parse(raw) -> dict:
    """The `reference:` block, its keys checked; `at:` (the link the numbers were measured
    on: rate, rtt, trace) read into bit/s, seconds and a file name, as a point's link says
    them, so that a figure draws the reference only for a run on that link."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise SpecError(f"reference: expected a mapping, got {raw!r}")
    unknown = sorted(set(raw) - REFERENCE_KEYS)
    if unknown:
        raise SpecError(f"reference: unknown key {unknown[0]!r}{did_you_mean(unknown[0], REFERENCE_KEYS)} "
                        f"(known: {', '.join(sorted(REFERENCE_KEYS))})")
    at = raw.get("at")
    if at is None:
        return dict(raw)
    if not isinstance(at, dict) or not at:
        raise SpecError(f"reference.at: expected the link the numbers were measured on, e.g. "
                        f"{{rate: 10Mbit, rtt: 40ms}}, got {at!r}")
    parsed = {}
    for key, value in at.items():
        if key == "trace":
            parsed["trace"] = Path(str(value)).name
        elif key in REFERENCE_AT:
            parsed[key] = REFERENCE_AT[key](value, f"reference.at.{key}")
        else:
            raise SpecError(f"reference.at: unknown key {key!r} (known: rate, rtt, trace)")
    return dict(raw, at=parsed)
