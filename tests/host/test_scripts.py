"""The figure scripts and reproduce.sh on THIS host, as a user runs them: what measures
nothing (plot, list, report, --dry-run) runs here without the VM or root, even on a kernel
without netem; bad input is refused before anything starts; the help is true.

A fake `vagrant` (and `virsh`, `ip`, `tc`, `modprobe`) first on PATH records any call: the
VM or the kernel probe being touched fails the test.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_figure5_plot_redraws_on_this_host_without_the_vm(sh, results):
    proc = sh("figure5.sh", "plot", "--results", str(results))
    assert proc.returncode == 0, proc.stderr
    (run,) = (results / "figure5").iterdir()
    assert (run / "figure5.png").stat().st_size > 0 and (run / "verdict.json").is_file()
    assert f"figure: {run / 'figure5.png'}" in proc.stdout
    proc = sh("figure5.sh", "plot", "--format", "png,svg", "--results", str(results))
    assert proc.returncode == 0 and (run / "figure5.svg").is_file(), proc.stderr


def test_figure5_report_and_list_run_here(sh, results, tmp_path):
    assert sh("figure5.sh", "plot", "--results", str(results)).returncode == 0
    proc = sh("figure5.sh", "report", "--results", str(results))
    assert proc.returncode == 0, proc.stderr
    assert "| figure5 |" in (results / "report.md").read_text()
    empty = sh("reproduce.sh", "report", "--results", str(tmp_path / "nothing"))
    assert empty.returncode == 2 and "no finished run of any experiment" in empty.stderr
    listed = sh("figure5.sh", "list")
    assert listed.returncode == 0 and "figure5 " in listed.stdout and "INVALID" not in listed.stdout


@pytest.mark.parametrize("args, chosen", [
    (["--dry-run", "all"], None),
    (["bbr", "--dry-run"], "3 chosen by the action bbr"),
    (["--only", "cc=cubic", "--dry-run", "all"], "3 chosen by --only"),
    (["--only", "cc=bbr", "--dry-run", "bbr"], "3 chosen by the action bbr and --only"),
    (["--paper", "--dry-run", "all"], None),
])
def test_a_dry_run_goes_through_to_bbrlab_run_here(sh, args, chosen):
    proc = sh("figure5.sh", *args)
    assert proc.returncode == 0, proc.stderr
    name = "figure5-paper" if "--paper" in args else "figure5"
    assert proc.stdout.startswith(f"{name}: ")
    assert (f"({chosen})" in proc.stdout) == (chosen is not None) and (" chosen by " in proc.stdout) == bool(chosen)


@pytest.mark.parametrize("script, args, message", [
    ("figure6.sh", ["bbr"], "unknown action 'bbr' (one of: all plot list report calibrate)"),
    ("reproduce.sh", ["--set", "rate=20Mbit", "all"], "--set: the suite runs every experiment as its file says"),
    ("reproduce.sh", ["--dry-run", "all"], "--dry-run: see each experiment's plan"),
    ("reproduce.sh", ["plot"], "unknown action 'plot' (one of: all report list calibrate)"),
    ("figure5.sh", ["--set", "loss=0.5", "--dry-run", "all"],
     "link.loss: 0.5 needs a unit: did you mean 50% (0.5 as a fraction) or 0.5%?"),
    ("figure5.sh", ["plot", "--quick"], "'plot' takes no run options"),
    ("figure5.sh", ["--format", "svg", "all"], "--format is for the plot action"),
    # a CC's action and the options that ask for other points: said as the action, not as an --only
    ("figure5.sh", ["--only", "cc=cubic", "--dry-run", "bbr"], "the action bbr runs the points of cc=bbr, but "
     "--only cc=cubic asks for other points: use the action all with --only cc=cubic, or the action cubic"),
    ("figure5.sh", ["--set", "cc=reno", "--dry-run", "bbr"], "the action bbr runs the points of cc=bbr, but "
     "figure5 has no cc sweep with --set cc=reno (every point runs reno): use the action all"),
])
def test_bad_input_is_refused_before_anything_starts(sh, script, args, message):
    proc = sh(script, *args)
    assert proc.returncode == 2 and message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_the_help_offers_what_the_scripts_accept(sh):
    five = sh("figure5.sh", "--help").stdout
    assert "--paper" in five and "--dry-run" in five and "--only" in five
    assert "(ACTION: all, bbr, cubic, plot, list, report, calibrate)" in five
    six = sh("figure6.sh", "--help").stdout
    assert "(ACTION: all, plot, list, report, calibrate)" in six and " bbr " not in six and "bbr," not in six
    suite = sh("reproduce.sh", "--help").stdout
    assert "suite.yaml" not in suite and "plot" not in suite and "--set" not in suite and "--only" not in suite
    assert "(ACTION: all, report, list, calibrate)" in suite


def test_an_experiment_of_ones_own_dry_runs_and_plots_here(sh, results, tmp_path):
    mine = tmp_path / "mylab.yaml"
    mine.write_text((REPO / "experiments" / "figure5.yaml").read_text().replace("name: figure5", "name: mylab"))
    proc = sh("experiment.sh", str(mine), "--dry-run", "--set", "rate=20Mbit", "all")
    assert proc.returncode == 0 and proc.stdout.startswith("mylab: 6 point(s)") and "rate 20000000bit" in proc.stdout
    (results / "figure5").rename(results / "mylab")  # the fixture's run, as if of mylab
    ran = next((results / "mylab").iterdir()) / "spec.yaml"
    ran.write_text(ran.read_text().replace("name: figure5", "name: mylab"))
    proc = sh("experiment.sh", str(mine), "plot", "--results", str(results))
    assert proc.returncode == 0, proc.stderr
    assert (next((results / "mylab").iterdir()) / "mylab.png").is_file()
    usage = sh("experiment.sh", "--help")
    assert usage.returncode == 0 and "FILE.yaml" in usage.stdout
    missing = sh("experiment.sh", str(tmp_path / "nope.yaml"), "all")
    assert missing.returncode == 2 and "nope.yaml: no such file" in missing.stderr


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to become another user")
def test_host_side_actions_need_no_root():
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "HOME=/tmp"]
    proc = subprocess.run([*as_nobody, str(REPO / "figure5.sh"), "--dry-run", "bbr"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "(3 chosen by the action bbr)" in proc.stdout, proc.stderr
    proc = subprocess.run([*as_nobody, str(REPO / "figure5.sh"), "all"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "run as root: sudo ./figure5.sh all" in proc.stderr


def test_calibrate_measures_again_in_the_vm_or_here(sh):
    """A failed calibration is never a dead end: each figure script's calibrate action runs
    `bbrlab calibrate` where the experiments run (refused without root, as every measuring
    action)."""
    for script in ("figure5.sh", "figure6.sh", "figure8.sh", "reproduce.sh"):
        usage = sh(script, "--help").stdout
        assert "calibrate  measure this machine's emulator again" in usage, script
    proc = sh("figure5.sh", "--dry-run", "calibrate")
    assert proc.returncode == 2 and "'calibrate' takes no run options" in proc.stderr, proc.stderr
