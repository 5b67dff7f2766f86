"""Where the idle path's extra RTT comes from: ping across the testbed's dumbbell with every
emulation qdisc in place, then with the bottleneck's shaper removed, then with no qdisc at
all (bare veths and forwarding), plus the guest's timer lateness (cyclictest).

    sudo PYTHONPATH=mininet python3 benchmarks/idle_path.py [--rtt 40ms] [--count 200]

Prints one line per configuration: the configured RTT, the median and p95 measured, and
the excess over the configured RTT. Run it inside the testbed VM (or any host bbrlab runs on).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mininet"))

from bbrlab.runs import calibrate  # noqa: E402
from bbrlab.schema import experiment as spec  # noqa: E402
from bbrlab.emulation.links import run  # noqa: E402
from bbrlab.analysis.metrics import percentile  # noqa: E402
from bbrlab.emulation.net import Testbed  # noqa: E402
from bbrlab.emulation.topo import build_plan  # noqa: E402

RTT = re.compile(r"time=([0-9.]+) ms")


def ping(testbed: Testbed, count: int) -> list[float]:
    flow = testbed.plan.flows[0]
    out = run(testbed.node(flow.sender), ["ping", "-n", "-c", str(count), "-i", "0.02",
                                          flow.dst], timeout=count * 0.1 + 30)
    return [float(x) for x in RTT.findall(out)]


def strip(testbed: Testbed, roles: set[str]) -> None:
    for intf in testbed.plan.intfs():
        if intf.role in roles:
            run(testbed.node(intf.host), ["tc", "qdisc", "del", "dev", intf.name, "root"], check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rtt", default="40ms")
    parser.add_argument("--rate", default="10Mbit")
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args()
    raw = {"link": {"rate": args.rate, "rtt": args.rtt, "buffer": "100pkt"}, "pacing": "internal",
           "flows": [{"cc": "cubic", "duration": "1s"}]}
    point = spec.build(raw, default_name="idle-path").points[0]
    base_ms = point.link.rtt * 1e3
    timer = calibrate.timer_lateness(5)
    print(f"timer lateness (cyclictest, 1 ms timer): median {timer['p50_us']:.0f} us, p99 {timer['p99_us']:.0f} us, "
          f"max {timer['max_us']:.0f} us")
    with Testbed(build_plan(point)) as testbed:
        steps = [("every qdisc (shaper + both delay lines)", set(), base_ms),
                 ("delay lines only (no shaper)", {"bottleneck"}, base_ms),
                 ("no qdisc (bare veths, forwarding)", {"delay-data", "delay-ack"}, 0.0)]
        for label, roles, configured in steps:
            strip(testbed, roles)
            rtts = ping(testbed, args.count)
            med, p95 = percentile(rtts, 50), percentile(rtts, 95)
            print(f"{label:42s} configured {configured:6.2f} ms  median {med:7.3f} ms  p95 {p95:7.3f} ms  "
                  f"excess {med - configured:+.3f} ms  ({len(rtts)} pings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
