"""docs/measurements.yaml and `bbrlab results-doc`, offline: an entry's keys and values are
checked and named, a README number its record does not hold is refused, a row says when the file
now asks for other repetitions than its run had, and only the text between a region's markers is
ever written. (That the committed docs are what it writes, with the real traces the suite's sizes
depend on: tests/host/test_docs_numbers.py.)"""

from pathlib import Path
from types import SimpleNamespace

import pytest

from bbrlab.errors import SpecError
from bbrlab.output.docs import measurements, results_doc
from bbrlab.runs import estimate
from bbrlab.schema import experiment as spec
from bbrlab.store.results import MEASUREMENT

REPO = Path(__file__).resolve().parents[2]
ENTRY = {"what": "w", "verdict": "reproduced", "numbers": "median RTT 61-88 ms",
         "measured": {"runs": "one run", "kernel": "debian", "measurement": 4}, "record": {"in": "notes"}}


def test_a_readme_number_the_notes_do_not_hold_is_refused():
    """figure 5's notes said 58-71 ms (before measurement 4) where its record says 61-88 ms."""
    stale = {"x": SimpleNamespace(notes=("median RTT 58-71 ms against 40 ms base",))}
    assert measurements.disagreements(measurements.parse({"x": ENTRY}, "m"), stale, REPO) == [
        "x: 61, 88 in its numbers, not in its notes"]
    held = {"x": SimpleNamespace(notes=("its median RTT 61-88 ms from one repetition to the next",))}
    assert measurements.disagreements(measurements.parse({"x": ENTRY}, "m"), held, REPO) == []
    assert measurements.disagreements(measurements.parse({"y": ENTRY}, "m"), held, REPO) == [
        f"x: an experiment with no entry in {measurements.PATH}", f"y: an entry of {measurements.PATH} for no "
        "experiment in experiments/"]


def test_a_run_with_other_repetitions_than_the_file_asks_now_says_so():
    """figure5-aqm ran with 2 repetitions where its file now asks repeat: auto: the README said
    "now 3-8" by hand, and would have gone on saying it whatever the file asked."""
    aqm = spec.load(REPO / "experiments" / "figure5-aqm.yaml")
    step = spec.load(REPO / "experiments" / "step.yaml")

    def cell(repeat, exp):
        entry = measurements.parse({"x": {**ENTRY, "measured": {**ENTRY["measured"], "repeat": repeat}}}, "m")["x"]
        return results_doc.measured_cell(entry, exp)

    assert cell(2, aqm) == "one run, Debian's 6.1; the file now asks repeat: auto (3-8 repetitions)"
    assert cell("auto", aqm) == "one run, Debian's 6.1"
    assert cell(2, step) == "one run, Debian's 6.1; the file now asks 1 repetition"
    assert cell(1, step) == "one run, Debian's 6.1"
    old = {**ENTRY, "measured": {**ENTRY["measured"], "measurement": 3, "date": "2026-11-26", "host": "a quiet host"}}
    entry = measurements.parse({"x": old}, "m")["x"]
    assert results_doc.measured_cell(entry, step) == "one run, Debian's 6.1, 2026-11-26, a quiet host, measurement 3"


def test_the_size_the_docs_quote_is_the_one_suite_dry_run_ends_with():
    figure5, step = (spec.load(REPO / "experiments" / f"{name}.yaml") for name in ("figure5", "step"))
    size = estimate.size([figure5, step])
    assert size == estimate.Size(2, 8, 240.0, 540.0)  # figure5's 6 points of 30 s may reach 8 repetitions each
    assert size.text() == "2 experiments, 8 points, 4.0-9.0 min of flows"
    assert estimate.suite_lines([figure5, step], REPO / "no-results")[-1] == (
        "suite: 2 experiments, 8 points, 4.0-9.0 min of flows, about 5.3-12.0 min wall (nothing run: --dry-run)")


@pytest.mark.parametrize("change, message", [
    ({"kernel": "bbr2"}, "m: x.measured.kernel: 'bbr2': one of debian, bbr3"),
    ({"measurement": MEASUREMENT + 1}, f"m: x.measured.measurement: a whole number from 1 to {MEASUREMENT} (the "
                                       "testbed's own)"),
    ({"runs": None}, "m: x.measured.runs: expected a text"),
    ({"repaet": 2}, "m: x.measured.repaet: unknown key (did you mean repeat?) (known: date, host, kernel, "
                    "measurement, repeat, runs)"),
])
def test_a_wrong_measured_key_or_value_is_named(change, message):
    with pytest.raises(SpecError) as err:
        measurements.parse({"x": {**ENTRY, "measured": {**ENTRY["measured"], **change}}}, "m")
    assert str(err.value) == message


@pytest.mark.parametrize("entry, message", [
    ({k: v for k, v in ENTRY.items() if k != "record"}, "m: x: say where the run is told in full: `rows` of a "
     "table, or `record`"),
    ({**ENTRY, "numbers": "a | b"}, "m: x.numbers: a `|` would end the table's cell early"),
    ({**ENTRY, "table": "field"}, "m: x: `table` and `rows` go together"),
    ({**ENTRY, "record": {"in": "docs/results.md"}}, "m: x.record: `from` (the passage's first words) goes with "
     "a file, not with notes"),
    ({**ENTRY, "record": {"in": "README.md", "from": "| figure5 |"}}, "m: x.record.in: 'README.md': `notes`, or a "
     "page of the docs (docs/NAME.md), not the README written from here"),
])
def test_an_entry_that_cannot_be_written_or_checked_is_named(entry, message):
    with pytest.raises(SpecError) as err:
        measurements.parse({"x": entry}, "m")
    assert str(err.value) == message


def test_a_passage_runs_to_the_next_list_item_or_heading():
    text = "# A\nlead one 1\n| 2 |\n- item 3\n- lead two 4\n  5\n## B 6\n"
    assert measurements.passage(text, "lead one", "w") == "lead one 1\n| 2 |"
    assert measurements.passage(text, "- lead two", "w") == "- lead two 4\n  5"
    with pytest.raises(SpecError, match="'nowhere' is not in the file"):
        measurements.passage(text, "nowhere", "w")


def test_fill_writes_only_between_the_markers_and_again_the_same():
    text = "before\n<!-- begin t: old words -->\nold\n<!-- end t -->\nafter\n"
    once = results_doc.fill(text, {"t": "new"}, "f.md")
    assert once == f"before\n{results_doc.BEGIN.format(name='t')}\nnew\n<!-- end t -->\nafter\n"
    assert results_doc.fill(once, {"t": "new"}, "f.md") == once
    with pytest.raises(SpecError, match="f.md: no single place for u"):
        results_doc.fill(text, {"u": "new"}, "f.md")
