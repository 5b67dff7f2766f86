"""Experiment specs: read YAML, apply overrides, expand sweeps, validate into typed points.

An experiment file is declarative. A list where the schema expects one value (a rate, a
loss, a congestion control, ...) is a sweep axis; the grid is the cartesian product of
all axes. Every grid point is validated before anything runs, and every error names the
key that is wrong.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from . import aqm_format as aqms
from . import explicit, reference_format, strict, traces, units, yaml_loader
from .paths import SWEEPABLE, TOP_KEYS, get_path, leaf_paths, parse_override, resolve_key, set_path  # noqa: F401
from .flows import FLOW_KEYS, WORKLOAD_FLOW_KEYS, FlowGroup  # noqa: F401 - the spec's vocabulary
from .flows import parse as _flows
from .checks import check_keys as _check_keys
from .checks import choice as _choice
from .checks import count as _count
from ..errors import SpecError
from .claim_format import CLAIM_FACTS, CLAIM_KEYS, NUMERIC_PARAMS, Claim  # noqa: F401
from .claim_format import parse as _claims
from .link import TRACE_SHAPER, default_shaper  # noqa: F401 - TRACE_SHAPER: the spec's vocabulary
from .link import (BUFFER_UNITS, DEFAULT_SHAPER, FRAME_BYTES, LINK_KEYS, LOSS_DIRECTIONS, MTU_BYTES,  # noqa: F401
                   PAYLOAD_BYTES, SHAPERS, SLOT_DIRECTIONS, SLOT_KEYS, Buffer, Link, RateChange, Slot)
from .link import parse as _link

PACING_MODES = ("fq", "internal")

PLOT_KINDS = ("rtt_timeseries", "throughput_timeseries", "loss_goodput", "sweep_normalized", "rate_step",
              "link_fidelity", "buffer_rtt", "buffer_retransmits", "coexist_share", "class_share",
              "trace_replay", "aggregation_goodput", "jitter_goodput", "aqm_latency", "headend", "fct_cdf", "bbr_state",
              "quic_rates", "quic_timeline")

# Set inside EVERY host namespace (per network namespace since Linux 4.15; txrehash since
# 5.19): socket buffers large enough for 100 Mbit/s x 500 ms, no cached metrics, and no new
# hash for a socket after a retransmission timeout. A new hash moves the flow to another
# receiving CPU (links.steer_receive steers by it); measured in the VM, BBR at 15% random
# loss (100 Mbit/s, 100 ms, 20 s) collapsed to 2.5-11 Mbit/s in 3 of 6 runs with the
# kernel's default txrehash=1 and held 36-44 Mbit/s in 6 of 6 with 0.
# SYNs cross the lossy data direction too: with the kernel's 6 retries a connection fails
# when 7 SYNs in a row are lost, odds of 1 in 128 at 50% loss (measured: 1 point of the
# 130 of bw-sweep, 100 kbit/s at 50%). 9 retries put those odds at 1 in 1024 (traffic.HANG_ODDS);
# with loss_direction both a SYN-ACK can be lost too, and the grace counts that odds instead.
DEFAULT_SYSCTLS = {
    "net.ipv4.tcp_rmem": "4096 131072 134217728",
    "net.ipv4.tcp_wmem": "4096 16384 134217728",
    "net.ipv4.tcp_no_metrics_save": "1",
    "net.core.txrehash": "0",
    "net.ipv4.tcp_syn_retries": "9",
}

SAMPLING_KEYS = {"interval", "ss_interval", "iperf_interval", "pcap", "link_pcap", "irtt", "startup"}
# What decides what a run measures. The other keys (title, description, plot, claims,
# reference, notes, the quick profile once applied) judge or describe it: editing them
# neither starts a new run nor leaves a finished one judged by yesterday's claims.
MEASURED_KEYS = ("link", "pacing", "cc", "flows", "sysctls", "sampling", "repeat", "seed", "points")
PLOT_KEYS = {"kind", "title"}
TRACE_IN_TITLE = "{trace}"  # in a title: the trace that ran (its file's name)
# `repeat: auto`: at least this many repetitions of every grid point, and as many more (up
# to the second number) as a claim whose interval straddles its bound needs (runner.py).
AUTO_REPEAT = (3, 8)


@dataclass(frozen=True)
class Sampling:
    interval: float = 0.1  # ping and the bottleneck's queue (no process spawned per sample)
    ss_interval: float = 0.5  # tcp_info of each sender's flows (traffic/tcp_diag.py)
    iperf_interval: float = 0.5
    pcap: bool = False
    link_pcap: bool = False  # frame headers as they leave the bottleneck: its rate over 100 ms windows
    irtt: bool = False  # a second sparse probe beside ping: irtt's one-way delays, each direction
    startup: float = 2.0


@dataclass(frozen=True)
class Point:
    """One fully resolved run of an experiment (one grid point, one repetition)."""

    experiment: str
    params: dict  # axis label -> value as written, e.g. {"cc": "bbr"}
    repetition: int
    link: Link
    pacing: str
    flows: tuple[FlowGroup, ...]
    sysctls: dict
    sampling: Sampling

    @property
    def id(self) -> str:
        parts = [f"{k}={v}" for k, v in self.params.items()]
        parts.append(f"rep{self.repetition}")
        return re.sub(r"[^A-Za-z0-9=.,%_-]", "_", ",".join(parts))

    @property
    def duration(self) -> float:
        """Seconds from the first start to the last configured end; size flows: about the
        time their bytes take together at the link's rate (they share it)."""
        ends = [0.0]
        sized = [g for g in self.flows if g.workload is None and g.size is not None]
        if sized:
            ends.append(min(g.start for g in sized) + sum(g.size * g.count for g in sized) * 8 / self.link.rate)
        for group in self.flows:
            if group.workload is not None:
                wl = group.workload
                if wl.duration is not None:
                    ends.append(group.start + wl.duration)
                else:  # one download after another: about each one's ideal time and the gap
                    each = wl.gap + wl.sizes.mean * 8 / self.link.rate + 3 * (group.rtt or self.link.rtt)
                    ends.append(group.start + wl.count * each)
                continue
            for i in range(group.count):
                start = group.start + i * group.stagger
                if group.until is not None:
                    ends.append(group.until)
                elif group.duration is not None:
                    ends.append(start + group.duration)
        return max(ends)


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    description: str
    identity: str  # hash of what the points measure (see MEASURED_KEYS)
    raw: dict
    axes: dict  # label -> list of values
    points: tuple[Point, ...]
    plot_kind: str
    plot_title: str | None
    claims: tuple[Claim, ...]
    reference: dict = field(default_factory=dict)
    repeat: int = 1  # repetitions planned for every grid point (points holds them)
    seed: int = 1
    notes: tuple[str, ...] = ()  # where this testbed's kernel or emulator differs from the paper
    repeat_max: int = 1  # repetitions a grid point may reach (repeat: auto); repeat when fixed

    @cached_property
    def source(self) -> str:
        """The YAML text after overrides, archived with the results. Notes are commentary,
        not parameters: editing them must not stop a run resuming. (Written when asked: a
        listing builds each file several times and archives none.)"""
        return yaml.safe_dump({k: v for k, v in self.raw.items() if k != "notes"}, sort_keys=False)

    @property
    def adaptive(self) -> bool:
        """More repetitions may be added where a claim's interval straddles its bound."""
        return self.repeat_max > self.repeat

    @property
    def every_point(self) -> tuple[Point, ...]:
        """The planned points and every repetition `repeat: auto` may add, up to repeat_max."""
        return self.points + tuple(replace(p, repetition=rep) for p in self.points
                                   if p.repetition == self.repeat
                                   for rep in range(self.repeat + 1, self.repeat_max + 1))


