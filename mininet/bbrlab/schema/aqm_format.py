"""The bottleneck's queue discipline (`link.aqm`) and its parameters, read and checked.

`link.aqm` names the discipline: `fifo` (droptail, the default) or one of Linux's AQMs,
fq_codel, cake, codel, pie, fq_pie, red. A list sweeps it, like any link key. Each AQM's
parameters live under its own name, so one file can sweep several AQMs and tune each:

    link:
      aqm: [fifo, fq_codel, cake]
      fq_codel: {target: 5ms, interval: 100ms}
      cake: {flow_mode: flows}

`link.buffer` stays the queue's hard limit (the AQM's `limit`, CAKE's `memlimit`); the AQM
decides what to drop or mark below it. Defaults are the kernel's (fq_codel's are RFC 8290's),
written out so a run's spec says what ran. Every error names the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import units
from .checks import check_keys, choice, count
from ..errors import SpecError

FIFO = "fifo"
CAKE_FLOW_MODES = ("flowblind", "srchost", "dsthost", "hosts", "flows", "dual-srchost", "dual-dsthost",
                   "triple-isolate")
CAKE_DIFFSERV = ("besteffort", "diffserv3", "diffserv4", "diffserv8", "precedence")


def _time(value: Any, key: str) -> float:
    return units.duration(value, key, allow_zero=False)


def _flag(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise SpecError(f"{key}: expected true or false, got {value!r}")
    return value


def _bytes(value: Any, key: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return units.size(value, key)


def _overhead(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not -64 <= value <= 256:
        raise SpecError(f"{key}: expected whole bytes per packet from -64 to 256, got {value!r}")
    return value


def _probability(value: Any, key: str) -> float:
    p = units.fraction(value, key)  # refuses 100% and above itself
    if p <= 0:
        raise SpecError(f"{key}: expected a probability above 0%, got {value!r}")
    return p


# Per AQM: parameter -> (reader, default). A default of None is derived from the link
# (RED's thresholds from the buffer) or left to the kernel when it has no value to write.
PARAMS: dict[str, dict[str, tuple]] = {
    FIFO: {},
    "fq_codel": {"target": (_time, 0.005), "interval": (_time, 0.100), "ecn": (_flag, True),
                 "quantum": (_bytes, 1514), "flows": (count, 1024)},
    "codel": {"target": (_time, 0.005), "interval": (_time, 0.100), "ecn": (_flag, False)},
    "pie": {"target": (_time, 0.015), "tupdate": (_time, 0.015), "ecn": (_flag, False)},
    "fq_pie": {"target": (_time, 0.015), "tupdate": (_time, 0.015), "ecn": (_flag, False),
               "quantum": (_bytes, 1514), "flows": (count, 1024)},
    "red": {"min": (_bytes, None), "max": (_bytes, None), "probability": (_probability, 0.1),
            "ecn": (_flag, False)},
    "cake": {"interval": (_time, 0.100), "flow_mode": (lambda v, k: choice(v, CAKE_FLOW_MODES, k), "triple-isolate"),
             "diffserv": (lambda v, k: choice(v, CAKE_DIFFSERV, k), "besteffort"),
             "overhead": (_overhead, None), "ack_filter": (_flag, False)},
}
AQMS = tuple(PARAMS)
# what each parameter takes and means, for the format reference (format_doc.py)
PARAM_DOCS = {
    "target": ("time", "the queueing delay the AQM aims to hold"),
    "interval": ("time", "CoDel's window: how long the delay may stay above target before it drops or marks "
                 "(CAKE: tc-cake's `rtt`, its target 5% of it)"),
    "ecn": ("true or false", "mark ECN-capable packets with CE instead of dropping them"),
    "quantum": ("size", "bytes a flow's queue may send per round"),
    "flows": ("whole number", "the number of flow queues"),
    "tupdate": ("time", "how often PIE updates its drop probability"),
    "min": ("size", "RED's average queue below which nothing is dropped (default: max / 3)"),
    "max": ("size", "RED's average queue at which the drop probability is `probability` (default: buffer / 2)"),
    "probability": ("percentage", "RED's drop probability at `max`"),
    "flow_mode": (" or ".join(CAKE_FLOW_MODES), "CAKE's flow isolation"),
    "diffserv": (" or ".join(CAKE_DIFFSERV), "CAKE's priority tins (`besteffort`: one tin, diffserv off)"),
    "overhead": ("bytes from -64 to 256", "per-packet overhead CAKE's shaper adds (default: none, `raw`)"),
    "ack_filter": ("true or false", "CAKE drops ACKs made redundant by later ones"),
}
# link keys this module reads: the discipline's name and one block per AQM
LINK_KEYS = {"aqm", *[name for name in AQMS if name != FIFO]}
# AQMs that can mark ECN-capable packets instead of dropping them (CAKE always does)
MARKS_ECN = {"fq_codel", "codel", "pie", "fq_pie", "red", "cake"}
# How each AQM meets the bottleneck's rate when link.shaper is not given: chosen by
# measurement (docs/design.md, "AQM at the bottleneck").
DEFAULT_SHAPER = {"cake": "cake"}
DEFAULT_AQM_SHAPER = "htb"


def calibration_path(kind: str, shaper: str) -> str | None:
    """The bottleneck design a calibration of its own vouches for: an AQM and the shaper that
    meets the rate for it ("fq_codel-htb", "cake-cake"), or Mahimahi's chain ("fifo-mahimahi");
    None for tc's droptail FIFO, which the machine's own calibration covers."""
    if shaper == "mahimahi":  # another emulator altogether: measured on its own
        return f"{kind}-{shaper}"
    return None if kind == FIFO else f"{kind}-{shaper}"


def record_kind(record: dict) -> str:
    """The AQM a finished point ran: its record's `link.aqm` (a point's record keeps the
    AQM's block, a calibration's compact copy its name), FIFO for records older than AQMs."""
    aqm = (record.get("link") or {}).get("aqm")
    return (aqm.get("kind") if isinstance(aqm, dict) else aqm) or FIFO


def record_path(record: dict) -> str | None:
    """calibration_path of a finished point (its record's link)."""
    return calibration_path(record_kind(record), (record.get("link") or {}).get("shaper", ""))


def path_sets(path: str) -> list[str]:
    """The --set values that give an experiment PATH's design."""
    kind, shaper = path.rsplit("-", 1)
    return [f"aqm={kind}", f"shaper={shaper}"]


@dataclass(frozen=True)
class Aqm:
    kind: str = FIFO
    params: tuple[tuple[str, Any], ...] = ()  # every parameter of the kind, defaults written out

    def get(self, name: str) -> Any:
        return dict(self.params)[name]

    @property
    def marks(self) -> bool:
        """Whether the AQM marks ECN-capable packets (else it drops them)."""
        if self.kind == "cake":
            return True
        return self.kind in MARKS_ECN and bool(dict(self.params).get("ecn"))

    @property
    def target(self) -> float | None:
        """The standing queue the AQM aims to hold (s): CoDel's and PIE's target, CAKE's 5%
        of its interval (tc-cake); None for a FIFO and RED, which aim at none."""
        p = dict(self.params)
        if self.kind == "cake":
            return p["interval"] / 20
        return p.get("target")

    def label(self) -> str:
        if self.kind == FIFO:
            return FIFO
        shown = {k: v for k, v in self.params if v is not None and v != PARAMS[self.kind][k][1]}
        return self.kind + (" (" + ", ".join(f"{k} {_fmt(k, v)}" for k, v in shown.items()) + ")" if shown else "")


def _fmt(name: str, value: Any) -> str:
    """A parameter's value as the file would spell it, by what the parameter takes."""
    takes = PARAM_DOCS[name][0]
    if takes == "time":
        return units.fmt_time(value)
    if takes == "percentage":
        return units.fmt_fraction(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def parse(raw: dict, buffer_bytes: int) -> Aqm:
    """link.aqm and the chosen AQM's block of a concrete grid point -> Aqm. BUFFER_BYTES: the
    buffer as bytes, from which RED's thresholds are derived when not given."""
    kind = choice(raw.get("aqm", FIFO), AQMS, "link.aqm")
    block = raw.get(kind, {}) if kind != FIFO else {}
    block = check_keys(block if block is not None else {}, set(PARAMS[kind]), f"link.{kind}")
    values = {}
    for name, (reader, default) in PARAMS[kind].items():
        values[name] = reader(block[name], f"link.{kind}.{name}") if name in block else default
    if "target" in values and "interval" in values and values["target"] >= values["interval"]:
        raise SpecError(f"link.{kind}.target: {units.fmt_time(values['target'])} must be shorter than "
                        f"link.{kind}.interval ({units.fmt_time(values['interval'])})")
    if kind == "red":
        values["max"] = values["max"] if values["max"] is not None else buffer_bytes // 2
        values["min"] = values["min"] if values["min"] is not None else values["max"] // 3
        if not 0 < values["min"] < values["max"] <= buffer_bytes:
            raise SpecError(f"link.red: expected 0 < min < max <= the buffer ({buffer_bytes} B), got min "
                            f"{values['min']} B, max {values['max']} B")
    return Aqm(kind, tuple(values.items()))


def check_blocks(raw_link: dict) -> None:
    """An AQM's block in a file whose link.aqm never names that AQM tunes nothing: refuse it."""
    named = raw_link.get("aqm", FIFO)
    named = set(named) if isinstance(named, list) else {named}
    for name in sorted(LINK_KEYS - {"aqm"}):
        if name in raw_link and name not in named:
            raise SpecError(f"link.{name}: parameters for {name}, but link.aqm is "
                            f"{', '.join(sorted(map(str, named)))}: give link.aqm: {name} (or a list with it)")


def check_ecn(aqm: Aqm, raw_link: dict, groups_ecn: list[bool]) -> None:
    """ECN asked by a flow group where nothing marks is refused: on a droptail FIFO unless the
    file names `link.aqm: fifo` itself, under codel, pie, fq_pie or red unless the file gives
    that AQM's `ecn` itself (their default is to drop). Negotiated on purpose, it is a warning
    (strict.ecn_warning)."""
    if not any(groups_ecn) or aqm.marks:
        return
    group = groups_ecn.index(True)
    if aqm.kind == FIFO and "aqm" not in raw_link:
        raise SpecError(f"flows.{group}.ecn: nothing marks on a droptail FIFO bottleneck: give link.aqm "
                        f"({', '.join(sorted(MARKS_ECN))}), or link.aqm: fifo to negotiate ECN anyway")
    if aqm.kind != FIFO and "ecn" not in (raw_link.get(aqm.kind) or {}):
        raise SpecError(f"flows.{group}.ecn: {aqm.kind} drops instead of marking unless told (its ecn is false "
                        f"by default): give link.{aqm.kind}.ecn: true, or link.{aqm.kind}.ecn: false to "
                        "negotiate ECN without marks")
