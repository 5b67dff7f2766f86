"""Mahimahi link traces: read one, make one, and turn it into a schedule of link rates.

A Mahimahi trace (mm-link's format) has one line per opportunity for one 1500-byte packet
to leave the bottleneck: the millisecond, from the trace's start, at which it occurs. A
millisecond with k opportunities appears on k lines. The trace lasts until its last line's
millisecond and then repeats from its start (so a file holding just "1" is 12 Mbit/s).

bbrlab replays a trace as a rate schedule: over each update interval (1, 10 or 100 ms)
the link's rate is the opportunities in it x 1500 B x 8 / interval, and a long-lived tc
process (schedule.py) moves the bottleneck's rate on time. A rate of zero cannot be given
to a shaper (netem's `rate 0` means no limit at all, htb refuses it), so a run of
intervals without any opportunity shares the opportunities of the interval that ends it:
an outage shows as a low rate and the schedule keeps the trace's average exactly.

This module is data only: it reads a file when asked and writes one when asked, and
nothing else (the spec validates a trace at load, topo.py puts its schedule in the Plan).
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import math
import os
import random
import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from . import datasets, units
from .root import ROOT
from ..errors import SpecError

OPPORTUNITY_BITS = 1500 * 8
REPO = ROOT
# `$BBRLAB_TRACES` names the folder of Mahimahi's traces; when it is not set, the folders of
# datasets.py's read order (data/traces in the checkout, then shared/traces beside it).
DEFAULT_INTERVAL = 0.010  # s; see docs/field.md "Link traces" for why 10 ms


class TraceError(SpecError):
    """A trace file is missing or malformed; the message names the file and the line."""


@dataclass(frozen=True)
class Trace:
    path: str
    times_ms: tuple[int, ...]  # each opportunity's millisecond, not decreasing

    @property
    def period_ms(self) -> int:
        """How long one pass lasts before the trace repeats: its last line's millisecond."""
        return self.times_ms[-1]

    @property
    def seconds(self) -> float:
        return self.period_ms / 1000

    @property
    def opportunities(self) -> int:
        return len(self.times_ms)

    @property
    def average_bps(self) -> float:
        return self.opportunities * OPPORTUNITY_BITS / self.seconds

    @cached_property
    def digest(self) -> str:
        """What the trace holds, whatever its file's name or path (a run's identity)."""
        return hashlib.sha256(",".join(map(str, self.times_ms)).encode()).hexdigest()[:16]


def digest_of(value: object) -> str:
    """The digest of the trace a spec's link.trace names, or "unreadable" (a run's identity
    is computed from a spec whose trace may have moved since)."""
    try:
        return load(resolve(value, "link.trace")).digest
    except SpecError:
        return "unreadable"


def parse(text: str, path: str = "<trace>") -> Trace:
    """A trace from TEXT; one TraceError naming PATH and the first bad line otherwise."""
    times = []
    for number, line in enumerate(text.splitlines(), start=1):
        field = line.strip()
        if not field:
            continue
        if not re.fullmatch(r"[0-9]+", field):
            raise TraceError(f"{path}:{number}: {field[:40]!r} is not a whole number of milliseconds "
                             "(a Mahimahi trace has one millisecond per line)")
        ms = int(field)
        if times and ms < times[-1]:
            raise TraceError(f"{path}:{number}: {ms} comes before {times[-1]} on an earlier line "
                             "(a trace's milliseconds must not decrease)")
        times.append(ms)
    if not times:
        raise TraceError(f"{path}: empty trace (no delivery opportunity)")
    if times[-1] <= 0:
        raise TraceError(f"{path}: the trace lasts 0 ms (its last line must be after 0)")
    return Trace(path, tuple(times))


@lru_cache(maxsize=16)
def _load_cached(path: str, mtime_ns: int, size: int) -> Trace:
    try:
        text = Path(path).read_text()
    except UnicodeDecodeError:
        raise TraceError(f"{path}: not a text file (a Mahimahi trace has one millisecond per line)") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read ({exc.strerror})") from None
    return parse(text, path)


