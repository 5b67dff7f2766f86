"""The link schedule's executor at 1, 10 and 100 ms: how late its updates are written and
what feeding them costs, to choose link.trace_interval on a given machine.

    PYTHONPATH=mininet python3 benchmarks/link_schedule.py [--trace FILE] [--seconds 20]
    sudo PYTHONPATH=mininet python3 benchmarks/link_schedule.py --tc   # a real netem, in the VM

The schedule (schedule.Feeder, the code a run uses) writes each update to one long-lived
process: `cat` by default (the feeder's own timing, anywhere), or with --tc a `tc -batch -`
that changes the rate of a netem on a dummy device (the whole path; root and sch_netem).
Without --trace a synthetic random-walk trace around 6 Mbit/s is used. Prints one line per
interval: updates per second, skipped, lateness p50/p99/max, and CPU seconds per second of
the feeder and its child.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mininet"))

from bbrlab.emulation import schedule, shapers  # noqa: E402
from bbrlab.schema import experiment as spec, traces  # noqa: E402
from bbrlab.analysis import trace_metrics  # noqa: E402

DEV = "bbrsched0"


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(trace: traces.Trace, interval: float, seconds: float, use_tc: bool) -> dict:
    sched = traces.schedule(trace, interval)
    if use_tc:
        link = spec.Link(rate=sched.average, rtt=0.1, buffer=spec.Buffer(100, "pkt"))
        lines = tuple(" ".join(shapers.rate_change(DEV, link, r)[1:]) for r in sched.rates)
        argv = ["tc", "-batch", "-"]
    else:
        lines = tuple(f"rate {int(r)}" for r in sched.rates)
        argv = ["cat"]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    stop = threading.Event()

    def write(line: str) -> None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    feeder = schedule.Feeder(sched.times, sched.period, lines, write, stop.wait)
    cpu = _cpu()
    thread = threading.Thread(target=feeder.run, args=(time.monotonic() + 0.1,), daemon=True)
    thread.start()
    time.sleep(seconds + 0.1)
    stop.set()
    thread.join()
    proc.stdin.close()
    proc.wait()
    out = trace_metrics.lateness(feeder.records)
    out["cpu_per_s"] = (_cpu() - cpu) / seconds
    out["updates_per_s"] = len(feeder.records) / seconds
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", type=Path)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--tc", action="store_true", help=f"feed a real tc on a dummy device {DEV} (root)")
    args = parser.parse_args()
    if args.trace:
        trace = traces.load(args.trace)
    else:
        folder = Path(tempfile.mkdtemp())
        trace = traces.load(traces.write(folder / "walk.up", traces.synthesize("walk", 60.0, 6e6, seed=1)))
    if args.tc:
        if os.geteuid() != 0:
            print("--tc needs root", file=sys.stderr)
            return 2
        subprocess.run(["ip", "link", "add", DEV, "type", "dummy"], check=True)
        subprocess.run(["tc", "qdisc", "replace", "dev", DEV, "root", "handle", shapers.BOTTLENECK_HANDLE,
                        "netem", "limit", "100", "rate", f"{int(trace.average_bps)}bit"], check=True)
    print(f"{trace.path}: {trace.average_bps / 1e6:.2f} Mbit/s on average, {trace.seconds:g} s; "
          f"{'tc -batch on a netem' if args.tc else 'cat'}; {args.seconds:g} s per interval")
    try:
        for interval in (0.001, 0.01, 0.1):
            r = measure(trace, interval, args.seconds, args.tc)
            print(f"  {interval * 1e3:5g} ms: {r['updates_per_s']:7.1f} updates/s, skipped "
                  f"{r.get('schedule_skipped', 0):5d}, late p50 {r.get('schedule_late_p50_ms', 0):.3f} ms, "
                  f"p99 {r.get('schedule_late_p99_ms', 0):.3f} ms, max {r.get('schedule_late_max_ms', 0):.3f} ms, "
                  f"CPU {r['cpu_per_s']:.3f} s/s")
    finally:
        if args.tc:
            subprocess.run(["ip", "link", "del", DEV], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
