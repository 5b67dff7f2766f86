"""The course lab kit (labs/) and `bbrlab lab check`, on runs made of files (no testbed)."""

import re
from pathlib import Path

import pytest

from bbrlab import cli
from bbrlab.runs import lab
from bbrlab.schema import experiment as spec
from bbrlab.errors import BbrlabError, SpecError
from bbrlab.store.results import MEASUREMENT, RunDir, write_atomic, write_json

REPO = Path(__file__).resolve().parents[2]


def fake_run(root: Path, file: Path, quick: bool = True, overrides=(), status: str = "complete",
             finished: int | None = None, cpu_bound=(), calibrated: bool = True, gate=None,
             off_schedule=(), sender_short=()) -> RunDir:
    """A run of FILE as the runner leaves it: spec.yaml, run.json, points, verdict.json."""
    exp = spec.load(file, list(overrides), quick=quick)
    rundir = RunDir.create(root, exp.name)
    write_atomic(rundir.path / "spec.yaml", exp.source)
    meta = {"experiment": exp.name, "spec_hash": exp.identity, "measurement": MEASUREMENT, "status": status,
            "points_total": len(exp.points)}
    if calibrated:
        meta["calibration"] = {"key": "test-machine", "gate": None}
    write_json(rundir.path / "run.json", meta)
    for point in exp.points[:finished]:
        write_json(rundir.points_dir / point.id / "metrics.json", {"cpu_bound": False})
    write_json(rundir.path / "verdict.json", {"verdict": "reproduced", "cpu_bound_points": list(cpu_bound),
                                              "link_short_points": [], "off_schedule_points": list(off_schedule),
                                              "sender_short_points": list(sender_short),
                                              "fidelity_gate": gate, "claims": []})
    return rundir


@pytest.fixture
def lab1():
    return lab.find("bufferbloat")


def complete_lab1(root: Path, chosen: lab.Lab) -> None:
    for run in chosen.runs:
        fake_run(root, run.file)


def test_the_kit_has_five_labs_in_order_each_with_handout_key_and_loadable_experiments():
    kit = lab.labs()
    assert [(one.number, one.name) for one in kit] == [(1, "bufferbloat"), (2, "loss"), (3, "fairness"),
                                                       (4, "changing-links"), (5, "bbrv3")]
    for one in kit:
        names = set()
        for run in one.runs:
            for quick in (True, False):
                exp = spec.load(run.file, quick=quick)
                assert exp.name.startswith(f"lab{one.number}-"), run.file
                assert exp.claims, run.file  # a verdict for the student to explain
            names.add(exp.name)
        assert len(names) == len(one.runs)
        assert (one.folder / "handout.md").is_file() and (one.folder / "key.md").is_file()


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_each_handout_gives_the_labs_commands_verbatim_and_its_measured_time(number):
    """The handout is what students type and what the VM test runs: they cannot drift."""
    one = lab.find(str(number))
    text = (one.folder / "handout.md").read_text()
    for command in one.commands():
        assert command in text, command
    assert re.search(r"Measured lab time: about \d+ min", text), "the handout names its measured time"
    key = (one.folder / "key.md").read_text()
    for needed in ("Machine:", "Date:", "Provenance:", "Spread to expect", "Wrong answers"):
        assert needed in key, needed


def test_labs_are_found_by_number_name_or_folder_and_a_typo_gets_one_line():
    assert lab.find("2").name == lab.find("loss").name == lab.find("2-loss").name == "loss"
    assert lab.find(str(REPO / "labs/2-loss")).number == 2
    with pytest.raises(SpecError, match=r"unknown lab 'bufferblot' \(did you mean bufferbloat\?\)"):
        lab.find("bufferblot")


def test_a_complete_run_of_every_step_is_accepted(tmp_path, lab1, capsys):
    complete_lab1(tmp_path, lab1)
    findings = lab.check(lab1, [tmp_path])
    assert [f.problem for f in findings] == [None, None, None]
    assert "the lab's quick parameters" in findings[0].line()
    assert cli.main(["lab", "check", "bufferbloat", str(tmp_path)]) == 0
    assert "lab 1 (bufferbloat): accepted" in capsys.readouterr().out


def test_the_full_profile_is_accepted_too(tmp_path, lab1):
    for run in lab1.runs:
        fake_run(tmp_path, run.file, quick=False)
    findings = lab.check(lab1, [tmp_path])
    assert all(f.problem is None and "full parameters" in f.detail for f in findings)


