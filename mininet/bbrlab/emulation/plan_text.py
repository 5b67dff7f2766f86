"""A network plan in words, for `bbrlab run --dry-run`: the hosts, each interface's queueing
commands, the sysctls, the flows and the events on the link, as topo.build_plan made them.
"""

from __future__ import annotations

from pathlib import Path

from .mahimahi_plan import HOLDER, USER
from .topo import Plan


def describe(plan: Plan) -> str:
    """Human-readable plan for --dry-run: topology, queueing commands, flow schedule."""
    lines = ["hosts: " + ", ".join(f"{h} ({r})" for h, r in plan.hosts), "links and egress queueing:"]
    for link in plan.links:
        lines.append(f"  {link.end1.name} {link.end1.ip}  <->  {link.end2.name} {link.end2.ip}")
        for end in (link.end1, link.end2):
            for argv in end.tc:
                lines.append(f"    [{end.host}] {' '.join(argv)}")
            if not end.tc:
                lines.append(f"    [{end.host}] {end.name}: no qdisc (veth default noqueue)")
    lines.append("offloads: tso, gso, gro off on every interface")
    common = {k: v for k, v in plan.sysctls[plan.hosts[-1][0]].items()
              if all(host.get(k) == v for host in plan.sysctls.values())}
    lines.append("sysctls in every host: " + ", ".join(f"{k}={v}" for k, v in common.items()))
    for host, values in plan.sysctls.items():
        extra = {k: v for k, v in values.items() if k not in common}
        if extra and host not in ("r1", "r2"):  # the routers' forwarding is the dumbbell's own
            lines.append(f"  and in {host}: " + ", ".join(f"{k}={v}" for k, v in extra.items()))
    lines.append("flows:" if plan.flows or not plan.workloads else "flows: none of iperf3")
    for f in plan.flows:
        end = f"for {f.duration:g}s" if f.duration is not None else f"{f.size} bytes"
        what = f"{f.cc:8s} {f.sender} -> {f.receiver} {f.dst}:{f.port}" if f.tool == "iperf3" else (
            f"{'picoquic ' + f.cc:17s} server {f.sender} {f.src}:{f.port} -> client {f.receiver} (QUIC"
            f"{', picoquic ' + f.build if f.build else ''})")
        lines.append(f"  {f.id}: {what}  start {f.start:g}s, {end}")
    if plan.workloads:
        lines.append("short flows (one sending program per class, one sink per receiver, many connections):")
        rate = plan.summary.get("rate_bps", 0.0)
        lines += [w.describe(rate) for w in plan.workloads]
    for e in plan.events:
        lines.append(f"  at {e.at:g}s [{e.host}] {e.what}: {' '.join(e.argv)}")
    if plan.schedule:
        lines.append(plan.schedule.describe())
    if plan.mahimahi:
        chain = plan.mahimahi
        lines.append(f"bottleneck: {chain.describe()}; the senders' programs run inside it:")
        shells = chain.shells(Path("RAW/mahimahi/link.trace"), Path("RAW/mahimahi/uplink.log"))
        names = " ".join(Path(a).name if a.startswith("/") else a for a in shells)
        lines.append(f"  [{chain.host}] setpriv --reuid={USER} ... {names} -- {' '.join(HOLDER)}")
    return "\n".join(lines)
