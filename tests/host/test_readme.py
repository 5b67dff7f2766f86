"""The README stays the short page its three readers start from: at most 160 lines, the two
commands a newcomer needs on a fresh machine, a verdict for every experiment, and a link to
each reader's own docs. Its commands and links are checked with every doc's by test_docs.py."""

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
READERS = ("labs/README.md", "docs/results.md", "docs/experiments.md", "docs/experiment-format.md",
           "docs/design.md", "docs/testing.md")


def test_the_readme_is_at_most_160_lines():
    assert len(README.splitlines()) <= 160


def test_the_readme_gives_a_newcomer_the_two_commands():
    blocks = re.findall(r"^```sh\n(.*?)^```", README, re.S | re.M)
    commands = [re.sub(r"\s+#.*$", "", line).strip() for block in blocks for line in block.splitlines()]
    assert [c for c in commands if c] == ["sudo ./figure5.sh all", "sudo tests/run.sh"]


def test_the_readme_sends_each_reader_to_their_docs():
    links = set(re.findall(r"\]\(([^)#\s]+)\)", README))
    for doc in READERS:
        assert doc in links and (REPO / doc).is_file(), doc


def test_the_verdicts_table_has_a_row_for_every_experiment():
    rows = set(re.findall(r"^\| ([\w.-]+) \|", README, re.M))
    names = {yaml.safe_load(f.read_text())["name"] for f in (REPO / "experiments").glob("*.yaml")}
    assert names <= rows, f"experiments without a row in the README's table: {sorted(names - rows)}"
