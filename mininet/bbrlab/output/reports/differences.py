"""How several runs differ in what they measured: `compare A B` and `plot --kind KIND RUN1
RUN2 ...` say it in a line ("rtt: 40ms vs 30ms") and name each run by it ("run 2 (rtt 30ms)"),
so that runs of different setups are never read as repetitions of one.

What counts is the effective setup, not the text of the files: each run's spec.yaml is
built as the run built it (defaults filled in, units read, the quick profile and --set
already in it) and every point's link, pacing, flow groups, sysctls and sampling compared as
values, with the kernel and the builds of its congestion controls from run.json. A spec that
no longer builds (an older format) is compared by the keys its file gives.
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass

from ...errors import BbrlabError
from ...schema import experiment as spec
from ...schema.units import fmt_fraction, fmt_rate, fmt_time
from ...store.results import RunDir, read_json

RATES = {"rate"}
TIMES = {"rtt", "duration", "start", "stagger", "until", "jitter", "delay_variation", "trace_interval", "burst_time",
         "interval", "ss_interval", "iperf_interval", "startup", "at", "min", "max", "gap"}
FRACTIONS = {"loss", "forward_share", "load"}
UNSET = "–"  # a key one run has and another has not (a flow group more, a CC the other never ran)
# the parts of a file that are words about the run, not its setup
WORDS = ("title", "description", "notes", "claims", "plot", "reference", "quick")
Table = dict[tuple[str, ...], str]  # a run's settings: key path -> value as a spec would write it
LABEL_WIDTH = 60  # a run's label in a figure's legend: its differences cut to this many characters


@dataclass(frozen=True)
class Differences:
    """The parameters in which the runs differ (short names, in the first run's order) and
    each run's value of each (values[run][key]); empty when their setups are the same."""

    keys: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]

    def note(self, run: int) -> str:
        """Run RUN's values of the differing parameters: "rtt 30ms; kernel 6.12.0"."""
        return "; ".join(f"{key} {value}" for key, value in zip(self.keys, self.values[run]))

    @property
    def labels(self) -> list[str]:
        """Each run's name in a figure or a table: "run 2 (rtt 30ms)", or "run 2" where the
        runs' setups are the same."""
        out = []
        for i in range(len(self.values)):
            note = textwrap.shorten(self.note(i), LABEL_WIDTH, placeholder=" …")
            out.append(f"run {i + 1}" + (f" ({note})" if note else ""))
        return out

    def line(self) -> str:
        """The line saying how: "the runs' setups differ: rtt: 40ms vs 30ms; kernel: 6.1.0 vs
        6.12.0", or "" when they do not."""
        parts = [f"{key}: {' vs '.join(run[k] for run in self.values)}" for k, key in enumerate(self.keys)]
        return f"the runs' setups differ: {'; '.join(parts)}" if parts else ""


def between(runs: list[RunDir]) -> Differences:
    """How RUNS (two or more, in the order given) differ in their setups and testbeds."""
    try:
        setups = [_built(run) for run in runs]
    except BbrlabError:  # a spec of an older format: its keys as the file gives them
        setups = [_written(run) for run in runs]
    testbeds = [_testbed(run) for run in runs]
    # a CC's module only where every run ran that CC: where one did not, its cc says so
    shared = set.intersection(*(set(modules) for _, modules in testbeds))
    tables = [{**setup, **kernel, **{k: v for k, v in modules.items() if k in shared}}
              for setup, (kernel, modules) in zip(setups, testbeds)]
    paths = list(dict.fromkeys(path for table in tables for path in table))
    differing = [p for p in paths if len({table.get(p, UNSET) for table in tables}) > 1]
    keys = tuple(_short(p, differing) for p in differing)
    return Differences(keys, tuple(tuple(table.get(p, UNSET) for p in differing) for table in tables))


