"""Samplers that watch a running point: ping RTT (and irtt's one-way delays when asked),
ss -tin per sender, BBR's own state over netlink (bbr_diag.py) per host sending a BBR
flow, the bottleneck's backlog from tc, CPU utilization, and tcpdump when packets are
asked for.

Each sampler writes its tool's raw output to a file (parsed later by tool_output.py; BBR's by
bbr_state.py), so a run keeps the evidence and metrics can be recomputed. The shell loop
below is a fixed string; the values it needs (address, interval) are passed as arguments.

Sampling must not load the emulator: under software virtualization starting one process
costs ~0.1 s of CPU, so a 10 Hz loop of `date; tc; sleep` alone took most of two CPUs
(measured). Hence: ONE long-lived `tc -batch` process answers every queue sample, the ss
loop uses bash's own clock and sleep (one process per sample), and ss has its own,
slower interval; BBR's state comes from ONE long-lived process per sender host, on ss's
interval.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .. import log
from . import irtt_probe
from .inhost import bbr_diag
from .iperf import LISTEN_TIMEOUT, wait_listening
from ..emulation.topo import Plan

# `read -t` on a pipe nobody writes to is a sleep without a process.
SS_LOOP = ('exec 3<> <(:); while :; do echo "### $EPOCHREALTIME"; '
           'ss -H -t -i -n state established dst "$1"; read -t "$2" -u 3 || :; done')
BBR_DIAG = Path(bbr_diag.__file__).resolve()  # run by path inside the hosts, as shortflows.py is


def bbr_diag_commands(plan: Plan, raw_dir: Path, interval: float) -> list[tuple[str, list[str], str]]:
    """(host, argv, log file name) of ONE BBR state sampler per host that sends a BBR flow,
    watching that host's BBR flows only: points without BBR pay no CPU for it."""
    commands = []
    kernel_bbr = [f for f in plan.tcp_flows() if f.cc.startswith("bbr")]  # a QUIC sender logs its own
    for host in sorted({f.sender for f in kernel_bbr}):
        peers = sorted(f"{f.dst}:{f.port}" for f in kernel_bbr if f.sender == host)
        argv = [sys.executable, str(BBR_DIAG), *(a for p in peers for a in ("--peer", p)),
                "--interval", f"{interval:g}", "--out", str(raw_dir / bbr_diag.raw_name(host))]
        commands.append((host, argv, f"bbr-{host}.log"))
    return commands


class QueueSampler(threading.Thread):
    """`tc -s -j qdisc show` of one device every INTERVAL, through one `tc -batch` process.

    tc answers each command line with one JSON line when it reads it; the thread notes the
    time of each request, and stop() writes `### <epoch>` + JSON blocks (what system_output.py reads).
    """

    def __init__(self, node, dev: str, path: Path, interval: float):
        super().__init__(daemon=True)
        self.node, self.dev, self.path, self.interval = node, dev, path, interval
        self.times: list[float] = []
        self._stop_event = threading.Event()
        self._raw = path.with_suffix(".jsonl")
        self._out = open(self._raw, "w")
        self.proc = node.popen(["tc", "-s", "-j", "-force", "-batch", "-"], stdin=subprocess.PIPE,
                               stdout=self._out, stderr=subprocess.DEVNULL, text=True)

    def run(self) -> None:
        command = f"qdisc show dev {self.dev}\n"
        while not self._stop_event.is_set():
            self.times.append(time.time())
            try:
                self.proc.stdin.write(command)
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError):
                self.times.pop()
                return
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self._out.close()
        answers = [line for line in self._raw.read_text().splitlines() if line.startswith("[")]
        # One answer per request; a failed request (device gone) leaves none, so keep only
        # what can be paired for sure.
        pairs = zip(self.times, answers) if len(answers) == len(self.times) else []
        with open(self.path, "w") as out:
            for t, answer in pairs:
                out.write(f"### {t:.6f}\n{answer}\n\n")
        self._raw.unlink()


class CpuSampler(threading.Thread):
    """/proc/stat's cpu lines, all CPUs and each one (namespaces share the CPUs; packets
    through veths are forwarded in softirq, often on one CPU, which can saturate alone)."""

    def __init__(self, path: Path, interval: float = 0.5):
        super().__init__(daemon=True)
        self.path = path
        self.interval = interval
        self._stop_event = threading.Event()

    def run(self) -> None:
        with open(self.path, "w") as out:
            while not self._stop_event.is_set():
                with open("/proc/stat") as stat:
                    cpus = "".join(line for line in stat if line.startswith("cpu"))
                out.write(f"### {time.time():.6f}\n{cpus}")
                out.flush()
                self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        if self.ident is not None:  # never started when the point failed before its samplers
            self.join(timeout=5)