def _repeat(value: Any) -> tuple[int, int]:
    """`repeat`: a whole number (that many runs of every grid point), `auto`, or
    {min: N, max: M}: N runs, and up to M where a claim cannot be decided. (planned, most)"""
    if value == "auto":
        return AUTO_REPEAT
    if isinstance(value, dict):
        _check_keys(value, {"min", "max"}, "repeat")
        for key in ("min", "max"):
            if key not in value:
                raise SpecError(f"repeat.{key}: required (or give repeat: auto, {AUTO_REPEAT[0]} to {AUTO_REPEAT[1]})")
        low = _count(value["min"], "repeat.min", minimum=2)  # an interval needs two runs
        return low, _count(value["max"], "repeat.max", minimum=low)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(f"repeat: expected a whole number >= 1, auto, or {{min: N, max: M}}; got {value!r}")
    return value, value


def _sampling(raw: Any) -> Sampling:
    raw = _check_keys(raw or {}, SAMPLING_KEYS, "sampling")
    for flag in ("pcap", "link_pcap", "irtt"):
        if not isinstance(raw.get(flag, False), bool):
            raise SpecError(f"sampling.{flag}: expected true or false, got {raw[flag]!r}")
    sampling = Sampling(
        interval=units.duration(raw.get("interval", "100ms"), "sampling.interval", allow_zero=False),
        ss_interval=units.duration(raw.get("ss_interval", "500ms"), "sampling.ss_interval", allow_zero=False),
        iperf_interval=units.duration(raw.get("iperf_interval", "500ms"), "sampling.iperf_interval",
                                      allow_zero=False),
        pcap=raw.get("pcap", False),
        link_pcap=raw.get("link_pcap", False),
        irtt=raw.get("irtt", False),
        startup=units.duration(raw.get("startup", "2s"), "sampling.startup"),
    )
    if sampling.iperf_interval < 0.1:
        raise SpecError("sampling.iperf_interval: iperf3 reports at most every 100ms")
    strict.check_sampling(sampling, raw)
    return sampling


