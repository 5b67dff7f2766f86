"""Checks of an experiment as a whole, which no one key's parser can make: a sampling
interval that would load what it measures, a sweep that lists a value twice, a startup
that outlasts the flows, a rate change after they end, a quick profile that only
`--quick` would have read, claims that select no point. Each is an error naming the key.
A short-flow workload beyond what its generator sustains is a warning: the run may still
be wanted, knowing that.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import log
from . import ccs, claim_points, units
from .claim_format import same_value
from ..errors import SpecError

# The shortest sampling intervals: a sampler must not load the path or the CPU it measures.
SAMPLING_FLOORS = (
    ("interval", 0.010, "the shortest this testbed samples at (a ping on every path and a read of the "
     "bottleneck's queue per sample: faster floods the link being measured)"),
    ("ss_interval", 0.100, "the shortest this testbed samples at (one ss process per flow and sample, "
     "about 0.1 s of CPU each in the VM: faster takes the emulator's CPU from the flows)"),
)
# Short flows per second the generator sustains in the 2-vCPU testbed VM (docs/field.md,
# "What the programs sustain": 400 sustained, behind at 800).
GENERATOR_CEILING = 400.0


def check_sampling(sampling, raw: dict) -> None:
    """A SpecError for a sampling interval under its floor (SAMPLING_FLOORS), named as written in RAW."""
    for key, shortest, why in SAMPLING_FLOORS:
        if getattr(sampling, key) < shortest - 1e-12:
            raise SpecError(f"sampling.{key}: {raw[key]} is shorter than {units.fmt_time(shortest)}, {why}")


def check_sweeps(axes: dict[str, list]) -> None:
    """A SpecError for a value listed twice in one sweep: its points would be planned twice
    (with one id: the second could never be stored)."""
    for path, values in axes.items():
        seen: dict[Any, Any] = {}
        for value in values:
            key = same_value(path, value)
            if key in seen:
                spelled = f" (as {seen[key]})" if str(seen[key]) != str(value) else ""
                raise SpecError(f"{path}: {value} is in the sweep twice{spelled}: every point would run twice; "
                                "list each value once")
            seen[key] = value


def _where(point) -> str:
    return f" at {', '.join(f'{k}={v}' for k, v in point.params.items())}" if point.params else ""


def check_points(points, startup_given: bool = True) -> None:
    """A SpecError for a sampling.startup that leaves no steady state, or a rate change that
    comes when the flows have ended (points whose flows' end is known: no size, no
    downloads one after another). Only a startup the file writes is held to the flows: under
    the default (2 s) a shorter flow is read whole by the analysis, as a quick test wants."""
    for point in points:
        if point.link.shaper == "mahimahi":
            _check_mahimahi(point)
        if any(g.size is not None or (g.workload is not None and g.workload.duration is None) for g in point.flows):
            continue
        end = point.duration
        if startup_given and point.sampling.startup >= end:
            raise SpecError(f"sampling.startup: {units.fmt_time(point.sampling.startup)} is not shorter than the "
                            f"flows ({end:g} s{_where(point)}): the steady-state metrics would have nothing left")
        for change in point.link.changes:
            if change.at >= end:
                raise SpecError(f"link.changes: the change to {units.fmt_rate(change.rate)} at "
                                f"{units.fmt_time(change.at)} comes when the flows have ended ({end:g} s"
                                f"{_where(point)}): nothing would be sent at that rate")


def _check_mahimahi(point) -> None:
    """Mahimahi's chain is ONE path (one delay, one loss, one link) around the senders it
    runs: a point that needs another path, or senders the chain cannot hold, is refused."""
    for i, group in enumerate(point.flows):
        if group.workload is not None:
            raise SpecError(f"flows.{i}.workload: not with link.shaper: mahimahi (its short-flow sender is not "
                            f"run inside Mahimahi's chain){_where(point)}")
        if group.tool != "iperf3":
            raise SpecError(f"flows.{i}.tool: {group.tool} is not run inside Mahimahi's chain (its server "
                            f"would sit behind the chain's NAT); link.shaper: mahimahi carries iperf3 flows{_where(point)}")
        for key in ("rtt", "loss"):
            if getattr(group, key) is not None:
                raise SpecError(f"flows.{i}.{key}: with link.shaper: mahimahi every flow crosses the one "
                                f"chain: give link.{key} instead{_where(point)}")


def workload_warning(points) -> str | None:
    """A line on the busiest point when its short flows arrive faster than the generator sustains."""
    worst, where, groups = 0.0, None, []
    for point in points:
        poisson = [(i, g) for i, g in enumerate(point.flows) if g.workload and g.workload.arrivals == "poisson"]
        rate = sum(g.workload.arrival_rate(point.link.rate) for _, g in poisson)
        if rate > worst:
            worst, where, groups = rate, point, [f"flows.{i}.workload" for i, _ in poisson]
    if worst <= GENERATOR_CEILING:
        return None
    return (f"warning: {' and '.join(groups)}: {worst:.0f} short flows/s{_where(where)}, above the "
            f"{GENERATOR_CEILING:.0f}/s the short-flow generator sustains in the testbed VM (docs/field.md): "
            "the point may measure the generator's lateness, not the congestion control")


def pacing_warning(points) -> str | None:
    """A line when a CC that paces only through fq (Linux 4.10's BBR) never runs with it:
    legitimate (ReBBR's 4.11 ran so, with no fq), but its flows are then not paced at all. A
    grid that has it both ways (pacing: [fq, internal]) compares the two on purpose."""
    paced = ccs.kernel_ccs(p for p in points if p.pacing == "fq")
    unpaced = sorted((ccs.kernel_ccs(p for p in points if p.pacing != "fq") - paced) & set(ccs.FQ_ONLY))
    if not unpaced:
        return None
    return (f"warning: pacing: internal: {', '.join(unpaced)} never asks TCP to pace and paces only through the "
            "fq qdisc on its sender, as Linux 4.10 did: its flows run unpaced (as ReBBR's 4.11 without fq did); "
            "pacing: fq paces them")


def check_tool_override(raw: dict, path: str, value: Any, key: str) -> None:
    """`--set flows.N.tool=...` on a file with claims: its claims speak of the file's tool's
    implementation (picoquic's BBRv3 is not Linux's bbr), so judging them on another would
    be a silently different experiment: refused."""
    parts = path.split(".")
    if len(parts) != 3 or parts[0] != "flows" or parts[2] != "tool" or not raw.get("claims"):
        return
    groups = raw.get("flows")
    group = groups[int(parts[1])] if isinstance(groups, list) and parts[1].isdigit() and int(parts[1]) < len(groups) else {}
    was = group.get("tool", "iperf3") if isinstance(group, dict) else "iperf3"
    if value != was:
        raise SpecError(f"--set {key}={value}: {raw.get('name', 'the file')}'s claims are about {was}'s flows "
                        f"(each tool has its own congestion controls under one name): copy the file and write "
                        "claims for the other tool")


def ecn_warning(points) -> str | None:
    """A line when flows ask for ECN where nothing marks (a FIFO or an AQM told ecn: false,
    both named in the file, as aqm.check_ecn requires): legitimate, to see that negotiating
    ECN costs nothing, but the queue then drops as it would without it."""
    unmarked = sorted({p.link.aqm.kind for p in points if any(g.ecn for g in p.flows) and not p.link.aqm.marks})
    if not unmarked:
        return None
    return (f"warning: ecn: the flows ask for ECN, but {' and '.join(unmarked)} "
            f"{'drops' if len(unmarked) == 1 else 'drop'} instead of marking: ECN is negotiated, never used")


def check_file(raw: dict, exp, rebuild: Callable[..., Any], narrowed: bool, quick: bool) -> None:
    """The checks of an experiment FILE (not of a run's archived spec.yaml): its quick
    profile (read now, not only when --quick is given), its claims against the file's own
    grid (NARROWED: EXP was built with --set or --quick, which may leave a claim's points
    out), and the workload, pacing and ECN warnings on stderr (the pacing one only where --set
    or --quick made 4.10's BBR unpaced). REBUILD(quick=...) builds the file alone."""
    if not quick and raw.get("quick") is not None:
        try:
            rebuild(quick=True)
        except SpecError as exc:
            text = str(exc)
            raise SpecError(text if text.startswith("quick") else f"quick: {text}") from None
    whole = rebuild(quick=False) if narrowed else exp
    claim_points.check(whole.claims, whole.points)
    # unpaced 4.10 BBR in the file itself is its author's choice (ReBBR's setting), said in its notes
    unpaced = pacing_warning(exp.points) if pacing_warning(whole.points) is None else None
    for warning in (workload_warning(exp.points), unpaced, ecn_warning(exp.points)):
        if warning:
            log.warning(f"bbrlab: {exp.name}: {warning}")
