"""Traffic: iperf3 receivers and senders, started on schedule inside the testbed's hosts.

Every flow gets its own one-off iperf3 server (one test per server is iperf3's model).
Servers are listening before any sender starts (checked with ss, not assumed), and
senders start at their scheduled offsets from one common time zero.
"""

from __future__ import annotations

import itertools
import math
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .. import log
from ..errors import TestbedError
from ..emulation.links import run
from ..emulation.topo import Event, FlowPlan, data_port

LISTEN_TIMEOUT = 10.0
STOP_WAIT = 3.0  # seconds iperf3 gets after SIGINT to write its JSON before it is killed
GRACE = 15.0  # seconds past a flow's planned end before it counts as hung...
DRAIN_FACTOR = 10  # ...plus this many times the time a full bottleneck buffer takes to drain
RTO_MIN = 0.2  # seconds: Linux's least retransmission timeout (TCP_RTO_MIN)
RTO_MAX = 120.0  # seconds: its greatest (TCP_RTO_MAX)
HANG_ODDS = 1e-3  # ...plus the backoff after as many losses in a row as come this rarely
SYN_RTO = 1.0  # seconds: a SYN's first retransmission timeout (TCP_TIMEOUT_INIT)
KERNEL_SYN_RETRIES = 6  # net.ipv4.tcp_syn_retries where a spec leaves the kernel's default


def stop_processes(procs: list, first: int) -> None:
    """Signal FIRST to those of PROCS still running, then SIGKILL any left STOP_WAIT
    seconds later: a program asked to stop gets the time to write what it measured."""
    alive = [p for p in procs if p.poll() is None]
    for proc in alive:
        proc.send_signal(first)
    deadline = time.monotonic() + STOP_WAIT
    for proc in alive:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def grace_seconds(full_buffer_seconds: float, loss: float = 0.0, rtt: float = 0.0,
                  syn_retries: int = KERNEL_SYN_RETRIES) -> float:
    """How long after its planned end a flow may still be finishing.

    iperf3 ends a test with an exchange on its control connection, which waits behind the
    bottleneck queue and the other flows' unsent data: at 128 kbit/s a full 43-packet
    buffer alone holds 4 s of queueing. Under random loss a data segment may be lost several
    times in a row, TCP's timeout doubles after each loss, and iperf3's client, blocked in
    its write, ends the test only when it returns (measured at 50% loss: a client stalled at
    28.2 s of a 30 s test and had not ended 19 s after the planned end). A data connection's
    SYNs cross the same loss, so its test may also start late (connect_seconds).
    """
    return GRACE + DRAIN_FACTOR * full_buffer_seconds + backoff_seconds(loss, rtt) + connect_seconds(loss, syn_retries)


def connect_seconds(loss: float, syn_retries: int) -> float:
    """How long a connection waits for its SYN when it is lost as many times in a row as
    happens with odds HANG_ODDS at this loss rate, at most SYN_RETRIES times (the hosts'
    net.ipv4.tcp_syn_retries)."""
    return _timeouts(SYN_RTO, min(_rare_losses(loss), syn_retries))


def backoff_seconds(loss: float, rtt: float) -> float:
    """The retransmission timeouts one segment waits through when it is lost as many times
    in a row as happens with odds HANG_ODDS at this loss rate (0 without loss)."""
    return _timeouts(RTO_MIN + rtt, _rare_losses(loss))


def _rare_losses(loss: float) -> int:
    """How many losses in a row come with odds HANG_ODDS at this loss rate (0 without loss)."""
    return math.ceil(math.log(HANG_ODDS) / math.log(min(loss, 0.99))) if loss > 0 else 0


def _timeouts(rto: float, losses: int) -> float:
    """The time LOSSES retransmission timeouts take from RTO on, doubling up to RTO_MAX."""
    return sum(min(rto * 2 ** i, RTO_MAX) for i in range(losses))


