"""The course lab kit for real (labs/): every lab's commands, as its handout gives them
(quick form), run in the VM; `bbrlab lab check` accepts each lab's runs, and rejects a
run with other parameters and an unfinished one (copies of lab 1's first run, edited), each
with one line. Each lab's wall time is printed and kept in RESULTS/labs/times.json (the
handouts' measured lab times).

One word is added to each `bbrlab run`: `--no-figure`. The guest judges the run and the host
draws its figure from the pulled results (tests/pulled), where it takes seconds instead of
the half minute a figure costs a TCG guest; the times kept leave that half minute out.

Lab 4's LTE run is the cellular experiment's quick profile at 0.001% and 1% loss, and lab 3's
coexistence run holds coexist's quick points at 1 and 16 BDP (unit tests hold the files to
that), so cellular's key claims and coexist's crossover are asserted on them here rather than
by a second run of the same points."""

import json
import os
import shlex
import shutil
import time
from pathlib import Path

import pytest
from conftest import REPO, RESULTS, bbrlab, by_point, only_with_all

from bbrlab.runs import lab
from bbrlab.schema import experiment as spec
from bbrlab.emulation import topo
from bbrlab.store.results import RunDir, read_json, write_json

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
ROOT = RESULTS / "labs"
TIMES: dict[str, float] = {}


def as_run(command: str, results) -> list[str]:
    """A handout command's arguments for conftest.bbrlab: no sudo (the tests run as root), no
    ./bbrlab, results/ (the lab check's runs, the report's file) is this test's results root,
    and a run draws no figure (the module's docstring says why)."""
    words = shlex.split(command)
    words = words[1:] if words[0] == "sudo" else words
    assert words[0] == "./bbrlab", command
    words += ["--no-figure"] if words[1] == "run" else []  # drawn on the host (above)
    return [str(results) if w == "results" else f"{results}/{w[len('results/'):]}" if w.startswith("results/") else w
            for w in words[1:]]


# Labs 1-4 only with BBRLAB_TEST_ALL=1 (conftest.only_with_all); the kit's path (several
# runs, the report, lab check's acceptance) is lab 5's, run in the BBRv3 kernel's stage
# (test_bbr3), and lab check's refusals are asked of lab 1's first run below. Lab 1's runs
# measure again what test_figure5 (figure 5's quick points) and test_aqm (CUBIC under
# fq_codel and CAKE at figure 5's link) measure: 4.8 minutes of each CI run, cut on
# 2026-11-29 when CI passed its 60 minutes. Lab 2 asks its question of random loss, which
# figure8-versions' quick run measures too (test_versions). On the 2-core TCG machines CI
# runs on, lab 3's first run (figure 6's flows) was CPU-bound and lab 4's first (the
# bandwidth step) off its schedule in both full CI runs of 2026-11-27, so neither got past it.
LEFT_OUT = {1: "its runs measure again test_figure5's and test_aqm's points; lab 5 runs the kit (4.8 min of CI)",
            2: "the kit is lab 5's, random loss figure8-versions' (3.2 min of CI)",
            3: "its first run was CPU-bound in both CI runs of 2026-11-27",
            4: "its bandwidth step was off schedule in both CI runs of 2026-11-27"}


@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_each_labs_commands_run_and_lab_check_accepts_them(number):
    if number in LEFT_OUT:
        only_with_all(f"lab {number}: {LEFT_OUT[number]}")
    run_lab(number)


