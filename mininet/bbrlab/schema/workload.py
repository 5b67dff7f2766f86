"""Short-flow workloads, planned in advance: arrival times and object sizes from a seed.

A flow group with a `workload` sends many short flows instead of one long one. Its
flows arrive as a Poisson process (`rate` flows per second, or a `load`: the share of
the bottleneck the offered bytes would fill, so the mean inter-arrival time is
8 x mean size / (load x rate)), or one after another (`sequential`: each download alone,
`gap` after the previous one ended). Sizes come from an empirical CDF file or a named
distribution:

- a CDF file in the empirical traffic generator's format (datacenter/
  empirical-traffic-gen): lines `size index cdf` (bytes, unused, cumulative probability)
  or `size cdf`; `#` starts a comment; sizes and probabilities never decrease and the last
  probability is 1 (or 100). A draw interpolates linearly between the two points around
  a uniform random number, as that generator does;
- `fixed SIZE`, `lognormal MEDIAN SIGMA` (SIGMA of the size's logarithm), `pareto MIN SHAPE`
  (SHAPE > 1, so the mean exists).

Everything here is pure: the schedule is computed before a point runs, written into its
raw/ directory (schedule_doc) and handed to the sending program (shortflows.py), so a run
is reproducible and the schedule can be checked offline.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import traces, units
from .checks import check_keys
from ..errors import SpecError, did_you_mean

ARRIVALS = ("poisson", "sequential")
DISTRIBUTIONS = ("fixed", "lognormal", "pareto")
KEYS = {"arrivals", "rate", "load", "sizes", "duration", "count", "gap", "seed", "reseed"}
SIZES_TEXT = ("path of a CDF file (`size index cdf` lines), or `fixed SIZE`, `lognormal MEDIAN SIGMA`, "
              "`pareto MIN SHAPE`")
SINK_PORT = 5001  # the sink of each receiving host (iperf3's servers use 5201 and up)


@dataclass(frozen=True)
class Sizes:
    """Where object sizes come from: a CDF file's points, or a named distribution."""

    text: str  # as written
    kind: str  # "cdf" or one of DISTRIBUTIONS
    points: tuple[tuple[float, float], ...] = ()  # (bytes, cumulative probability) of a CDF
    params: tuple[float, ...] = ()

    @property
    def mean(self) -> float:
        """The mean size in bytes (of the interpolated CDF, or the distribution's)."""
        if self.kind == "cdf":
            (s0, c0), total = self.points[0], self.points[0][0] * self.points[0][1]
            for s1, c1 in self.points[1:]:
                total += (c1 - c0) * (s0 + s1) / 2
                s0, c0 = s1, c1
            return total
        if self.kind == "fixed":
            return self.params[0]
        if self.kind == "lognormal":
            median, sigma = self.params
            return median * math.exp(sigma * sigma / 2)
        low, shape = self.params
        return shape * low / (shape - 1)

    def draw(self, rng: random.Random) -> int:
        """One object size in bytes (at least 1)."""
        if self.kind == "cdf":
            r = rng.random()
            s0, c0 = self.points[0]
            if r <= c0:
                return max(1, round(s0))
            for s1, c1 in self.points[1:]:
                if r <= c1:
                    return max(1, round(s0 + (s1 - s0) * (r - c0) / (c1 - c0) if c1 > c0 else s1))
                s0, c0 = s1, c1
            return max(1, round(s0))
        if self.kind == "fixed":
            return max(1, round(self.params[0]))
        if self.kind == "lognormal":
            return max(1, round(rng.lognormvariate(math.log(self.params[0]), self.params[1])))
        return max(1, round(self.params[0] * rng.paretovariate(self.params[1])))


@dataclass(frozen=True)
class Workload:
    arrivals: str
    sizes: Sizes
    rate: float | None = None  # flows per second (poisson)
    load: float | None = None  # or the share of the bottleneck's rate (poisson)
    duration: float | None = None  # seconds of arrivals (poisson)
    count: int | None = None  # flows (sequential)
    gap: float = 1.0  # seconds between one flow's end and the next one's start (sequential)
    seed: int = 1
    reseed: bool = False  # repetition R draws with seed + R - 1 (the CCs of one repetition share it)

    def for_repetition(self, repetition: int) -> Workload:
        """The workload of repetition REPETITION (1, 2, ...): itself, or with its own seed."""
        return replace(self, seed=self.seed + repetition - 1) if self.reseed else self

    def arrival_rate(self, link_bps: float) -> float:
        """Flows per second: as given, or from the load on a link of LINK_BPS."""
        if self.rate is not None:
            return self.rate
        return self.load * link_bps / (8 * self.sizes.mean)


