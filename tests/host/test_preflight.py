"""The preflight against THIS host's real kernel (no VM): it must name exactly what the
kernel lacks, agree with the probe that figure5.sh uses to pick the VM, and reach the
user as one clear message, never a traceback.

On a CI machine (no sch_netem, no sch_fq) this checks the failure path for real; on a
kernel that has everything it checks that nothing is reported missing.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bbrlab.emulation import preflight

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, tc)")


def probe_lacks() -> set:
    """What vm/dispatch.sh's kernel probe (the one that sends runs to the VM) reports."""
    out = subprocess.run(["bash", "-c", f"source {REPO / 'vm/dispatch.sh'}; kernel_lacks"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_preflight_agrees_with_the_dispatch_probe():
    lacks = probe_lacks()
    text = "\n".join(preflight.kernel_problems({"bbr", "cubic"}, pacing_fq=True))
    for module in ("sch_netem", "sch_fq", "sch_htb"):
        assert (module in text) == (module in lacks), (module, text, lacks)
    assert ("bbr" in text) == ("tcp_bbr" in lacks), (text, lacks)


def test_run_on_this_host_fails_with_one_clear_message_or_gets_past_preflight():
    lacks = probe_lacks()
    env = dict(os.environ, PYTHONPATH=str(REPO / "mininet"))
    # pacing=fq: the variant that needs every qdisc the probe looks for.
    proc = subprocess.run([sys.executable, "-m", "bbrlab", "--results", "/nonexistent/bbrlab", "run", "figure5",
                           "--quick", "--set", "pacing=fq"], capture_output=True, text=True, env=env, timeout=60,
                          cwd=REPO)
    assert "Traceback" not in proc.stderr, proc.stderr
    if not lacks:
        pytest.skip("this kernel can emulate: the integration tests run figure5 for real")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("bbrlab: preflight failed"), proc.stderr
    for module in lacks - {"network-namespaces"}:
        name = module.removeprefix("tcp_")
        assert name in proc.stderr, (module, proc.stderr)
    assert "figure5.sh --vm" in proc.stderr  # and how to get a kernel that can
    assert "apt-get install" in proc.stderr or not any(m.startswith("sch_") for m in lacks)


def test_figure5_script_refuses_bad_input_before_doing_anything():
    proc = subprocess.run([str(REPO / "figure5.sh"), "--local", "sideways"], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("figure5.sh: error: unknown action 'sideways' "
                                   "(one of: all bbr cubic plot list report calibrate)")


def test_a_missing_bbr_noagg_says_how_provisioning_builds_it():
    # this host's kernel has no tcp_bbr_noagg (the project builds it only in its VM)
    text = "\n".join(preflight.kernel_problems({"bbr_noagg"}, pacing_fq=False))
    assert "bbr_noagg" in text and "ansible role bbrnoagg" in text and "linux-headers-" in text


def test_a_missing_bbr410_says_how_provisioning_builds_it():
    text = "\n".join(preflight.kernel_problems({"bbr410"}, pacing_fq=False))
    assert "bbr410" in text and "ansible role bbr410" in text and "Debian's 6.1 kernel" in text


@pytest.mark.parametrize("argv", [["shell", "figure5"], ["shell", "figure5", "--only", "cc=bbr"]])
def test_shell_on_this_host_says_one_thing_and_no_traceback(argv):
    """Without Mininet or the kernel's modules, shell refuses as run does: a point to choose,
    or the preflight's message; Mininet is imported only where a network is built."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "mininet"))
    proc = subprocess.run([sys.executable, "-m", "bbrlab", *argv], capture_output=True, text=True, env=env,
                          timeout=60, cwd=REPO)
    assert "Traceback" not in proc.stderr, proc.stderr
    if len(argv) == 2:
        assert proc.returncode == 2 and proc.stderr.startswith("bbrlab: shell: 2 points of figure5 are chosen")
    elif probe_lacks():
        assert proc.returncode == 2 and proc.stderr.startswith("bbrlab: preflight failed"), proc.stderr


def test_a_quic_experiment_without_picoquicdemo_says_how_provisioning_builds_it():
    """This host has no picoquicdemo (the project builds it into the testbed's box): a run
    of quic-jitter names it and the role that builds it, beside what the kernel lacks."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "mininet"), PATH="/usr/sbin:/usr/bin:/sbin:/bin")
    proc = subprocess.run([sys.executable, "-m", "bbrlab", "--results", "/nonexistent/bbrlab", "run", "quic-jitter",
                           "--quick"], capture_output=True, text=True, env=env, timeout=60, cwd=REPO)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2 and proc.stderr.startswith("bbrlab: preflight failed"), proc.stderr
    assert "picoquicdemo is missing" in proc.stderr and "ansible role picoquic" in proc.stderr, proc.stderr


def test_another_kernel_is_named_only_when_the_testbed_cannot_provide_what_is_missing(monkeypatch):
    # in the testbed's VM with bbr410 left out of the box (offline): its own hint, not "use
    # another kernel or the testbed VM"; a missing qdisc or a CC Linux itself ships still says so
    monkeypatch.setattr(preflight, "missing_qdiscs", lambda needed: [])
    monkeypatch.setattr(preflight, "missing_ccs", lambda ccs: sorted(ccs - {"cubic"}))
    problems, other_kernel = preflight.kernel_findings({"bbr410", "bbr_noagg", "cubic"}, pacing_fq=False)
    assert not other_kernel and any("ansible role bbr410" in p for p in problems)
    assert preflight.kernel_findings({"bbr410", "vegas"}, pacing_fq=False)[1]
    monkeypatch.setattr(preflight, "missing_qdiscs", lambda needed: ["sch_netem"])
    assert preflight.kernel_findings({"cubic"}, pacing_fq=False)[1]
