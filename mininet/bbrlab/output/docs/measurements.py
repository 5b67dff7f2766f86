"""docs/measurements.yaml: what each experiment measured here, written once.

An entry per experiment gives its line in README.md's table (what it shows, the verdict here,
the numbers), the run it comes from (how many runs, on which kernel, at which measurement of
the testbed, and when, if known) and where that run is told in full: its rows in one of
docs/results.md's tables (in the entry itself), a passage of the docs (`record: {in: FILE,
from: "the passage's first words"}`), or the experiment file's own notes (`record: {in:
notes}`). Every number of the README's line must be a number of that record, so the short line
cannot drift from the measurement it sums up. `bbrlab results-doc` writes the docs from here.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import SpecError, did_you_mean
from ...schema.experiment import Experiment
from ...schema.yaml_loader import read
from ...store.results import MEASUREMENT

PATH = Path("docs") / "measurements.yaml"
KERNELS = {"debian": "Debian's 6.1", "bbr3": "the BBRv3 kernel"}  # as `vm/vm.sh kernel` names them
TABLES = ("field", "aqm")  # docs/results.md's tables of experiments
NOTES = "notes"  # record: {in: notes}, the experiment file's own
ENTRY_KEYS = {"what", "verdict", "numbers", "measured", "record", "table", "rows"}
MEASURED_KEYS = {"runs", "kernel", "measurement", "date", "host", "repeat"}
RECORD_KEYS = {"in", "from"}
ROW_KEYS = {"label", "text", "anchor"}
NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Measured:
    """The run an entry's numbers come from."""

    runs: str  # "one run", "5 runs", "3 repetitions": as the README says it
    kernel: str  # a key of KERNELS
    measurement: int  # the testbed's measurement (store/results.py MEASUREMENT) it ran at
    date: str | None = None  # the day it ran, where the docs say it
    host: str | None = None  # where it differs from a quiet host
    repeat: int | str | None = None  # the repetitions per point it ran with, where the file now asks otherwise


@dataclass(frozen=True)
class Row:
    """One row of docs/results.md's tables: the run, what was measured, what it is held against."""

    label: str
    text: str
    anchor: str


@dataclass(frozen=True)
class Entry:
    name: str
    what: str
    verdict: str
    numbers: str
    measured: Measured
    record: tuple[str, str | None] | None = None  # (FILE or "notes", the passage's first words)
    table: str | None = None
    rows: tuple[Row, ...] = ()


def _mapping(value: Any, where: str, keys: set[str], required: set[str]) -> dict:
    if not isinstance(value, dict):
        raise SpecError(f"{where}: expected a mapping of {', '.join(sorted(keys))}")
    for key in value:
        if key not in keys:
            raise SpecError(f"{where}.{key}: unknown key{did_you_mean(key, keys)} (known: {', '.join(sorted(keys))})")
    missing = sorted(required - set(value))
    if missing:
        raise SpecError(f"{where}.{missing[0]}: required")
    return value


def _text(value: Any, where: str) -> str:
    if isinstance(value, datetime.date):
        return value.isoformat()
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{where}: expected a text")
    if "|" in value:
        raise SpecError(f"{where}: a `|` would end the table's cell early")
    return " ".join(value.split())


def _measured(value: Any, where: str) -> Measured:
    raw = _mapping(value, where, MEASURED_KEYS, {"runs", "kernel", "measurement"})
    if raw["kernel"] not in KERNELS:
        raise SpecError(f"{where}.kernel: {raw['kernel']!r}: one of {', '.join(KERNELS)}")
    if not isinstance(raw["measurement"], int) or not 1 <= raw["measurement"] <= MEASUREMENT:
        raise SpecError(f"{where}.measurement: a whole number from 1 to {MEASUREMENT} (the testbed's own)")
    repeat = raw.get("repeat")
    if repeat is not None and repeat != "auto" and not (isinstance(repeat, int) and repeat >= 1):
        raise SpecError(f"{where}.repeat: a whole number of repetitions, or auto")
    optional = {key: _text(raw[key], f"{where}.{key}") for key in ("date", "host") if key in raw}
    return Measured(_text(raw["runs"], f"{where}.runs"), raw["kernel"], raw["measurement"], repeat=repeat, **optional)


def _record(value: Any, where: str) -> tuple[str, str | None]:
    raw = _mapping(value, where, RECORD_KEYS, {"in"})
    place = _text(raw["in"], f"{where}.in")
    if place != NOTES and not (place.startswith("docs/") and place.endswith(".md") and ".." not in place.split("/")):
        raise SpecError(f"{where}.in: {place!r}: `notes`, or a page of the docs (docs/NAME.md), not the README "
                        "written from here")
    lead = _text(raw["from"], f"{where}.from") if "from" in raw else None
    if (place == NOTES) != (lead is None):
        raise SpecError(f"{where}: `from` (the passage's first words) goes with a file, not with notes")
    return place, lead


