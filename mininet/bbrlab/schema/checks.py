"""The checks every part of an experiment file shares: a mapping's keys, a choice among
options, a whole number. Each error names the key and, for a near miss, the word meant."""

from __future__ import annotations

from typing import Any

from ..errors import SpecError, did_you_mean


def check_keys(mapping: Any, allowed: set, where: str) -> dict:
    if not isinstance(mapping, dict):
        raise SpecError(f"{where}: expected a mapping, got {type(mapping).__name__}")
    unknown = sorted(set(mapping) - allowed)
    if unknown:
        prefix = f"{where}." if where else ""
        raise SpecError(f"{prefix}{unknown[0]}: unknown key{did_you_mean(unknown[0], allowed)} "
                        f"(allowed here: {', '.join(sorted(allowed))})")
    return mapping


def choice(value: Any, options: tuple, key: str) -> str:
    if value not in options:
        raise SpecError(f"{key}: {value!r} is not one of {', '.join(options)}{did_you_mean(value, options)}")
    return value


def count(value: Any, key: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SpecError(f"{key}: expected a whole number >= {minimum}, got {value!r}")
    return value
