"""Shards: one sweep split over N hosts, each running its part of the grid (`--shard K/N`).

Every host computes the same partition from the spec alone (no coordinator, no shared
state): the points are dealt longest first (longest-processing-time-first), each to the
shard that would then finish soonest, ties broken by the shard's number; points of equal
cost go in the order of their experiment and id. A point costs its flows plus what a
point costs beyond them (POINT_OVERHEAD), and a shard pays NETWORK_SETUP once for every
topology shape it builds: the runner reuses one live network per shape, so a point goes
to a shard that already has its shape unless another shard would finish sooner even after
building one. Most experiments have a single shape, so the grid spreads over every shard
and each builds its network once.

A shard runs its points' planned repetitions only. `repeat: auto` (repetitions added
where a claim's interval straddles its bound) needs every repetition of a grid point in
one place, so it is left to the merged run: `bbrlab merge` judges the whole grid and, when
a check still straddles its bound, names the one command that adds the repetitions on
one host by resuming the merged run.

Pure functions on spec.Point: no system calls, nothing read or written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import SpecError
from ..schema.experiment import Point

# Seconds a point costs beyond its flows (iperf3's start and end, the idle-path probe, the
# analysis, reconfiguring the reused network), and building a network once; measured in the
# testbed VM (docs/results.md, "Measured here": ~5 s per point, 7 s to build the network).
POINT_OVERHEAD = 5.0
NETWORK_SETUP = 7.0


@dataclass(frozen=True)
class Shard:
    """Shard INDEX of COUNT (1 <= index <= count)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str, key: str = "--shard") -> Shard:
    """'K/N' -> Shard(K, N); an error naming KEY and what is wrong otherwise."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not match:
        raise SpecError(f"{key} {text}: expected K/N, this host's shard K of N hosts, e.g. {key} 1/4")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1:
        raise SpecError(f"{key} {text}: N must be at least 1 (the number of shards)")
    if not 1 <= index <= count:
        raise SpecError(f"{key} {text}: K must be between 1 and N (shards are numbered 1 to {count})")
    return Shard(index, count)


def cost(point: Point) -> float:
    """Expected seconds for POINT on a host whose network is already built."""
    return point.duration + POINT_OVERHEAD


def shape(point: Point) -> tuple:
    """What decides POINT's network (topo.Plan.shape): its experiment (a run builds its own),
    its senders and receivers (one sender per flow, one receiver per flow group)."""
    return (point.experiment, sum(g.count for g in point.flows), len(point.flows))


def partition(points: list[Point], count: int) -> list[list[Point]]:
    """POINTS dealt to COUNT shards (module docstring); each shard's points in POINTS' order."""
    loads = [0.0] * count
    shapes: list[set] = [set() for _ in range(count)]
    owner: dict[tuple[str, str], int] = {}
    for point in sorted(points, key=lambda p: (-cost(p), p.experiment, p.id)):
        key = shape(point)

        def finish(i: int) -> float:
            return loads[i] + cost(point) + (0.0 if key in shapes[i] else NETWORK_SETUP)

        best = min(range(count), key=lambda i: (finish(i), i))
        loads[best] = finish(best)
        shapes[best].add(key)
        owner[(point.experiment, point.id)] = best
    return [[p for p in points if owner[(p.experiment, p.id)] == i] for i in range(count)]


def points_of(points: list[Point], shard: Shard) -> list[Point]:
    """The points of POINTS that SHARD runs."""
    return partition(points, shard.count)[shard.index - 1]


def expected_seconds(points: list[Point]) -> float:
    """What running POINTS on one host costs: their points, one network per shape."""
    return sum(cost(p) for p in points) + NETWORK_SETUP * len({shape(p) for p in points})


def record(shard: Shard, points: list[Point]) -> dict:
    """What run.json keeps of a shard: which one, and the point ids it runs (sorted, so
    the same part of the grid records the same way: a run resumes only the same part)."""
    return {"index": shard.index, "count": shard.count, "points": sorted(p.id for p in points)}


def lines(points: list[Point], shard: Shard) -> list[str]:
    """The partition as text: every shard's size and expected time, this one marked."""
    parts = partition(points, shard.count)
    out = []
    for i, part in enumerate(parts, 1):
        mark = "  <- this host" if i == shard.index else ""
        out.append(f"shard {i}/{shard.count}: {len(part)} point(s), about {expected_seconds(part) / 60:.1f} min"
                   f"{mark}")
    return out
