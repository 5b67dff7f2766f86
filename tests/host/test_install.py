"""`pip install .` gives the `bbrlab` command: installed into a fresh venv (no system site
packages, so nothing comes from Debian's python3-* packages or from this checkout), it lists,
dry-runs, plots, reports, exports and compares, working on the checkout it is run in or the
one $BBRLAB_HOME names, and says in one line when there is none. The venv and its install
are made once for the module; the checkout is left as it was (the build runs on a copy)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bbrlab import __version__
from bbrlab.schema import root

REPO = Path(__file__).resolve().parents[2]
PYTHON = "/usr/bin/python3"
SOURCES = ("pyproject.toml", "README.md", "LICENSE")  # what the build reads besides the package


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin/ of a venv with this checkout's package installed by pip (PyPI's wheels)."""
    where = tmp_path_factory.mktemp("install")
    source = where / "source"
    for name in SOURCES:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "mininet" / "bbrlab", source / "mininet" / "bbrlab",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    made = subprocess.run([PYTHON, "-m", "venv", str(where / "venv")], capture_output=True, text=True, timeout=300)
    if made.returncode != 0 and ("ensurepip" in made.stdout + made.stderr or "No module named venv" in made.stderr):
        pytest.skip(f"{PYTHON} -m venv is unavailable (apt-get install python3-venv; "
                    f"vm/vm.sh deps --test-tools installs it): {(made.stdout + made.stderr).strip().splitlines()[-1]}")
    assert made.returncode == 0, made.stdout + made.stderr
    bin_ = where / "venv" / "bin"
    pip = subprocess.run([str(bin_ / "pip"), "install", "--disable-pip-version-check", "--no-input", "-q",
                          str(source)], capture_output=True, text=True, timeout=1200, env=clean_env())
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return bin_


def clean_env(**extra: str) -> dict:
    """This environment without what would let the checkout's package in (PYTHONPATH) or
    name a project ($BBRLAB_HOME), with EXTRA."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", root.VARIABLE)}
    return dict(env, **extra)


def bbrlab(bin_: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_ / "bbrlab"), *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env=clean_env(MPLCONFIGDIR=str(bin_.parent / "mpl"), **env))  # its cache: the venv's


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    return proc.stdout


def nonempty(path: Path) -> Path:
    assert path.is_file() and path.stat().st_size > 0, f"{path}: missing or empty"
    return path


def test_the_installed_package_is_the_venvs_own(installed):
    proc = subprocess.run([str(installed / "python"), "-c", "import bbrlab, yaml, matplotlib, numpy, scipy; "
                           "print(bbrlab.__file__, bbrlab.__version__)"], capture_output=True, text=True,
                          timeout=120, env=clean_env(), cwd=installed)
    path, version = ok(proc).split()
    assert Path(path).is_relative_to(installed.parent) and "site-packages" in path
    assert version == __version__


def test_list_and_dry_run_on_the_checkout_it_is_run_in(installed, tmp_path):
    listed = ok(bbrlab(installed, "list", cwd=REPO / "tests"))  # a folder below the root will do
    names = [line.split()[0] for line in listed.splitlines()]
    assert names == [p.stem for p in sorted((REPO / "experiments").glob("*.yaml"))]
    assert "INVALID" not in listed
    dry = ok(bbrlab(installed, "run", "figure5", "--dry-run", "--results", str(tmp_path / "results"), cwd=REPO))
    assert dry.startswith("figure5: ") and "== point cc=bbr,rep1" in dry
    assert not (tmp_path / "results").exists()


def test_bbrlab_home_names_the_checkout_and_without_one_it_says_so(installed, tmp_path):
    assert "figure5" in ok(bbrlab(installed, "list", cwd=tmp_path, BBRLAB_HOME=str(REPO)))
    proc = bbrlab(installed, "list", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"bbrlab: no experiments/ in {tmp_path}: run bbrlab in a checkout of the project "
                           f"(or a folder below it), or set {root.VARIABLE} to one\n")


def test_plot_report_export_compare_of_a_finished_run(installed, results, tmp_path):
    (run,) = (results / "figure5").iterdir()
    ok(bbrlab(installed, "plot", str(run), cwd=REPO))
    nonempty(run / "verdict.json")
    nonempty(run / "figure5.png")

    out = ok(bbrlab(installed, "report", "figure5", "--results", str(results), "--out", str(tmp_path / "r.md"),
                    cwd=REPO))
    assert out == f"report: {tmp_path / 'r.md'}\n"
    assert "figure5" in nonempty(tmp_path / "r.md").read_text()

    tables = tmp_path / "tables"
    out = ok(bbrlab(installed, "export", str(run), "--out", str(tables), cwd=tmp_path))  # needs no checkout
    assert out.split() == [str(nonempty(tables / f)) for f in ("points.csv", "flows.csv", "series.csv")]

    again = tmp_path / "again" / "figure5" / run.name
    shutil.copytree(run, again)
    out = ok(bbrlab(installed, "compare", str(run), str(again), "--out", str(tmp_path / "c.png"), cwd=tmp_path))
    assert "cc=bbr" in out and f"figure: {tmp_path / 'c.png'}" in out
    nonempty(tmp_path / "c.png")


def test_the_root_is_the_packages_checkout_else_bbrlab_home_else_the_cwd_or_above(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "experiments").mkdir(parents=True)
    (checkout / "experiments" / "fidelity.yaml").write_text("")
    (checkout / "deep" / "down").mkdir(parents=True)
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "bbrlab"
    assert root.ROOT == REPO  # this checkout's package: its own checkout, as ever
    assert root.find(REPO / "mininet" / "bbrlab", {root.VARIABLE: str(checkout)}, tmp_path) == REPO
    assert root.find(site, {root.VARIABLE: str(checkout)}, tmp_path) == checkout
    assert root.find(site, {}, checkout / "deep" / "down") == checkout
    assert root.find(site, {}, tmp_path) is None
