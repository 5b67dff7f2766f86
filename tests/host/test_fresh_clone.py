"""A fresh clone, where every user starts: no shared/ beside it and no BBRLAB_* variable set.
What measures nothing runs there (the figure script's plot and report, list, a dry run),
and each experiment that needs a trace is marked in one line naming `./bbrlab fetch-data`;
that command, pointed at a file:// mirror of the pinned files, then makes them whole.

The clone is a copy of this working tree's files (tracked, and new ones not ignored), so
what is tested is the tree as it stands. The mirror is made from the files bbrlab reads
beside this checkout (shared/): where they are not, the fetch is skipped, saying so.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bbrlab.schema import datasets

REPO = Path(__file__).resolve().parents[2]
WATCHED = ("vagrant", "virsh", "ip", "tc", "modprobe")  # the VM and the kernel probe: never here
FETCH = "run `./bbrlab fetch-data`"
MISSING = "(not in data/traces or ../shared/traces): " + FETCH
NEEDS_TRACE = {"cellular": "Verizon-LTE-short.up", "startup-lte": "Verizon-LTE-short.down",
               "trace-interval": "Verizon-LTE-short.up"}


IGNORED = (".git", "results", "data", ".vagrant", "__pycache__", ".pytest_cache", "*.egg-info", "build")


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("fresh") / "bbrlab"  # nothing beside it
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True)
    if listed.returncode:  # a copy without .git: the tree without what .gitignore keeps out
        shutil.copytree(REPO, dest, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED))
    for name in filter(None, listed.stdout.decode().split("\0") if not listed.returncode else []):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the tree is not in the clone either
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    assert not (dest.parent / "shared").exists() and not (dest / "data").exists()
    return dest


@pytest.fixture(scope="module")
def run(clone, tmp_path_factory):
    """Run a command of the clone from its root, as a user would, with the watched commands faked."""
    fake = tmp_path_factory.mktemp("bin")
    calls = fake / "calls"
    for name in WATCHED:
        (fake / name).write_text(f"#!/bin/sh\necho \"{name} $*\" >> {calls}\nexit 1\n")
        (fake / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BBRLAB_") and k != "PYTHONPATH"}
    env["PATH"] = f"{fake}:{env['PATH']}"

    def go(*argv: str) -> subprocess.CompletedProcess:
        proc = subprocess.run(argv, cwd=clone, capture_output=True, text=True, env=env, timeout=300)
        assert not calls.exists(), f"{' '.join(argv)} ran: {calls.read_text()}"
        return proc

    return go


def test_the_readmes_host_commands_run_and_name_what_a_trace_keeps_out(run, results):
    plot = run("./figure5.sh", "plot", "--results", str(results))
    assert plot.returncode == 0, plot.stderr
    report = run("./figure5.sh", "report", "--results", str(results))
    assert report.returncode == 0, report.stderr
    assert report.stderr.splitlines() == [f"bbrlab: report: leaving out {name}, which needs trace {trace} {MISSING}"
                                          for name, trace in NEEDS_TRACE.items()]
    text = (results / "report.md").read_text()
    assert "| figure5 |" in text and "Left out for want of data: cellular needs trace Verizon-LTE-short.up" in text


def test_list_marks_each_experiment_that_needs_a_trace_in_one_line(run, clone):
    listed = run("./bbrlab", "list")
    assert listed.returncode == 0 and listed.stderr == "" and "INVALID" not in listed.stdout
    lines = listed.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [p.stem for p in sorted((clone / "experiments").glob("*.yaml"))]
    marked = {line.split()[0]: line for line in lines if "fetch-data" in line}
    assert marked == {name: f"{name:16s} needs trace {trace} {MISSING}" for name, trace in NEEDS_TRACE.items()}


def test_a_dry_run_goes_on_and_a_run_that_needs_a_trace_refuses_in_one_line(run):
    dry = run("./bbrlab", "run", "figure5", "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith("figure5: ") and dry.stderr == "", dry.stderr
    refused = run("./bbrlab", "run", "cellular", "--dry-run")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == f"bbrlab: cellular needs trace Verizon-LTE-short.up {MISSING}\n"


def mirror_of_the_pinned_files(folder: Path) -> str:
    """A file:// base laid out as GitHub's raw files, holding the files bbrlab reads here."""
    for kind, k in datasets.KINDS.items():
        for name, source in k.files.items():
            have = datasets.find(kind, name, {})  # the default read order, beside this checkout
            if have is None:
                pytest.skip(f"needs {k.what} {name} for the mirror: {FETCH}")
            target = folder / source.repo / source.commit / source.path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(have, target)
    return folder.as_uri()


def test_fetch_data_from_a_mirror_makes_the_clone_whole(run, clone, tmp_path):
    base = mirror_of_the_pinned_files(tmp_path / "mirror")
    fetched = run("./bbrlab", "fetch-data", "--from", base)
    assert fetched.returncode == 0 and fetched.stderr == "", fetched.stderr
    assert "fetched Verizon-LTE-short.up into data/traces (434258 bytes, sha256 checked)" in fetched.stdout
    assert "fetched rebbr/experiment4.csv into data/reference (942 bytes, sha256 checked)" in fetched.stdout
    assert fetched.stdout.splitlines()[-1] == "data: traces in data/traces, reference in data/reference"
    listed = run("./bbrlab", "list")
    assert listed.returncode == 0 and "fetch-data" not in listed.stdout and "INVALID" not in listed.stdout
    assert any(line.startswith("cellular          26 points,") for line in listed.stdout.splitlines())
    again = run("./bbrlab", "fetch-data", "--from", (tmp_path / "nowhere").as_uri())  # nothing to download
    assert again.returncode == 0 and "fetched" not in again.stdout and again.stderr == "", again.stderr
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    ignored = subprocess.run(["git", "-C", str(clone), "status", "--porcelain", "--ignored", "data"],
                             capture_output=True, text=True, check=True).stdout
    assert ignored == "!! data/\n"  # never committed
