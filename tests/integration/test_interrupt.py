"""Ctrl-C in the middle of a run: finished points are kept untouched, the point in
progress is dropped, nothing is left behind (veths, host shells, iperf3, qdiscs), and
running the same command again finishes only the missing points.

It runs figure 5 with the paper's fq pacing (`pacing=fq`), so the fq-on-the-sender path
is exercised for real too.
"""

import hashlib
import os
import signal
import subprocess
import time

import pytest
from conftest import REPO, RESULTS, bbrlab, leftovers

from bbrlab.store.results import RunDir, read_json

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")

# A receive buffer the root namespace does not have: seen inside every host only if
# bbrlab set it there (a new namespace copies the root's values).
RMEM = "4096 131072 67108864"
# 10 s flows: what is tested is the interruption and the resume, not figure 5's claims
COMMAND = ["run", "figure5", "--quick", "--no-shuffle", "--set", "pacing=fq", "--set", "duration=10s",
           "--set", f"sysctls.net.ipv4.tcp_rmem={RMEM}"]


def digest(folder):
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            h.update(path.relative_to(folder).as_posix().encode() + path.read_bytes())
    return h.hexdigest()


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def test_ctrl_c_keeps_finished_points_and_a_rerun_finishes_only_the_rest():
    root = RESULTS / "interrupt"
    base = root / "figure5"
    before = set(base.iterdir()) if base.is_dir() else set()
    proc = subprocess.Popen([str(REPO / "bbrlab"), "--results", str(root), *COMMAND, "--fresh"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for(lambda: set(base.iterdir()) - before if base.is_dir() else False, 60, "the run directory")
        rundir = RunDir((set(base.iterdir()) - before).pop())
        wait_for(lambda: len(rundir.finished_points()) == 1, 240, "the first point to finish")
        first = rundir.finished_points().pop()
        # iperf3 -J writes only at exit; the socket sampler's lines appear while the flow runs.
        ss = rundir.points_dir / ".partial-cc=cubic,rep1" / "raw" / "tcp-snd1.jsonl"
        wait_for(lambda: ss.is_file() and '"cubic"' in ss.read_text(), 120, "the second point's flow")
        time.sleep(3)  # mid-flow (the flows last 10 s)
        kept = digest(rundir.points_dir / first)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted; finished points are kept" in err
    assert leftovers() == []
    assert rundir.finished_points() == {first}
    assert not any(p.name.startswith(".partial") for p in rundir.points_dir.iterdir())
    assert read_json(rundir.path / "run.json")["status"] == "interrupted"

    again = bbrlab(*COMMAND, results=root, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"resuming {rundir.path} (1 of 2 points done)" in again.stderr
    meta = read_json(rundir.path / "run.json")
    assert meta["status"] == "complete"
    assert [s["points_run"] for s in meta["sessions"]] == [1, 1]
    assert rundir.finished_points() == {"cc=bbr,rep1", "cc=cubic,rep1"}
    assert digest(rundir.points_dir / first) == kept  # the finished point was not rewritten
    assert (rundir.path / "figure5.png").is_file()
    for record in rundir.point_records():
        qdiscs = record["testbed"]["interfaces"]["snd1-eth0"]["qdiscs"]
        assert [q["kind"] for q in qdiscs] == ["fq"]  # the fq pacing patch, on the sender only
        assert record["pacing"] == "fq"
        assert {h: v["net.ipv4.tcp_rmem"] for h, v in record["testbed"]["sysctls"].items()} == {
            h: RMEM for h in ("snd1", "r1", "r2", "rcv1")}
    root_rmem = subprocess.run(["sysctl", "-n", "net.ipv4.tcp_rmem"], capture_output=True, text=True,
                               check=True).stdout.split()
    assert " ".join(root_rmem) != RMEM
