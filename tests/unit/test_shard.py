"""Shards, offline: `--shard K/N` read and refused, a partition every host computes alike,
balanced on the real experiments' grids, and a shard's run kept apart from every other."""

import random
from pathlib import Path

import pytest

from bbrlab import cli
from bbrlab.runs import runner, shard, suite
from bbrlab.schema import experiment as spec
from bbrlab.emulation import topo
from bbrlab.errors import SpecError
from bbrlab.store.results import RunDir, read_json

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = sorted((REPO / "experiments").glob("*.yaml"))


def every_point():
    return [p for path in EXPERIMENTS for p in spec.load(path).points]


@pytest.mark.parametrize("text, shard_", [("1/4", (1, 4)), (" 2 / 3 ", (2, 3)), ("1/1", (1, 1)), ("8/8", (8, 8))])
def test_parse(text, shard_):
    assert shard.parse(text) == shard.Shard(*shard_)
    assert str(shard.parse(text)) == f"{shard_[0]}/{shard_[1]}"


@pytest.mark.parametrize("text, problem", [
    ("0/4", "K must be between 1 and N"),
    ("5/4", "K must be between 1 and N"),
    ("1/0", "N must be at least 1"),
    ("1", "expected K/N"),
    ("a/b", "expected K/N"),
    ("-1/2", "expected K/N"),
    ("", "expected K/N"),
])
def test_a_bad_shard_names_the_option_and_the_problem(text, problem):
    with pytest.raises(SpecError) as err:
        shard.parse(text)
    assert str(err.value).startswith(f"--shard {text}:") and problem in str(err.value)