def load(path: str | Path) -> Trace:
    """The trace at PATH (read once per version of the file)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise TraceError(f"{path}: no such trace file") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read ({exc.strerror})") from None
    if not Path(path).is_file():
        raise TraceError(f"{path}: not a file")
    return _load_cached(str(path), st.st_mtime_ns, st.st_size)


def resolve(value: object, key: str, environ: dict | None = None) -> Path:
    """The file a spec's trace path names: `$NAME`/`${NAME}` expanded, `~` expanded, a
    relative path taken from the repository. $BBRLAB_TRACES and $BBRLAB_REFERENCE, when not
    set, stand for each folder of their read order (datasets.py): the first folder that
    holds the file wins, else the first folder (whose absence its reader reports)."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{key}: expected the path of a Mahimahi trace file, got {value!r}")
    env = dict(os.environ if environ is None else environ)
    pattern = r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)"
    used = {m.group(1) or m.group(2) for m in re.finditer(pattern, value)}
    defaults = {name: [str(f) for f in datasets.folders(kind, env)]
                for name, kind in datasets.VARIABLES.items() if name in used and not env.get(name)}

    def path_with(values: dict) -> Path:
        def expand(match: re.Match) -> str:
            name = match.group(1) or match.group(2)
            if name in values:
                return values[name]
            if name not in env:
                raise SpecError(f"{key}: {value!r} uses ${name}, which is not set")
            return env[name]

        path = Path(re.sub(pattern, expand, value.strip())).expanduser()
        return path if path.is_absolute() else REPO / path

    candidates = [path_with(dict(zip(defaults, combo))) for combo in itertools.product(*defaults.values())]
    return next((p for p in candidates if p.exists()), candidates[0])


# ---------------------------------------------------------------- schedule


@dataclass(frozen=True)
class Schedule:
    """A trace as timed rates: from times[i] (seconds into a pass) the rate is rates[i]
    (bit/s), until the next time; a pass lasts PERIOD seconds and then repeats."""

    trace: str
    interval: float
    period: float
    times: tuple[float, ...]
    rates: tuple[float, ...]
    trace_average: float  # bit/s of the trace itself, before scaling
    scale: float  # rates = the trace's x scale

    @property
    def average(self) -> float:
        """The schedule's average rate (the trace's x scale, exactly)."""
        return self.period_bits / self.period

    @cached_property
    def _offered(self) -> tuple[float, ...]:
        """Bits offered from a pass's start to each update's time, and to the pass's end."""
        ends = self.times[1:] + (self.period,)
        out, total = [0.0], 0.0
        for t, e, r in zip(self.times, ends, self.rates):
            total += r * (e - t)
            out.append(total)
        return tuple(out)

    @property
    def period_bits(self) -> float:
        return self._offered[-1]

    def _bits_into_pass(self, t: float) -> float:
        """Bits the schedule offers from the start of a pass to T (0 <= T <= period)."""
        i = bisect.bisect_right(self.times, t) - 1
        return self._offered[i] + self.rates[i] * (t - self.times[i])

    def rate_at(self, t: float) -> float:
        """The rate (bit/s) in force T seconds after the schedule began (its first before that)."""
        into = max(t, 0.0) % self.period
        return self.rates[bisect.bisect_right(self.times, into) - 1]

    def capacity_bits(self, t_a: float, t_b: float) -> float:
        """Bits the link may carry between T_A and T_B (seconds since the schedule began)."""
        def cumulative(t: float) -> float:
            passes, into = divmod(max(t, 0.0), self.period)
            return passes * self.period_bits + self._bits_into_pass(into)
        return cumulative(t_b) - cumulative(t_a)

    def averaged(self, start: float, end: float, step: float) -> list[tuple[float, float]]:
        """(t, bit/s) the schedule offered over windows of STEP from START to END (for plots)."""
        out, t = [], start
        while t < end - 1e-9:
            w = min(step, end - t)
            out.append((t, self.capacity_bits(t, t + w) / w))
            t += step
        return out

    def summary(self) -> dict:
        return {"trace": self.trace, "trace_mbps": round(self.trace_average / 1e6, 4),
                "average_mbps": round(self.average / 1e6, 4), "length_s": self.period,
                "interval": units.fmt_time(self.interval), "updates_per_pass": len(self.times),
                "min_mbps": round(min(self.rates) / 1e6, 4), "max_mbps": round(max(self.rates) / 1e6, 4)}


