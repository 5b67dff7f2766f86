"""The report tables' cells: a mean that skips what was not measured, and a number
written with a given count of decimals ("–" where there is none)."""

from __future__ import annotations


def mean(values) -> float | None:
    """The mean of the numbers among values (None and other non-numbers are skipped); None if none."""
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return sum(numbers) / len(numbers) if numbers else None


def cell(value, digits: int = 2) -> str:
    """A float with `digits` decimals, "–" for None, anything else as it prints."""
    if value is None:
        return "–"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)