def run_lab(number: int) -> None:
    """Lab NUMBER's handout commands, in order, as a student types them; lab check accepts
    the runs, the report has each run's verdict row, and the lab's wall time is kept
    (lab 5, on the BBRv3 kernel, is run by test_bbr3.py)."""
    chosen = lab.find(str(number))
    root = ROOT / chosen.name
    t0 = time.monotonic()
    for command in chosen.commands():
        proc = bbrlab(*as_run(command, root), results=root, timeout=1200)
        print(command, proc.stdout[-2000:], proc.stderr[-3000:])
        if command.startswith("./bbrlab lab check"):
            if proc.returncode != 0 and "the emulator did not keep up: CPU-bound at" in proc.stdout:
                # the run's own CPU measurement set a point aside on this machine (a slower one
                # of its kind): lab check refused it as a student's would be, with the handout's
                # remedy; what the kit asserts on a machine that carries the lab is not decidable
                pytest.skip(f"lab {number}: this machine's guest was CPU-bound: {proc.stdout.strip()[-400:]}")
            assert proc.returncode == 0, proc.stdout
            assert f"{chosen.label}: accepted" in proc.stdout
        elif command.startswith("./bbrlab report"):
            assert proc.returncode == 0, proc.stderr[-3000:]
            text = (root / f"lab{number}-report.md").read_text()
            for run in chosen.runs:  # each run's verdict row
                assert f"| {spec.load(run.file).name} | " in text, text[:2000]
        else:  # 3: a claim did not hold; the lab's question, not the kit's failure
            assert proc.returncode in (0, 3), proc.stderr[-3000:]
            set_aside = untrusted(root, command)
            if set_aside:
                # lab check refuses a run the emulator could not keep up with (the handout's
                # remedy: close programs, more CPUs); the lab's later runs would be measured
                # for nothing on this machine
                pytest.skip(f"lab {number}: this machine's guest did not keep up with {set_aside}")
    times = ROOT / "times.json"  # kept across pytest runs: lab 5 runs in the BBRv3 kernel's stage
    TIMES.update({**(json.loads(times.read_text()) if times.exists() else {}), **TIMES})
    TIMES[chosen.name] = round(time.monotonic() - t0, 1)
    print(f"{chosen.label}: {TIMES[chosen.name] / 60:.1f} min")
    times.write_text(json.dumps(TIMES, indent=2) + "\n")


def untrusted(root: Path, command: str) -> str | None:
    """The points of the run COMMAND made (a handout's `bbrlab run FILE`) that its verdict
    set aside as CPU-bound, short of the link's rate or beyond the calibration's gate (what lab
    check refuses), said."""
    words = shlex.split(command)
    if "run" not in words:
        return None
    name = spec.load(REPO / words[words.index("run") + 1], quick="--quick" in words).name
    return set_aside(RunDir.latest(root, name))


def set_aside(run: RunDir) -> str | None:
    """RUN's points its verdict set aside, said: CPU-bound, short of the link's rate, off
    the link's schedule, held back by their senders or beyond the calibration's gate (what
    lab check refuses)."""
    verdict = json.loads((run.path / "verdict.json").read_text())
    points = (verdict.get("cpu_bound_points") or verdict.get("link_short_points")
              or verdict.get("off_schedule_points") or verdict.get("sender_short_points")
              or (verdict.get("fidelity_gate") or {}).get("points"))
    return f"{run.path.parent.name}: {', '.join(points)}" if points else None


def lab_run(folder: str, name: str) -> RunDir:
    """The newest run of NAME that lab FOLDER's commands made, to assert on; skipped, saying
    why, when the lab stopped before it or its verdict set points aside on this machine."""
    run = RunDir.newest(ROOT / folder, name)
    if run is None:
        pytest.skip(f"no run of {name}: its lab was not run or stopped before it "
                    "(test_each_labs_commands_run_... says why)")
    if (said := set_aside(run)):
        pytest.skip(f"this machine's guest did not keep up with {said}")
    return run


def test_lab4_step_fires_its_changes_on_schedule():
    """The lab's bandwidth step, as its handout's figure shows it: both changes issued on
    time, their lateness in force recorded as the analysis judged it, and BBR following them."""
    records = {r["params"]["cc"]: r for r in lab_run("changing-links", "lab4-step").point_records()}
    bbr = records["bbr"]
    fired = bbr["timings"]["events"]
    assert [e["planned"] for e in fired] == [10.0, 20.0]
    assert all(abs(e["issued"] - e["planned"]) < 0.1 for e in fired), fired
    # kept (not set aside above): each change in force within 0.5 s (TCG: 0.2-0.35 s quiet)
    late = max(e["at"] - e["planned"] for e in fired)
    assert bbr["metrics"]["change_late_max_s"] == pytest.approx(late, abs=1e-3) and late <= 0.5, fired
    assert bbr["metrics"]["adapt_time_max_s"] is not None and bbr["metrics"]["adapt_time_max_s"] <= 3.0


