"""The command line's contract with users: bad input gets one clear message naming the
problem and exit status 2, never a traceback; --dry-run shows the plan and runs nothing."""

import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml

from bbrlab import cli
from bbrlab.schema import experiment as spec
from bbrlab.runs import suite

REPO = Path(__file__).resolve().parents[2]


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("override, names", [
    ("rate=10", "link.rate"),            # a rate without a unit
    ("rtt=-5ms", "link.rtt"),
    ("buffer=1pkt", "link.buffer"),
    ("loss=150%", "link.loss"),
    ("cc=BBR!", "flows.0.cc"),
    ("bogus=1", "--set bogus"),
    ("link.colour=red", "link.colour"),
])
def test_bad_override_is_one_line_naming_the_key(capsys, override, names):
    code, out, err = run_cli(capsys, "run", "figure5", "--dry-run", "--set", override)
    assert code == 2
    assert out == ""
    assert err.startswith("bbrlab: ") and names in err
    assert len(err.strip().splitlines()) == 1


# The silent misreadings: each is refused with one line naming the key and the fix.
UNITLESS = [
    ("loss=0.5", "link.loss: 0.5 needs a unit: did you mean 50% (0.5 as a fraction) or 0.5%?"),
    ("buffer=5000", "link.buffer: 5000 needs a unit (pkt, bdp, bytes like 5000B/64KB, or a time at the rate like 800ms)"),
    ("rate=20mbps", "link.rate: 20mbps needs a rate unit (tc reads mbps as megabytes per second): "
     "write bit, kbit, Mbit, Gbit, e.g. 20Mbit"),
    ("rate=20MBps", "link.rate: 20MBps needs a rate unit"),
    ("rate=20MB/s", "link.rate: 20MB/s needs a rate unit"),
    ("rate=10", "link.rate: 10 needs a unit: did you mean 10Mbit?"),
    ("rtt=40", "link.rtt: 40 needs a unit: did you mean 40ms?"),
    ("jitter=0", "link.jitter: 0 needs a unit: did you mean 0ms?"),
    ("duration=30", "flows.0.duration: 30 needs a unit: did you mean 30s?"),
]


@pytest.mark.parametrize("override, message", UNITLESS)
def test_a_unitless_or_ambiguous_override_is_refused_with_the_fix(capsys, override, message):
    code, out, err = run_cli(capsys, "run", "figure5", "--dry-run", "--set", override)
    assert (code, out) == (2, "")
    assert err.startswith(f"bbrlab: {message}") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("override, message", UNITLESS)
def test_a_unitless_value_in_a_file_is_refused_like_one_in_set(capsys, tmp_path, override, message):
    raw = spec.load_raw(REPO / "experiments" / "figure5.yaml")
    key, value = spec.parse_override(override)
    spec.set_path(raw, spec.resolve_key(raw, key), value)
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(raw))
    code, _, err = run_cli(capsys, "run", str(path), "--dry-run")
    assert code == 2 and err.startswith(f"bbrlab: {message}") and len(err.strip().splitlines()) == 1


def test_unknown_key_in_an_experiment_file_is_named(capsys, tmp_path):
    text = (REPO / "experiments" / "figure5.yaml").read_text().replace("pacing: internal", "pacing: internal\npaceing: fq")
    bad = tmp_path / "typo.yaml"
    bad.write_text(text)
    code, _, err = run_cli(capsys, "run", str(bad), "--dry-run")
    assert code == 2
    assert "paceing: unknown key" in err


def _figure5_with(tmp_path, old, new):
    text = (REPO / "experiments" / "figure5.yaml").read_text()
    assert old in text
    path = tmp_path / "mine.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old, new, message", [
    ("metric: rtt_p50_ms", "metric: rtt_median_ms",
     "claims.1.metric: 'rtt_median_ms' is not a metric the analysis writes (did you mean rtt_p50_ms?)"),
    ("where: {cc: cubic}", "where: {ccs: cubic}",
     "claims.0.where.ccs: not a sweep axis of this experiment (did you mean cc?) "
     "(where and vs take: cc, loss, aqm, group, class, buffer_bdp)"),
    ("vs: {cc: cubic}", "vs: {buffer: 5bdp}", "claims.1.vs.buffer: not a sweep axis of this experiment"),
    ("relative_to: full_buffer_rtt_ms", "relative_to: base_rtt",
     "claims.0.relative_to: 'base_rtt' is not a metric the analysis writes (did you mean base_rtt_ms?)"),
    ("pacing: internal", "paceing: internal", "paceing: unknown key (did you mean pacing?)"),
    ("kind: rtt_timeseries", "kind: rtt_timeserie", "plot.kind: 'rtt_timeserie' is not one of"),
])
def test_a_claim_or_key_typo_is_refused_when_the_file_is_loaded(capsys, tmp_path, old, new, message):
    code, out, err = run_cli(capsys, "run", str(_figure5_with(tmp_path, old, new)), "--dry-run")
    assert (code, out) == (2, "")
    assert err.startswith(f"bbrlab: {message}") and len(err.strip().splitlines()) == 1