def _sysctls(raw: Any) -> dict:
    raw = raw or {}
    if not isinstance(raw, dict):
        raise SpecError("sysctls: expected a mapping of sysctl name to value")
    merged = dict(DEFAULT_SYSCTLS)
    for name, value in raw.items():
        if not re.fullmatch(r"net\.[a-z0-9_.]+", str(name)):
            raise SpecError(f"sysctls.{name}: only per-namespace net.* sysctls can be set in hosts")
        merged[name] = " ".join(str(value).split())
    return merged


def _axis_labels(raw: dict) -> list[str]:
    """The labels the sweep axes of RAW get (as claims' `where` names them); no checks. A
    run's archived spec.yaml holds its file with the quick profile applied: an axis the
    profile fixed (its value there is the profile's) is still one of the file's."""
    profile = raw.get("quick") if isinstance(raw.get("quick"), dict) else {}
    fixed = set()
    for key, value in profile.items():
        try:
            path = resolve_key(raw, str(key))
        except SpecError:
            continue
        if get_path(raw, path) == value:
            fixed.add(path)
    paths = [p for p in leaf_paths(raw) if isinstance(get_path(raw, p), list) or p in fixed]
    return list(_labels(paths).values())


def _notes(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(n, str) and n.strip() for n in items):
        raise SpecError("notes: expected a text or a list of texts")
    return tuple(" ".join(n.split()) for n in items)


def _axes(raw: dict) -> dict[str, list]:
    """Sweep axes: path -> list of values, in spec order."""
    axes = {}
    for path in leaf_paths(raw):
        value = get_path(raw, path)
        if isinstance(value, list):
            if not value:
                raise SpecError(f"{path}: an empty list sweeps nothing")
            axes[path] = value
    return axes


def _labels(paths: list[str]) -> dict[str, str]:
    """Short, unique axis labels: 'flows.0.cc' -> 'cc' unless two axes share the leaf name."""
    leaf = [p.rsplit(".", 1)[-1] for p in paths]
    return {p: (name if leaf.count(name) == 1 else p) for p, name in zip(paths, leaf)}