class Samplers:
    """Start every sampler of a point; stop them all (always) at the end."""

    def __init__(self, testbed, plan: Plan, raw_dir: Path, interval: float, ss_interval: float, pcap: bool,
                 link_pcap: bool = False, owd: bool = False):
        self.testbed = testbed
        self.plan = plan
        self.raw_dir = raw_dir
        self.interval = interval
        self.ss_interval = ss_interval
        self.pcap = pcap
        self.link_pcap = link_pcap
        self.owd = owd  # irtt beside ping (sampling.irtt)
        self.queue: QueueSampler | None = None
        self.procs: list[subprocess.Popen] = []
        self.graceful: list[subprocess.Popen] = []  # stopped with SIGINT first: they write on it
        self.files = []
        self.cpu = CpuSampler(raw_dir / "cpu.txt")

    def _spawn(self, host: str, argv: list[str], name: str) -> None:
        out = open(self.raw_dir / name, "w")
        self.files.append(out)
        log.command(host, argv)
        self.procs.append(self.testbed.node(host).popen(argv, stdout=out, stderr=subprocess.STDOUT))

    def start(self) -> None:
        interval = f"{self.interval:g}"
        for group, sender, dst in self.plan.groups:
            # One ping per flow group (same path) from its first sender: the RTT a packet
            # sees through the shared bottleneck queue.
            self._spawn(sender, ["ping", "-D", "-n", "-i", interval, dst], f"ping-g{group + 1}.txt")
        if self.owd:
            receivers = {f.dst: f.receiver for f in self.plan.flows} | {w.dst: w.receiver for w in self.plan.workloads}
            for group, sender, dst in self.plan.groups:
                self._spawn(receivers[dst], irtt_probe.server_argv(dst), f"irtt-server-g{group + 1}.log")
            deadline = time.monotonic() + LISTEN_TIMEOUT
            for group, sender, dst in self.plan.groups:  # a client refused by a closed port gives up
                wait_listening(self.testbed.node(receivers[dst]), irtt_probe.PORT, deadline, proto="u", program="irtt")
            for group, sender, dst in self.plan.groups:
                out = str(self.raw_dir / irtt_probe.file_name(group))
                self._spawn(sender, irtt_probe.client_argv(dst, self.interval, out), f"irtt-client-g{group + 1}.log")
                self.graceful.append(self.procs[-1])
        # kernel TCP only (a QUIC sender logs its own state); short flows: too many and too short for ss
        for flow in self.plan.tcp_flows():
            self._spawn(flow.sender, ["bash", "-c", SS_LOOP, "bash", flow.dst, f"{self.ss_interval:g}"],
                        f"ss-{flow.id}.txt")
        for host, argv, out_name in bbr_diag_commands(self.plan, self.raw_dir, self.ss_interval):
            self._spawn(host, argv, out_name)  # stopped with the others: SIGTERM ends it after a sample
        bn = self.plan.bottleneck
        if self.plan.mahimahi is None:  # else mm-link's own log records its queue (emulation/mahimahi.py)
            self.queue = QueueSampler(self.testbed.node(bn.host), bn.name, self.raw_dir / "tc-bottleneck.txt",
                                      self.interval)
            self.queue.start()
        if self.pcap:
            for rcv in sorted(h for h in self.plan.traffic_hosts() if h.startswith("rcv")):
                self._spawn(rcv, ["tcpdump", "-n", "-i", f"{rcv}-eth0", "-s", "128", "-w",
                                  str(self.raw_dir / f"{rcv}.pcap"), "tcp"], f"tcpdump-{rcv}.log")
        if self.link_pcap:
            # on the bottleneck's own egress, a frame is stamped as the shaper hands it to
            # the device: when the link sent it, before any receive-path delay (headers only)
            self._spawn(bn.host, ["tcpdump", "-n", "-i", bn.name, "-Q", "out", "-s", "64", "-B", "16384", "-w",
                                  str(self.raw_dir / "bottleneck.pcap")], "tcpdump-bottleneck.log")
        self.cpu.start()

    def stop(self) -> None:
        self.cpu.stop()
        if self.queue is not None:
            self.queue.stop()
        for proc in self.graceful:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in self.graceful:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass  # killed below with the others
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