def test_a_claim_selects_on_a_file_axis_even_when_set_fixes_it(capsys):
    code, _, err = run_cli(capsys, "run", "figure5-buffers", "--dry-run", "--set", "buffer=5bdp")
    assert code == 0, err
    code, _, err = run_cli(capsys, "run", "figure8", "--dry-run", "--only", "loss=1%", "--set", "cc=bbr")
    assert code == 0, err


def test_a_where_value_is_read_with_its_unit_when_loaded(capsys, tmp_path):
    path = _figure5_with(tmp_path, "where: {cc: cubic}", "where: {cc: cubic, loss: 0.01}")
    code, _, err = run_cli(capsys, "run", str(path), "--dry-run")
    assert code == 2 and err.startswith("bbrlab: claims.0.where.loss: 0.01 needs a unit: did you mean 1% "
                                        "(0.01 as a fraction) or 0.01%?")


def test_near_miss_names_get_a_suggestion(capsys):
    code, _, err = run_cli(capsys, "run", "figure55", "--dry-run")
    assert code == 2 and "unknown experiment 'figure55' (did you mean figure5?)" in err
    code, _, err = run_cli(capsys, "run", "figure5", "--dry-run", "--set", "buffr=5bdp")
    assert code == 2 and "--set buffr: unknown key (did you mean buffer?)" in err
    code, _, err = run_cli(capsys, "run", "figure5", "--dry-run", "--only", "ccs=bbr")
    assert code == 2 and "--only ccs: not a sweep axis of figure5 (did you mean cc?)" in err


def test_unknown_experiment_lists_the_known_ones(capsys):
    code, _, err = run_cli(capsys, "run", "figure99")
    assert code == 2
    assert "unknown experiment 'figure99'" in err and "figure5" in err


@pytest.mark.parametrize("only, message", [
    ("cc=reno", "no point of figure5 matches (values: cc: bbr, cubic)"),
    ("loss=1%", "--only loss: not a sweep axis of figure5 (axes: cc)"),
])
def test_only_must_name_an_axis_value(capsys, only, message):
    code, _, err = run_cli(capsys, "run", "figure5", "--only", only)
    assert code == 2
    assert message in err


@pytest.mark.parametrize("only", ["cc", "cc=", "=bbr"])
def test_only_without_a_value_gets_its_own_message(capsys, only):
    code, out, err = run_cli(capsys, "run", "figure5", "--dry-run", "--only", only)
    assert (code, out) == (2, "")
    assert err == f"bbrlab: --only {only}: expected AXIS=VALUE, e.g. --only cc=bbr\n"


def test_dry_run_honours_only(capsys):
    code, _, err = run_cli(capsys, "run", "figure5", "--dry-run", "--only", "cc=reno")
    assert code == 2 and "no point of figure5 matches" in err
    code, out, _ = run_cli(capsys, "run", "figure5", "--dry-run", "--only", "cc=bbr")
    assert code == 0 and "(3 chosen by --only)" in out
    points = [line for line in out.splitlines() if line.startswith("== point ")]
    assert len(points) == 3 and all("cc=bbr," in line for line in points)


def test_several_only_values_of_one_axis_are_a_union(capsys):
    code, out, _ = run_cli(capsys, "run", "figure8", "--dry-run", "--only", "loss=1%", "--only", "loss=10%")
    assert code == 0
    points = [line.split()[2] for line in out.splitlines() if line.startswith("== point ")]
    assert sorted(points) == sorted(["loss=10%,cc=bbr,rep1", "loss=10%,cc=cubic,rep1",
                                     "loss=1%,cc=bbr,rep1", "loss=1%,cc=cubic,rep1"])
    code, out, _ = run_cli(capsys, "run", "figure8", "--dry-run", "--only", "loss=1%", "--only", "cc=bbr")
    assert code == 0
    assert [line.split()[2] for line in out.splitlines() if line.startswith("== point ")] == ["loss=1%,cc=bbr,rep1"]
    code, _, err = run_cli(capsys, "run", "figure8", "--dry-run", "--only", "loss=1%", "--only", "loss=3%")
    assert code == 2 and "--only loss=3%: not a value of loss in figure8" in err


