"""The host's load, sampled by vm/vm.sh, kept with the runs and calibrations made meanwhile
(runs/hostload, store/host_load), and said in the report."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from bbrlab.errors import BbrlabError
from bbrlab.runs import hostload
from bbrlab.store import host_load
from bbrlab.store.results import RunDir

S = host_load.Sample


def test_the_load_between_two_times_is_read_from_the_samples_around_them():
    # 2 CPUs, 100 ticks a second in all: 10 s from 1000 to 1010 of which 1500 busy, qemu 900
    samples = [S(1000, 0, 0, 0), S(1005, 1000, 700, 400), S(1010, 2000, 1500, 900), S(1015, 3000, 1600, 1000)]
    load = host_load.load_between(samples, 2, 1001, 1009)  # widened to the samples around it
    assert load == {"from": 1000, "to": 1010, "cpus": 2, "busy_cpus": 1.5, "vm_cpus": 0.9, "other_cpus": 0.6,
                    "busy": True}
    assert host_load.load_between(samples, 2, 1010, 1015)["other_cpus"] == 0.0  # the VM alone: quiet
    assert host_load.load_between(samples, 2, 1020, 1030) is None  # after the last sample: no time between
    assert host_load.load_between([], 2, 0, 1) is None
    unknown = host_load.load_between([S(0, 0, 0, None), S(5, 1000, 500, None)], 2, 0, 5)
    assert unknown["busy_cpus"] == 1.0 and unknown["other_cpus"] is None and unknown["busy"] is None


def test_the_samples_are_parsed_and_bad_ones_named_in_one_line():
    cpus, now, samples = hostload.parse("cpus 2\nnow 1700.5\n1690 10 5 -\n1695 20 9 3\n\n")
    assert (cpus, now) == (2, 1700.5) and samples == [S(1690, 10, 5, None), S(1695, 20, 9, 3)]
    with pytest.raises(BbrlabError, match=r"line 3 of the samples is not understood \('1690 ten 5 -'"):
        hostload.parse("cpus 2\nnow 1\n1690 ten 5 -\n")
    with pytest.raises(BbrlabError, match="lack their 'cpus N' and 'now EPOCH' lines"):
        hostload.parse("1690 10 5 -\n")


def write_run(root: Path, name: str, sessions: list[dict], experiment: str = "figure5") -> Path:
    path = root / experiment / name
    path.mkdir(parents=True)
    (path / "run.json").write_text(json.dumps({"sessions": sessions}))
    return path


def test_each_session_gets_the_load_of_its_own_time_and_a_busy_one_marks_the_run(tmp_path):
    root = tmp_path / "results"
    both = write_run(root, "a", [{"started": 1000, "wall_seconds": 8}, {"started": 1020}])  # the second interrupted
    before = write_run(root, "b", [{"started": 900, "wall_seconds": 10}])  # not in this command
    (root / "figure5" / "c").mkdir()  # no run.json: not a run
    samples = [S(995, 0, 0, 0), S(1010, 3000, 1500, 1400), S(1020, 5000, 3000, 2200), S(1030, 7000, 5000, 3000)]
    stamped = hostload.stamp_runs(root, 2, samples)
    assert list(stamped) == [str(both.resolve())] and not (before / host_load.FILE).exists()
    kept = json.loads((both / host_load.FILE).read_text())
    first, second = kept["sessions"]["1000.000"], kept["sessions"]["1020.000"]
    assert (first["from"], first["to"], first["other_cpus"], first["busy"]) == (995, 1010, 0.07, False)
    assert (second["from"], second["to"], second["other_cpus"], second["busy"]) == (1020, 1030, 1.2, True)
    assert kept["busy"] is True and kept["other_cpus_max"] == 1.2 and kept["limit_cpus"] == host_load.BUSY_CPUS
    line = host_load.line(RunDir(both))
    assert line.startswith("host load: other programs on the host took up to 1.20 CPUs while this run measured")
    assert host_load.line(RunDir(before)) is None
    assert hostload.stamp_runs(root, 2, samples[:1]) == {}  # one sample: no time measured


def test_runs_under_a_root_of_their_own_are_found_and_their_points_not_searched(tmp_path):
    root = tmp_path / "results"
    deep = write_run(root, "a", [{"started": 1000, "wall_seconds": 5}], experiment="integration/figure5-group/figure5")
    nested = deep / "points" / "p1"  # a run's own folder: not a run of its own, never searched
    nested.mkdir(parents=True)
    (nested / "run.json").write_text(json.dumps({"sessions": [{"started": 1001}]}))
    too_deep = write_run(root, "b", [{"started": 1000}], experiment="w/x/y/z")
    found = host_load.runs_within(root, 990, 1010)
    assert [(r.path, start, end) for r, start, end in found] == [(deep, 1000.0, 1005.0)]
    assert not too_deep.joinpath(host_load.FILE).exists() and host_load.runs_within(tmp_path / "none", 0, 1) == []


def test_the_command_keeps_the_load_with_its_runs_and_the_calibrations_made_of_them(tmp_path, monkeypatch, capsys):
    root, store = tmp_path / "results", tmp_path / "cal"
    run = write_run(root, "a", [{"started": 1000.0, "wall_seconds": 20}])
    store.mkdir()
    cal = {"format": 6, "runs": [str(run)], "rates": [{"faithful": False}]}
    (store / "k.json").write_text(json.dumps(cal))
    (store / "other.json").write_text(json.dumps({"runs": [str(tmp_path / "elsewhere")]}))
    monkeypatch.setenv("BBRLAB_CALIBRATION_DIR", str(store))
    monkeypatch.setattr(hostload.time, "time", lambda: 1100.0)  # this machine's clock 10 s ahead of the host's
    monkeypatch.setattr("sys.stdin", io.StringIO("cpus 2\nnow 1090\n985 0 0 0\n1010 5000 4000 1000\n"))
    assert hostload.main([str(root)]) == 0
    assert "host load: kept with 1 run(s) and 1 calibration(s); 1 measured while other programs were busy" \
        in capsys.readouterr().err
    stored = json.loads((store / "k.json").read_text())
    assert stored["host_load"] == {"limit_cpus": 0.5, "other_cpus_max": 1.2, "busy": True,
                                   "runs": {str(run.resolve()): 1.2}}
    assert "host_load" not in json.loads((store / "other.json").read_text())
    assert host_load.failed_while_busy(stored, True) == "other programs on the host took 1.20 CPUs while it measured"
    assert host_load.failed_while_busy(stored, False) is None  # it passed: kept
    assert host_load.failed_while_busy(cal, True) is None and host_load.failed_while_busy(None, False) is None
    monkeypatch.setattr("sys.stdin", io.StringIO("cpus x\n"))
    assert hostload.main([str(root)]) == 2
    assert capsys.readouterr().err == "hostload: line 1 of the samples is not understood ('cpus x': " \
        "invalid literal for int() with base 10: 'x')\n"


def test_a_figure_redrawn_after_the_hand_over_gives_the_host_load_under_its_verdict(synthetic_run):
    from bbrlab.output.figures import plots
    from bbrlab.schema import experiment as spec
    from bbrlab.verdicts import claims

    exp = spec.load(Path(__file__).resolve().parents[2] / "experiments" / "bw-sweep.yaml", ["loss=[1%]"], quick=True)
    rundir = synthetic_run(exp, lambda point, plan: {"link_mbps": point.link.rate / 1e6, "loss": point.link.loss,
                                                     "steady_goodput_mbps": point.link.rate / 2e6})
    records = rundir.point_records()

    def footer() -> str:
        fig = plots.figure(exp, rundir, records, claims.verdict(exp.claims, records))
        return fig.texts[-1].get_text()

    assert "host load" not in footer()  # drawn in the guest: not known yet
    host_load.record(rundir, 1000.0, {"other_cpus": 1.2, "busy": True})
    assert footer().splitlines()[-1].startswith("host load: other programs on the host took up to 1.20 CPUs")