def server_argv(flow: FlowPlan) -> list[str]:
    return ["iperf3", "-s", "-1", "-J", "-p", str(flow.port)]


_serials = itertools.count()


def client_argv(flow: FlowPlan, interval: float, connect_timeout: float = 5.0) -> list[str]:
    argv = ["iperf3", "-c", flow.dst, "-p", str(flow.port), "-C", flow.cc, "-J",
            "-i", f"{interval:g}", "--connect-timeout", str(int(connect_timeout * 1000)),
            "--cport", str(data_port(next(_serials)))]
    if flow.duration is not None:
        argv += ["-t", f"{flow.duration:g}"]
    else:
        argv += ["-n", str(flow.size)]
    return argv


class Command(NamedTuple):
    """A program a flow tool starts: on which host, its argv, where its output goes, and
    in which folder it runs (None: bbrlab's own)."""

    host: str
    argv: list[str]
    out: Path
    cwd: Path | None = None


@dataclass
class FlowRun:
    flow: FlowPlan
    server: subprocess.Popen | None = None
    server_command: Command | None = None  # what started the server: its host, output file, folder
    client: subprocess.Popen | None = None
    launched_at: float | None = None  # epoch seconds when the client was started
    exited_at: float | None = None
    files: list = field(default_factory=list)


def wait_listening(node, port: int, deadline: float, proto: str = "t", program: str = "iperf3") -> None:
    """Wait until NODE has a socket listening on PORT (PROTO: ss's t for TCP, u for UDP)."""
    while time.monotonic() < deadline:
        out = run(node, ["ss", "-H", "-l", f"-{proto}", "-n", "sport", "=", f":{port}"], check=False)
        if out.strip():
            return
        time.sleep(0.05)
    raise TestbedError(f"[{node.name}] {program} server on port {port} is not listening after {LISTEN_TIMEOUT:g}s")


