"""`bbrlab shell EXPERIMENT [--only AXIS=VALUE ...] [--set KEY=VALUE ...]`: one point's
network, built exactly as a run builds it (the bottleneck's rate, delay, buffer and queue
discipline, the hosts' routes and sysctls), with each sender's default congestion control
set to its flow group's, and Mininet's own CLI opened in it: `snd1 ping -c 3 10.0.3.2`, or
`snd1 iperf3 -c 10.0.3.2 -t 10` against `rcv1 iperf3 -s -D`. Nothing is measured or
recorded. `exit` (or Ctrl-D, or the end of piped input) tears everything down, as the end
of a run does: no namespace, veth, qdisc or process is left.
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

from ..emulation.topo import build_plan
from ..errors import SpecError
from ..schema.experiment import Experiment, Point


def _grid_id(point: Point) -> str:
    """The point's id without its repetition ('cc=bbr'; '' for a file with no sweep)."""
    return re.sub(r"(^|,)rep\d+$", "", point.id)


def the_point(exp: Experiment, points: list[Point]) -> Point:
    """The one grid point POINTS (the experiment's, narrowed by --only) leave; its first
    repetition (repetitions share the network)."""
    grid = {_grid_id(p): p for p in points if p.repetition == 1}
    if len(grid) != 1:
        axes = ", ".join(f"{k}={v}" for k, v in exp.axes.items()) or "none"
        raise SpecError(f"shell: {len(grid)} points of {exp.name} are chosen; narrow them to one with --only "
                        f"(its axes: {axes})")
    point = next(iter(grid.values()))
    if point.link.shaper == "mahimahi":  # Mininet's CLI runs its commands in the hosts, not in the chain
        raise SpecError("shell: link.shaper: mahimahi is not offered: the chain runs its senders inside "
                        "Mahimahi's namespaces, which Mininet's CLI cannot enter; pick --only shaper=netem")
    return point


def banner(point: Point, plan) -> list[str]:
    """What the network is and how to reach across it, before the prompt."""
    link = point.link
    lines = [f"bbrlab shell: {point.experiment}, point {_grid_id(point) or '(the only one)'}: "
             f"bottleneck {link.rate / 1e6:g} Mbit/s, base RTT {link.rtt * 1e3:g} ms, "
             f"buffer {link.buffer_packets} packets, {link.aqm.kind}"]
    for group, sender, dst in plan.groups:
        cc = next((f.cc for f in plan.flows if f.group == group), None)
        lines.append(f"  {sender} -> {dst}" + (f" (its default congestion control: {cc})" if cc else ""))
    first = plan.groups[0]
    lines.append(f"  e.g. {first[1]} ping -c 3 {first[2]}; hosts: {', '.join(n for n, _ in plan.hosts)}; "
                 "`exit` or Ctrl-D ends it and removes the network")
    return lines


def run(point: Point, stdin: TextIO = sys.stdin) -> None:
    """Build POINT's network, open Mininet's CLI on STDIN, tear it all down after."""
    from mininet.cli import CLI  # Mininet: only where a network is built (the preflight checked it)
    from mininet.log import setLogLevel

    from ..emulation.net import Testbed

    plan = build_plan(point)
    with Testbed(plan) as testbed:
        for flow in plan.flows:  # what a program without its own choice (ping, iperf3 -C) gets
            testbed.set_sysctls(flow.sender, {"net.ipv4.tcp_congestion_control": flow.cc})
        print("\n".join(banner(point, plan)), flush=True)
        setLogLevel("output")  # the CLI's commands print through Mininet's log at this level
        try:
            CLI(testbed.net, stdin=stdin)
        finally:
            setLogLevel("error")  # the teardown's chatter stays quiet, as in a run
    print("bbrlab shell: the network is removed", flush=True)
