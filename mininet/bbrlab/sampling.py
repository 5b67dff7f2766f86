"""Samplers that watch a running point: ping RTT, ss -tin per sender, the bottleneck's
backlog from tc, CPU utilization, and tcpdump when packets are asked for.

Each sampler writes its tool's raw output to a file (parsed later by parsers.py), so a
run keeps the evidence and metrics can be recomputed. The shell loops below are fixed
strings; the values they need (address, device, interval) are passed as arguments.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

from .topo import Plan

SS_LOOP = 'while :; do echo "### $(date +%s.%N)"; ss -H -t -i -n state established dst "$1"; sleep "$2"; done'
TC_LOOP = 'while :; do echo "### $(date +%s.%N)"; tc -s -j qdisc show dev "$1"; echo; sleep "$2"; done'


class CpuSampler(threading.Thread):
    """Busy fraction of all CPUs (root /proc/stat: namespaces share the CPUs)."""

    def __init__(self, path: Path, interval: float = 0.5):
        super().__init__(daemon=True)
        self.path = path
        self.interval = interval
        self._stop_event = threading.Event()

    def run(self) -> None:
        with open(self.path, "w") as out:
            while not self._stop_event.is_set():
                with open("/proc/stat") as stat:
                    first = stat.readline()
                out.write(f"### {time.time():.6f}\n{first}")
                out.flush()
                self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)


class Samplers:
    """Start every sampler of a point; stop them all (always) at the end."""

    def __init__(self, testbed, plan: Plan, raw_dir: Path, interval: float, pcap: bool):
        self.testbed = testbed
        self.plan = plan
        self.raw_dir = raw_dir
        self.interval = interval
        self.pcap = pcap
        self.procs: list[subprocess.Popen] = []
        self.files = []
        self.cpu = CpuSampler(raw_dir / "cpu.txt")

    def _spawn(self, host: str, argv: list[str], name: str) -> None:
        out = open(self.raw_dir / name, "w")
        self.files.append(out)
        self.procs.append(self.testbed.node(host).popen(argv, stdout=out, stderr=subprocess.STDOUT))

    def start(self) -> None:
        interval = f"{self.interval:g}"
        seen_groups = set()
        for flow in self.plan.flows:
            # One ping per flow group (same path) from its first sender: the RTT a packet
            # sees through the shared bottleneck queue.
            if flow.group not in seen_groups:
                seen_groups.add(flow.group)
                self._spawn(flow.sender, ["ping", "-D", "-n", "-i", interval, flow.dst], f"ping-g{flow.group + 1}.txt")
            self._spawn(flow.sender, ["sh", "-c", SS_LOOP, "sh", flow.dst, interval], f"ss-{flow.id}.txt")
        bn = self.plan.bottleneck
        self._spawn(bn.host, ["sh", "-c", TC_LOOP, "sh", bn.name, interval], "tc-bottleneck.txt")
        if self.pcap:
            for rcv in sorted({f.receiver for f in self.plan.flows}):
                self._spawn(rcv, ["tcpdump", "-n", "-i", f"{rcv}-eth0", "-s", "128", "-w",
                                  str(self.raw_dir / f"{rcv}.pcap"), "tcp"], f"tcpdump-{rcv}.log")
        self.cpu.start()

    def stop(self) -> None:
        self.cpu.stop()
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for f in self.files:
            f.close()
