"""Where a point's setup time goes: the testbed of an experiment's first quick point built,
configured, read back (the run's snapshot) and torn down, several times, with every
command the testbed runs inside a host counted and timed.

    sudo PYTHONPATH=mininet python3 benchmarks/setup_cost.py [--repeat 3] [EXPERIMENT ...]

Prints one line per experiment and phase: seconds (median of the repeats), commands run in
hosts, and their seconds; then the commands that took longest in all. Run it inside the
testbed VM: a command's cost there (a process started under qemu's TCG) is what it measures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mininet"))

from bbrlab.emulation import links, net  # noqa: E402
from bbrlab.emulation.topo import build_plan  # noqa: E402
from bbrlab.schema import experiment as spec  # noqa: E402

EXPERIMENTS = ["figure5", "coexist-aqm", "headend", "cdn-mix"]


class Counter:
    """links.run wrapped: each command's program and seconds, by the phase in force."""

    def __init__(self):
        self.phase = "?"
        self.calls: dict[str, list[tuple[str, float]]] = defaultdict(list)
        self._run = links.run

    def __call__(self, node, argv, *args, **kwargs):
        t0 = time.monotonic()
        try:
            return self._run(node, argv, *args, **kwargs)
        finally:
            self.calls[self.phase].append((" ".join(argv[:3]), time.monotonic() - t0))


def measure(name: str, counter: Counter) -> dict[str, float]:
    point = spec.load(Path("experiments") / f"{name}.yaml", quick=True).points[0]
    plan = build_plan(point)
    testbed = net.Testbed(plan)
    times = {}
    t0 = time.monotonic()
    counter.phase = "build"
    testbed._lock.__enter__()
    net.cleanup_leftovers()
    testbed._build()
    times["build"] = time.monotonic() - t0
    t0, counter.phase = time.monotonic(), "configure"
    testbed.configure(plan)
    times["configure"] = time.monotonic() - t0
    t0, counter.phase = time.monotonic(), "snapshot"
    testbed.snapshot()
    times["snapshot"] = time.monotonic() - t0
    t0, counter.phase = time.monotonic(), "teardown"
    testbed._teardown()
    times["teardown"] = time.monotonic() - t0
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="*", default=EXPERIMENTS)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    counter = Counter()
    links.run = counter
    net.run = counter  # the name net.py imported
    every: list[tuple[str, float]] = []
    for name in args.experiments:
        runs = []
        counter.calls.clear()
        for _ in range(args.repeat):
            runs.append(measure(name, counter))
        for phase in ("build", "configure", "snapshot", "teardown"):
            calls = counter.calls.get(phase, [])
            seconds = statistics.median(r[phase] for r in runs)
            in_cmds = sum(s for _, s in calls) / args.repeat
            print(f"{name:14s} {phase:10s} {seconds:6.2f} s  {len(calls) // args.repeat:4d} commands in hosts "
                  f"{in_cmds:6.2f} s")
        every += [c for calls in counter.calls.values() for c in calls]
    by_program: dict[str, list[float]] = defaultdict(list)
    for command, seconds in every:
        by_program[command.split()[0]].append(seconds)
    for program, seconds in sorted(by_program.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {program:10s} {len(seconds):5d} runs, median {statistics.median(seconds) * 1e3:5.0f} ms, "
              f"{sum(seconds):6.1f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
