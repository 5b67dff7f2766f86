"""The live testbed: a Plan made real with Mininet's Python API, and taken down for sure.

Mininet serves as the factory of hosts (network namespaces with a shell) and veth links;
bbrlab configures addresses, routes, per-namespace sysctls, offloads and qdiscs itself,
from the Plan, so nothing is left to Mininet's defaults (no controller, no switch).

A Testbed holds a lock for its lifetime: two runs never share the kernel's qdiscs, and
the leftovers of a killed run can be removed safely at the next start.
"""

from __future__ import annotations

import copy
import fcntl
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from ..errors import TestbedError
from . import mahimahi
from .links import EmulatedIntf, EmulatedLink, cpu_mask, run, steer_receive
from .procs import in_namespaces, netns_inode, processes
from .topo import Plan

LOCK_PATH = Path(os.environ.get("BBRLAB_LOCK", "/run/bbrlab.lock"))
HOST_NAME = re.compile(r"mininet:(snd\d+|rcv\d+|r1|r2)$")
INTF_NAME = re.compile(r"^(snd\d+|rcv\d+|r1|r2)-eth\d+$")
# programs of our own run by path inside the hosts (by shortflow_traffic.py, a floor above)
OWN_PROGRAMS = ("shortflows.py",)


def _is_traffic(cmdline: tuple[str, ...]) -> bool:
    """A traffic program of a run: iperf3, picoquicdemo (a leftover server holds its UDP
    port) or a short-flow program (shortflows.py)."""
    return bool(cmdline) and (Path(cmdline[0]).name in ("iperf3", "picoquicdemo")
                              or any(part.endswith(OWN_PROGRAMS) for part in cmdline[1:2]))


def cleanup_leftovers() -> list[str]:
    """Remove what a killed run left: its host shells, every process in their namespaces
    (an orphaned iperf3 keeps a namespace and its qdiscs alive), traffic programs in another
    namespace whose shell is already gone (a client started as the run was interrupted),
    and stray veths."""
    removed = []
    own_ns = netns_inode(os.getpid())
    procs = processes()
    shells, namespaces, orphans = [], set(), []
    for proc in procs:
        if any(HOST_NAME.search(part) for part in proc.cmdline):
            shells.append(proc.pid)
            if proc.netns is not None and proc.netns != own_ns:
                namespaces.add(proc.netns)
        elif proc.netns is not None and proc.netns != own_ns and _is_traffic(proc.cmdline):
            orphans.append(proc.pid)
    namespaces |= mahimahi.leftovers(procs) - {own_ns}  # a chain's shells and what runs inside it
    victims = set(shells) | set(orphans) | set(in_namespaces(namespaces, procs))
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
            removed.append(f"process {pid}")
        except ProcessLookupError:
            pass
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if INTF_NAME.match(name):
            subprocess.run(["ip", "link", "del", name], capture_output=True)
            removed.append(f"veth {name}")
    return removed


class Lock:
    """An exclusive, crash-safe (flock) lock naming the run that holds it."""

    def __init__(self, path: Path = LOCK_PATH):
        self.path = path
        self.fd: int | None = None

    def __enter__(self) -> "Lock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise TestbedError(f"another bbrlab run holds {self.path} (pid {holder}); wait for it or stop it") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _sysctl_text(value) -> str:
    """A sysctl value as `sysctl -n` prints it, blanks collapsed ("4096 131072 134217728")."""
    return " ".join(str(value).split())


QDISC_COUNTERS = {"bytes", "packets", "drops", "overlimits", "requeues", "backlog", "qlen"}