def identity(raw: dict, name: str) -> str:
    """A run's identity: the hash of what its points measure, blind to key order and to
    the keys that only judge or describe it. Two specs with one identity measure the same."""
    measured = {k: raw[k] for k in MEASURED_KEYS if k in raw}
    if isinstance(measured.get("link"), dict) and "shaper" not in measured["link"]:
        # the default shaper is part of what runs measure (runs made before link.shaper
        # existed used htb and must not be resumed with another)
        # (an AQM's default is its own: one per value of an aqm sweep)
        link, aqm = measured["link"], measured["link"].get("aqm")
        measured["link"] = dict(link, shaper=[default_shaper(dict(link, aqm=kind)) for kind in aqm]
                                if isinstance(aqm, list) else default_shaper(link))
    if isinstance(measured.get("link"), dict) and "trace" in measured["link"]:
        # a trace is measured by what it holds, not by its path: the same path may hold another
        named = measured["link"]["trace"]
        measured["link"] = dict(measured["link"], trace_sha256=[traces.digest_of(t) for t in named]
                                if isinstance(named, list) else traces.digest_of(named))
    text = json.dumps({"name": name, **measured}, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def flatten(value, prefix: str = "") -> dict[str, object]:
    """{dotted key: leaf value} of a spec's nested mappings and lists of mappings (flows.0.cc)."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        value = {str(i): v for i, v in enumerate(value)}
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _title(title: str, points: list[Point]) -> str:
    """TITLE with {trace} replaced by the name of the trace file the points replay (a title
    never names a trace that did not run: `--set trace=...` renames it)."""
    if TRACE_IN_TITLE not in title:
        return title
    names = list(dict.fromkeys(Path(p.link.trace).name for p in points if p.link.trace))
    if not names:
        raise SpecError(f"title: names {TRACE_IN_TITLE} but no point replays a trace (link.trace)")
    return title.replace(TRACE_IN_TITLE, " and ".join(names))


def load_raw(path: Path) -> dict:
    raw = yaml_loader.read(path)  # every key once, UTF-8, no tabs: else one line naming the problem
    if not isinstance(raw, dict):
        raise SpecError(f"{path}: expected a mapping at the top level")
    return raw


def _narrow(raw: dict, overrides: list[str], quick: bool) -> None:
    """Apply the quick profile (when QUICK) and then the --set OVERRIDES to RAW, in place."""
    # a key the file's `points:` set per point is changed there, not by the profile or --set
    chosen_keys = explicit.keys(raw, resolve_key) if isinstance(raw.get("flows", []), list) else {}
    if quick:
        profile = raw.get("quick") or {}
        if not isinstance(profile, dict):
            raise SpecError("quick: expected a mapping of key to value")
        for key, value in profile.items():
            try:
                path = resolve_key(raw, str(key))
            except SpecError as exc:  # said as the profile's key, not as a --set the user never typed
                raise SpecError(str(exc).replace(f"--set {key}:", f"quick.{key}:", 1)) from None
            if path in chosen_keys:
                raise SpecError(f"quick.{key}: the file's points set {chosen_keys[path]} per point: change it there")
            set_path(raw, path, value)
    for text in overrides:
        key, value = parse_override(text)
        path = resolve_key(raw, key)
        if path in chosen_keys:
            raise SpecError(f"--set {key}: the file's points set {chosen_keys[path]} per point: change them there "
                            "(or --only to run some of them)")
        strict.check_tool_override(raw, path, value, key)
        set_path(raw, path, value)


def _grid(raw: dict, axes: dict, chosen: list[dict], labels: dict):
    """Each grid point of RAW (the sweep AXES crossed with the file's CHOSEN points): its
    parameters by label, and its (link, pacing, flows), validated."""
    for combo, entry in itertools.product(itertools.product(*axes.values()), chosen):
        concrete = {k: v for k, v in copy.deepcopy(raw).items() if k != "points"}
        for path, value in [*zip(axes, combo), *entry.items()]:
            set_path(concrete, path, value)
        params = {labels[p]: v for p, v in [*zip(axes, combo), *entry.items()]}
        link = _link(concrete["link"])
        pacing = _choice(concrete.get("pacing", raw.get("pacing", "fq")), PACING_MODES, "pacing")
        flows = _flows(concrete["flows"], concrete.get("cc"))
        aqms.check_ecn(link.aqm, concrete["link"], [g.ecn for g in flows])
        yield params, (link, pacing, flows)


def build(raw: dict, overrides: list[str] = (), quick: bool = False, default_name: str = "experiment") -> Experiment:
    """Validate RAW (with the quick profile and --set overrides applied) into an Experiment."""
    raw = copy.deepcopy(raw)
    _check_keys(raw, TOP_KEYS, "")
    # a claim may select on an axis of the file even where --set or --quick fixed its value
    file_axes = _axis_labels(raw) if isinstance(raw.get("flows", []), list) else []
    _narrow(raw, overrides, quick)
    _check_keys(raw, TOP_KEYS, "")
    if "link" not in raw or "flows" not in raw:
        raise SpecError(f"{'link' if 'link' not in raw else 'flows'}: required")

    name = raw.get("name", default_name)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name.startswith("."):
        # a run's folder is results/NAME: "..", "." or a hidden name would put it elsewhere
        raise SpecError(f"name: expected letters, digits, '-', '_' or '.', not starting with '.', got {name!r}")
    plot = _check_keys(raw.get("plot") or {}, PLOT_KEYS, "plot")
    plot_kind = _choice(plot.get("kind", "rtt_timeseries"), PLOT_KINDS, "plot.kind")
    repeat, repeat_max = _repeat(raw.get("repeat", 1))
    seed = raw.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SpecError(f"seed: expected a whole number, got {seed!r}")
    sysctls = _sysctls(raw.get("sysctls"))
    sampling = _sampling(raw.get("sampling"))

    if isinstance(raw["link"], dict):
        aqms.check_blocks(raw["link"])
    axes = _axes(raw)
    strict.check_sweeps(axes)
    chosen = explicit.parse(raw, axes, resolve_key)  # `points:` ([{}] without)
    labels = _labels(list(axes) + list(chosen[0]))
    axes_labels = list(labels.values())
    points = [Point(name, params, rep, *measured, sysctls, sampling)
              for params, measured in _grid(raw, axes, chosen, labels) for rep in range(1, repeat + 1)]
    strict.check_points(points, startup_given="startup" in (raw.get("sampling") or {}))
    return Experiment(
        name=name,
        title=_title(str(raw.get("title", name)), points),
        description=str(raw.get("description", "")).strip(),
        identity=identity(raw, name),
        raw=raw,
        axes={**{labels[p]: v for p, v in axes.items()},
              **{labels[p]: list(dict.fromkeys(e[p] for e in chosen)) for p in chosen[0]}},
        points=tuple(points),
        plot_kind=plot_kind,
        plot_title=plot.get("title"),
        claims=_claims(raw.get("claims"), tuple(dict.fromkeys([*CLAIM_FACTS, *axes_labels, *file_axes]))),
        reference=reference_format.parse(raw.get("reference")),
        repeat=repeat,
        seed=seed,
        notes=_notes(raw.get("notes")),
        repeat_max=repeat_max,
    )


def load(path: Path, overrides: list[str] = (), quick: bool = False) -> Experiment:
    """The experiment file PATH (with --set OVERRIDES and the quick profile when QUICK), also
    checked as a file: its quick profile and its claims on its own grid (strict.check_file)."""
    raw = load_raw(path)
    exp = build(raw, overrides, quick, default_name=path.stem)
    strict.check_file(raw, exp, lambda quick: build(raw, quick=quick, default_name=path.stem),
                      narrowed=bool(overrides) or quick, quick=quick)
    return exp
