"""vm/hostload.sh, which vm/vm.sh sources: the host's own load while a command ran in the
VM, from /proc (here a copy written by the test, BBRLAB_PROC), said in one line, with a
warning when other programs took half a CPU or more, and kept one JSON line per command."""

import json
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def write_proc(proc: Path, busy: int, idle: int, qemu: int | None) -> None:
    """A 2-CPU host's /proc: BUSY and IDLE ticks in all (split between user and system, idle
    and iowait; guest time within user), and the qemu process's user and system ticks."""
    half = busy // 2
    lines = [f"cpu  {half} 0 {busy - half} {idle - 10} 10 0 0 0 {half // 2} 0"]
    lines += [f"cpu{k} 1 0 1 1 0 0 0 0 0 0" for k in range(2)]
    (proc / "stat").write_text("\n".join(lines + ["intr 1 2 3", "ctxt 9"]) + "\n")
    if qemu is not None:
        pid = proc / "4242"
        pid.mkdir(exist_ok=True)
        # the command name holds a space and a parenthesis, as a process may name itself
        (pid / "stat").write_text(f"4242 (qemu-system (x86)) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
                                  f"{qemu - qemu // 3} {qemu // 3} 0 0 20 0 9 0 100 4000000 400000\n")


def report(tmp_path: Path, before: tuple, after: tuple, command: str = "./bbrlab run figure5",
           rerun: str | None = None) -> tuple[str, list]:
    proc, record = tmp_path / "proc", tmp_path / "results" / "host-load.jsonl"
    proc.mkdir(exist_ok=True)
    script = """source vm/hostload.sh
        a=$(hostload_sample "$1"); cp "$2" "$BBRLAB_PROC/stat"; [[ -z $3 ]] || cp "$3" "$BBRLAB_PROC/4242/stat"
        b=$(hostload_sample "$1")
        hostload_record=$4 hostload_report "$a" "$b" 1000 1060 "$5"
        """
    write_proc(proc, *after)
    (tmp_path / "stat.after").write_text((proc / "stat").read_text())
    pid_after = ""
    if after[2] is not None:
        (tmp_path / "pid.after").write_text((proc / "4242" / "stat").read_text())
        pid_after = str(tmp_path / "pid.after")
    write_proc(proc, *before)
    proc_run = subprocess.run(["bash", "-c", script, "hostload", "4242" if before[2] is not None else "",
                               str(tmp_path / "stat.after"), pid_after, str(record), command],
                              cwd=REPO, env={"BBRLAB_PROC": str(proc), "PATH": "/usr/bin:/bin",
                                             **({"BBRLAB_RERUN": rerun} if rerun else {})},
                              capture_output=True, text=True, check=True)
    rows = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return proc_run.stderr, rows


def test_a_quiet_host_is_said_in_one_line_and_kept(tmp_path):
    # 60 s on 2 CPUs: 12000 ticks; 9000 busy, of which qemu 8400: other programs 0.2 CPUs
    said, rows = report(tmp_path, before=(1000, 5000, 600), after=(10000, 8000, 9000))
    assert said == "vm.sh: host load while it ran: 1.50 of 2 CPUs busy, the VM 1.40, other programs 0.10\n"
    assert rows == [{"command": "./bbrlab run figure5", "start": 1000, "end": 1060, "cpus": 2, "busy_cpus": 1.5,
                     "vm_cpus": 1.4, "other_cpus": 0.1, "busy": False}]


def test_other_programs_taking_half_a_cpu_are_warned_of(tmp_path):
    said, rows = report(tmp_path, before=(1000, 5000, 600), after=(12000, 6000, 6600), command='say "hi"\tthere')
    first, warning = said.splitlines()
    assert first == "vm.sh: host load while it ran: 1.83 of 2 CPUs busy, the VM 1.00, other programs 0.83"
    assert warning.startswith("vm.sh: warning: other programs on this host took 0.83 CPUs while the VM measured")
    assert warning.endswith("close them and run again")
    assert rows[0]["busy"] is True and rows[0]["command"] == 'say "hi" there'
    said, _ = report(tmp_path, before=(1000, 5000, 600), after=(12000, 6000, 6600), rerun="sudo ./figure5.sh all")
    assert said.endswith("close them and run again: sudo ./figure5.sh all\n")  # what a figure script was given


def test_without_the_vms_process_only_the_hosts_load_is_said(tmp_path):
    said, rows = report(tmp_path, before=(1000, 5000, None), after=(12000, 6000, None))
    assert said == "vm.sh: host load while it ran: 1.83 of 2 CPUs busy (the VM's qemu process not found)\n"
    assert rows[0]["vm_cpus"] is None and rows[0]["busy"] is None


def test_samples_are_taken_every_few_seconds_until_their_owner_ends(tmp_path):
    # vm.sh's sampler beside a command: "EPOCH TOTAL BUSY QEMU" lines, handed to runs/hostload
    proc = tmp_path / "proc"
    proc.mkdir()
    write_proc(proc, 9000, 3000, 600)
    script = 'source vm/hostload.sh; HOSTLOAD_EVERY=0.1; sleep 0.5 & hostload_every 4242 $!'
    out = subprocess.run(["bash", "-c", script], cwd=REPO, env={"BBRLAB_PROC": str(proc), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True, timeout=10).stdout.splitlines()
    assert 2 <= len(out) <= 8  # it ended with its owner
    assert {tuple(line.split()[1:]) for line in out} == {("12000", "9000", "600")}
    assert all(line.split()[0].isdigit() for line in out)
