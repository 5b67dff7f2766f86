"""Every command the README shows runs as shown, on this host and without the VM: what
measures is run with --dry-run added (its options and the plan are checked, nothing runs),
what needs root and the kernel (preflight, calibrate, clean, tests/run.sh, vagrant) or other
hosts (ansible-playbook: tests/sweep.sh) is left to CI, and `<run>` stands for a results directory made from a captured point."""

import re
import shlex
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

LEFT_TO_CI = ("tests/run.sh", "vagrant", "ansible-playbook", "bbrlab preflight", "bbrlab calibrate", "bbrlab clean")
MEASURING = {"all", "bbr", "cubic"}


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    lines = [line for block in re.findall(r"```sh\n(.*?)```", text, re.S) for line in block.splitlines()]
    commands = [re.sub(r"\s+#.*$", "", line).strip() for line in lines]
    return [c for c in commands if c and not any(skip in c for skip in LEFT_TO_CI)]


def test_the_readme_shows_commands():
    commands = readme_commands()
    assert any(c.startswith("bbrlab export") for c in commands) and any("experiment.sh" in c for c in commands)


@pytest.mark.parametrize("command", readme_commands())
def test_a_readme_command_runs_as_shown(command, sh, results, tmp_path):
    run = next((results / "figure5").iterdir())
    mine = tmp_path / "mylab.yaml"
    text = command.replace("results/figure5/<run A>", str(run)).replace("results/figure5/<run B>", str(run))
    text = re.sub(r"results/figure\d/<run>", str(run), text)
    argv = shlex.split(text)
    if argv[0] == "sudo":
        argv = argv[1:]
    if argv[0] == "cp":  # the user's copy: in a scratch directory, not in experiments/
        shutil.copy(REPO / argv[1], mine)
        assert mine.read_text().startswith("#") or "name:" in mine.read_text()
        return
    argv = [str(mine) if a == "experiments/mylab.yaml" else a for a in argv]
    argv = [str(REPO / a) if a.startswith("labs/") else a for a in argv]  # the kit's files, from here
    if argv[0] == "bbrlab":
        argv[0] = "./bbrlab"
    if MEASURING & set(argv) or (argv[:2] == ["./bbrlab", "run"]):
        if "--dry-run" not in argv:
            argv.append("--dry-run")
    if argv[0] != "./bbrlab" and {"plot", "report"} & set(argv):  # the fixture's runs, not this checkout's
        argv += ["--results", str(results)]
    script = argv[0].removeprefix("./")
    if script == "experiment.sh" and not mine.exists():
        shutil.copy(REPO / "experiments" / "figure5.yaml", mine)
    proc = sh(script, *argv[1:], cwd=tmp_path)
    if argv[1:3] == ["lab", "check"]:  # nothing ran here: the check says so, one line per run, exit 1
        assert proc.returncode == 1 and "not accepted" in proc.stdout and "missing" in proc.stdout, proc.stdout
        return
    assert proc.returncode == 0, (argv, proc.stderr)
