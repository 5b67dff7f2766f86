"""The measured numbers have one source each: README.md's table of verdicts and docs/results.md's
tables of experiments are what `bbrlab results-doc` writes from docs/measurements.yaml, every
number of a README row is a number of the record of its run, and the suite's and the quick
suite's sizes in the docs are the ones `bbrlab suite --dry-run` prints. Here, not in the unit
stage: the sizes depend on the real traces (startup-lte's downloads last as the trace allows),
which unit tests replace. How entries are checked and regions written: tests/unit/test_results_doc.py."""

import re
import shutil
from pathlib import Path

import pytest
import yaml

from bbrlab import cli
from bbrlab.output.docs import measurements
from bbrlab.runs import docs, suite

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = REPO / "experiments"
FILES = ["README.md", "docs/results.md", "docs/experiments.md", "docs/field.md", str(measurements.PATH)]


@pytest.fixture(scope="module")
def suite_here() -> dict:
    exps, lacking = suite.loadable(EXPERIMENTS)
    if lacking:
        pytest.skip(f"{', '.join(lacking)}: their data is not here (./bbrlab fetch-data)")
    return {e.name: e for e in exps}


@pytest.fixture(scope="module")
def rendered(suite_here) -> dict:
    """What results-doc writes into this checkout's docs, rendered once."""
    return docs.rendered(EXPERIMENTS, REPO)


def region(text: str, name: str) -> str:
    found = re.search(rf"^<!-- begin {name}:.*?-->\n(.*?)\n<!-- end {name} -->$", text, re.S | re.M)
    assert found, f"no region {name}"
    return found[1]


def test_the_committed_docs_are_what_results_doc_writes(capsys, rendered):
    for file, regions in rendered.items():
        text = (REPO / file).read_text()
        for name, body in regions.items():
            assert region(text, name) == body, f"{file}, {name}: stale; run ./bbrlab results-doc"
    assert cli.main(["results-doc", "--check"]) == 0
    assert capsys.readouterr().out == "results-doc: every file is current\n"


def test_every_experiment_has_one_entry_and_every_readme_number_is_in_its_record(suite_here):
    assert measurements.disagreements(measurements.load(REPO), suite_here, REPO) == []
    book = yaml.safe_load((REPO / measurements.PATH).read_text())
    rows = re.findall(r"^\| ([\w.-]+) \|", region((REPO / "README.md").read_text(), "verdicts"), re.M)
    assert rows[1:] == list(book) and sorted(book) == sorted(suite_here)


@pytest.mark.parametrize("quick, file", [(False, "docs/experiments.md"), (True, "docs/results.md")])
def test_the_docs_give_the_sizes_suite_dry_run_prints(capsys, suite_here, quick, file):
    assert cli.main(["suite", "--dry-run", *(["--quick"] if quick else [])]) == 0
    *lines, total = capsys.readouterr().out.splitlines()
    points = sum(int(re.match(r"\S+\s+(\d+) point\(s\)", line)[1]) for line in lines)
    size = re.fullmatch(r"suite: (.*), about .* wall \(nothing run: --dry-run\)", total)[1]
    assert size.startswith(f"{len(lines)} experiments, {points} points, ")
    said = " ".join(region((REPO / file).read_text(), "quick-suite" if quick else "suite-size").split())
    assert f" is {size} (`./bbrlab suite {'--quick ' if quick else ''}--dry-run`" in said


def test_a_readme_number_the_record_does_not_hold_is_refused(suite_here):
    """figure 5's BBR median RTT: 58-71 ms in its file's notes, written before measurement 4;
    61-88 ms per repetition in results.md's record of the five runs the README sums up."""
    raw = yaml.safe_load((REPO / measurements.PATH).read_text())
    raw["figure5"]["numbers"] = "BBR's median RTT 58-71 ms"
    found = measurements.disagreements(measurements.parse(raw, "m"), suite_here, REPO)
    assert found == ["figure5: 58, 71 in its numbers, not in its record"]
    raw["figure5"]["numbers"] = "BBR's median RTT 61-88 ms"
    assert measurements.disagreements(measurements.parse(raw, "m"), suite_here, REPO) == []


@pytest.fixture
def checkout(tmp_path, monkeypatch, suite_here) -> Path:
    """A copy of the docs results-doc reads and writes, as the checkout it works on."""
    for file in FILES:
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / file, tmp_path / file)
    monkeypatch.setattr(cli, "REPO", tmp_path)
    return tmp_path


def test_check_names_a_stale_file_and_results_doc_rewrites_its_region(capsys, checkout, rendered, monkeypatch):
    monkeypatch.setattr(docs, "rendered", lambda folder, root: rendered)  # the same docs: rendered once
    readme = checkout / "README.md"
    old = readme.read_text()
    readme.write_text(old.replace("| figure5 | bloated-buffer", "| figure5 | a stale row, bloated-buffer") + "tail\n")
    assert cli.main(["results-doc", "--check"]) == 1
    assert capsys.readouterr().out == "results-doc: README.md differs from what ./bbrlab results-doc writes\n"
    assert cli.main(["results-doc"]) == 0
    assert capsys.readouterr().out == "results-doc: wrote README.md\n"
    assert readme.read_text() == old + "tail\n"


def test_an_experiment_without_an_entry_is_refused_and_nothing_is_written(capsys, checkout):
    book = checkout / measurements.PATH
    text = book.read_text()
    book.write_text(text[:text.index("\nstep:\n")] + text[text.index("\ncoexist:\n"):])
    before = (checkout / "README.md").read_text()
    assert cli.main(["results-doc"]) == 2
    err = capsys.readouterr().err
    assert err == f"bbrlab: {measurements.PATH} does not hold: step: an experiment with no entry in {measurements.PATH}\n"
    assert (checkout / "README.md").read_text() == before