def test_lab4_lte_follows_the_trace_and_bbr_keeps_twice_cubics_goodput_at_1_percent():
    """cellular's key claims (issue: the delivered average within 5% of the trace's while
    CUBIC keeps the link busy; BBR >= 2 x CUBIC at 1% loss), and the trace fed on time."""
    points = by_point(lab_run("changing-links", "lab4-lte"))
    first = spec.load(REPO / "labs/4-changing-links/lte.yaml", quick=True).points[0]
    plan = topo.build_plan(first).schedule.schedule
    due = sum(t < first.duration for t in plan.times)  # the updates due while the flow ran
    assert points["loss=0.001%,cc=cubic"]["metrics"]["trace_delivery"] == pytest.approx(1.0, abs=0.05), points
    bbr, cubic = points["loss=1%,cc=bbr"]["metrics"], points["loss=1%,cc=cubic"]["metrics"]
    assert bbr["steady_goodput_mbps"] >= 2 * cubic["steady_goodput_mbps"], (bbr, cubic)
    for m in (bbr, cubic):  # all written (none lost, few skipped) and on time
        assert m["schedule_updates"] + m["schedule_skipped"] >= due and m["schedule_skipped"] < 0.01 * due, m
        # the median update in force before the next is due; the slowest 1% (guest timer
        # stalls under TCG: 10.04 ms at a 10 ms interval has been measured) within two intervals
        assert m["schedule_late_p50_ms"] < plan.interval * 1e3 and m["schedule_late_p99_ms"] < 2 * plan.interval * 1e3, m


def test_lab3_coexist_shares_cross_over_between_1_and_16_bdp():
    """coexist's crossover (docs/field.md): BBR takes the larger share of a 1-BDP buffer, CUBIC
    of a 16-BDP one (measured here: BBR 0.77-0.92 at 1 BDP, CUBIC 0.88-0.91 at 16 BDP)."""
    points = by_point(lab_run("fairness", "lab3-coexist"))
    share = {p["params"]["buffer"]: p["metrics"]["by_cc"] for p in points.values()}
    assert share["1bdp"]["bbr"]["share"] > share["1bdp"]["cubic"]["share"], share["1bdp"]
    assert share["16bdp"]["cubic"]["share"] > share["16bdp"]["bbr"]["share"], share["16bdp"]
    assert all(not p["metrics"]["cpu_bound"] for p in points.values())


def copy_of_lab1_run(to: Path) -> RunDir:
    """Lab 1's figure 5 run (its handout's first command, run here unless lab 1 ran above),
    copied to the results root TO (as a student's second run would lie there): the
    rejections below edit the copy instead of measuring two more runs."""
    chosen = lab.find("1")
    found = RunDir.newest(ROOT / chosen.name, "lab1-figure5")
    if found is None:
        first = chosen.commands()[0]
        proc = bbrlab(*as_run(first, ROOT / chosen.name), results=ROOT / chosen.name, timeout=900)
        print(first, proc.stdout[-2000:], proc.stderr[-3000:])
        assert proc.returncode in (0, 3), proc.stderr[-3000:]
        found = RunDir.newest(ROOT / chosen.name, "lab1-figure5")
    target = to / "lab1-figure5" / found.path.name
    shutil.rmtree(to, ignore_errors=True)
    shutil.copytree(found.path, target)
    return RunDir(target)


def test_lab_check_rejects_other_parameters_and_an_unfinished_run():
    wrong, partial = ROOT / "wrong", ROOT / "partial"
    # other parameters: the spec a run of `--set buffer=100pkt` records, and its identity
    run = copy_of_lab1_run(wrong)
    text = (run.path / "spec.yaml").read_text()
    assert "buffer: 175pkt" in text, text
    (run.path / "spec.yaml").write_text(text.replace("buffer: 175pkt", "buffer: 100pkt"))
    meta = read_json(run.path / "run.json")
    write_json(run.path / "run.json", dict(meta, spec_hash=spec.load(run.path / "spec.yaml", quick=True).identity))
    # unfinished: one of its two points gone, as a run of `--only cc=bbr` leaves it
    run = copy_of_lab1_run(partial)
    shutil.rmtree(run.points_dir / "cc=cubic,rep1")
    write_json(run.path / "run.json", dict(read_json(run.path / "run.json"), status="incomplete"))
    for root, expected in ((wrong, "not the lab's parameters: "), (partial, "incomplete: 1 of 2 points")):
        proc = bbrlab("lab", "check", "1", str(root), results=root)
        print(proc.stdout, proc.stderr)
        assert proc.returncode == 1, proc.stdout
        failed = [line for line in proc.stdout.splitlines() if "FAIL" in line]
        assert len(failed) == 3, proc.stdout  # lab1-buffers and lab1-aqm are missing in both roots
        assert any(expected in line and "lab1-figure5" in line for line in failed), proc.stdout
        assert any("missing" in line and "lab1-buffers" in line for line in failed), proc.stdout
        assert any("missing" in line and "lab1-aqm" in line for line in failed), proc.stdout
    assert "link.buffer is 100pkt, the lab's 175pkt" in bbrlab("lab", "check", "1", str(wrong), results=wrong).stdout
