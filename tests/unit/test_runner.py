"""The runner's `repeat: auto` loop, offline: a stand-in testbed, measurements from a table."""

import pytest

from bbrlab.runs import runner
from bbrlab.schema import experiment as spec
from bbrlab.store.results import read_json

CLAIMS = [
    {"id": "bbr-low", "text": "BBR's m stays at most 80", "metric": "rtt_p50_ms", "where": {"cc": "bbr"}, "max": 80},
    {"id": "cubic-high", "text": "CUBIC's m is at least 100", "metric": "rtt_p50_ms", "where": {"cc": "cubic"}, "min": 100},
]


def experiment(repeat, claims=CLAIMS) -> spec.Experiment:
    return spec.build({"name": "auto", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "175pkt"},
                       "flows": [{"cc": ["bbr", "cubic"], "duration": "10s"}], "repeat": repeat,
                       "claims": claims})


def cubic_holds(table):
    table.update({("cubic", n): 200.0 + n for n in range(1, 9)})


def test_repetitions_are_added_while_a_check_straddles_its_bound_up_to_the_most(tmp_path, measured, capsys):
    table, ran = measured
    cubic_holds(table)
    table.update({("bbr", n): v for n, v in enumerate([74.0, 78.0, 82.0, 79.0, 80.0], 1)})
    rundir = runner.run_experiment(experiment({"min": 3, "max": 5}), tmp_path, shuffle=False)
    err = capsys.readouterr().err
    assert ran == [f"cc={cc},rep{n}" for cc in ("bbr", "cubic") for n in (1, 2, 3)] + ["cc=bbr,rep4", "cc=bbr,rep5"]
    assert "repeat: auto: 1 check straddles its bound; adding repetition 4 of cc=bbr\n" in err
    assert "repeat: auto: 1 check straddles its bound; adding repetition 5 of cc=bbr\n" in err
    v = read_json(rundir.path / "verdict.json")
    assert v["verdict"] == "inconclusive" and v["points"] == {"finished": 8, "total": 8}
    (check,) = v["claims"][0]["checks"]
    assert check["n"] == 5 and check["low"] < 80 < check["high"]
    assert v["why"][0].startswith("interval straddles the bound: bbr-low cc=bbr: 78.6 [")
    meta = read_json(rundir.path / "run.json")
    assert meta["status"] == "complete" and meta["sessions"][-1]["points_run"] == 8


def test_adding_stops_once_every_check_is_decided(tmp_path, measured, capsys):
    table, ran = measured
    cubic_holds(table)
    table.update({("bbr", n): v for n, v in enumerate([70.0, 71.0, 78.0, 71.0, 99.0], 1)})
    rundir = runner.run_experiment(experiment("auto"), tmp_path, shuffle=False)
    assert ran[6:] == ["cc=bbr,rep4"]  # 70, 71, 78 straddle 80; with 71 the interval is [66.6, 78.4]
    assert capsys.readouterr().err.count("repeat: auto:") == 1
    v = read_json(rundir.path / "verdict.json")
    assert v["verdict"] == "reproduced" and v["claims"][0]["checks"][0]["n"] == 4


def test_a_fixed_repeat_adds_nothing(tmp_path, measured):
    table, ran = measured
    cubic_holds(table)
    table.update({("bbr", n): v for n, v in enumerate([74.0, 78.0, 82.0], 1)})
    rundir = runner.run_experiment(experiment(3), tmp_path, shuffle=False)
    assert len(ran) == 6 and read_json(rundir.path / "verdict.json")["verdict"] == "inconclusive"


def test_untrusted_points_are_not_repeated(tmp_path, measured, capsys):
    table, ran = measured
    cubic_holds(table)
    table.update({("bbr", n): {"rtt_p50_ms": v, "cpu_bound": n == 2} for n, v in enumerate([74.0, 78.0, 82.0], 1)})
    rundir = runner.run_experiment(experiment("auto"), tmp_path, shuffle=False)
    assert len(ran) == 6 and "repeat: auto" not in capsys.readouterr().err
    v = read_json(rundir.path / "verdict.json")
    assert v["verdict"] == "inconclusive" and v["why"] == ["CPU-bound points: cc=bbr"]


