"""The docs' measured numbers and sizes, written from their one source: `bbrlab results-doc`.

README.md's table of verdicts and docs/results.md's tables of experiments come from
docs/measurements.yaml (measurements.py); the sizes of the suite and of the quick suite in
docs/experiments.md and docs/results.md are the words `bbrlab suite --dry-run` ends with. Each
is a region of its file between two marker lines; the text around them is the docs' own.
tests/host/test_docs_numbers.py fails when a committed file differs from what this writes.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from ...errors import SpecError
from ...schema.experiment import Experiment
from ...store.results import MEASUREMENT
from .measurements import KERNELS, NOTES, PATH, Entry

COMMAND = "./bbrlab results-doc"
BEGIN = "<!-- begin {name}: written by " + COMMAND + " from " + str(PATH) + " and experiments/; not by hand -->"
END = "<!-- end {name} -->"
WIDTH = 100  # the docs' paragraphs are wrapped at about this width


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def _repeat_now(asked: int | str | None, exp: Experiment) -> str | None:
    """What EXP's file now asks, when its measured run ran with ASKED repetitions per point and
    the file has changed since (None: the same, or not said)."""
    if asked is None or asked == ("auto" if exp.adaptive else exp.repeat):
        return None
    if exp.adaptive:
        return f"repeat: auto ({exp.repeat}-{exp.repeat_max} repetitions)"
    return f"{exp.repeat} repetition{'s' if exp.repeat > 1 else ''}"


def measured_cell(entry: Entry, exp: Experiment) -> str:
    """How ENTRY's run ran: runs, kernel, the day and the host where known, an earlier
    measurement of the testbed, and what the file asks now where that differs."""
    m = entry.measured
    parts = [m.runs, KERNELS[m.kernel]] + [text for text in (m.date, m.host) if text]
    if m.measurement < MEASUREMENT:
        parts.append(f"measurement {m.measurement}")
    now = _repeat_now(m.repeat, exp)
    return ", ".join(parts) + (f"; the file now asks {now}" if now else "")


def verdicts(book: dict[str, Entry], exps: dict[str, Experiment]) -> str:
    """README.md's table: a row per entry, in the file's order."""
    rows = [[name, e.what, e.verdict, e.numbers + (" (its notes)" if e.record and e.record[0] == NOTES else ""),
             measured_cell(e, exps[name])] for name, e in book.items()]
    return _table(["experiment", "what", "verdict here", "the numbers", "measured"], rows)


def experiments_table(book: dict[str, Entry], table: str) -> str:
    """docs/results.md's table TABLE: the rows of its entries, in the file's order."""
    rows = []
    for entry in book.values():
        if entry.table != table:
            continue
        older = entry.measured.measurement < MEASUREMENT
        rows += [[row.label + (f" (measurement {entry.measured.measurement})" if older else ""), row.text, row.anchor]
                 for row in entry.rows]
    return _table(["experiment", "what we measured", "anchor"], rows)


def _paragraph(text: str) -> str:
    return textwrap.fill(text, WIDTH, break_long_words=False, break_on_hyphens=False)


def suite_size(exps: dict[str, Experiment], size: str) -> str:
    """docs/experiments.md's sentence on the suite's size: SIZE, as `suite --dry-run` says it."""
    longest = max(exps.values(), key=lambda e: sum(p.duration for p in e.points))
    return _paragraph(f"At the paper's parameters the suite is {size} (`./bbrlab suite --dry-run`; a range where "
                      "`repeat: auto` may add repetitions to settle a claim). The longest experiment, "
                      f"{longest.name}, is {len(longest.points)} points and "
                      f"{sum(p.duration for p in longest.points) / 60:.0f} minutes of flows.")


def quick_suite(size: str) -> str:
    """docs/results.md's sentence on the quick suite's size: SIZE, as `suite --quick --dry-run` says it."""
    return _paragraph(f"The quick suite (`sudo ./reproduce.sh --quick all`) is {size} "
                      "(`./bbrlab suite --quick --dry-run`).")


def render(book: dict[str, Entry], exps: dict[str, Experiment], size: str, quick_size: str) -> dict[str, dict[str, str]]:
    """{file: {region: its text}} from BOOK, EXPS ({name: Experiment}, the whole suite) and the
    suite's and the quick suite's sizes (estimate.Size.text())."""
    return {
        "README.md": {"verdicts": verdicts(book, exps)},
        "docs/experiments.md": {"suite-size": suite_size(exps, size)},
        "docs/results.md": {"quick-suite": quick_suite(quick_size), "field": experiments_table(book, "field"),
                            "aqm": experiments_table(book, "aqm")},
    }


def fill(text: str, regions: dict[str, str], file: str) -> str:
    """TEXT (FILE's) with each of REGIONS ({name: text}) between its marker lines (a begin
    line is known by its start, `<!-- begin NAME:`, and written whole)."""
    for name, body in regions.items():
        begin, end = BEGIN.format(name=name), END.format(name=name)
        starts = [m.start() for m in re.finditer(rf"^<!-- begin {re.escape(name)}:.*-->$", text, re.M)]
        ends = [m.start() for m in re.finditer(rf"^{re.escape(end)}$", text, re.M)]
        if len(starts) != 1 or len(ends) != 1 or starts[0] > ends[0]:
            raise SpecError(f"{file}: no single place for {name}: the line {begin} before the line {end}")
        text = f"{text[:starts[0]]}{begin}\n{body}\n{text[ends[0]:]}"
    return text


def stale(root: Path, rendered: dict[str, dict[str, str]]) -> list[str]:
    """The files under ROOT whose regions differ from RENDERED (render)."""
    texts = {file: (root / file).read_text() for file in rendered}
    return [file for file, regions in rendered.items() if fill(texts[file], regions, file) != texts[file]]


def write(root: Path, rendered: dict[str, dict[str, str]]) -> list[str]:
    """Write RENDERED's regions into the files under ROOT (every file's places checked before
    any is written); the files that changed."""
    texts = {file: (root / file).read_text() for file in rendered}
    filled = {file: fill(texts[file], regions, file) for file, regions in rendered.items()}
    changed = [file for file in rendered if filled[file] != texts[file]]
    for file in changed:
        (root / file).write_text(filled[file])
    return changed
