"""Parse the human units an experiment file uses: rates, times, sizes, fractions.

Every parser takes the key path so that an error names the key the user wrote.
Rates are returned in bit/s, times in seconds, sizes in bytes, loss as a fraction.
"""

from __future__ import annotations

import re

from ..errors import SpecError

_NUMBER = r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"

# The spellings accepted, as tc reads them. Rates are case-blind (tc's "mbit" is Mbit), but
# "bps"-style units are refused: tc reads "mbps" as megabytes per second, people as megabits.
_RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
RATE_SPELLINGS = "bit, kbit, Mbit, Gbit"
# The lowest rate the bottleneck is shaped at. tc takes whole bit/s (and its qdiscs whole
# bytes/s): 0.5bit would be written as 0bit, which is no limit at all; at 1 kbit/s a
# full-size packet already takes 12 s to send.
MIN_RATE = 1000.0
_TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "min": 60.0}
_HOURS = ("h", "hr", "hour", "hours")  # not a unit here: no run is that long, and the time units stop at min
_BITS = {"k": "kbit", "m": "Mbit", "g": "Gbit"}  # the unit a kbps-style spelling probably meant
TIME_SPELLINGS = "us, ms, s, min"
# Sizes are case-exact on the B: a lower-case b reads as bits to many people.
_SIZE_UNITS = {
    "B": 1, "KB": 1000, "kB": 1000, "MB": 1000**2, "GB": 1000**3,
    "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3,
}
SIZE_SPELLINGS = "B, KB, MB, GB, KiB, MiB, GiB"


def _show(value: object) -> str:
    """VALUE as the user wrote it: numbers bare, text as text."""
    return str(value).strip() if isinstance(value, (str, int, float)) else repr(value)


def _split(value: object, key: str, what: str, example: str) -> tuple[float, str]:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SpecError(f"{key}: expected {what} such as {example!r}, got {value!r}")
    match = re.fullmatch(_NUMBER + r"\s*([A-Za-z%/]*)", str(value).strip())
    if not match:
        raise SpecError(f"{key}: cannot read {value!r} as {what} (example: {example!r})")
    return float(match.group(1)), match.group(2)


def _bare(value: object, number: float, key: str, suggestion: str) -> SpecError:
    """The error for a number written without its unit: say which one it probably meant."""
    return SpecError(f"{key}: {_show(value)} needs a unit: did you mean {number:g}{suggestion}?")


def rate(value: object, key: str) -> float:
    """'10Mbit', '128kbit', '1Gbit' -> bit/s. A bare number or an ambiguous unit is refused."""
    number, unit = _split(value, key, "a rate", "10Mbit")
    if not unit:
        # a bare number in the thousands or more is bit/s as tc and iperf3 print it (1e7: 10Mbit)
        meant = fmt_rate(number) if number >= 1000 else f"{number:g}Mbit"
        raise SpecError(f"{key}: {_show(value)} needs a unit: did you mean {meant}? "
                        f"(rates take {RATE_SPELLINGS})")
    if unit.lower() not in _RATE_UNITS:
        bytes_per_second = re.fullmatch(r"(?i)([kmg]?)bps", unit)
        why = ""
        if bytes_per_second:  # as the user wrote it: tc reads 10kbps as 10 kilobytes per second
            prefix = {"": "", "k": "kilo", "m": "mega", "g": "giga"}[bytes_per_second.group(1).lower()]
            why = f" (tc reads {unit} as {prefix}bytes per second)"
        meant = _BITS.get(unit[:1].lower())  # 10M, 10Mbits, 10Mb/s: 10Mbit; 10Tbit: no guess at the magnitude
        raise SpecError(f"{key}: {_show(value)} needs a rate unit{why}: write {RATE_SPELLINGS}"
                        + (f", e.g. {number:g}{meant}" if meant else f" ({unit} is not one)"))
    bps = number * _RATE_UNITS[unit.lower()]
    if bps <= 0:
        raise SpecError(f"{key}: rate must be positive, got {value!r}")
    if bps < MIN_RATE:
        raise SpecError(f"{key}: {_show(value)} is below {fmt_rate(MIN_RATE)}, the lowest rate the testbed "
                        "shapes (tc takes whole bit/s, and 0bit means no limit at all)")
    return bps


# the keys whose bare numbers are meant as seconds: a flow's and a schedule's times
SECONDS_KEYS = ("duration", "start", "stagger", "until", "startup", "at")


def duration(value: object, key: str, allow_zero: bool = True) -> float:
    """'40ms', '8s', '2min' -> seconds. A bare number is refused."""
    number, unit = _split(value, key, "a time", "40ms")
    if not unit:  # a flow's times are seconds long (duration: 30 is 30s), a link's delays ms
        raise _bare(value, number, key, "s" if key.rsplit(".", 1)[-1] in SECONDS_KEYS else "ms")
    if unit.lower() in _HOURS:
        raise SpecError(f"{key}: {_show(value)}: hours are not a unit here (time units: {TIME_SPELLINGS}); "
                        f"write {number * 60:g}min")
    if unit.lower() not in _TIME_UNITS:
        raise SpecError(f"{key}: {_show(value)} needs a time unit: write {TIME_SPELLINGS}, e.g. {number:g}ms")
    seconds = number * _TIME_UNITS[unit.lower()]
    if seconds < 0 or (seconds == 0 and not allow_zero):
        raise SpecError(f"{key}: must be {'positive' if not allow_zero else 'non-negative'}, got {value!r}")
    return seconds


def size(value: object, key: str) -> int:
    """'64KB', '3MB', '1MiB', '1500B' -> bytes. A bare number is refused."""
    number, unit = _split(value, key, "a size", "64KB")
    if not unit:
        raise SpecError(f"{key}: {_show(value)} needs a unit: bytes like {number:g}B or {number / 1000:g}KB")
    if unit not in _SIZE_UNITS:
        raise SpecError(f"{key}: {_show(value)} needs a size unit: write {SIZE_SPELLINGS}, e.g. {number:g}KB")
    nbytes = int(number * _SIZE_UNITS[unit])
    if nbytes <= 0:
        raise SpecError(f"{key}: size must be positive, got {value!r}")
    return nbytes


def fraction(value: object, key: str) -> float:
    """'1%', '0.5%' -> fraction in [0, 1). A bare number is refused: is 0.5 half, or 0.5%?"""
    number, unit = _split(value, key, "a percentage", "1%")
    if not unit:
        if 0 < number < 1:  # 0.01 is a fraction (1%) as often as it is 0.01%: both named
            raise SpecError(f"{key}: {_show(value)} needs a unit: did you mean {number * 100:g}% "
                            f"({_show(value)} as a fraction) or {number:g}%?")
        raise _bare(value, number, key, "%")
    if unit != "%":
        raise SpecError(f"{key}: write {_show(value)} as a percentage like '{number:g}%'")
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