def server_said(proc: subprocess.Popen, out: Path, files: list) -> str:
    """What a server that never listened said: whether it exited (and how), and the last
    line of its own output (kept in OUT, in the point's raw folder), for the point's error."""
    for f in files:
        f.flush()
    status = proc.poll()
    try:
        lines = [line.strip() for line in out.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        lines = []
    said = f"; it exited with status {status}" if status is not None else "; it is still running"
    return said + (f", its last words: {lines[-1]!r}" if lines else ", having written nothing")


class Iperf3:
    """The default flow tool: a one-off iperf3 server (-1) on the receiver, the client on
    the sender, each writing its JSON report (-J) into the run's raw folder."""

    name = "iperf3"

    def server(self, flow: FlowPlan, raw_dir: Path) -> Command:
        return Command(flow.receiver, server_argv(flow), raw_dir / f"iperf3-{flow.id}-server.json")

    def client(self, flow: FlowPlan, raw_dir: Path, interval: float, connect_timeout: float) -> Command:
        return Command(flow.sender, client_argv(flow, interval, connect_timeout),
                       raw_dir / f"iperf3-{flow.id}-client.json")

    def listening(self, node, flow: FlowPlan, deadline: float) -> None:
        wait_listening(node, flow.port, deadline)

    def finish(self, testbed, fr: FlowRun) -> None:
        """After the flows: a one-off server ends with its test."""
        try:
            fr.server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            fr.server.kill()


IPERF3 = Iperf3()


class Traffic:
    """Start servers, then clients on schedule; wait; stop whatever hangs."""

    def __init__(self, testbed, flows: tuple[FlowPlan, ...], events: tuple[Event, ...], raw_dir: Path,
                 interval: float, grace: float = GRACE, tools: dict | None = None):
        self.testbed = testbed
        self.tools = tools or {IPERF3.name: IPERF3}  # flow.tool -> its servers and clients (traffic/tools.py)
        self.runs = [FlowRun(f) for f in flows]
        self.events = sorted(events, key=lambda e: e.at)
        self.raw_dir = raw_dir
        self.interval = interval
        self.grace = grace
        self.event_log: list[dict] = []

    def start_servers(self) -> None:
        for fr in self.runs:
            fr.server_command = self.tools[fr.flow.tool].server(fr.flow, self.raw_dir)
            fr.server = self._start(fr.server_command, fr)
        deadline = time.monotonic() + LISTEN_TIMEOUT
        for fr in self.runs:
            command = fr.server_command
            try:
                self.tools[fr.flow.tool].listening(self.testbed.node(command.host), fr.flow, deadline)
            except TestbedError as exc:
                raise TestbedError(f"{exc}{server_said(fr.server, command.out, fr.files)}") from None

    def run(self, t0: float) -> None:
        """Launch clients at t0 + start (t0 on the monotonic clock); fire events; wait for the end."""
        pending = sorted(self.runs, key=lambda fr: fr.flow.start)
        events = list(self.events)
        planned_end = max((fr.flow.start + (fr.flow.duration or 0.0) for fr in self.runs), default=0.0)
        hard_deadline = t0 + planned_end + self.grace + (600.0 if any(fr.flow.size for fr in self.runs) else 0.0)
        while pending or events or any(fr.client and fr.client.poll() is None for fr in self.runs):
            now = time.monotonic()
            if now > hard_deadline:
                hung = [fr.flow.id for fr in self.runs if fr.client and fr.client.poll() is None]
                raise TestbedError(f"flows {', '.join(hung)} did not finish {self.grace:.0f}s after their planned end")
            while pending and now >= t0 + pending[0].flow.start:
                self._launch(pending.pop(0))
            while events and now >= t0 + events[0].at:
                self._fire(events.pop(0), t0)
            for fr in self.runs:
                if fr.client and fr.exited_at is None and fr.client.poll() is not None:
                    fr.exited_at = time.time()
            nexts = [t0 + pending[0].flow.start] if pending else []
            nexts += [t0 + events[0].at] if events else []
            time.sleep(max(0.0, min([now + 0.05] + nexts) - time.monotonic()))
        for fr in self.runs:
            if fr.server is not None:
                self.tools[fr.flow.tool].finish(self.testbed, fr)

    def _launch(self, fr: FlowRun) -> None:
        # A SYN behind a full slow bottleneck waits as long as a flow's end may: same bound.
        command = self.tools[fr.flow.tool].client(fr.flow, self.raw_dir, self.interval, self.grace)
        fr.launched_at = time.time()
        fr.client = self._start(command, fr)

    def _start(self, command: Command, fr: FlowRun) -> subprocess.Popen:
        out = open(command.out, "w")
        fr.files.append(out)
        log.command(command.host, command.argv)
        return self.testbed.node(command.host).popen(command.argv, stdout=out, stderr=subprocess.STDOUT,
                                                     **({"cwd": str(command.cwd)} if command.cwd else {}))

    def _fire(self, event: Event, t0: float) -> None:
        # "issued" when the command starts, "at" when it has taken effect: starting a process
        # in a namespace costs 0.1-0.3 s under software virtualization (measured).
        issued = time.monotonic() - t0
        self.testbed.invalidate(event.host)  # the next point must set this host's links up again
        run(self.testbed.node(event.host), event.argv)
        self.event_log.append({"issued": round(issued, 4), "at": round(time.monotonic() - t0, 4),
                               "planned": event.at, "what": event.what, "epoch": time.time()})

    def stop(self) -> None:
        """Stop what still runs: SIGINT first, so iperf3 writes what it measured and why it
        stopped (a hung flow's evidence, kept with the failed point), then SIGKILL whatever
        is left STOP_WAIT seconds later."""
        stop_processes([p for fr in self.runs for p in (fr.client, fr.server) if p is not None], signal.SIGINT)
        for fr in self.runs:
            for f in fr.files:
                f.close()