def test_other_parameters_are_rejected_in_one_line_naming_them(tmp_path, lab1, capsys):
    complete_lab1(tmp_path, lab1)
    fake_run(tmp_path, lab1.runs[0].file, overrides=["buffer=100pkt", "duration=6s"])  # the newest run
    assert cli.main(["lab", "check", "1", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if "FAIL" in line]
    assert len(failed) == 1 and "lab1-figure5" in failed[0], out
    assert ("not the lab's parameters: flows.0.duration is 6s, the lab's 15s; link.buffer is 100pkt, "
            "the lab's 175pkt against its quick profile (run the handout's command as written, without --set)"
            in failed[0])


def test_an_unfinished_run_is_rejected_with_the_command_that_resumes_it(tmp_path, lab1):
    complete_lab1(tmp_path, lab1)
    fake_run(tmp_path, lab1.runs[1].file, status="interrupted", finished=2)
    finding = lab.check(lab1, [tmp_path])[1]
    assert finding.problem == ("incomplete: 2 of 6 points finished (status interrupted); resume with: "
                               "sudo ./bbrlab run labs/1-bufferbloat/buffers.yaml --quick")


def test_a_missing_step_and_an_untrusted_emulator_are_rejected(tmp_path, lab1):
    fake_run(tmp_path, lab1.runs[0].file, cpu_bound=["cc=cubic"])
    first, second, third = lab.check(lab1, [tmp_path])
    assert first.problem.startswith("the emulator did not keep up: CPU-bound at cc=cubic (close other")
    late = tmp_path / "late"
    fake_run(late, lab1.runs[0].file, off_schedule=["cc=bbr"])
    assert lab.check(lab1, [late])[0].problem.startswith(
        "the emulator did not keep up: the link did not keep its schedule at cc=bbr (close other")
    held = tmp_path / "held"
    fake_run(held, lab1.runs[0].file, sender_short=["cc=bbr"])
    assert lab.check(lab1, [held])[0].problem.startswith(
        "the emulator did not keep up: the sending hosts held the flows back at cc=bbr (close other")
    assert second.problem == "missing: no run of this experiment"
    assert second.line().endswith("(run: sudo ./bbrlab run labs/1-bufferbloat/buffers.yaml --quick)")
    assert third.line().endswith("(run: sudo ./bbrlab run labs/1-bufferbloat/aqm.yaml --quick)")
    uncalibrated = tmp_path / "u"
    fake_run(uncalibrated, lab1.runs[0].file, calibrated=False)
    assert lab.check(lab1, [uncalibrated])[0].problem.startswith("no calibration recorded")
    figure6 = lab.find("fairness").runs[0].file  # one point, no sweep axis
    gated = fake_run(tmp_path / "g", figure6, gate={"rate_bps": 50e6, "points": ["point"], "failed": "x"})
    assert lab.judge(lab.find("fairness").runs[0], [gated.path]).problem.startswith(
        "the emulator did not keep up: this machine's calibration found its emulator unfaithful from 50 Mbit/s, "
        "the rate of its one point (close other programs")


def test_run_directories_are_taken_as_given_and_a_run_of_another_lab_is_an_error(tmp_path, lab1):
    runs = [fake_run(tmp_path, r.file).path for r in lab1.runs]
    assert all(f.problem is None for f in lab.check(lab1, runs))
    other = fake_run(tmp_path, REPO / "labs/2-loss/loss.yaml").path
    with pytest.raises(BbrlabError, match="a run of lab2-loss, not of lab 1 \\(bufferbloat\\)"):
        lab.check(lab1, [other])
    with pytest.raises(BbrlabError, match="no such results directory"):
        lab.check(lab1, [tmp_path / "nothere"])


def test_differences_name_nested_keys():
    ran = {"link": {"rate": "10Mbit", "buffer": "100pkt"}, "flows": [{"cc": "bbr"}], "notes": ["x"]}
    ours = {"link": {"rate": "10Mbit", "buffer": "175pkt"}, "flows": [{"cc": "bbr"}, {"cc": "cubic"}]}
    assert lab.differences(ran, ours) == ["flows.1.cc is unset, the lab's cubic",
                                          "link.buffer is 100pkt, the lab's 175pkt"]


def test_lab4_lte_quick_is_cellular_quick_at_its_loss_rates():
    """CI asserts cellular's key claims on lab 4's LTE run (tests/integration/test_labs.py):
    that holds only while its quick points are cellular's, whatever else either file says."""
    def points(file: Path) -> dict:
        return {p.id: (p.link, p.pacing, p.flows, p.sysctls, p.sampling) for p in spec.load(file, quick=True).points}

    lte, cellular = points(REPO / "labs/4-changing-links/lte.yaml"), points(REPO / "experiments/cellular.yaml")
    assert {pid.split(",")[0] for pid in lte} == {"loss=0.001%", "loss=1%"}
    assert {pid: cellular.get(pid) for pid in lte} == lte


def test_lab3_coexist_quick_is_coexist_quick_at_1_and_16_bdp():
    """CI asserts coexist's crossover on lab 3's run (tests/integration/test_labs.py): BBR ahead
    at 1 BDP, CUBIC at 16. That holds only while those two quick points are coexist's."""
    def points(file: Path) -> dict:
        return {p.id: (p.link, p.pacing, p.flows, p.sysctls, p.sampling) for p in spec.load(file, quick=True).points}

    lab3, coexist = points(REPO / "labs/3-fairness/coexist.yaml"), points(REPO / "experiments/coexist.yaml")
    shared = ["buffer=1bdp,rep1", "buffer=16bdp,rep1"]
    assert {pid: lab3[pid] for pid in shared} == {pid: coexist[pid] for pid in shared}


def test_lab5_shallow_quick_holds_v3_shallow_quick():
    """CI asks v3-shallow's question (v3 retransmits less than v1 in half a BDP) of lab 5's
    shallow run (tests/integration/test_bbr3.py): that holds only while v3-shallow's quick
    points are lab 5's."""
    def points(file: Path) -> dict:
        return {p.id: (p.link, p.pacing, p.flows, p.sysctls, p.sampling) for p in spec.load(file, quick=True).points}

    lab5, shallow = points(REPO / "labs/5-bbrv3/shallow.yaml"), points(REPO / "experiments/v3-shallow.yaml")
    assert set(shallow) == {"cc=bbr,rep1", "cc=bbr3,rep1"}
    assert {pid: lab5.get(pid) for pid in shallow} == shallow