def test_a_ratio_check_repeats_both_of_its_points(tmp_path, measured, capsys):
    table, ran = measured
    ratio = [{"id": "bbr-below-cubic", "text": "BBR's m is at most half of CUBIC's", "metric": "rtt_p50_ms",
              "where": {"cc": "bbr"}, "vs": {"cc": "cubic"}, "max": 0.5}]
    table.update({("cubic", n): 100.0 for n in range(1, 9)})
    table.update({("bbr", n): v for n, v in enumerate([44.0, 48.0, 52.0, 45.0, 44.0, 46.0, 45.0, 44.0], 1)})
    runner.run_experiment(experiment("auto", ratio), tmp_path, shuffle=False)
    assert "adding repetition 4 of cc=bbr, cc=cubic\n" in capsys.readouterr().err
    assert ran[6:8] == ["cc=bbr,rep4", "cc=cubic,rep4"]


def test_a_resumed_run_counts_the_repetitions_already_added(tmp_path, measured, capsys):
    table, ran = measured
    cubic_holds(table)
    table.update({("bbr", n): v for n, v in enumerate([70.0, 71.0, 78.0, 79.0, KeyboardInterrupt()], 1)})
    exp = experiment("auto")
    with pytest.raises(runner.Interrupted):
        runner.run_experiment(exp, tmp_path, shuffle=False)
    assert ran[-2:] == ["cc=bbr,rep4", "cc=bbr,rep5"]
    table[("bbr", 5)] = 70.0  # with it, the interval is [68.0, 79.2]
    ran.clear()
    capsys.readouterr()
    rundir = runner.run_experiment(exp, tmp_path, shuffle=False)
    err = capsys.readouterr().err
    assert "(6 of 6 points done, and 1 added by repeat: auto)" in err
    assert ran == ["cc=bbr,rep5"] and "adding repetition 5 of cc=bbr\n" in err
    v = read_json(rundir.path / "verdict.json")
    assert v["verdict"] == "reproduced" and v["points"] == {"finished": 8, "total": 8}


def test_only_adds_to_its_own_points_and_leaves_the_run_resumable_for_the_others(tmp_path, measured, capsys):
    table, ran = measured
    table.update({("cubic", n): v for n, v in enumerate([90.0, 100.0, 110.0, 101.0, 102.0, 103.0, 101.0, 102.0], 1)})
    table.update({("bbr", n): v for n, v in enumerate([70.0, 71.0, 78.0, 71.0], 1)})
    exp = experiment("auto")
    cubic = [p for p in exp.points if p.params["cc"] == "cubic"]
    runner.run_experiment(exp, tmp_path, shuffle=False, subset=cubic)
    assert ran == ["cc=cubic,rep1", "cc=cubic,rep2", "cc=cubic,rep3"]  # the planned grid is not all in: nothing added
    bbr = [p for p in exp.points if p.params["cc"] == "bbr"]
    ran.clear()
    rundir = runner.run_experiment(exp, tmp_path, shuffle=False, subset=bbr)
    err = capsys.readouterr().err
    assert ran == ["cc=bbr,rep1", "cc=bbr,rep2", "cc=bbr,rep3", "cc=bbr,rep4"]  # CUBIC straddles too: not here
    assert "repeat: auto: cc=cubic may need more repetitions; the run stays resumable" in err
    assert read_json(rundir.path / "run.json")["status"] == "incomplete"
    ran.clear()
    assert runner.run_experiment(exp, tmp_path, shuffle=False).path == rundir.path
    assert ran[0] == "cc=cubic,rep4" and read_json(rundir.path / "run.json")["status"] == "complete"
