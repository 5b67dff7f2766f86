"""Mahimahi's chain made real for one point (what it is and why: mahimahi_plan.py): started
in the sender host as Mahimahi's own user, its innermost namespace entered by every program
of the senders (ChainNode), its TUN devices given their queues, its counters recorded, and
stopped, with every process it started, whatever happens.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

from .. import log
from ..errors import TestbedError
from .links import run
from .mahimahi_plan import DROPS_FILE, GROUP, HOLDER, SHELLS, TUN_QUEUE, UPLINK_LOG, USER, ChainPlan, trace_lines
from .procs import Process, cmdline, descendants, netns_inode, process_cpu

START_TIMEOUT = 20.0  # seconds for the chain to set up its namespaces (a few under TCG)
CHAIN_FILE = "mahimahi-chain.txt"  # the chain's command, and its TUN queues' counters at the end
EGRESS_PREFIX = "link-"  # mm-link's egress TUN device: "link-<its pid>" (packetshell.cc)


class ChainNode:
    """A sender host as seen from inside the chain: what it starts runs in the innermost
    namespace (the holder's), as root. Quacks like the Mininet host for popen and run()."""

    def __init__(self, host, holder_pid: int):
        self.host, self.pid = host, holder_pid
        self.name = host.name

    def popen(self, argv, **kwargs):
        return self.host.popen(["nsenter", f"--net=/proc/{self.pid}/ns/net", "--", *argv], **kwargs)


class Chain:
    """One point's chain: started before the point's programs, stopped after them (always)."""

    def __init__(self, testbed, plan: ChainPlan | None, raw_dir: Path):
        self.testbed, self.plan, self.raw_dir = testbed, plan, raw_dir
        self.proc: subprocess.Popen | None = None
        self.holder: int | None = None
        self.work = raw_dir / "mahimahi"
        self._out = None

    def start(self) -> None:
        if self.plan is None:
            return
        self.work.mkdir(parents=True, exist_ok=True)
        trace = self.work / "link.trace"
        trace.write_text("".join(f"{t}\n" for t in trace_lines(self.plan.rate_bps)))
        # opened by root before the folder is the chain's user's: nothing of that user's can
        # have put a link in its place
        self._out = open(self.work / "chain.out", "w")
        shutil.chown(self.work, USER, GROUP)  # mm-link writes its log as the chain's user
        argv = ["setpriv", f"--reuid={USER}", f"--regid={GROUP}", "--clear-groups", "--",
                *self.plan.shells(trace, self.work / "uplink.log"), "--", *HOLDER]
        host = self.testbed.nodes[self.plan.host]
        log.command(host.name, argv)
        # (no session of its own: mnexec -d makes one, and would fork away from a second)
        self.proc = host.popen(argv, stdout=self._out, stderr=subprocess.STDOUT)
        self.holder = self._wait_for_holder()
        egress = self._set_queues()
        inner = ChainNode(host, self.holder)
        if self.plan.sysctls:
            run(inner, ["sysctl", "-q", "-w"] + [f"{k}={v}" for k, v in self.plan.sysctls])
        self.testbed.enter(self.plan.host, inner, egress)

    def _wait_for_holder(self) -> int:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            for pid in descendants(self.proc.pid):
                if cmdline(pid) == HOLDER and netns_inode(pid) != netns_inode(self.proc.pid):
                    return pid
            time.sleep(0.05)
        said = (self.work / "chain.out").read_text(errors="replace").strip().splitlines()
        raise TestbedError(f"[{self.plan.host}] Mahimahi's chain did not start in {START_TIMEOUT:g}s"
                           + (f": {said[-1]}" if said else "") + f" ({' '.join(self.plan.shells(Path('T'), Path('L')))})")

    def _namespaces(self) -> list[int]:
        """One process per network namespace of the chain, outermost (the host's) first."""
        seen, pids = set(), []
        for pid in [self.proc.pid, *descendants(self.proc.pid)]:
            ns = netns_inode(pid)
            if ns is not None and ns not in seen:
                seen.add(ns)
                pids.append(pid)
        return pids

    def _in(self, pid: int, argv: list[str]) -> list:
        """ARGV's JSON (ip -j, tc -j) run in PID's network namespace."""
        return json.loads(run(self.testbed.nodes[self.plan.host], ["nsenter", f"--net=/proc/{pid}/ns/net", "--",
                                                                   *argv]) or "[]")

    def _tun_links(self, pid: int) -> list[dict]:
        links = self._in(pid, ["ip", "-s", "-d", "-j", "link", "show"])
        return [lk for lk in links if (lk.get("linkinfo") or {}).get("info_kind") == "tun"]

    def _drops(self, depth: int, pid: int, innermost: int | None) -> list[dict]:
        """Each TUN device of namespace DEPTH (PID's) with what was dropped there: by its
        queue, or by the device (a full ring while a shell was late to read it, a write it
        refused); the INNERMOST namespace's ingress queue is the senders' own (fq under
        pacing: fq)."""
        found = []
        qdiscs = {q.get("dev"): q for q in self._in(pid, ["tc", "-s", "-j", "qdisc", "show"]) if q.get("root")}
        for lk in self._tun_links(pid):
            stats, queue = lk.get("stats64") or {}, qdiscs.get(lk["ifname"]) or {}
            found.append({"namespace": depth, "dev": lk["ifname"], "qdisc": queue.get("kind"),
                          "senders": netns_inode(pid) == innermost and lk["ifname"] == "ingress",
                          "qdisc_drops": queue.get("drops", 0),
                          **{f"{way}_{k}": (stats.get(way) or {}).get(k, 0)
                             for way in ("rx", "tx") for k in ("packets", "dropped")}})
        return found

    def _set_queues(self) -> tuple:
        """Every TUN device of the chain gets pfifo_fast (the kernel's default qdisc here is
        fq, whose 100-packet flow limit would drop inside the emulator), the innermost one the
        sender's qdisc. Returns where what leaves mm-link can be captured: its egress TUN
        device (`link-<pid>`, in the namespace mm-link was started in), which its uplink
        writes each packet to when it sends it; there a departure is seen as the kernel
        receives it ("in")."""
        host = self.testbed.nodes[self.plan.host]
        innermost, egress = netns_inode(self.holder), None
        for pid in self._namespaces():
            inner = netns_inode(pid) == innermost
            for dev in [lk["ifname"] for lk in self._tun_links(pid)]:
                qdisc = self.plan.sender_qdisc if (inner and dev == "ingress") else TUN_QUEUE
                run(host, ["nsenter", f"--net=/proc/{pid}/ns/net", "--", "tc", "qdisc", "replace", "dev", dev,
                           "root", qdisc])
                if dev.startswith(EGRESS_PREFIX) and egress is None:
                    egress = ChainNode(host, pid), dev, "in"
        if egress is None:
            raise TestbedError(f"[{self.plan.host}] Mahimahi's chain: no {EGRESS_PREFIX}* device (mm-link's egress) "
                               f"in any of its namespaces")
        return egress

    def _record(self) -> None:
        """The chain's command and every TUN queue's counters (drops inside the emulator)."""
        host = self.testbed.nodes[self.plan.host]
        lines, drops = [f"# {self.plan.describe()}", f"# holder pid {self.holder}"], []
        innermost = netns_inode(self.holder)
        for depth, pid in enumerate(self._namespaces()):  # one walk: the queues as text, the drops
            out = run(host, ["nsenter", f"--net=/proc/{pid}/ns/net", "--", "tc", "-s", "qdisc", "show"], check=False)
            lines += [f"### namespace {depth} ({' '.join(cmdline(pid)[:2])})", out.rstrip()]
            drops += self._drops(depth, pid, innermost)
        lines.append("### CPU seconds of each process of the chain (user + system, since it started)")
        for pid in [self.proc.pid, *descendants(self.proc.pid)]:
            cpu = process_cpu(pid)
            if cpu is not None:
                lines.append(f"{pid} {sum(cpu):.2f} {' '.join(cmdline(pid)[:3])}")
        (self.raw_dir / CHAIN_FILE).write_text("\n".join(lines) + "\n")
        (self.raw_dir / DROPS_FILE).write_text(json.dumps(drops, indent=1) + "\n")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.testbed.leave(self.plan.host)
        try:
            if self.holder is not None and self.proc.poll() is None:
                self._record()
                os.kill(self.holder, signal.SIGTERM)  # the shells end with their command
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            for pid in reversed(descendants(self.proc.pid)):  # listed while the chain still holds them
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if self.proc.poll() is None:  # never a pid already reaped (it may be another's by now)
                self.proc.kill()
            self.proc.wait()
            if self._out:
                self._out.close()
            self._compress()

    def _compress(self) -> None:
        src = self.work / "uplink.log"
        try:  # written by the chain's user: read as root only if it is the log, never through a link
            fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            fd = None
        except OSError as e:
            raise TestbedError(f"Mahimahi's chain: {src} is not mm-link's log ({e.strerror})") from None
        if fd is not None:
            with open(fd, "rb") as fin:
                if not stat.S_ISREG(os.fstat(fin.fileno()).st_mode):
                    raise TestbedError(f"Mahimahi's chain: {src} is not mm-link's log (not a regular file)")
                with gzip.open(self.raw_dir / UPLINK_LOG, "wb", compresslevel=6) as fout:
                    shutil.copyfileobj(fin, fout)
            src.unlink()
        shutil.chown(self.work, "root", "root")


def leftovers(procs: list[Process]) -> set[int]:
    """Network namespaces of the chain shells a killed run left (cleanup kills what runs there):
    shells whose command ends with the holder, so that no one else's Mahimahi is touched."""
    return {p.netns for p in procs if p.cmdline and Path(p.cmdline[0]).name in SHELLS
            and p.cmdline[-len(HOLDER):] == HOLDER and p.netns is not None}
