"""Parse the human units an experiment file uses: rates, times, sizes, fractions.

Every parser takes the key path so that an error names the key the user wrote.
Rates are returned in bit/s, times in seconds, sizes in bytes, loss as a fraction.
"""

from __future__ import annotations

import re

from .errors import SpecError

_NUMBER = r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"

_RATE_UNITS = {
    "bit": 1, "bps": 1,
    "kbit": 1e3, "kbps": 1e3,
    "mbit": 1e6, "mbps": 1e6,
    "gbit": 1e9, "gbps": 1e9,
}
_TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "min": 60.0}
_SIZE_UNITS = {
    "b": 1, "kb": 1000, "mb": 1000**2,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3,
}


def _split(value: object, key: str, what: str, example: str) -> tuple[float, str]:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SpecError(f"{key}: expected {what} such as {example!r}, got {value!r}")
    match = re.fullmatch(_NUMBER + r"\s*([A-Za-z%]*)", str(value).strip())
    if not match:
        raise SpecError(f"{key}: cannot read {value!r} as {what} (example: {example!r})")
    return float(match.group(1)), match.group(2).lower()


def rate(value: object, key: str) -> float:
    """'10Mbit', '128kbit', '1Gbit' -> bit/s. A bare number is refused: units matter."""
    number, unit = _split(value, key, "a rate", "10Mbit")
    if unit not in _RATE_UNITS:
        raise SpecError(f"{key}: {value!r} needs a rate unit (bit, kbit, Mbit, Gbit)")
    bps = number * _RATE_UNITS[unit]
    if bps <= 0:
        raise SpecError(f"{key}: rate must be positive, got {value!r}")
    return bps


def duration(value: object, key: str, allow_zero: bool = True) -> float:
    """'40ms', '8s', '2min' -> seconds."""
    number, unit = _split(value, key, "a time", "40ms")
    if unit not in _TIME_UNITS:
        raise SpecError(f"{key}: {value!r} needs a time unit (us, ms, s, min)")
    seconds = number * _TIME_UNITS[unit]
    if seconds < 0 or (seconds == 0 and not allow_zero):
        raise SpecError(f"{key}: must be {'positive' if not allow_zero else 'non-negative'}, got {value!r}")
    return seconds


def size(value: object, key: str) -> int:
    """'64KB', '3MB', '1MiB', 1500 -> bytes (a bare integer is bytes)."""
    if isinstance(value, int) and not isinstance(value, bool):
        number, unit = float(value), "b"
    else:
        number, unit = _split(value, key, "a size", "3MB")
    if unit not in _SIZE_UNITS:
        raise SpecError(f"{key}: {value!r} needs a size unit (B, KB, MB, KiB, MiB)")
    nbytes = int(number * _SIZE_UNITS[unit])
    if nbytes <= 0:
        raise SpecError(f"{key}: size must be positive, got {value!r}")
    return nbytes


def fraction(value: object, key: str) -> float:
    """'1%', '0.5%' or a number in [0, 1] -> fraction in [0, 1)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        result = float(value)
    else:
        number, unit = _split(value, key, "a fraction", "1%")
        if unit != "%":
            raise SpecError(f"{key}: write {value!r} as a percentage like '1%' or a number in [0, 1]")
        result = number / 100.0
    if not 0.0 <= result < 1.0:
        raise SpecError(f"{key}: must be in [0, 100%), got {value!r}")
    return result


def fmt_rate(bps: float) -> str:
    """Shortest exact-looking label: 10000000 -> '10Mbit', 128000 -> '128kbit'."""
    for unit, factor in (("Gbit", 1e9), ("Mbit", 1e6), ("kbit", 1e3)):
        if bps >= factor:
            return f"{bps / factor:g}{unit}"
    return f"{bps:g}bit"


def fmt_time(seconds: float) -> str:
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    return f"{seconds:g}s"


def fmt_fraction(value: float) -> str:
    return f"{value * 100:g}%"