class Testbed:
    """Context manager: build the network of a Plan, configure it, tear it down whatever happens."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.net = None
        self.nodes: dict = {}
        self.intfs: dict[str, EmulatedIntf] = {}
        self._lock = Lock()
        self.setup_seconds = 0.0
        self.teardown_seconds = 0.0
        # What is in force in the built network, so configure() changes only what differs.
        self._routes: dict[str, tuple] = {}
        self._sysctls: dict[str, dict] = {}
        self._intf_state: dict[str, dict] = {}
        self._inside: dict = {}  # host -> where its programs run instead (a Mahimahi chain's inside)
        self._tap: tuple | None = None  # where the bottleneck's departures are seen, when not its egress

    def __enter__(self) -> "Testbed":
        started = time.monotonic()
        self._lock.__enter__()
        try:
            cleanup_leftovers()
            self._build()
            self.configure(self.plan)
        except BaseException:
            self._teardown()
            raise
        self.setup_seconds = time.monotonic() - started
        return self

    def __exit__(self, *exc) -> None:
        # A second Ctrl-C must not interrupt the teardown that the first one started.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self._teardown()
        finally:
            signal.signal(signal.SIGINT, previous)

    def _build(self) -> None:
        from mininet.log import setLogLevel
        from mininet.net import Mininet
        from mininet.node import Host

        setLogLevel("error")
        # Mininet's one-time init (fixLimits) rewrites the ROOT namespace's tcp_rmem,
        # tcp_wmem and rmem_max down to 16 MiB; bbrlab sets socket buffers per host and
        # must leave the machine's own settings alone.
        Mininet.inited = True
        self.net = Mininet(topo=None, controller=None, build=False, host=Host, link=EmulatedLink,
                           intf=EmulatedIntf, autoSetMacs=False)
        for name, _role in self.plan.hosts:
            self.nodes[name] = self.net.addHost(name, ip=None)
        for link in self.plan.links:
            live = EmulatedLink(self.nodes[link.end1.host], self.nodes[link.end2.host], link.end1, link.end2)
            self.net.links.append(live)
            self.intfs[link.end1.name] = live.intf1
            self.intfs[link.end2.name] = live.intf2
        for node in self.nodes.values():
            run(node, ["ip", "link", "set", "lo", "up"])
            steer_receive(node, os.cpu_count() or 1)

    def configure(self, plan: Plan) -> None:
        """Apply PLAN's settings to the built network (which must have the same shape).

        Only what differs from the settings in force is applied again: reconfiguring a
        reused network between the points of a sweep is part of every point's cost."""
        if plan.shape != self.plan.shape:
            raise TestbedError("configure(): plan has another shape than the built network")
        self.plan = plan
        for intf_plan in plan.intfs():
            if getattr(self.intfs[intf_plan.name], "plan", None) != intf_plan:
                self.intfs[intf_plan.name].apply(intf_plan)
                self._intf_state.pop(intf_plan.name, None)
        for host, argvs in plan.routes.items():
            if self._routes.get(host) != argvs:
                for argv in argvs:
                    run(self.nodes[host], argv)
                self._routes[host] = argvs
        for host, values in plan.sysctls.items():
            in_force = self._sysctls.setdefault(host, {})
            changed = {k: v for k, v in values.items() if in_force.get(k) != _sysctl_text(v)}
            if changed:
                self.set_sysctls(host, changed)
        for name in sorted(plan.traffic_hosts()):
            run(self.nodes[name], ["ip", "tcp_metrics", "flush", "all"], check=False)

    def invalidate(self, host: str) -> None:
        """HOST's queueing is about to change behind configure()'s back (a mid-flow rate
        change): set its interfaces up from scratch at the next configure()."""
        for name, intf in self.intfs.items():
            if intf.node.name == host:
                intf.plan = None
                self._intf_state.pop(name, None)

    def set_sysctls(self, host: str, values: dict) -> None:
        node = self.nodes[host]
        run(node, ["sysctl", "-q", "-w"] + [f"{k}={v}" for k, v in values.items()])
        got = self.read_sysctls(host, list(values))
        for key, want in values.items():
            if got[key] != _sysctl_text(want):
                raise TestbedError(f"[{host}] sysctl {key} is {got[key]!r} after setting {want!r}")
        self._sysctls.setdefault(host, {}).update(got)

    def read_sysctls(self, host: str, keys: list[str]) -> dict:
        out = run(self.nodes[host], ["sysctl", "-n"] + keys).splitlines()
        if len(out) != len(keys):
            raise TestbedError(f"[{host}] sysctl -n returned {len(out)} values for {len(keys)} keys")
        return {k: _sysctl_text(v) for k, v in zip(keys, out)}

    def node(self, name: str):
        """Where NAME's programs run: the host, or the inside of a chain started in it."""
        return self._inside.get(name) or self.nodes[name]

    def enter(self, name: str, inside, tap: tuple | None = None) -> None:
        """From now on NAME's programs run in INSIDE (mahimahi.ChainNode) until leave(NAME);
        TAP: (node, interface, direction) where what leaves the bottleneck is seen meanwhile."""
        self._inside[name] = inside
        if tap is not None:
            self._tap = tap

    def leave(self, name: str) -> None:
        self._inside.pop(name, None)
        self._tap = None

    def tap(self, bottleneck) -> tuple:
        """(node, interface, direction) to capture what leaves BOTTLENECK (plan.bottleneck):
        its own egress, or what a chain entered in its place gave."""
        return self._tap or (self.nodes[bottleneck.host], bottleneck.name, "out")

    def snapshot(self) -> dict:
        """What is really in force, for the run's metadata: qdiscs, offloads, sysctls.

        An interface is read again only after configure() changed it; the sysctls are the
        values read back when they were set (nothing else in the testbed writes them)."""
        import json

        for name, intf in self.intfs.items():
            if name not in self._intf_state:
                qdiscs = json.loads(run(intf.node, ["tc", "-j", "qdisc", "show", "dev", name]) or "[]")
                state = {
                    "host": intf.node.name,
                    "role": intf.plan.role,
                    # the configuration, not the counters (they would go stale in the cache)
                    "qdiscs": [{k: v for k, v in q.items() if k not in QDISC_COUNTERS} for q in qdiscs],
                    "offloads": intf.offloads(),
                }
                if any(argv[1] == "filter" for argv in intf.plan.tc):  # which traffic gets the loss
                    # as text: tc's JSON for u32 repeats the key "match", and a JSON object keeps one
                    state["filters"] = run(intf.node, ["tc", "filter", "show", "dev", name]).splitlines()
                self._intf_state[name] = state
        keys = sorted(next(iter(self.plan.sysctls.values())))
        sysctls = {host: {k: self._sysctls[host][k] for k in sorted(vals)} for host, vals in self.plan.sysctls.items()}
        return {"interfaces": copy.deepcopy(self._intf_state), "sysctls": sysctls, "sysctl_keys": keys,
                "rps_cpus": cpu_mask(os.cpu_count() or 1)}

    def _teardown(self) -> None:
        started = time.monotonic()
        try:
            if self.net is not None:
                # kill anything started inside the hosts (iperf3, ping, samplers), not their shells
                shells = {node.pid for node in self.nodes.values()}
                namespaces = {netns_inode(pid) for pid in shells} - {None}
                for pid in set(in_namespaces(namespaces)) - shells:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                self.net.stop()
        finally:
            self.net = None
            cleanup_leftovers()
            self._lock.__exit__()
            self.teardown_seconds = time.monotonic() - started
