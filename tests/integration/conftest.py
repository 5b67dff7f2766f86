"""Shared helpers of the integration tests (run inside the testbed VM as root)."""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(os.environ.get("BBRLAB_TEST_RESULTS", "/tmp/bbrlab-integration"))
sys.path.insert(0, str(REPO / "mininet"))

TESTBED_INTF = re.compile(r"^(snd\d+|rcv\d+|r1|r2)-eth\d+$")

# The integration tests CI's 2-core TCG machines leave out to fit CI's 90 minutes, each for a
# reason its skip gives (labs 2-4, cdn-mix-aqm); BBRLAB_TEST_ALL=1 runs them too:
#   sudo vm/vm.sh run env BBRLAB_TEST_ALL=1 python3 -m pytest -v tests/integration
ALL = os.environ.get("BBRLAB_TEST_ALL") == "1"


def only_with_all(why: str) -> None:
    """Skip the calling test unless BBRLAB_TEST_ALL=1, saying WHY CI leaves it out."""
    if not ALL:
        pytest.skip(f"runs with BBRLAB_TEST_ALL=1: {why}")


def bbrlab(*args, results: Path, timeout: float = 900, input: str | None = None) -> subprocess.CompletedProcess:
    """Run the CLI the way a user does (./bbrlab), capturing its output. Past TIMEOUT the
    test fails with where the command was: its threads' stacks and its processes."""
    argv = [str(REPO / "bbrlab"), "--results", str(results), *args]
    # its own process group, so that what it started can be stopped with it; no `with`: its
    # exit waits for the process without a bound, and one stuck in the kernel never ends
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE if input is not None else None, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO, start_new_session=True)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"bbrlab {' '.join(args)} did not end in {timeout:g} s\n{stuck(proc)}", pytrace=False)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def stuck(proc: subprocess.Popen) -> str:
    """A command PROC that ran too long, stopped as Ctrl-C would (SIGINT to its group, then
    SIGKILL after 60 s) and said: the processes, the kernel's last lines and the command's
    threads' stacks then, and its output's end."""
    # every process: Mininet's host shells run in sessions of their own
    tree = subprocess.run(["ps", "-e", "-o", "pid,ppid,stat,etime,time,args", "--forest"],
                          capture_output=True, text=True).stdout
    # the kernel's last words: a namespace or device that will not go away says so there
    kernel = subprocess.run(["dmesg", "--ctime"], capture_output=True, text=True).stdout.splitlines()[-30:]
    os.kill(proc.pid, signal.SIGUSR1)  # faulthandler: each thread's stack on its stderr
    out, err = "", ""
    for sig, wait in ((signal.SIGINT, 60), (signal.SIGKILL, 30)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:  # its group is gone: what it wrote is still to be read
            pass
        try:
            out, err = proc.communicate(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    return "\n".join([f"the processes (it is {proc.pid}):", tree[-6000:], "the kernel's log:", *kernel,
                      "its output's end:", (out or "")[-3000:], (err or "")[-8000:]])


def fresh_quick(name: str, root: Path, *extra: str, timeout: float = 1800, figure: bool = False):
    """A fresh run of NAME's quick profile under ROOT (EXTRA: more `run` arguments): its RunDir.
    Exit 3 is accepted: a claim that did not hold is the tests' to assert, not the run's.
    FIGURE: drawn in the VM (half a minute a figure under TCG); else --no-figure, and the
    host draws it after the pull (tests/run.sh's figures stage)."""
    from bbrlab.store.results import RunDir

    proc = bbrlab("run", name, "--quick", "--fresh", *extra, *(() if figure else ("--no-figure",)),
                  results=root, timeout=timeout)
    print(proc.stdout, proc.stderr[-4000:])
    assert proc.returncode in (0, 3), proc.stderr[-4000:]
    return RunDir.latest(root, name)


def by_point(rundir) -> dict:
    """{point id without the repetition: its record} of RUNDIR."""
    return {r["id"].rsplit(",rep", 1)[0]: r for r in rundir.point_records()}


def leftovers() -> list[str]:
    """Anything a run could leave behind: veths, Mininet host shells, emulation qdiscs."""
    found = []
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if TESTBED_INTF.match(name):
            found.append(f"veth {name}")
    procs = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True).stdout
    found += [f"process {line.strip()}" for line in procs.splitlines()
              if re.search(r"mininet:(snd|rcv|r1|r2)|iperf3 -[sc]|picoquicdemo|irtt (server|client)|mm-(delay|loss|link) ", line)]
    qdiscs = json.loads(subprocess.run(["tc", "-j", "qdisc", "show"], capture_output=True, text=True,
                                       check=True).stdout or "[]")
    found += [f"qdisc {q['kind']} on {q.get('dev')}" for q in qdiscs if q["kind"] in ("netem", "htb", "cake")]
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    found += [f"netns {n}" for n in netns.split() if n.startswith("bbrlab")]
    return found


def pytest_collection_modifyitems(items):
    """test_calibrate.py first: it stores the calibration every later run is judged against
    (a run before it would measure one of its own, minutes of duplicated work)."""
    items.sort(key=lambda item: item.fspath.basename != "test_calibrate.py")


@pytest.fixture(autouse=True)
def clean_machine():
    """Every integration test starts and ends with nothing left by a run."""
    assert leftovers() == [], "leftovers before the test"
    yield
    assert leftovers() == [], "leftovers after the test"