def test_dry_run_prints_the_plan_and_touches_nothing(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "--results", str(tmp_path), "run", "figure5", "--dry-run", "--set", "rate=20Mbit",
                           "--set", "pacing=fq")
    assert code == 0
    assert "figure5: 6 point(s), 3-8 repetitions (auto); sweep axes: cc=['bbr', 'cubic']" in out
    assert "netem limit 175 rate 20000000bit" in out
    assert "[snd1] tc qdisc replace dev snd1-eth0 root fq" in out
    assert list(tmp_path.iterdir()) == []


def test_dry_run_and_list_say_when_repetitions_are_added_as_needed(capsys, monkeypatch, tmp_path):
    code, out, _ = run_cli(capsys, "run", "figure5", "--dry-run", "--set", "repeat=auto")
    assert code == 0 and "figure5: 6 point(s), 3-8 repetitions (auto); sweep axes: cc=" in out
    code, out, _ = run_cli(capsys, "run", "figure5", "--dry-run", "--set", "repeat={min: 2, max: 4}")
    assert code == 0 and "figure5: 4 point(s), 2-4 repetitions (auto); sweep axes" in out
    code, out, _ = run_cli(capsys, "run", "figure5", "--dry-run", "--set", "repeat=3")
    assert code == 0 and "figure5: 6 point(s); sweep axes" in out
    text = (REPO / "experiments" / "figure5.yaml").read_text()
    assert "\nrepeat: auto " in text  # (a second `repeat:` would be refused: a key given twice)
    (tmp_path / "auto.yaml").write_text(text)
    monkeypatch.setattr(cli, "EXPERIMENTS", tmp_path)
    code, out, _ = run_cli(capsys, "list")
    assert code == 0 and out.startswith("auto               6 points,") and ", 3-8 repetitions (auto)  " in out


def test_list_shows_every_experiment(capsys):
    code, out, _ = run_cli(capsys, "list")
    assert code == 0
    for path in (REPO / "experiments").glob("*.yaml"):
        assert path.stem in out and "INVALID" not in out


def test_plot_of_a_directory_that_is_not_a_run(capsys, tmp_path):
    code, _, err = run_cli(capsys, "plot", str(tmp_path))
    assert code == 2
    assert "not a bbrlab results directory" in err


