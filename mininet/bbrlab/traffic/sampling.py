"""Samplers that watch a running point: ping RTT (and irtt's one-way delays when asked),
each sender's TCP sockets over netlink (tcp_diag.py: tcp_info and BBR's own state) per host
sending a kernel TCP flow, the bottleneck's backlog from tc, CPU utilization, and tcpdump
when packets are asked for.

Each sampler writes its tool's raw output to a file (parsed later: tool_output.py,
tcp_diag_output.py, bbr_state.py), so a run keeps the evidence and metrics can be recomputed.

Sampling must not load the emulator: under software virtualization starting one process
costs ~0.1 s of CPU, so a 10 Hz loop of `date; tc; sleep` alone took most of two CPUs
(measured). Hence no process per sample: ONE long-lived `tc -batch` process answers every
queue sample, and ONE thread of this process reads every sender host's tcp_info through a
netlink socket opened in each host (SocketSampler) on its own, slower interval
(`ss_interval`), where an ss per flow and sample took 0.4 of a guest CPU for four flows.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

from .. import log
from ..emulation.procs import in_netns, process_cpu
from . import irtt_probe
from . import tcp_diag
from .iperf import LISTEN_TIMEOUT, wait_listening
from ..emulation.topo import Plan

CPU_FILE = "samplers-cpu.json"  # each sampler's CPU seconds over the point (by its file's name)


def socket_targets(plan: Plan) -> dict[str, list[str]]:
    """Each host that sends a kernel TCP flow, and its flows' peers (address:port): a QUIC
    sender logs its own state; short flows are too many and too short to sample."""
    flows = plan.tcp_flows()
    return {host: sorted(f"{f.dst}:{f.port}" for f in flows if f.sender == host) for host in sorted({f.sender for f in flows})}


class SocketSampler(threading.Thread):
    """tcp_info of the flows of every sender host (tcp_diag.py) every INTERVAL, from one thread
    of this process through one netlink socket per host, opened inside the host's network
    namespace: no process per host or sample. Each host's records go to raw/tcp-<host>.jsonl
    as they are taken, so a crash keeps every finished sample."""

    def __init__(self, hosts: dict[str, tuple[int, list[str]]], raw_dir: Path, interval: float):
        super().__init__(daemon=True)
        self.interval = interval
        self.cpu_seconds = 0.0  # the thread's own CPU time, when it ends
        self._stop_event = threading.Event()
        self._targets = []
        try:
            for host, (pid, peers) in hosts.items():
                with in_netns(pid):
                    sock = tcp_diag.open_socket()
                self._targets.append((sock, set(peers), open(raw_dir / tcp_diag.raw_name(host), "w")))
        except BaseException:
            self.close()
            raise

    def run(self) -> None:
        due, seq = time.monotonic(), 0
        try:
            while not self._stop_event.is_set():
                seq += 1
                for sock, peers, out in self._targets:
                    out.write(tcp_diag.as_lines(tcp_diag.sample(sock, peers, seq)))
                    out.flush()
                due += self.interval
                self._stop_event.wait(max(0.0, due - time.monotonic()))
        except OSError as exc:  # a host gone under it (a crash): what was taken stays
            log.warning(f"socket sampler stopped: {exc}")
        finally:
            self.cpu_seconds = time.thread_time()

    def stop(self) -> None:
        self._stop_event.set()
        if self.ident is not None:
            self.join(timeout=5)
        self.close()

    def close(self) -> None:
        for sock, _, out in self._targets:
            sock.close()
            out.close()
        self._targets = []


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
        self.sockets: SocketSampler | None = None
        self.procs: list[subprocess.Popen] = []
        self.names: list[str] = []  # each process's log file name, as self.procs
        self.graceful: list[subprocess.Popen] = []  # stopped with SIGINT first: they write on it
        self.files = []
        self.cpu = CpuSampler(raw_dir / "cpu.txt")

    def _spawn(self, node, argv: list[str], name: str) -> None:
        """ARGV started on NODE (a host, or where a chain put it: Testbed.node, Testbed.tap),
        its output in the run's file NAME."""
        out = open(self.raw_dir / name, "w")
        self.files.append(out)
        log.command(node.name, argv)
        self.procs.append(node.popen(argv, stdout=out, stderr=subprocess.STDOUT))
        self.names.append(name)

    def _record_cpu(self) -> None:
        """What each sampler process cost the guest, read just before it is stopped: the
        sampling's own share of a point's CPU (benchmarks/sampling_cost.py reads it)."""
        named = list(zip(self.names, self.procs))
        if self.queue is not None:
            named.append(("tc-bottleneck.txt", self.queue.proc))
        spent = {name: process_cpu(proc.pid, children=True) for name, proc in named if proc.poll() is None}
        seconds = {name: round(sum(cpu), 3) for name, cpu in spent.items() if cpu}
        if self.sockets is not None:
            seconds["tcp-sockets (thread)"] = round(self.sockets.cpu_seconds, 3)
        (self.raw_dir / CPU_FILE).write_text(json.dumps(seconds, indent=1, sort_keys=True) + "\n")

    def start(self) -> None:
        interval = f"{self.interval:g}"
        for group, sender, dst in self.plan.groups:
            # One ping per flow group (same path) from its first sender: the RTT a packet
            # sees through the shared bottleneck queue.
            self._spawn(self.testbed.node(sender), ["ping", "-D", "-n", "-i", interval, dst], f"ping-g{group + 1}.txt")
        if self.owd:
            receivers = {f.dst: f.receiver for f in self.plan.flows} | {w.dst: w.receiver for w in self.plan.workloads}
            for group, sender, dst in self.plan.groups:
                self._spawn(self.testbed.node(receivers[dst]), irtt_probe.server_argv(dst), f"irtt-server-g{group + 1}.log")
            deadline = time.monotonic() + LISTEN_TIMEOUT
            for group, sender, dst in self.plan.groups:  # a client refused by a closed port gives up
                wait_listening(self.testbed.node(receivers[dst]), irtt_probe.PORT, deadline, proto="u", program="irtt")
            for group, sender, dst in self.plan.groups:
                out = str(self.raw_dir / irtt_probe.file_name(group))
                self._spawn(self.testbed.node(sender), irtt_probe.client_argv(dst, self.interval, out),
                            f"irtt-client-g{group + 1}.log")
                self.graceful.append(self.procs[-1])
        targets = socket_targets(self.plan)
        if targets:
            self.sockets = SocketSampler({host: (self.testbed.node(host).pid, peers) for host, peers in targets.items()},
                                         self.raw_dir, self.ss_interval)
            self.sockets.start()
        bn = self.plan.bottleneck
        if self.plan.mahimahi is None:  # else mm-link's own log records its queue (emulation/mahimahi.py)
            self.queue = QueueSampler(self.testbed.node(bn.host), bn.name, self.raw_dir / "tc-bottleneck.txt",
                                      self.interval)
            self.queue.start()
        if self.pcap:
            for rcv in sorted(h for h in self.plan.traffic_hosts() if h.startswith("rcv")):
                self._spawn(self.testbed.node(rcv), ["tcpdump", "-n", "-i", f"{rcv}-eth0", "-s", "128", "-w",
                                                     str(self.raw_dir / f"{rcv}.pcap"), "tcp"], f"tcpdump-{rcv}.log")
        if self.link_pcap:
            # on the bottleneck's own egress, a frame is stamped as the shaper hands it to
            # the device: when the link sent it, before any receive-path delay (headers only);
            # on mm-link's egress TUN, as mm-link writes the packet out
            node, dev, direction = self.testbed.tap(bn)
            self._spawn(node, ["tcpdump", "-n", "-i", dev, "-Q", direction, "-s", "64", "-B", "16384", "-w",
                               str(self.raw_dir / "bottleneck.pcap")], "tcpdump-bottleneck.log")
        self.cpu.start()

    def stop(self) -> None:
        self.cpu.stop()
        if self.sockets is not None:
            self.sockets.stop()
        self._record_cpu()
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
