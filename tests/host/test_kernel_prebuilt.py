"""vm/kernel-prebuilt.sh: a build of the current inputs made elsewhere (../shared/cache/
kernels/<hash>) is taken into the cache only when its manifest names that hash and its
image holds the three BBR modules it describes; anything else is left to vm/build-kernel.sh."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "cache" / "kernels"


def current_hash():
    proc = subprocess.run([str(REPO / "vm" / "build-kernel.sh"), "--print-dir"], capture_output=True, text=True,
                          env=dict(os.environ, BBRLAB_CACHE="/nonexistent"), timeout=60)
    return Path(proc.stdout.strip()).name


@pytest.fixture
def prebuilt(tmp_path):
    """A copy of ../shared's entry of the current inputs, and a run of the script on it."""
    entry = SHARED / current_hash()
    if not (entry / "manifest").is_file():
        pytest.skip(f"no prebuilt kernel of the current inputs in {SHARED} (vm/build-kernel.sh builds one)")
    copy = tmp_path / "prebuilt" / entry.name
    shutil.copytree(entry, copy)

    def run():
        env = dict(os.environ, BBRLAB_CACHE=str(tmp_path / "cache"), BBRLAB_PREBUILT_KERNELS=str(copy.parent))
        return subprocess.run([str(REPO / "vm" / "kernel-prebuilt.sh")], capture_output=True, text=True, env=env,
                              timeout=120)
    return copy, run, tmp_path / "cache" / "kernels" / entry.name


def test_the_entry_of_the_current_inputs_is_taken(prebuilt):
    _, run, cached = prebuilt
    proc = run()
    assert proc.returncode == 0 and "taken from" in proc.stderr, proc.stderr
    assert "taken_from=" in (cached / "manifest").read_text()
    assert run().returncode == 0  # taken before: nothing more to do


@pytest.mark.parametrize(("change", "says"), [
    (lambda m: m.replace("inputs_hash=", "inputs_hash=0"), "does not name inputs hash"),
    (lambda m: m.replace("registered as bbr3", "registered as bbr4"), "tcp_bbr3 in"),
])
def test_an_entry_that_is_not_what_it_says_is_built_instead(prebuilt, change, says):
    copy, run, cached = prebuilt
    (copy / "manifest").write_text(change((copy / "manifest").read_text()))
    proc = run()
    assert proc.returncode == 1 and says in proc.stderr and "the kernel is built instead" in proc.stderr, proc.stderr
    assert not cached.exists()


def test_a_missing_package_is_built_instead(prebuilt):
    copy, run, cached = prebuilt
    next(copy.glob("linux-headers-*.deb")).unlink()
    proc = run()
    assert proc.returncode == 1 and "lacks the packages its manifest names" in proc.stderr
    assert not cached.exists()