def _short(path: tuple[str, ...], among: list[tuple[str, ...]]) -> str:
    """PATH's shortest tail that no other path in AMONG ends with: rtt, flows.1.cc, sysctl
    net.ipv4.tcp_ecn."""
    for n in range(1, len(path) + 1):
        tail = path[-n:]
        if not any(other != path and other[-n:] == tail for other in among):
            return ".".join(tail)
    return ".".join(path)


def _built(run: RunDir) -> Table:
    """(key path) -> value text of RUN's spec as built: each point's setup, a value per
    distinct value over the points ("20ms/40ms" for a swept RTT)."""
    exp = spec.build(spec.load_raw(run.path / "spec.yaml"), default_name=run.path.parent.name)
    seen: dict[tuple[str, ...], list[str]] = {("experiment",): [exp.name], ("repeat",): [str(exp.repeat)]}
    for point in exp.points:
        setup = {"link": point.link, "pacing": point.pacing, "flows": point.flows, "sampling": point.sampling}
        for path, value in [*_leaves(setup, ()), *((("sysctl " + k,), str(v)) for k, v in point.sysctls.items())]:
            values = seen.setdefault(path, [])
            if value not in values:
                values.append(value)
    return {path: "/".join(values) for path, values in seen.items()}


def _leaves(value, path: tuple[str, ...]):
    """(path, text) of every setting in VALUE: dataclasses and mappings by field, sequences by
    place; a buffer, an AQM or a size distribution as the file would name it."""
    if hasattr(value, "label") and callable(value.label):
        yield path, value.label()
    elif dataclasses.is_dataclass(value) and hasattr(value, "text"):
        yield path, str(value.text)
    elif dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            yield from _leaves(getattr(value, field.name), path + (field.name,))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, path + (str(key),))
    elif isinstance(value, (list, tuple)) and value and all(dataclasses.is_dataclass(v) for v in value):
        for i, item in enumerate(value):
            yield from _leaves(item, path + (str(i),))
    else:
        yield path, _text(path[-1] if path else "", value)


def _text(name: str, value) -> str:
    """A setting's value as a spec would write it: 30ms, 10Mbit, 1%, true."""
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "none"
    if isinstance(value, (int, float)):
        if name in RATES:
            return fmt_rate(value)
        if name in TIMES:
            return fmt_time(value)
        if name in FRACTIONS:
            return fmt_fraction(value)
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(name, v) for v in value) if value else "none"
    return str(value)


def _written(run: RunDir) -> Table:
    """(key path) -> value of RUN's spec.yaml as written, its words left out (nothing where
    it cannot be read)."""
    try:
        raw = spec.load_raw(run.path / "spec.yaml")
    except BbrlabError:
        return {}
    flat = spec.flatten({k: v for k, v in raw.items() if k not in WORDS})
    return {tuple(key.split(".")): _text("", value) for key, value in flat.items()}


def _testbed(run: RunDir) -> tuple[Table, Table]:
    """What RUN's flows ran on beyond its spec (run.json): (the kernel, each congestion
    control's module build and description); nothing where run.json does not say."""
    try:
        meta = read_json(run.path / "run.json")
    except BbrlabError:
        return {}, {}
    if not isinstance(meta, dict):
        return {}, {}
    testbed = meta.get("testbed") or {}
    kernel, modules = {}, {}
    release = testbed.get("kernel") or (meta.get("system") or {}).get("kernel")
    if release:
        kernel[("kernel",)] = str(release)
    if testbed.get("kernel_version"):
        kernel[("kernel build",)] = str(testbed["kernel_version"])
    for cc, build in sorted((testbed.get("congestion_controls") or {}).items()):
        modules[(f"{cc} build",)] = str(build)  # its module's srcversion, "built-in" or "absent"
    for cc, words in sorted((meta.get("congestion_control_modules") or {}).items()):
        modules[(f"{cc} module",)] = str(words)  # what the module says it is (modinfo)
    return kernel, modules
