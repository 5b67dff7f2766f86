"""The picoquic builds the testbed makes (ansible/roles/picoquic/files/build-picoquic.sh pins
them), by name: the first 12 hex digits of their commit, and for a what-if build a suffix.
That name is what a flow group's `build` takes.

Today's is the default. The two of October 2024 are those of Christian Huitema's post
"Random loopback delays cause BBR slowdowns": its BBR as first measured (the last commit
before PR #1761) and its fix (PR #1761 merged: BBR's delay-based exits from STARTUP and
PROBE_BW_UP are off when the path's min RTT is below 128 us). Each prints its version when
it starts, which the analysis reads back to prove which one ran.

The what-if is the fix with its threshold raised from 128 us to 25 ms. This testbed's floor of
min RTT as picoquic sees it is 3-6 ms (its ACK delay and a TCG guest's scheduling), so the
fix's delay tests stay on here as published (its other part, a round with a high RTT no longer
lowering BBR's bounds, holds at any RTT); at 25 ms they are off, as on the post's loopback,
whose min RTT (20 us) was as far below 128 us. Its version carries the suffix, so a run proves which
of the two ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import SpecError, did_you_mean
from .ccs import QUIC_CCS


@dataclass(frozen=True)
class Build:
    name: str  # the commit's first 12 hex digits, and a what-if's suffix
    version: str  # PICOQUIC_VERSION at that commit: what picoquicdemo prints when it starts
    date: str  # the commit's day
    what: str  # why the testbed has it
    # quicperf's scenario syntax: "stream" (=ID:*REPEAT:POST:SIZE, picoquic of 2025 on) or
    # "legacy" (*REPEAT:STREAM:PREVIOUS:POST:SIZE, all picoquic of 2024 knows)
    scenario: str
    ccs: tuple[str, ...]  # the congestion controls its -G takes (picoquic's names, quicctx.c)
    # whether its qlog says when the CC changes state ("congestion_state_updated"): the 2024
    # builds' qlog writer reads the state from the binary log but never writes it
    logs_states: bool = False


# picoquic of 2024 names NewReno "reno" and has no c4
CCS_2024 = ("bbr", "bbr1", "cubic", "dcubic", "fast", "prague", "reno")
BUILDS = {b.name: b for b in (
    Build("d199d45be869", "1.1.52.0", "2026-08-16", "today's picoquic", "stream", QUIC_CCS, logs_states=True),
    Build("401781f40e04", "1.1.25.1", "2024-09-27", "the post's BBR, before its fix (PR #1761)", "legacy", CCS_2024),
    Build("6fc1ff2dedd9", "1.1.25.2", "2024-10-12", "the post's fix (PR #1761: no delay tests below 128 us of min RTT)",
          "legacy", CCS_2024),
    Build("6fc1ff2dedd9-minrtt25ms", "1.1.25.2-minrtt25ms", "2024-10-12",
          "what if: the post's fix with its threshold at 25 ms, above this testbed's floor of min RTT", "legacy",
          CCS_2024),
)}
DEFAULT = "d199d45be869"
PREFIX = "/usr/local"  # where ansible/roles/picoquic installs them
# in a connection's log folder, beside its qlog (traffic/picoquic.py writes, analysis reads):
PERF_LOG = "perf.csv"  # the server's performance log (-F)
CC_LOG = "cc.csv"  # the CC's state over time, read from the binary log of a build whose qlog lacks it
LOG_READ_FAILED = "picolog_t failed:"  # the server's output line when that read failed


def get(name: str | None) -> Build:
    """Build NAME, or today's when None."""
    return BUILDS[name or DEFAULT]


def program(name: str | None) -> str:
    """The picoquicdemo of build NAME (None: today's, on PATH), as build-picoquic.sh installs it."""
    if name is None or name == DEFAULT:
        return "picoquicdemo"
    return f"{PREFIX}/lib/picoquic/{name}/picoquicdemo"


def log_reader(name: str | None) -> str:
    """The picolog_t of build NAME (None: today's): its binary logs' reader."""
    return program(name).removesuffix("picoquicdemo") + "picolog_t"


def check(name: Any, key: str) -> str:
    """NAME when the testbed builds it, else a SpecError naming KEY and the builds it has."""
    if not isinstance(name, str) or name not in BUILDS:
        raise SpecError(f"{key}: {name!r} is not a picoquic build the testbed makes{did_you_mean(name, BUILDS)} "
                        "(builds: "
                        + "; ".join(f"{b.name}, {b.date}, {b.what}" for b in BUILDS.values()) + ")")
    return name


def check_cc(cc: str, name: str | None, key: str) -> None:
    """A SpecError naming KEY when build NAME (None: today's) has no congestion control CC."""
    build = get(name)
    if cc not in build.ccs:
        raise SpecError(f"{key}: picoquic build {build.name} ({build.date}) has no congestion control {cc!r}"
                        f"{did_you_mean(cc, build.ccs)} (it has: {', '.join(build.ccs)})")


def label(name: str) -> str:
    """How figures and reports name a build: its version and day."""
    build = BUILDS[name]
    return f"picoquic {build.version} of {build.date}"


def what_if(name: str | None) -> bool:
    """Whether build NAME is a what-if (a published commit with a constant changed)."""
    return name is not None and "-" in name
