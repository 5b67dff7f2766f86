"""Short flows in the testbed: one sink per receiving host, one sending program per class.

The programs are inhost/shortflows.py, run by path with this interpreter inside the hosts (as
iperf3 is): a sink listens on workload.SINK_PORT of each receiver of a short-flow class;
each class's sender gets its schedule (workload.schedule_doc, written into raw/ first, so
the run keeps what it was asked to do) and time zero on the wall clock, and is started
before it, so its own start-up (a fraction of a second under software virtualization)
delays no flow. Data crosses the bottleneck from sender to receiver, as iperf3's does:
fq paces it on the sender's egress, the bottleneck queues it, and the receiver's delay
line adds the class's delay and loss.
"""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from .. import log
from .inhost import shortflows
from ..schema import workload
from ..errors import TestbedError
from ..emulation.topo import DATA_PORTS, Plan
from .iperf import LISTEN_TIMEOUT, stop_processes, wait_listening

PROGRAM = Path(shortflows.__file__).resolve()
# More lead before time zero with short flows: a Python program takes 0.3-1 s to start in a
# guest under software virtualization, and the first flows arrive within a second.
SENDER_LEAD = 1.0
EXIT_SLACK = 30.0  # seconds past its deadline before a sending program counts as hung
_port_serials = itertools.count(0, 97)  # where each point's client ports start in the block


def program_argv(role: str, *args: str) -> list[str]:
    return [sys.executable, str(PROGRAM), role, *args]


def port_block() -> tuple[int, int]:
    """(first port, count) of topo.DATA_PORTS: the client ports random loss applies to."""
    value, mask = DATA_PORTS
    return value, (~mask & 0xFFFF) + 1


class ShortFlows:
    """Start the sinks, write the schedules, launch the senders for time zero, wait, stop."""

    def __init__(self, testbed, plan: Plan, raw_dir: Path, grace: float):
        self.testbed = testbed
        self.plan = plan
        self.raw_dir = raw_dir
        self.grace = grace
        self.sinks: list[subprocess.Popen] = []
        self.senders: list[tuple[subprocess.Popen, float]] = []  # (process, deadline in s after zero)
        self.files: list = []

    def _popen(self, host: str, argv: list[str], out_name: str, err_name: str | None = None) -> subprocess.Popen:
        out = open(self.raw_dir / out_name, "w")
        err = open(self.raw_dir / err_name, "w") if err_name else None
        self.files += [f for f in (out, err) if f]
        log.command(host, argv)
        return self.testbed.node(host).popen(argv, stdout=out, stderr=err or subprocess.STDOUT)

    def start_sinks(self) -> None:
        receivers = sorted({w.receiver for w in self.plan.workloads})
        for rcv in receivers:
            self.sinks.append(self._popen(rcv, program_argv("sink", "--port", str(workload.SINK_PORT)),
                                          f"shortflows-sink-{rcv}.jsonl", f"shortflows-sink-{rcv}.log"))
        deadline = time.monotonic() + LISTEN_TIMEOUT
        for rcv in receivers:
            wait_listening(self.testbed.node(rcv), workload.SINK_PORT, deadline)

    def write_schedules(self) -> list[Path]:
        paths = []
        rate = self.plan.summary.get("rate_bps") or 0.0
        for w in self.plan.workloads:
            doc = workload.schedule_doc(w.workload, w.group, w.cls, w.cc, w.dst, rate, w.rtt, w.start,
                                        self.grace, port_block(), next(_port_serials))
            path = self.raw_dir / f"shortflows-schedule-g{w.group + 1}.json"
            path.write_text(json.dumps(doc, indent=1) + "\n")
            paths.append(path)
        return paths

    def launch(self, zero_epoch: float) -> None:
        """Start every class's sending program; its flows are timed from ZERO_EPOCH."""
        for w, path in zip(self.plan.workloads, self.write_schedules()):
            deadline = json.loads(path.read_text())["deadline"]
            out = self.raw_dir / f"shortflows-g{w.group + 1}.jsonl"
            argv = program_argv("send", "--schedule", str(path), "--out", str(out), "--zero", f"{zero_epoch:.6f}")
            self.senders.append((self._popen(w.sender, argv, f"shortflows-g{w.group + 1}.log"), deadline))

    def wait(self, t0: float) -> None:
        """Until every sending program has exited (T0: time zero, monotonic clock)."""
        for proc, deadline in self.senders:
            try:
                proc.wait(timeout=max(0.0, t0 + deadline + EXIT_SLACK - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise TestbedError(f"a short-flow sender did not end {EXIT_SLACK:g}s after its deadline "
                                   f"({deadline:g}s)") from None
            if proc.returncode:
                raise TestbedError(f"a short-flow sender failed with exit status {proc.returncode} "
                                   "(its log: raw/shortflows-g*.log)")

    def stop(self) -> None:
        """SIGTERM: the sinks write their summaries, a sender what it has; then SIGKILL."""
        stop_processes(self.sinks + [s for s, _ in self.senders], signal.SIGTERM)
        for f in self.files:
            f.close()
