"""Flow groups as an experiment file declares them (`flows:`), checked into FlowGroups.

A group is `count` long flows (iperf3: each for a `duration`, `until` a time, or of a
`size`), or a class of many short flows (`workload`, workload.py) sent by one program.
Either may have its own base RTT (`rtt`), random loss on its own data direction (`loss`)
and a name (`class`); a group that names no `cc` takes the experiment's top-level one.
Every error names its key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import ccs, picoquic_builds, units
from . import workload as workloads
from .checks import check_keys as _check_keys
from .checks import count as _count
from ..errors import SpecError

FLOW_KEYS = {"cc", "count", "start", "stagger", "duration", "until", "size", "rtt", "loss", "class", "workload", "ecn",
             "tool", "build"}
# the programs a group of long flows runs: kernel TCP through iperf3, or QUIC through
# picoquic's demo endpoint (its own congestion controls, in user space: traffic/picoquic.py)
TOOLS = ("iperf3", "picoquic")
# what a group of many short flows (`workload`) takes besides it: one sender sends them all
WORKLOAD_FLOW_KEYS = {"cc", "start", "rtt", "loss", "class", "workload", "ecn"}


@dataclass(frozen=True)
class FlowGroup:
    cc: str
    count: int = 1
    start: float = 0.0
    stagger: float = 0.0
    duration: float | None = None
    until: float | None = None
    size: int | None = None
    rtt: float | None = None
    loss: float | None = None  # the group's own random loss on its data direction (else link.loss)
    name: str | None = None  # the class's name in figures and reports (`class`)
    workload: workloads.Workload | None = None  # many short flows (workload.py) instead of COUNT long ones
    ecn: bool = False  # the senders ask for ECN (tcp_ecn=1), so an AQM marks instead of dropping
    tool: str = "iperf3"  # TOOLS: what sends the flows (picoquic: QUIC connections, picoquic's own CCs)
    build: str | None = None  # picoquic's build (schema/picoquic_builds.py; None: today's), for tool: picoquic


def _common(group: dict, key: str, default_cc: Any) -> tuple:
    """What every flow group KEY gives, checked: its CC, tool, class name, loss, RTT, start and ECN."""
    cc = group.get("cc", default_cc)
    if not isinstance(cc, str) or not re.fullmatch(r"[a-z0-9_]+", cc):
        where = f"{key}.cc" if "cc" in group or default_cc is None else "cc"
        raise SpecError(f"{where}: expected a congestion control name like 'bbr', got {cc!r}")
    tool = group.get("tool", "iperf3")
    if tool not in TOOLS:
        raise SpecError(f"{key}.tool: expected one of {', '.join(TOOLS)}, got {tool!r}")
    cc_key = f"{key}.cc" if "cc" in group or default_cc is None else "cc"
    if tool != "picoquic":
        ccs.check(cc, cc_key)
    elif group.get("build") is None:  # (a build's own CCs are checked with it: _build)
        ccs.check_quic(cc, cc_key)
    name = group.get("class")
    if name is not None and (not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name)):
        raise SpecError(f"{key}.class: expected a name of letters, digits, '-', '_' or '.', got {name!r}")
    loss = units.fraction(group["loss"], f"{key}.loss") if group.get("loss") is not None else None
    rtt = units.duration(group["rtt"], f"{key}.rtt", allow_zero=False) if group.get("rtt") else None
    start = units.duration(group.get("start", "0s"), f"{key}.start")
    ecn = group.get("ecn", False)
    if not isinstance(ecn, bool):
        raise SpecError(f"{key}.ecn: expected true or false, got {ecn!r}")
    if tool == "picoquic" and ecn:
        raise SpecError(f"{key}.ecn: not with tool: picoquic (ecn sets the hosts' tcp_ecn, which QUIC "
                        "does not read; picoquic negotiates ECN itself)")
    return cc, tool, name, loss, rtt, start, ecn


def _group(group: Any, key: str, default_cc: Any) -> FlowGroup:
    """The flow group KEY: long flows (a duration, an end time or a size each) or a workload."""
    group = _check_keys(group, FLOW_KEYS, key)
    cc, tool, name, loss, rtt, start, ecn = _common(group, key, default_cc)
    if "workload" in group:
        for other in sorted(set(group) - WORKLOAD_FLOW_KEYS):
            raise SpecError(f"{key}.{other}: not with a workload (its flows' number, sizes and times "
                            f"are the workload's: {key}.workload)")
        return FlowGroup(cc=cc, start=start, rtt=rtt, loss=loss, name=name, ecn=ecn,
                         workload=workloads.parse(group["workload"], f"{key}.workload"))
    ends = [k for k in ("duration", "until", "size") if group.get(k) is not None]
    if len(ends) != 1:
        raise SpecError(f"{key}: give exactly one of duration, until, size (got {', '.join(ends) or 'none'}), "
                        "or a workload of short flows")
    if tool == "picoquic" and ends != ["size"]:
        raise SpecError(f"{key}.{ends[0]}: a picoquic connection downloads a size (quicperf has no "
                        "duration): give size")
    flow = FlowGroup(
        cc=cc,
        count=_count(group.get("count", 1), f"{key}.count"),
        start=start,
        stagger=units.duration(group.get("stagger", "0s"), f"{key}.stagger"),
        duration=(units.duration(group["duration"], f"{key}.duration", allow_zero=False)
                  if group.get("duration") is not None else None),
        until=units.duration(group["until"], f"{key}.until") if group.get("until") is not None else None,
        size=units.size(group["size"], f"{key}.size") if group.get("size") is not None else None,
        rtt=rtt, loss=loss, name=name, ecn=ecn, tool=tool, build=_build(group, key, tool, default_cc),
    )
    last_start = flow.start + (flow.count - 1) * flow.stagger
    if flow.until is not None and flow.until <= last_start:
        raise SpecError(f"{key}.until: {flow.until:g}s is not after the last flow's start {last_start:g}s")
    _whole_seconds(flow, key)
    return flow


def _build(group: dict, key: str, tool: str, default_cc: Any) -> str | None:
    """The group's picoquic build, checked (a build is picoquic's alone)."""
    if group.get("build") is None:
        return None
    if tool != "picoquic":
        raise SpecError(f"{key}.build: a picoquic build, for tool: picoquic only (this group's tool is {tool})")
    build = picoquic_builds.check(group["build"], f"{key}.build")
    picoquic_builds.check_cc(group.get("cc", default_cc), build, f"{key}.cc" if "cc" in group else "cc")
    return build


def parse(raw: Any, default_cc: Any = None) -> tuple[FlowGroup, ...]:
    if not isinstance(raw, list) or not raw:
        raise SpecError("flows: expected a non-empty list of flow groups")
    own = [f"flows.{i} ({group['cc']})" for i, group in enumerate(raw) if isinstance(group, dict) and "cc" in group]
    if default_cc is not None and len(own) == len(raw):
        # its points would run the groups' own CCs under the top-level cc's labels
        raise SpecError(f"cc: no flow group takes the top-level cc: {' and '.join(own)} "
                        f"{'names its' if len(own) == 1 else 'name their'} own; give cc in one place")
    _one_cc_one_tool(raw, default_cc)
    groups = [_group(group, f"flows.{i}", default_cc) for i, group in enumerate(raw)]
    total = long_flows(groups)
    if total > MAX_FLOWS:
        raise SpecError(f"flows: {total} long flows in one point: at most {MAX_FLOWS} (each has its own sender "
                        "address and socket; a 2-core machine carries far fewer faithfully)")
    return tuple(groups)


def _one_cc_one_tool(raw: list, default_cc) -> None:
    """A top-level cc taken by groups of different tools names two algorithms at once
    (picoquic's bbr is its BBRv3, Linux's is v1) under one label: refused."""
    if default_cc is None:
        return
    taking = [(i, g.get("tool", "iperf3")) for i, g in enumerate(raw) if isinstance(g, dict) and "cc" not in g]
    if len({tool for _, tool in taking}) > 1:
        groups = " and ".join(f"flows.{i} ({tool})" for i, tool in taking)
        raise SpecError(f"cc: the top-level cc is taken by {groups}: each tool has its own {default_cc} "
                        "(picoquic's bbr is BBRv3, Linux's is v1), so the points' cc label would name two; "
                        "give each group its own cc")


# Long flows in one point, all groups together: each gets addresses and a socket of its own
MAX_FLOWS = 256
IPERF3_MAX_SECONDS = 86400  # iperf3 refuses a longer -t (its MAX_TIME)


def long_flows(groups) -> int:
    """How many long flows GROUPS start at once (a workload's short flows are not counted)."""
    return sum(g.count for g in groups if g.workload is None)


def _whole_seconds(flow: FlowGroup, key: str) -> None:
    """iperf3 runs a flow for whole seconds (-t takes an integer and drops a fraction), a day at
    most: a duration, or an until, that leaves a flow a fraction of a second or more than a
    day is refused."""
    if flow.tool != "iperf3" or (flow.duration is None and flow.until is None):
        return
    which = "duration" if flow.duration is not None else "until"
    for i in range(flow.count):
        seconds = flow.duration if flow.duration is not None else flow.until - flow.start - i * flow.stagger
        if seconds > IPERF3_MAX_SECONDS:
            raise SpecError(f"{key}.{which}: flow {i + 1} would run {seconds:g} s, but iperf3 runs at most "
                            f"{IPERF3_MAX_SECONDS} s (a day)")
        if abs(seconds - round(seconds)) > 1e-9:
            low, high = max(1, int(seconds)), int(seconds) + 1
            raise SpecError(f"{key}.{which}: flow {i + 1} would run {seconds:g} s, but iperf3 runs whole seconds "
                            f"(its -t drops a fraction): make it {low}s or {high}s")
