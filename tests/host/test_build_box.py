"""vm/build-box.sh's arguments, checked without building anything: the architecture is
validated first, and --status reads only the stamp under VAGRANT_HOME (a temporary one)."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def build_box(tmp_path, *args):
    env = dict(os.environ, BBRLAB_CACHE=str(tmp_path / "cache"), VAGRANT_HOME=str(tmp_path / "vagrant.d"))
    return subprocess.run([str(REPO / "vm" / "build-box.sh"), *args], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.mark.parametrize("arch", ["amd64", "arm64"])
def test_status_of_a_box_never_built_is_stale(tmp_path, arch):
    proc = build_box(tmp_path, "--arch", arch, "--status")
    assert (proc.returncode, proc.stdout) == (1, "stale\n"), proc.stderr
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("args, message", [
    (["--arch", "sparc"], "--arch must be amd64 or arm64, got 'sparc'"),
    (["--arch"], "--arch needs a value"),
    (["--bogus"], "unknown argument: --bogus"),
])
def test_bad_arguments_are_refused(tmp_path, args, message):
    proc = build_box(tmp_path, *args)
    assert proc.returncode == 1 and message in proc.stderr
