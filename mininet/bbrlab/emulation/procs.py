"""What /proc says of a process: its parent's children, its command line, its network
namespace, its CPU time; and one pass over every process for a cleanup. Read by the testbed's
cleanup (net.py), Mahimahi's chain (mahimahi.py), picoquic's servers (traffic/picoquic.py) and
the samplers (traffic/sampling.py), which also open sockets in a host's namespace (in_netns)."""

from __future__ import annotations

import contextlib
import ctypes
import os
from pathlib import Path
from typing import Iterator, NamedTuple

CLK_TCK = os.sysconf("SC_CLK_TCK")
CLONE_NEWNET = 0x40000000  # sched.h


def _setns(fd: int) -> None:
    if hasattr(os, "setns"):  # Python 3.12
        os.setns(fd, CLONE_NEWNET)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"setns: {os.strerror(errno)}")


@contextlib.contextmanager
def in_netns(pid: int) -> Iterator[None]:
    """The calling thread inside PID's network namespace for the block, back in its own after
    it: a socket made in the block stays in PID's namespace for its life."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        try:
            _setns(target)
        finally:
            os.close(target)
        try:
            yield
        finally:
            _setns(own)
    finally:
        os.close(own)


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def descendants(pid: int) -> list[int]:
    """PID's processes below it, parents before children."""
    kids, out, todo = _children(), [], [pid]
    while todo:
        for child in kids.get(todo.pop(0), []):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> tuple[str, ...]:
    try:
        return tuple(a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1])
    except OSError:
        return ()


def netns_inode(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def process_cpu(pid: int, children: bool = False) -> tuple[float, float] | None:
    """(user, system) CPU seconds of a live process, from /proc; None once it is gone. With
    CHILDREN, those of the children it has waited for added (a shell loop's commands)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    user, system = int(fields[11]), int(fields[12])
    if children:
        user, system = user + int(fields[13]), system + int(fields[14])
    return user / CLK_TCK, system / CLK_TCK


class Process(NamedTuple):
    pid: int
    cmdline: tuple[str, ...]  # () for a kernel thread or a process gone while read
    netns: int | None


def processes() -> list[Process]:
    """Every process now, read once: a cleanup decides on this list, not on a second walk."""
    return [Process(int(e.name), cmdline(int(e.name)), netns_inode(int(e.name)))
            for e in Path("/proc").iterdir() if e.name.isdigit()]


def in_namespaces(namespaces: set[int], procs: list[Process] | None = None) -> list[int]:
    """Pids of the processes in any of NAMESPACES (network namespace inodes)."""
    return [p.pid for p in (processes() if procs is None else procs) if p.netns in namespaces]