def test_help_runs_as_a_program():
    proc = subprocess.run([str(REPO / "bbrlab"), "run", "--help"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    assert "--only" in proc.stdout and "--quick" in proc.stdout


def test_a_suite_continues_where_it_stopped(tmp_path):
    from bbrlab.store.results import MEASUREMENT, RunDir, write_json

    exp = spec.load(REPO / "experiments" / "figure5.yaml", quick=True)  # one repetition

    from bbrlab.store import metadata

    here = metadata.testbed({"bbr", "cubic"})

    def run(status: str, digest: str, done: list[str], verdict: bool = True, testbed: dict = here) -> RunDir:
        rundir = RunDir.create(tmp_path, "figure5")
        write_json(rundir.path / "run.json", {"status": status, "spec_hash": digest, "measurement": MEASUREMENT,
                                              "testbed": testbed})
        (rundir.path / "spec.yaml").write_text(exp.source if digest == exp.identity else "link: {rate: 1Mbit}\n")
        for pid in done:
            write_json(rundir.points_dir / pid / "metrics.json", {})
        if verdict:
            write_json(rundir.path / "verdict.json", {"verdict": "reproduced"})
        return rundir

    def done(state):
        todo, finished = state
        assert todo == []
        return finished.path

    assert suite.state(exp, tmp_path, resume=True) == (list(exp.points), None)  # never ran
    digest = exp.identity
    run("incomplete", digest, ["cc=bbr,rep1"])
    todo, finished = suite.state(exp, tmp_path, resume=True)
    assert [p.id for p in todo] == ["cc=cubic,rep1"] and finished is None  # resumed: only the missing point
    complete = run("complete", digest, ["cc=bbr,rep1", "cc=cubic,rep1"])
    assert done(suite.state(exp, tmp_path, resume=True)) == complete.path  # done: skipped
    assert suite.state(exp, tmp_path, resume=False) == (list(exp.points), None)  # --fresh
    run("complete", "0" * 16, ["cc=bbr,rep1", "cc=cubic,rep1"])  # newer, but of another spec
    assert done(suite.state(exp, tmp_path, resume=True)) == complete.path
    other_kernel = dict(here, kernel="6.12.117-bbrlab")  # newer, but measured on another kernel
    run("complete", digest, ["cc=bbr,rep1", "cc=cubic,rep1"], testbed=other_kernel)
    assert done(suite.state(exp, tmp_path, resume=True)) == complete.path
    other_build = dict(here, congestion_controls={"bbr": "0123456789ABCDEF", "cubic": "built-in"})
    run("incomplete", digest, ["cc=bbr,rep1"], testbed=other_build)  # another build of tcp_bbr: never resumed
    assert done(suite.state(exp, tmp_path, resume=True)) == complete.path
    summary_cut = run("complete", digest, ["cc=bbr,rep1", "cc=cubic,rep1"], verdict=False)
    assert done(suite.state(exp, tmp_path, resume=True)) == summary_cut.path  # summarized, not rerun


def test_a_run_of_another_measurement_is_neither_resumed_nor_taken_as_done(tmp_path):
    from bbrlab.store.results import MEASUREMENT, RunDir, write_json

    exp = spec.load(REPO / "experiments" / "figure5.yaml")
    rundir = RunDir.create(tmp_path, "figure5")
    write_json(rundir.path / "run.json", {"status": "incomplete", "spec_hash": exp.identity,
                                          "measurement": MEASUREMENT - 1})
    write_json(rundir.points_dir / "cc=bbr,rep1" / "metrics.json", {})
    assert suite.state(exp, tmp_path, resume=True) == (list(exp.points), None)
    assert RunDir.find_resumable(tmp_path, "figure5", exp.identity) is None


def test_reanalyzing_a_copy_without_raw_files_is_one_clear_error(capsys, tmp_path):
    from bbrlab.store.results import MEASUREMENT, RunDir, write_json

    exp = spec.load(REPO / "experiments" / "figure5.yaml")
    rundir = RunDir.create(tmp_path, "figure5")
    (rundir.path / "spec.yaml").write_text(exp.source)
    write_json(rundir.path / "run.json", {"status": "complete", "spec_hash": exp.identity, "measurement": MEASUREMENT})
    write_json(rundir.points_dir / exp.points[0].id / "metrics.json", {"goodput_mbps": 1.0})
    code, _, err = run_cli(capsys, "plot", "--reanalyze", str(rundir.path))
    assert code == 2
    assert err.count("\n") == 1 and "no raw/ directory" in err and "Traceback" not in err


def _finished(rundir):
    """RUNDIR summarized as the run summarized it: its own metrics.json, verdict.json, figure."""
    from bbrlab.output.reports import summary

    exp = spec.build(spec.load_raw(rundir.path / "spec.yaml"), default_name="step")
    summary.finish(rundir, exp)
    return exp, rundir


def _todays_experiments(tmp_path, monkeypatch, old: str, new: str):
    """experiments/ as it might be tomorrow: step.yaml with OLD replaced by NEW."""
    folder = tmp_path / "experiments"
    folder.mkdir()
    text = (REPO / "experiments" / "step.yaml").read_text()
    assert old in text
    (folder / "step.yaml").write_text(text.replace(old, new))
    monkeypatch.setattr(cli, "EXPERIMENTS", folder)


def _stored(rundir) -> dict:
    return {name: (rundir.path / name).read_bytes() for name in ("verdict.json", "metrics.json", "spec.yaml")}


def test_plot_never_changes_a_stored_verdict_and_rejudges_beside_it(capsys, monkeypatch, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # it draws figures
    from bbrlab.store.results import read_json

    _, rundir = _finished(step_run(tmp_path / "results"))
    capsys.readouterr()
    before = _stored(rundir)
    # on the htb link it was captured on, BBR never reached 85% of 20 Mbit/s
    assert read_json(rundir.path / "verdict.json")["verdict"] == "not reproduced"
    code, out, err = run_cli(capsys, "plot", str(rundir.path))  # today's file is the run's: only redrawn
    assert code == 0 and "not reproduced" in out and "re-judged" not in err
    assert _stored(rundir) == before and not (rundir.path / "verdict-rejudged.json").exists()
    _todays_experiments(tmp_path, monkeypatch, "where: {cc: bbr}", "where: {cc: cubic}")  # another claim today
    code, out, err = run_cli(capsys, "plot", str(rundir.path))
    assert code == 0 and _stored(rundir) == before
    assert "re-judged (with today's step.yaml): verdict-rejudged.json and step-rejudged.png" in err
    rejudged = read_json(rundir.path / "verdict-rejudged.json")
    assert rejudged["verdict"] == "not evaluated" and rejudged["rejudged"]["original"] == {"verdict": "not reproduced"}
    assert (rundir.path / "step-rejudged.png").stat().st_size > 0 and "points so far): not evaluated" in out
    assert "cc: cubic" in (rundir.path / "spec-rejudged.yaml").read_text()
    monkeypatch.setattr(cli, "EXPERIMENTS", REPO / "experiments")  # the claim as it was: the run's word stands
    code, out, err = run_cli(capsys, "plot", str(rundir.path))
    assert "not reproduced" in out and not (rundir.path / "verdict-rejudged.json").exists()
    assert _stored(rundir) == before


def test_plot_reanalyze_rejudges_beside_the_stored_verdict(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # it draws figures
    _, rundir = _finished(step_run(tmp_path / "results"))
    before = _stored(rundir)
    code, _, err = run_cli(capsys, "plot", "--reanalyze", str(rundir.path))
    assert code == 0 and "analyzed 1 points again" in err and "re-judged (points analyzed again" in err
    assert _stored(rundir) == before and (rundir.path / "verdict-rejudged.json").is_file()


def test_a_suite_judges_a_finished_run_again_beside_its_verdict(capsys, monkeypatch, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # it draws figures
    from bbrlab.output.reports import report

    _, rundir = _finished(step_run(tmp_path / "results"))
    before = _stored(rundir)
    monkeypatch.setattr(cli, "_preflight", lambda points: None)
    monkeypatch.setitem(sys.modules, "bbrlab.runs.runner", types.ModuleType("bbrlab.runs.runner"))  # runs nothing here
    monkeypatch.setattr(report, "write", lambda root, exps, out=None, skipped=None, runs=None, not_here=None: root / "report.md")
    _todays_experiments(tmp_path, monkeypatch, "where: {cc: bbr}", "where: {cc: cubic}")
    code, out, err = run_cli(capsys, "--results", str(tmp_path / "results"), "suite", "step")
    assert code == 0 and "step: done" in err and "re-judged (with today's step.yaml)" in err
    assert "step           not evaluated" in out and _stored(rundir) == before
    code, out, err = run_cli(capsys, "--results", str(tmp_path / "results"), "suite", "step")
    assert "re-judged" not in err and "step           not evaluated" in out  # judged by today's claims already


@pytest.mark.parametrize(("word", "code"), [("reproduced", 0), ("inconclusive", 3), ("not reproduced", 3),
                                            ("not evaluated", 3)])
def test_strict_passes_only_a_reproduced_verdict(capsys, word, code):
    assert cli._strict_status(types.SimpleNamespace(strict=True), {"verdict": word}) == code
    assert cli._strict_status(types.SimpleNamespace(strict=False), {"verdict": word}) == 0
    assert (f"claim check says '{word}'" in capsys.readouterr().err) == (code != 0)


def test_the_report_gives_the_runs_own_verdict_and_the_rejudged_one(capsys, monkeypatch, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # it draws figures
    from bbrlab.output.reports import report

    exp, rundir = _finished(step_run(tmp_path / "results"))
    _todays_experiments(tmp_path, monkeypatch, "where: {cc: bbr}", "where: {cc: cubic}")
    assert run_cli(capsys, "plot", str(rundir.path))[0] == 0
    text = report.write(tmp_path / "results", [exp]).read_text()
    assert "| step | not evaluated (re-judged) |" in text
    assert "verdict (1 of 2 points so far): not reproduced" in text
    assert "Re-judged since (with today's step.yaml; verdict-rejudged.json):" in text


def test_results_is_taken_after_the_subcommand_too(capsys, tmp_path):
    code, _, err = run_cli(capsys, "plot", "--results", str(tmp_path / "b"))
    assert code == 2 and err == f"bbrlab: no results for figure5 under {tmp_path / 'b'} (run it first)\n"
    code, _, err = run_cli(capsys, "--results", str(tmp_path / "a"), "plot", "--results", str(tmp_path / "b"))
    assert code == 2 and f"under {tmp_path / 'b'} " in err
    code, _, err = run_cli(capsys, "--results", str(tmp_path / "a"), "report")
    assert code == 2 and str(tmp_path / "a") in err


def test_plot_finds_the_runs_of_a_file_of_ones_own_by_its_name(capsys, tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text((REPO / "experiments" / "figure6.yaml").read_text().replace("name: figure6", "name: mylab"))
    code, _, err = run_cli(capsys, "plot", "--results", str(tmp_path), "--experiment", str(mine))
    assert code == 2 and err == f"bbrlab: no results for mylab under {tmp_path} (run it first)\n"


def test_dry_run_and_list_estimate_the_wall_time_from_this_machines_runs(capsys, tmp_path, step_run):
    from bbrlab.store.results import MEASUREMENT, write_json

    root = tmp_path / "results"
    code, out, _ = run_cli(capsys, "--results", str(root), "run", "step", "--dry-run")
    assert code == 0
    # before anything is measured here: the testbed's default overhead, said as such
    assert ("2 point(s), 1.0 min of flows; wall time: about 1.3 min (10 s per point beyond its flows, this "
            "testbed's default: nothing measured under this results folder yet)") in out
    assert f"results: a new run directory under {root / 'step'}" in out
    run = step_run(root)
    write_json(run.path / "verdict.json", {"verdict": "reproduced", "points": {"finished": 1, "total": 2},
                                           "overhead": {"wall_seconds": 130.0, "configured_flow_seconds": 30.0}})
    identity = spec.load(REPO / "experiments" / "step.yaml").identity
    write_json(run.path / "run.json", {"status": "incomplete", "spec_hash": identity, "measurement": MEASUREMENT})
    code, out, _ = run_cli(capsys, "--results", str(root), "run", "step", "--dry-run")
    assert code == 0
    assert (f"2 point(s), 1.0 min of flows; wall time: about 4.3 min (100 s per point beyond its flows, "
            f"as measured in step/{run.path.name})") in out
    assert f"results: resumes {run.path} (1 points done there)" in out
    code, out, _ = run_cli(capsys, "--results", str(root), "run", "figure5", "--dry-run", "--only", "cc=bbr")
    assert code == 0
    # another experiment's cost; repeat: auto may take BBR's 3 repetitions to 8
    assert ("3 point(s), 1.5 min of flows; wall time: about 6.5-17.3 min (the upper end: every repetition "
            "repeat: auto may add)") in out
    code, out, _ = run_cli(capsys, "--results", str(root), "list")
    assert code == 0 and "step               2 points,    1.0 min of flows (~4.3 min wall)" in out
    assert "figure5            6 points,    3.0 min of flows (~13.0-34.7 min wall), 3-8 repetitions (auto)" in out
    code, out, _ = run_cli(capsys, "--results", str(root), "list", "--quick")
    assert code == 0 and "figure5            2 points,    0.7 min of flows (~4.0 min wall)  Figure 5" in out
    code, out, _ = run_cli(capsys, "--results", str(root), "suite", "--dry-run", "--quick", "step", "figure5")
    assert code == 0 and out.splitlines() == [  # in the suite's order: shortest first
        "figure5             2 point(s),    0.7 min of flows, about 4.0 min wall",
        "step                2 point(s),    1.0 min of flows, about 4.3 min wall",
        "suite: 2 experiments, 4 points, 1.7 min of flows, about 8.3 min wall (nothing run: --dry-run)"]


def test_plot_writes_the_figure_in_the_formats_asked(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # it draws figures
    run = step_run(tmp_path / "results")
    code, out, _ = run_cli(capsys, "plot", str(run.path), "--format", "svg,pdf,png")
    assert code == 0 and f"figure: {run.path / 'step.svg'}" in out
    assert (run.path / "step.svg").read_text().lstrip().startswith("<?xml")
    assert (run.path / "step.pdf").read_bytes().startswith(b"%PDF") and (run.path / "step.png").is_file()
    code, _, err = run_cli(capsys, "plot", str(run.path), "--format", "jpeg")
    assert code == 2 and err == "bbrlab: --format jpeg: give one or more of png, svg, pdf, e.g. png,svg,pdf\n"


def test_a_hand_edited_spec_yaml_is_judged_beside_the_verdict_it_no_longer_matches(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # it draws figures
    from bbrlab.store.results import read_json

    run = step_run(tmp_path / "results")
    text = (run.path / "spec.yaml").read_text().replace("name: step\n", "name: step-lab\n")
    (run.path / "spec.yaml").write_text(text)  # a run of its own: no experiments/ file judges it
    assert run_cli(capsys, "plot", str(run.path))[0] == 0  # its first verdict
    first = read_json(run.path / "verdict.json")
    assert "where:\n    cc: bbr\n" in text
    (run.path / "spec.yaml").write_text(text.replace("where:\n    cc: bbr\n", "where:\n    cc: cubic\n"))
    code, _, err = run_cli(capsys, "plot", str(run.path), "--strict")
    assert code == 3 and "re-judged (with the run's spec.yaml as edited since its verdict)" in err
    assert read_json(run.path / "verdict.json") == first
    assert read_json(run.path / "verdict-rejudged.json")["verdict"] == "not evaluated"


def test_plot_kind_draws_any_registered_kind_and_names_missing_series(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # it draws figures
    _, rundir = _finished(step_run(tmp_path / "results"))
    before = _stored(rundir)
    code, out, _ = run_cli(capsys, "plot", str(rundir.path), "--kind", "throughput_timeseries")
    assert code == 0 and f"figure: {rundir.path / 'step-throughput_timeseries.png'}" in out
    assert (rundir.path / "step-throughput_timeseries.png").stat().st_size > 0 and _stored(rundir) == before
    code, _, err = run_cli(capsys, "plot", str(rundir.path), "--kind", "fct_cdf")  # no short flows in a step run
    assert code == 2 and "plot --kind fct_cdf:" in err and "lacks the series it draws" in err and "shortflows" in err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as exc:
        run_cli(capsys, "plot", str(rundir.path), "--kind", "no_such_kind")
    assert exc.value.code == 2


def test_several_runs_are_drawn_together_each_labelled_by_how_it_differs(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # it draws figures
    one, two = step_run(tmp_path / "a"), step_run(tmp_path / "b")
    spec_two = two.path / "spec.yaml"
    spec_two.write_text(spec_two.read_text().replace("rtt: 40ms", "rtt: 30ms"))
    code, out, _ = run_cli(capsys, "plot", "--kind", "rtt_timeseries", str(one.path), str(two.path))
    figure = one.path / "runs-rtt_timeseries.png"
    assert code == 0 and out.splitlines() == ["the runs' setups differ: rtt: 40ms vs 30ms", f"figure: {figure}"]
    assert figure.stat().st_size > 20_000
    from bbrlab.output.figures import multirun

    both = multirun.RunSet([one, two], ["run 1 (rtt 40ms)", "run 2 (rtt 30ms)"])
    records = both.point_records()
    assert [r["params"]["run"] for r in records] == ["run 1 (rtt 40ms)", "run 2 (rtt 30ms)"]
    # the second run's BBR in a shade of its own, its series read from its own run
    from bbrlab.output.figures import style

    assert [r["flows"][0]["cc"] for r in records] == ["bbr", "bbr@1"]
    assert style.style("bbr@1")["color"] != style.style("bbr")["color"] and style.style("bbr@1")["label"] == "BBR"
    with style.runs_named({"bbr": "run 1 (rtt 40ms)", "bbr@1": "run 2 (rtt 30ms)"}):  # as the figure names them
        assert style.style("bbr@1")["label"] == "BBR, run 2 (rtt 30ms)"
    assert both.series(records[1]["id"])["rtt"] == two.series(records[1]["id"].split(" | ")[1])["rtt"]
    out_file = tmp_path / "both.svg"
    code, out, _ = run_cli(capsys, "plot", "--kind", "rtt_timeseries", str(one.path), str(two.path),
                           "--out", str(out_file), "--format", "svg")
    assert code == 0 and out_file.read_text().lstrip().startswith("<?xml")


@pytest.mark.parametrize(("argv", "says"), [
    (["--kind", "rtt_timeseries", "ONE", "--out", "x.png"], "plot --out: for several runs drawn together"),
    (["ONE", "TWO"], "plot: several runs are drawn together as one plot kind: add --kind KIND"),
    (["--kind", "rtt_timeseries", "--reanalyze", "ONE", "TWO"], "plot --reanalyze: for one run at a time"),
    (["--kind", "rtt_timeseries", "--out", "x.jpg", "ONE", "TWO"], "plot --out x.jpg: its extension is not among"),
    (["--kind", "throughput_timeseries", "ONE", "TWO"], "plot --kind throughput_timeseries: draws one point's"),
])
def test_several_runs_refused_in_one_line(capsys, tmp_path, step_run, argv, says):
    one, two = step_run(tmp_path / "a"), step_run(tmp_path / "b")
    argv = [str(one.path) if a == "ONE" else str(two.path) if a == "TWO" else a for a in argv]
    code, out, err = run_cli(capsys, "plot", *argv)
    assert code == 2 and err.startswith(f"bbrlab: {says}") and len(err.strip().splitlines()) == 1, err


def test_many_runs_get_shades_that_stay_colours():
    pytest.importorskip("matplotlib")  # the shades are mixed by matplotlib's colours
    from bbrlab.output.figures import style

    names = [style.variant("bbr", k) for k in range(12)]
    assert len({style.style(n)["color"] for n in names}) >= 8  # told apart, and no error at 8 and more


def test_suite_dry_run_counts_this_shards_points_only(capsys):
    code, whole, _ = run_cli(capsys, "suite", "--dry-run", "--quick", "figure5", "step")
    assert code == 0 and "2 experiments" in whole
    code, half, _ = run_cli(capsys, "suite", "--dry-run", "--quick", "--shard", "1/2", "figure5", "step")
    count = [int(line.split()[1]) for line in half.splitlines()[:-1]]
    assert code == 0 and sum(count) == 2 and "4 point(s)" not in half


def test_every_command_and_lab_subcommand_has_its_handler():
    import argparse
    from bbrlab import arguments

    def handlers(parser):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from handlers(sub)
        if parser.get_default("handler"):
            yield parser.get_default("handler")

    named = set(handlers(arguments.parser(Path("results"))))
    assert named == set(cli.HANDLERS) and len(named) == 21


def test_the_whole_suite_names_and_skips_what_this_kernel_cannot_run(capsys, monkeypatch, tmp_path):
    """On Debian's 6.1 kernel the whole suite runs every experiment but those asking for bbr3,
    and says why in one line each; asked for by name, such an experiment goes to the
    preflight, which refuses it with how to boot the BBRv3 kernel."""
    from bbrlab.emulation import preflight

    monkeypatch.setattr(preflight, "missing_ccs", lambda ccs: sorted(ccs & {"bbr3"}))
    monkeypatch.setattr(preflight, "release", lambda: "6.1.0-50-amd64")
    ran = []

    def stop(points):  # what the suite would run; stop there
        ran.append({p.experiment for p in points})
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_preflight", stop)
    monkeypatch.setenv("BBRLAB_TRACES", str(tmp_path / "none"))
    assert cli.main(["--results", str(tmp_path), "suite"]) == 130
    err = capsys.readouterr().err
    v3 = {"v3-shallow", "v3-loss", "v3-coexist", "rtt-mix", "quic-jitter-tcp"}
    assert not ran[0] & v3 and {"figure5", "coexist"} <= ran[0]
    assert ("bbrlab: suite: skipping v3-shallow, which needs congestion control(s) bbr3, which kernel "
            "6.1.0-50-amd64 does not offer: bbr3 (BBRv3) needs the testbed's 6.12 kernel") in err
    assert cli.main(["--results", str(tmp_path), "suite", "v3-shallow"]) == 130
    assert ran[1] == {"v3-shallow"}  # by name: the preflight's to refuse


def test_a_run_finished_without_its_figure_is_judged_and_says_how_to_draw_it(capsys, tmp_path, step_run):
    from bbrlab.output.reports import summary

    rundir = step_run(tmp_path / "results")
    exp = spec.build(spec.load_raw(rundir.path / "spec.yaml"), default_name="step")
    verdict = summary.finish(rundir, exp, figure=False)
    out = capsys.readouterr().out
    assert (rundir.path / "verdict.json").is_file() and not list(rundir.path.glob("*.png"))
    assert f"figure: not drawn (--no-figure): bbrlab plot {rundir.path}" in out and "figure" not in verdict
    code, out, _ = run_cli(capsys, "plot", str(rundir.path))
    assert code == 0 and (rundir.path / "step.png").is_file()