def _rows(value: Any, where: str, name: str) -> tuple[Row, ...]:
    if not isinstance(value, list) or not value:
        raise SpecError(f"{where}: expected a list of rows")
    rows = []
    for i, row in enumerate(value):
        raw = _mapping(row, f"{where}.{i}", ROW_KEYS, {"text", "anchor"})
        label = _text(raw["label"], f"{where}.{i}.label") if "label" in raw else name
        rows.append(Row(label, _text(raw["text"], f"{where}.{i}.text"), _text(raw["anchor"], f"{where}.{i}.anchor")))
    return tuple(rows)


def _entry(name: str, value: Any, where: str) -> Entry:
    raw = _mapping(value, where, ENTRY_KEYS, {"what", "verdict", "numbers", "measured"})
    if ("table" in raw) != ("rows" in raw):
        raise SpecError(f"{where}: `table` and `rows` go together")
    if "table" in raw and raw["table"] not in TABLES:
        raise SpecError(f"{where}.table: {raw['table']!r}: one of {', '.join(TABLES)}")
    if "record" not in raw and "rows" not in raw:
        raise SpecError(f"{where}: say where the run is told in full: `rows` of a table, or `record`")
    return Entry(name, *(_text(raw[k], f"{where}.{k}") for k in ("what", "verdict", "numbers")),
                 measured=_measured(raw["measured"], f"{where}.measured"),
                 record=_record(raw["record"], f"{where}.record") if "record" in raw else None,
                 table=raw.get("table"), rows=_rows(raw["rows"], f"{where}.rows", name) if "rows" in raw else ())


def parse(raw: Any, where: str) -> dict[str, Entry]:
    """{experiment: Entry} of RAW (the file's YAML), in the file's order; WHERE names it in errors."""
    if not isinstance(raw, dict) or not raw:
        raise SpecError(f"{where}: expected a mapping of experiment name to its entry")
    return {str(name): _entry(str(name), value, f"{where}: {name}") for name, value in raw.items()}


def load(root: Path) -> dict[str, Entry]:
    """The entries of ROOT's docs/measurements.yaml."""
    path = root / PATH
    if not path.is_file():
        raise SpecError(f"no {PATH} in {root}: bbrlab results-doc writes a checkout's docs")
    return parse(read(path), str(PATH))


def numbers_in(text: str) -> list[str]:
    """The numbers TEXT states, as written ("0.35-0.38" is 0.35 and 0.38)."""
    return NUMBER.findall(text)


def passage(text: str, lead: str, where: str) -> str:
    """The passage of TEXT that begins with LEAD: up to the next heading, and, from a list
    item or a paragraph, up to the next list item too."""
    if text.count(lead) != 1:
        raise SpecError(f"{where}: {lead!r} is {'not in' if lead not in text else 'more than once in'} the file")
    start = text.index(lead)
    ends = r"\n#" if lead.startswith("#") else r"\n(?:#|- )"
    stop = re.search(ends, text[start + len(lead):])
    return text[start:] if stop is None else text[start:start + len(lead) + stop.start()]


def record_of(entry: Entry, exp: Experiment, root: Path) -> str:
    """The text telling ENTRY's run in full: its rows, and the passage or notes it names."""
    told = [f"{row.label} {row.text} {row.anchor}" for row in entry.rows]
    if entry.record is not None:
        place, lead = entry.record
        if place == NOTES:
            told += list(exp.notes)
        else:
            path = root / place
            if not path.is_file():
                raise SpecError(f"{PATH}: {entry.name}.record.in: no file {place}")
            told.append(passage(path.read_text(), lead, f"{PATH}: {entry.name}.record"))
    return "\n".join(told)


def disagreements(book: dict[str, Entry], exps: dict[str, Experiment], root: Path) -> list[str]:
    """What keeps BOOK from being the one account of EXPS ({name: Experiment}): an experiment
    without an entry or an entry without one, a number of a README line not in its record."""
    found = [f"{name}: an experiment with no entry in {PATH}" for name in exps if name not in book]
    found += [f"{name}: an entry of {PATH} for no experiment in experiments/" for name in book if name not in exps]
    for name, entry in book.items():
        if name not in exps:
            continue
        told = set(numbers_in(record_of(entry, exps[name], root)))
        missing = [n for n in numbers_in(entry.numbers) if n not in told]
        if missing:
            where = "its notes" if entry.record and entry.record[0] == NOTES else "its record"
            found.append(f"{name}: {', '.join(dict.fromkeys(missing))} in its numbers, not in {where}")
    return found