def read_cdf(path: Path, key: str) -> tuple[tuple[float, float], ...]:
    """The (size, cdf) points of an empirical CDF file; errors name the file and line."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise SpecError(f"{key}: cannot read {path} ({exc.strerror})") from None
    points: list[tuple[float, float]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        where = f"{key}: {path.name}:{number}"
        if len(fields) not in (2, 3):
            raise SpecError(f"{where}: expected `size index cdf` or `size cdf`, got {line.strip()!r}")
        try:
            size, cdf = float(fields[0]), float(fields[-1])
        except ValueError:
            raise SpecError(f"{where}: not numbers: {line.strip()!r}") from None
        if size < 0 or cdf < 0 or not (math.isfinite(size) and math.isfinite(cdf)):
            raise SpecError(f"{where}: sizes and probabilities are not negative: {line.strip()!r}")
        if points and (size < points[-1][0] or cdf < points[-1][1]):
            raise SpecError(f"{where}: sizes and probabilities must not decrease (previous line: "
                            f"{points[-1][0]:g} {points[-1][1]:g})")
        points.append((size, cdf))
    if not points:
        raise SpecError(f"{key}: {path.name} holds no points")
    last = points[-1][1]
    if abs(last - 100) < 1e-9:  # given in percent
        points = [(s, c / 100) for s, c in points]
    elif abs(last - 1) > 1e-9:
        raise SpecError(f"{key}: {path.name}: the last probability must be 1 (or 100), got {last:g}")
    return tuple(points)


def parse_sizes(value: Any, key: str) -> Sizes:
    """`sizes`: a CDF file's path (relative to the checkout, or with $VARIABLES) or a named
    distribution with its parameters in units."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{key}: expected {SIZES_TEXT}; got {value!r}")
    words = value.split()
    name = words[0].lower()
    if name in DISTRIBUTIONS:
        want = {"fixed": 1, "lognormal": 2, "pareto": 2}[name]
        if len(words) != 1 + want:
            raise SpecError(f"{key}: {name} takes {want} value{'s' if want > 1 else ''}: {SIZES_TEXT}")
        first = units.size(words[1], key)
        if first <= 0:
            raise SpecError(f"{key}: {name}'s size must be positive, got {words[1]!r}")
        if name == "fixed":
            return Sizes(value, name, params=(float(first),))
        try:
            second = float(words[2])
        except ValueError:
            raise SpecError(f"{key}: {name}'s second value is a number, got {words[2]!r}") from None
        if name == "lognormal" and not 0 < second <= 5:
            raise SpecError(f"{key}: lognormal's SIGMA must be within (0, 5], got {second:g}")
        if name == "pareto" and not second > 1:
            raise SpecError(f"{key}: pareto's SHAPE must be above 1 (a finite mean), got {second:g}")
        return Sizes(value, name, params=(float(first), second))
    if len(words) > 1 or re.fullmatch(r"[0-9.]+\s*[A-Za-z]*", value.strip()):
        raise SpecError(f"{key}: {value!r} is not a distribution{did_you_mean(name, DISTRIBUTIONS)}: {SIZES_TEXT}")
    path = traces.resolve(value, key)
    return Sizes(value, "cdf", points=read_cdf(path, key))


