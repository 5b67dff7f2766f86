"""bbrlab's Mininet extension: an interface that sets up its own egress queueing.

Mininet's link.py says "Intfs know how to configure themselves". EmulatedIntf does so from
an IntfPlan (topo.py): address, offloads off, then exactly the tc commands of its role
(fq pacing, the bottleneck's htb + buffer, or a netem delay line). Unlike TCIntf it takes
no loose **params: an unknown option is an error, and every tc/ethtool failure raises.
"""

from __future__ import annotations

import subprocess
from typing import Sequence

from mininet.link import Intf, Link

from .. import log
from ..errors import TestbedError
from .topo import IntfPlan, tc_batch

OFFLOADS = ("tso", "gso", "gro")


# Steer every packet a host receives to a CPU chosen by its flow's hash (RPS), so a flow's
# packets are always processed on one CPU. Without it a veth hands each packet to the
# backlog of whichever CPU sent it; two CPUs then work on one flow's packets in parallel
# and overtake each other (measured: 500-700 of 41000 segments arrived out of order at a
# 50 Mbit/s receiver of a 2-vCPU VM, with no loss and no jitter configured).
_STEER = ('umount -l /sys && mount -t sysfs sysfs /sys && for f in /sys/class/net/*/queues/rx-*/rps_cpus; '
          'do echo "$1" > "$f" || exit 1; done')


def cpu_mask(cpus: int) -> str:
    """The hex mask of CPUs 0..CPUS-1, as rps_cpus takes it."""
    return format((1 << cpus) - 1, "x")


def steer_receive(node, cpus: int) -> None:
    """RPS on every interface of NODE over CPUs 0..CPUS-1 (sysfs shows a namespace's own
    interfaces only when mounted from inside it: a private mount namespace, gone after)."""
    run(node, ["unshare", "--mount", "--propagation", "private", "sh", "-c", _STEER, "steer", cpu_mask(cpus)])


def run(node, argv: Sequence[str], check: bool = True, timeout: float = 20, stdin: str | None = None) -> str:
    """Run ARGV (an argument list, never a shell string) inside NODE's namespace."""
    log.command(node.name, argv, stdin)
    proc = node.popen(list(argv), stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(input=stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise TestbedError(f"[{node.name}] timed out: {' '.join(argv)}") from None
    if check and proc.returncode != 0:
        raise TestbedError(f"[{node.name}] failed ({proc.returncode}): {' '.join(argv)}: {err.strip() or out.strip()}")
    return out


class EmulatedIntf(Intf):
    """A veth end whose egress queueing is given by an IntfPlan."""

    def config(self, plan: IntfPlan | None = None, **params):  # noqa: D401 - Mininet's hook
        unknown = set(params) - {"mac", "ip", "up", "port"}
        if unknown:
            raise TestbedError(f"{self.name}: unknown interface option(s) {', '.join(sorted(unknown))}")
        result = super().config(**params)
        if plan is not None:
            self.apply(plan)
        return result

    def apply(self, plan: IntfPlan) -> None:
        """(Re)configure offloads and queueing; safe to call again to reuse the link."""
        if plan.name != self.name:
            raise TestbedError(f"plan for {plan.name} applied to {self.name}")
        if not getattr(self, "offloads_off", False):  # nothing turns them on again
            run(self.node, ["ethtool", "-K", self.name] + [arg for o in OFFLOADS for arg in (o, "off")])
            self.offloads_off = True
        # Start from the veth default (noqueue) so a reused link carries nothing over.
        run(self.node, ["tc", "qdisc", "del", "dev", self.name, "root"], check=False)
        batch = tc_batch(plan.tc)
        if batch is None:
            for argv in plan.tc:
                run(self.node, argv)
        elif plan.tc:  # one process for all of them: each spawn costs ~0.1 s in a VM
            run(self.node, ["tc", "-batch", "-"], stdin=batch)
        self.plan = plan

    def offloads(self) -> dict:
        """Offload state as the kernel reports it (what metadata records)."""
        states = {}
        names = {"tcp-segmentation-offload": "tso", "generic-segmentation-offload": "gso",
                 "generic-receive-offload": "gro"}
        for line in run(self.node, ["ethtool", "-k", self.name]).splitlines():
            key, _, value = line.partition(":")
            if key.strip() in names:
                states[names[key.strip()]] = value.split()[0] if value.split() else "?"
        return states


class EmulatedLink(Link):
    """A veth pair of EmulatedIntfs: each end gets its own IntfPlan via params1/params2."""

    def __init__(self, node1, node2, plan1: IntfPlan, plan2: IntfPlan):
        super().__init__(node1, node2, intfName1=plan1.name, intfName2=plan2.name,
                         cls1=EmulatedIntf, cls2=EmulatedIntf,
                         params1={"ip": plan1.ip, "plan": plan1}, params2={"ip": plan2.ip, "plan": plan2})