def schedule(trace: Trace, interval: float, average_bps: float | None = None) -> Schedule:
    """TRACE's rate over each INTERVAL (seconds, a whole number of ms), scaled so that its
    average is AVERAGE_BPS (default: the trace's own). A run of intervals without an
    opportunity shares the opportunities of the interval that ends it (cyclically)."""
    step = round(interval * 1000)
    if step < 1 or abs(step - interval * 1000) > 1e-6:
        raise ValueError(f"a trace's update interval must be a whole number of ms, got {interval!r} s")
    period = trace.period_ms
    counts = Counter((t % period) // step for t in trace.times_ms)
    bins = [(k * step, min(step, period - k * step), counts.get(k, 0)) for k in range(math.ceil(period / step))]
    scale = 1.0 if average_bps is None else average_bps / trace.average_bps
    first = next(k for k, b in enumerate(bins) if b[2])
    # rotate so the pass starts at a bin with opportunities, merge each run of empty bins
    # into the bin that ends it, then rotate back (a run may wrap over the pass's end)
    entries = []  # [start_ms (may be negative: wraps), length_ms, opportunities]
    pending = 0
    for k in list(range(first + 1, len(bins))) + list(range(0, first + 1)):
        start, length, n = bins[k]
        if not n:
            pending += length
            continue
        entries.append([start - pending, length + pending, n])
        pending = 0
    times, rates = [], []
    for begin, length, n in sorted(entries, key=lambda e: e[0] % period):
        rate = n * OPPORTUNITY_BITS / (length / 1000) * scale
        if begin < 0:  # the run that wraps: it holds at the pass's start and again at its end
            times.append(0.0)
            rates.append(rate)
            begin += period
        times.append(begin / 1000)
        rates.append(rate)
    order = sorted(zip(times, rates))  # starts at 0: the rotation above always gives a time 0
    return Schedule(trace.path, step / 1000, period / 1000, tuple(t for t, _ in order), tuple(r for _, r in order),
                    trace.average_bps, scale)


# ---------------------------------------------------------------- synthetic traces

KINDS = ("constant", "square", "walk")


def synthesize(kind: str, seconds: float, rate_bps: float, low_bps: float | None = None,
               period: float = 2.0, step: float = 0.1, seed: int = 1) -> list[int]:
    """A Mahimahi trace (the lines' milliseconds) of SECONDS: `constant` at RATE_BPS;
    `square` between RATE_BPS and LOW_BPS (default a quarter of it), PERIOD seconds per
    cycle, high first; `walk`: a seeded random walk around RATE_BPS, a new rate every
    STEP seconds, kept within [LOW_BPS (default a tenth), 2 x RATE_BPS]. Every trace lasts
    exactly SECONDS (its last line is its last millisecond) and its opportunities are
    spread as evenly as the rate over time allows."""
    total_ms = round(seconds * 1000)
    if total_ms < 1 or rate_bps <= 0:
        raise ValueError("a trace needs a positive length and rate")
    if kind == "constant":
        rate = [rate_bps] * total_ms
    elif kind == "square":
        low = rate_bps / 4 if low_bps is None else low_bps
        half = max(1, round(period * 500))
        rate = [rate_bps if (ms // half) % 2 == 0 else low for ms in range(total_ms)]
    elif kind == "walk":
        rng = random.Random(seed)
        low = rate_bps / 10 if low_bps is None else low_bps
        every = max(1, round(step * 1000))
        rate, current = [], rate_bps
        for ms in range(total_ms):
            if ms and ms % every == 0:
                current = min(2 * rate_bps, max(low, current * math.exp(rng.gauss(0, 0.2))))
            rate.append(current)
    else:
        raise ValueError(f"unknown trace kind {kind!r} (one of {', '.join(KINDS)})")
    cumulative, acc = [], 0.0
    for r in rate:
        acc += r / 1000 / OPPORTUNITY_BITS
        cumulative.append(acc)
    count = max(1, round(acc))
    factor = count / acc  # so the last opportunity falls on the last millisecond
    out, k = [], 1
    for ms, c in enumerate(cumulative, start=1):
        while k <= count and c * factor >= k - 1e-9:
            out.append(ms)
            k += 1
    return out


def write(path: Path, times_ms: list[int]) -> Path:
    path.write_text("".join(f"{t}\n" for t in times_ms))
    return path


def summary_lines(trace: Trace) -> list[str]:
    """TRACE in words (`bbrlab trace show`): its length and average rate, and the schedules
    its replay would make at 1, 10 and 100 ms update intervals."""
    lines = [f"{trace.path}: {trace.opportunities} opportunities over {trace.seconds:g} s, "
             f"average {trace.average_bps / 1e6:.3f} Mbit/s"]
    for interval in (0.001, 0.01, 0.1):
        s = schedule(trace, interval).summary()
        lines.append(f"  every {s['interval']:>5s}: {s['updates_per_pass']:6d} updates per pass, "
                     f"rates {s['min_mbps']:g} to {s['max_mbps']:g} Mbit/s")
    return lines