def parse(raw: Any, key: str) -> Workload:
    """A flow group's `workload` mapping, every error naming its key."""
    raw = check_keys(raw, KEYS, key)
    arrivals = raw.get("arrivals", "poisson")
    if arrivals not in ARRIVALS:
        raise SpecError(f"{key}.arrivals: expected {' or '.join(ARRIVALS)}, got {arrivals!r}")
    if "sizes" not in raw:
        raise SpecError(f"{key}.sizes: required ({SIZES_TEXT})")
    sizes = parse_sizes(raw["sizes"], f"{key}.sizes")
    seed = raw.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SpecError(f"{key}.seed: expected a whole number, got {seed!r}")
    reseed = raw.get("reseed", False)
    if not isinstance(reseed, bool):
        raise SpecError(f"{key}.reseed: expected true or false, got {reseed!r}")
    if arrivals == "sequential":
        for other in ("rate", "load", "duration"):
            if other in raw:
                raise SpecError(f"{key}.{other}: only with arrivals: poisson (sequential flows take count and gap)")
        count = raw.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise SpecError(f"{key}.count: expected a whole number >= 1 of sequential flows, got {count!r}")
        gap = units.duration(raw.get("gap", "1s"), f"{key}.gap")
        return Workload(arrivals, sizes, count=count, gap=gap, seed=seed, reseed=reseed)
    for other in ("count", "gap"):
        if other in raw:
            raise SpecError(f"{key}.{other}: only with arrivals: sequential")
    given = [k for k in ("rate", "load") if k in raw]
    if len(given) != 1:
        raise SpecError(f"{key}: give exactly one of rate (flows per second, `20/s`) or load (`30%`)")
    if "duration" not in raw:
        raise SpecError(f"{key}.duration: required (how long flows arrive)")
    duration = units.duration(raw["duration"], f"{key}.duration", allow_zero=False)
    if given == ["rate"]:
        rate = _per_second(raw["rate"], f"{key}.rate")
        return Workload(arrivals, sizes, rate=rate, duration=duration, seed=seed, reseed=reseed)
    load = units.fraction(raw["load"], f"{key}.load")
    if not 0 < load < 1:
        raise SpecError(f"{key}.load: expected a share of the bottleneck above 0% and below 100%, got {raw['load']!r}")
    return Workload(arrivals, sizes, load=load, duration=duration, seed=seed, reseed=reseed)


def _per_second(value: Any, key: str) -> float:
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*/\s*s\s*", str(value)) if not isinstance(value, bool) else None
    if not match:
        raise SpecError(f"{key}: expected flows per second like 20/s, got {value!r}")
    rate = float(match.group(1))
    if rate <= 0:
        raise SpecError(f"{key}: must be above 0/s")
    return rate


# ---------------------------------------------------------------- the schedule


def flows(workload: Workload, group: int, link_bps: float, start: float = 0.0) -> list[tuple[float, int]]:
    """(arrival time in seconds from time zero, size in bytes) of every flow, from the seed
    (and the group, so two groups with one seed still draw their own flows)."""
    rng = random.Random(f"bbrlab-workload:{workload.seed}:{group}")
    if workload.arrivals == "sequential":
        return [(start, workload.sizes.draw(rng)) for _ in range(workload.count)]
    rate = workload.arrival_rate(link_bps)
    out, t = [], start
    while True:
        t += rng.expovariate(rate)
        if t >= start + workload.duration:
            return out
        out.append((t, workload.sizes.draw(rng)))


def deadline(workload: Workload, planned: list[tuple[float, int]], link_bps: float, rtt: float,
             start: float, grace: float) -> float:
    """Seconds after time zero when the sender stops and writes what is still open as unfinished."""
    if workload.arrivals == "poisson":
        return start + workload.duration + grace
    # one download after another: each may take a few times its ideal time
    each = [workload.gap + 4 * (size * 8 / link_bps + 3 * rtt) + 5.0 for _, size in planned]
    return start + sum(each) + grace


def schedule_doc(workload: Workload, group: int, cls: str, cc: str, dst: str, link_bps: float, rtt: float,
                 start: float, grace: float, ports: tuple[int, int] | None, port_serial: int = 0) -> dict:
    """The sending program's schedule (shortflows.send): where to, the deadline, and per flow
    its time, size, CC, class and client port (in PORTS (first, count), rotating from
    PORT_SERIAL, so the testbed's random loss applies as to iperf3's data connections)."""
    planned = flows(workload, group, link_bps, start)
    rows = []
    for k, (at, size) in enumerate(planned):
        row = {"id": f"g{group + 1}-{k + 1}", "at": round(at, 6), "size": size, "cc": cc, "group": group,
               "class": cls}
        if ports:
            row["cport"] = ports[0] + (port_serial + k) % ports[1]
        rows.append(row)
    return {"format": 1, "dst": dst, "port": SINK_PORT, "sequential": workload.arrivals == "sequential",
            "gap": workload.gap, "deadline": round(deadline(workload, planned, link_bps, rtt, start, grace), 3),
            "ports": list(ports) if ports else None, "flows": rows}
