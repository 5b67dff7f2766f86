"""The link schedule's executor: a trace's rates applied at the bottleneck on time.

ONE long-lived `tc -batch -` process inside the router's namespace reads one `qdisc
change ...` line per update from its stdin (starting a process per update would cost
0.1-0.3 s each under software virtualization: far more than a 10 ms interval). Updates
are due at drift-free deadlines on the monotonic clock, start + k x interval (counted
from the pass's own times, wrapping around at the end of the trace), never after a
sleep of one interval, which would add each wake-up's lateness to all later updates.
When the feeder wakes so late that several updates are due, it applies only the newest
(the rate the link should have now) and counts the others as skipped.

Every update is recorded (its index, when it was due, when it was written, how many it
replaced, the rate it applied) in raw/link-schedule.txt, which analysis reads for the schedule's lateness.
The feeder is stopped for sure at the end of a point; a tc that refused a line fails it.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

from ..errors import TestbedError
from .topo import RateSchedule

LOG_NAME = "link-schedule.txt"
ERR_NAME = "link-schedule.err"
STOP_WAIT = 5.0


def due(times: tuple[float, ...], period: float, start: float, k: int) -> float:
    """When update K (counted from the first, over every pass) is due."""
    passes, i = divmod(k, len(times))
    return start + passes * period + times[i]


class Feeder:
    """The scheduling loop, apart from processes and threads (tested with a fake clock).

    WRITE(line) hands a line to tc; WAIT(seconds) sleeps and returns True when asked to
    stop; CLOCK is monotonic. RECORDS gets (k, due, written, skipped), times since START.
    """

    def __init__(self, times: tuple[float, ...], period: float, lines: tuple[str, ...],
                 write: Callable[[str], None], wait: Callable[[float], bool],
                 clock: Callable[[], float] = time.monotonic):
        if not times or len(times) != len(lines) or times[0] != 0.0 or period <= times[-1]:
            raise ValueError("a schedule needs one line per time, times from 0 and within its period")
        self.times, self.period, self.lines = times, period, lines
        self.write, self.wait, self.clock = write, wait, clock
        self.records: list[tuple[int, float, float, int]] = []

    def run(self, start: float) -> None:
        k = 0
        while True:
            deadline = due(self.times, self.period, start, k)
            now = self.clock()
            if now < deadline:
                if self.wait(deadline - now):
                    return
                now = self.clock()
            skipped = 0
            while due(self.times, self.period, start, k + 1) <= now:  # woke late: only the newest
                k += 1
                skipped += 1
            deadline = due(self.times, self.period, start, k)
            self.write(self.lines[k % len(self.lines)])
            self.records.append((k, deadline - start, self.clock() - start, skipped))
            k += 1

    def log_text(self, rates: tuple[float, ...] | None = None) -> str:
        """The record as text; with RATES (one per time), each update's rate in bit/s too."""
        head = "# k due_s written_s skipped [rate_bps] (seconds since the schedule's start)\n"
        return head + "".join(f"{k} {d:.6f} {w:.6f} {s}" + (f" {rates[k % len(rates)]:.0f}" if rates else "") + "\n"
                              for k, d, w, s in self.records)


class LinkSchedule:
    """Runs a Plan's RateSchedule during one point: start(t0) ... stop(), then check()."""

    def __init__(self, testbed, plan_schedule: RateSchedule | None, raw_dir: Path):
        self.testbed, self.plan, self.raw_dir = testbed, plan_schedule, raw_dir
        self.proc: subprocess.Popen | None = None
        self.thread: threading.Thread | None = None
        self.feeder: Feeder | None = None
        self._stop = threading.Event()
        self._err = None
        self.broken = False
        self.error: BaseException | None = None  # what ended the feeder early, if anything

    def _write(self, line: str) -> None:
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.broken = True  # tc exited: check() says why
            self._stop.set()

    def start(self, t0: float) -> None:
        """Start feeding at T0 (monotonic), the first flow's scheduled start."""
        if self.plan is None:
            return
        sched = self.plan.schedule
        # the next point must set this host's queueing up again (its rate was moved)
        self.testbed.invalidate(self.plan.host)
        self._err = open(self.raw_dir / ERR_NAME, "w")
        self.proc = self.testbed.node(self.plan.host).popen(["tc", "-batch", "-"], stdin=subprocess.PIPE,
                                                            stdout=subprocess.DEVNULL, stderr=self._err, text=True)
        self.feeder = Feeder(sched.times, sched.period, self.plan.lines, self._write, self._stop.wait)
        self.thread = threading.Thread(target=self._feed, args=(t0,), daemon=True, name="link-schedule")
        self.thread.start()

    def _feed(self, t0: float) -> None:
        try:
            self.feeder.run(t0)
        except BaseException as exc:  # noqa: B902 - reported by check(), not lost in a thread
            self.error = exc

    def stop(self) -> None:
        """Stop feeding and end the tc process (always; never raises)."""
        if self.plan is None or self.proc is None:
            return
        self._stop.set()
        self.thread.join(timeout=STOP_WAIT)
        if self.thread.is_alive():  # blocked writing to a tc that stopped reading: unblock it
            self.proc.kill()
            self.thread.join(timeout=STOP_WAIT)
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            self.proc.wait(timeout=STOP_WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._err.close()
        (self.raw_dir / LOG_NAME).write_text(self.feeder.log_text(self.plan.schedule.rates))

    def check(self) -> None:
        """Raise if tc refused an update (the link did not follow the trace)."""
        if self.error is not None:
            raise TestbedError(f"[{self.plan.host}] the link schedule stopped: {self.error}")
        if self.proc is None or (self.proc.returncode == 0 and not self.broken):
            return
        said = (self.raw_dir / ERR_NAME).read_text().strip().splitlines()
        raise TestbedError(f"[{self.plan.host}] the link schedule's tc -batch stopped "
                           f"(exit {self.proc.returncode}): {said[0] if said else 'no message'}")