def test_a_bad_shard_on_the_command_line_is_one_line(capsys):
    assert cli.main(["run", "figure5", "--dry-run", "--shard", "3/2"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "--shard 3/2: K must be between 1 and N" in err


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_every_point_is_in_exactly_one_shard(count):
    points = every_point()
    parts = shard.partition(points, count)
    assert len(parts) == count
    ids = [(p.experiment, p.id) for part in parts for p in part]
    assert sorted(ids) == sorted((p.experiment, p.id) for p in points) and len(set(ids)) == len(ids)


def test_every_host_computes_the_same_partition_whatever_order_it_reads_the_points_in():
    points = every_point()
    shuffled = list(points)
    random.Random(3).shuffle(shuffled)
    ids = [[(p.experiment, p.id) for p in part] for part in shard.partition(points, 4)]
    again = [{(p.experiment, p.id) for p in part} for part in shard.partition(shuffled, 4)]
    assert [set(part) for part in ids] == again
    assert shard.points_of(points, shard.Shard(2, 4)) == shard.partition(points, 4)[1]


@pytest.mark.parametrize("count", [2, 3, 4, 8])
def test_the_suite_is_balanced_by_expected_time(count):
    points = every_point()
    times = [shard.expected_seconds(part) for part in shard.partition(points, count)]
    assert max(times) <= 1.03 * shard.expected_seconds(points) / count


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_each_experiment_alone_is_balanced_within_one_point(path):
    points = list(spec.load(path).points)
    for count in (2, 3):
        times = [shard.expected_seconds(part) for part in shard.partition(points, count)]
        longest = max(shard.cost(p) for p in points) + shard.NETWORK_SETUP
        assert max(times) <= shard.expected_seconds(points) / count + longest


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_the_shape_a_shard_counts_is_the_networks_shape(path):
    """Points with one shard.shape build one network (topo.Plan.shape), so a shard that
    holds them builds it once."""
    plans: dict = {}
    for point in spec.load(path).points:
        plans.setdefault(shard.shape(point), set()).add(topo.build_plan(point).shape)
    assert all(len(shapes) == 1 for shapes in plans.values())


def test_points_of_one_shape_stay_together_when_that_costs_no_balance():
    exp = spec.build({"name": "shapes", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "175pkt"},
                      "flows": [{"cc": ["bbr", "cubic", "reno"], "count": [1, 2], "duration": "10s"}]})
    parts = shard.partition(list(exp.points), 3)
    assert [len(part) for part in parts] == [2, 2, 2]
    # two shapes of three points on three shards: one shard must build both, the others one
    assert sorted(len({shard.shape(p) for p in part}) for part in parts) == [1, 1, 2]


def test_the_suites_shards_cover_every_experiments_points_once():
    exps = suite.experiments(REPO / "experiments")
    parts = [suite.shards(exps, shard.Shard(k, 3)) for k in (1, 2, 3)]
    for exp in exps:
        held = [pid for part in parts for pid in part.get(exp.name, {}).get("points", [])]
        assert sorted(held) == sorted(p.id for p in exp.points)
    lone = suite.shards([e for e in exps if e.name == "figure6"], shard.Shard(2, 2))
    assert lone == {}  # figure 6 is one point: the second shard has nothing of it


def test_dry_run_shows_the_partition_and_this_shards_points(capsys):
    assert cli.main(["run", "figure5", "--dry-run", "--shard", "2/2"]) == 0
    out, err = capsys.readouterr()
    assert "shard 2/2: 3 point(s), about" in err and "<- this host" in err
    assert out.count("\n== point ") == 3


def two_ccs(repeat=1):
    return spec.build({"name": "sharded", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": ["50pkt", "175pkt"]},
                       "flows": [{"cc": ["bbr", "cubic"], "duration": "10s"}], "repeat": repeat})


def test_a_shard_runs_its_points_only_and_is_resumed_only_as_that_shard(tmp_path, measured):
    table, ran = measured
    table.update({(cc, n): 50.0 for cc in ("bbr", "cubic") for n in range(1, 9)})
    exp = two_ccs()
    first = shard.record(shard.Shard(1, 2), shard.points_of(list(exp.points), shard.Shard(1, 2)))
    second = shard.record(shard.Shard(2, 2), shard.points_of(list(exp.points), shard.Shard(2, 2)))
    one = runner.run_experiment(exp, tmp_path, shard=first)
    assert sorted(ran) == first["points"] and one.finished_points() == set(first["points"])
    meta = read_json(one.path / "run.json")
    assert meta["shard"] == first and meta["status"] == "complete" and meta["spec_hash"] == exp.identity
    # shard 1 is complete: shard 2 and the whole grid each start their own run
    assert RunDir.find_resumable(tmp_path, exp.name, exp.identity, second) is None
    two = runner.run_experiment(exp, tmp_path, shard=second)
    assert two.path != one.path and two.finished_points() == set(second["points"])
    meta = read_json(two.path / "run.json")
    meta["status"] = "interrupted"  # as a killed shard leaves it
    (two.path / "run.json").write_text(__import__("json").dumps(meta))
    assert RunDir.find_resumable(tmp_path, exp.name, exp.identity) is None  # never the whole grid into a shard
    assert RunDir.find_resumable(tmp_path, exp.name, exp.identity, first) is None  # nor shard 1 into shard 2's
    assert RunDir.find_resumable(tmp_path, exp.name, exp.identity, second).path == two.path
    whole = runner.run_experiment(exp, tmp_path)
    assert whole.path not in (one.path, two.path) and len(whole.finished_points()) == 4


def test_a_shard_leaves_repeat_auto_to_the_merged_run(tmp_path, measured, capsys):
    table, ran = measured
    table.update({("bbr", n): [70.0, 90.0, 75.0, 85.0, 80.0, 79.0, 81.0, 80.0][n - 1] for n in range(1, 9)})
    table.update({("cubic", n): 200.0 for n in range(1, 9)})
    exp = spec.build({**two_ccs().raw, "repeat": "auto",
                      "claims": [{"id": "low", "text": "m at most 80", "metric": "rtt_p50_ms",
                                  "where": {"cc": "bbr"}, "max": 80}]})
    part = shard.record(shard.Shard(1, 2), shard.points_of(list(exp.points), shard.Shard(1, 2)))
    rundir = runner.run_experiment(exp, tmp_path, shard=part)
    assert sorted(ran) == part["points"] and all(pid.endswith(("rep1", "rep2", "rep3")) for pid in ran)
    assert "repeat: auto" not in capsys.readouterr().err
    assert read_json(rundir.path / "run.json")["status"] == "complete"


def test_a_finished_shard_is_not_run_again(tmp_path, measured, capsys):
    """What a rerun of the sweep playbook relies on: the command that ran a shard, given
    again, says it is done (an unfinished one is resumed: above)."""
    table, ran = measured
    table.update({(cc, 1): 50.0 for cc in ("bbr", "cubic")})
    fixture = REPO / "tests" / "fixtures" / "sweep.yaml"
    exp = spec.load(fixture)
    done = runner.run_experiment(exp, tmp_path, shard=shard.record(shard.Shard(2, 2), shard.points_of(
        list(exp.points), shard.Shard(2, 2))))
    capsys.readouterr()
    assert cli.main(["--results", str(tmp_path), "run", str(fixture), "--shard", "2/2"]) == 0
    out, err = capsys.readouterr()
    assert f"shard 2/2 of sweep is done ({done.path}; --fresh runs it again)" in err
    assert out == f"results: {done.path}\n" and len(ran) == 2


def test_a_suite_shard_runs_its_part_of_each_experiment(tmp_path, measured, monkeypatch, capsys):
    from bbrlab.runs import merge

    table, ran = measured
    table.update({(cc, 1): 50.0 for cc in ("bbr", "cubic")})
    monkeypatch.setattr(cli, "_preflight", lambda points: None)
    monkeypatch.setattr(cli, "_calibration", lambda args, points: None)
    exps = [e for e in suite.experiments(REPO / "experiments", quick=True) if e.name in ("step", "figure5")]
    every = {(p.experiment, p.id) for e in exps for p in e.points}
    for k in (1, 2):
        ran.clear()
        argv = ["--results", str(tmp_path / f"host{k}"), "suite", "--quick", "--shard", f"{k}/2", "step", "figure5"]
        assert cli.main(argv) == 0
        mine = suite.shards(exps, shard.Shard(k, 2))
        assert sorted(ran) == sorted(p for part in mine.values() for p in part["points"])
        assert not (tmp_path / f"host{k}" / "report.md").exists()  # the merged runs are reported
    ran.clear()
    assert cli.main(["--results", str(tmp_path / "host1"), "suite", "--quick", "--shard", "1/2", "step",
                     "figure5"]) == 0
    assert ran == [] and ": done (" in capsys.readouterr().err  # a shard's finished runs are not run again
    merged, errors = merge.merge_all([tmp_path / "host1", tmp_path / "host2"], tmp_path / "results")
    assert errors == []
    assert {(r.path.parent.name, p) for r in merged for p in r.finished_points()} == every
    assert all(read_json(r.path / "run.json")["status"] == "complete" for r in merged)
