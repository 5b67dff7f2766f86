"""A process's CPU time read from /proc (emulation/procs.py): what a sampler cost the guest.
A shell loop's work is done by the commands it starts, counted once it has waited for them."""

import subprocess
import time

from bbrlab.emulation.procs import process_cpu

BUSY = "python3 -c 'import time; t = time.process_time()\nwhile time.process_time() - t < 0.3: pass'"


def test_a_loops_children_count_only_when_asked():
    shell = subprocess.Popen(["bash", "-c", f"{BUSY}; {BUSY}; sleep 30"])
    try:
        deadline = time.monotonic() + 20
        while sum(process_cpu(shell.pid, children=True) or (0, 0)) < 0.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        own, with_children = process_cpu(shell.pid), process_cpu(shell.pid, children=True)
        assert sum(with_children) >= 0.5  # both commands' 0.3 s each, reaped by the shell
        assert sum(own) < 0.2  # the shell itself only waited
    finally:
        shell.kill()
        shell.wait()
    assert process_cpu(shell.pid) is None  # gone
