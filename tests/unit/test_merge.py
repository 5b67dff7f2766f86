"""`bbrlab merge`, offline: shards run on a stand-in testbed (conftest's `measured`) merge
into a run judged like a run of the whole grid; mismatched shards are refused in one line;
overlapping and missing points are said; the shards' directories are left as they were."""

import hashlib
import json
import shutil
import types
from pathlib import Path

import pytest

from bbrlab import cli
from bbrlab.runs import merge, runner, shard
from bbrlab.schema import experiment as spec
from bbrlab.errors import BbrlabError
from bbrlab.store.results import RunDir, read_json, write_json

REPO = Path(__file__).resolve().parents[2]
CLAIMS = [
    {"id": "bbr-low", "text": "BBR's m stays at most 80", "metric": "rtt_p50_ms", "where": {"cc": "bbr"}, "max": 80},
    {"id": "cubic-high", "text": "CUBIC's m is at least 100", "metric": "rtt_p50_ms", "where": {"cc": "cubic"},
     "min": 100},
]


def sweep(repeat=3, **top) -> spec.Experiment:
    """2 CCs x 2 buffers, REPEAT repetitions: the CI sweep's shape."""
    return spec.build({"name": "sweep", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": ["50pkt", "175pkt"]},
                       "flows": [{"cc": ["bbr", "cubic"], "duration": "8s"}], "repeat": repeat, "claims": CLAIMS,
                       **top})


def part(exp, k, n=2):
    return shard.record(shard.Shard(k, n), shard.points_of(list(exp.points), shard.Shard(k, n)))


def run_shards(exp, root, n=2, hosts=None):
    """Each shard of EXP run into its own results root (one per host), as sweep.yml does."""
    out = []
    for k in range(1, n + 1):
        host = root / (hosts[k - 1] if hosts else f"host{k}")
        out.append(runner.run_experiment(exp, host, shard=part(exp, k, n)))
    return out


def tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            h.update(path.relative_to(folder).as_posix().encode() + path.read_bytes())
    return h.hexdigest()


def judged(verdict: dict) -> list:
    return [(c["id"], c["status"], [(k["point"], k["value"], k["low"], k["high"], k["n"], k["status"]) for k in c["checks"]])
            for c in verdict["claims"]]


@pytest.fixture
def table(measured):
    table, ran = measured
    table.update({("bbr", n): v for n, v in enumerate([60.0, 62.0, 61.0, 64.0, 59.0, 60.0, 62.0, 61.0], 1)})
    table.update({("cubic", n): 200.0 + n for n in range(1, 9)})
    return table


def test_two_shards_merge_into_the_run_of_the_whole_grid(tmp_path, table, capsys):
    exp = sweep()
    shards = run_shards(exp, tmp_path / "shards")
    before = [tree_digest(s.path) for s in shards]
    whole = runner.run_experiment(exp, tmp_path / "whole")
    (merged,), _ = merge.merge_all([s.path for s in shards], tmp_path / "results", ["merge"])
    assert merged.finished_points() == whole.finished_points() == {p.id for p in exp.points}
    ours, theirs = read_json(merged.path / "verdict.json"), read_json(whole.path / "verdict.json")
    assert ours["verdict"] == theirs["verdict"] == "reproduced" and judged(ours) == judged(theirs)
    assert read_json(merged.path / "metrics.json") == read_json(whole.path / "metrics.json")
    meta = read_json(merged.path / "run.json")
    assert meta["status"] == "complete" and meta["spec_hash"] == exp.identity and "shard" not in meta
    assert [s["index"] for s in meta["merged"]["shards"]] == [1, 2]
    assert sorted(p for s in meta["merged"]["shards"] for p in s["kept"]) == sorted(p.id for p in exp.points)
    assert meta["merged"]["missing"] == [] and meta["merged"]["overlaps"] == []
    assert len(meta["sessions"]) == 2 and {s["shard"] for s in meta["sessions"]} == {"shard 1/2", "shard 2/2"}
    assert (merged.path / "spec.yaml").read_text() == exp.source
    assert [tree_digest(s.path) for s in shards] == before  # the shards are left as they were
    assert "merge: 2 shard(s) of sweep into" in capsys.readouterr().err


def test_mismatched_shards_are_refused_in_one_line(tmp_path, table, capsys):
    one = runner.run_experiment(sweep(), tmp_path / "a", shard=part(sweep(), 1))
    other = sweep(seed=7)  # measures otherwise
    two = runner.run_experiment(other, tmp_path / "b", shard=part(other, 2))
    capsys.readouterr()
    assert cli.main(["merge", str(one.path), str(two.path), "--into", str(tmp_path / "results")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert f"measures spec {sweep().identity} but {two.path} measures {other.identity}" in err
    assert not (tmp_path / "results").exists()  # nothing written


def test_shards_of_different_splits_or_measurements_are_refused(tmp_path, table):
    exp = sweep()
    one = runner.run_experiment(exp, tmp_path / "a", shard=part(exp, 1, 2))
    three = runner.run_experiment(exp, tmp_path / "b", shard=part(exp, 2, 3))
    with pytest.raises(BbrlabError, match="is shard 1/2 but .* is shard 2/3: shards of different splits"):
        merge.merge_all([one.path, three.path], tmp_path / "results")
    two = runner.run_experiment(exp, tmp_path / "c", shard=part(exp, 2, 2))
    meta = read_json(two.path / "run.json")
    write_json(two.path / "run.json", dict(meta, measurement=meta["measurement"] - 1))
    with pytest.raises(BbrlabError, match="runs measured differently are not merged"):
        merge.merge_all([one.path, two.path], tmp_path / "results")
    whole = runner.run_experiment(exp, tmp_path / "d")
    with pytest.raises(BbrlabError, match="is not a shard's run"):
        merge.merge_all([one.path, whole.path], tmp_path / "results")


def test_a_missing_shard_is_named_and_the_merged_run_resumes_on_one_host(tmp_path, table, measured, capsys):
    exp = sweep()
    one = runner.run_experiment(exp, tmp_path / "host1", shard=part(exp, 1))
    capsys.readouterr()
    (merged,), _ = merge.merge_all([one.path], tmp_path / "results")
    err = capsys.readouterr().err
    lost = sorted(part(exp, 2)["points"])
    assert f"merge: missing {len(lost)} point(s) of shard 2 of 2 (not given): {', '.join(lost)}" in err
    meta = read_json(merged.path / "run.json")
    assert meta["status"] == "incomplete" and [m["point"] for m in meta["merged"]["missing"]] == lost
    # what the message says: the merged run resumed on one host runs only the missing points
    assert f"`bbrlab --results {tmp_path / 'results'} run {merged.path / 'spec.yaml'}`" in err
    ran = measured[1]
    ran.clear()
    resumed = runner.run_experiment(spec.load(merged.path / "spec.yaml"), tmp_path / "results")
    assert resumed.path == merged.path and sorted(ran) == lost
    assert read_json(merged.path / "run.json")["status"] == "complete"


def test_a_killed_shard_is_named_with_its_host_and_missing_points(tmp_path, table, capsys):
    exp = sweep()
    one, two = run_shards(exp, tmp_path)
    gone = sorted(two.finished_points())[:2]
    for pid in gone:  # as if the host died before these points
        shutil.rmtree(two.points_dir / pid)
    capsys.readouterr()
    (merged,), _ = merge.merge_all([one.path, two.path], tmp_path / "results")
    err = capsys.readouterr().err
    host = read_json(two.path / "run.json")["system"]["hostname"]
    assert f"merge: missing 2 point(s) of shard 2/2 (host {host}, {two.path}): {', '.join(gone)}" in err
    assert read_json(merged.path / "verdict.json")["points"] == {"finished": 10, "total": 12}


def test_a_point_finished_in_two_shards_is_kept_once(tmp_path, table, capsys):
    exp = sweep()
    one, two = run_shards(exp, tmp_path)
    spare = runner.run_experiment(exp, tmp_path / "spare", shard=part(exp, 2))  # took shard 2 over
    capsys.readouterr()
    (merged,), _ = merge.merge_all([one.path, two.path, spare.path], tmp_path / "results")
    err = capsys.readouterr().err
    meta = read_json(merged.path / "run.json")
    assert [o["point"] for o in meta["merged"]["overlaps"]] == sorted(two.finished_points())
    assert all(o["kept"] == str(two.path) and o["dropped"] == str(spare.path) for o in meta["merged"]["overlaps"])
    assert err.count("kept the first") == len(two.finished_points())
    assert merged.finished_points() == {p.id for p in exp.points} and meta["status"] == "complete"


def test_repeat_auto_is_judged_on_the_merged_grid(tmp_path, measured, capsys):
    table, ran = measured
    table.update({("bbr", n): v for n, v in enumerate([74.0, 78.0, 82.0, 79.0, 80.0], 1)})
    table.update({("cubic", n): 200.0 + n for n in range(1, 9)})
    exp = sweep(repeat={"min": 3, "max": 5})
    shards = run_shards(exp, tmp_path)
    assert not any(pid.endswith(("rep4", "rep5")) for pid in ran)
    capsys.readouterr()
    (merged,), _ = merge.merge_all([s.path for s in shards], tmp_path / "results")
    err = capsys.readouterr().err
    assert "repeat: auto: 2 checks straddle their bounds (buffer=175pkt, cc=bbr; buffer=50pkt, cc=bbr)" in err
    assert read_json(merged.path / "run.json")["status"] == "incomplete"
    ran.clear()
    runner.run_experiment(spec.load(merged.path / "spec.yaml"), tmp_path / "results")
    assert sorted(ran) == sorted(f"buffer={b},cc=bbr,rep{n}" for b in ("50pkt", "175pkt") for n in (4, 5))
    whole = runner.run_experiment(exp, tmp_path / "whole")
    assert judged(read_json(merged.path / "verdict.json")) == judged(read_json(whole.path / "verdict.json"))


def test_results_roots_merge_each_experiments_newest_shards(tmp_path, table):
    exp = sweep()
    old = sweep(seed=9)
    runner.run_experiment(old, tmp_path / "host1", shard=part(old, 1))  # an earlier sweep: not taken
    one, two = run_shards(exp, tmp_path)
    (merged,), _ = merge.merge_all([tmp_path / "host1", tmp_path / "host2"], tmp_path / "results")
    meta = read_json(merged.path / "run.json")
    assert [s["dir"] for s in meta["merged"]["shards"]] == [str(one.path), str(two.path)]
    assert meta["status"] == "complete"
    with pytest.raises(BbrlabError, match="not both"):
        merge.merge_all([tmp_path / "host1", one.path], tmp_path / "results")


def test_a_merged_run_plots_reports_and_exports_like_any_run(tmp_path, step_run, capsys):
    """The captured step point as shard 1 of 2: merged for real (no stand-ins), then the
    commands that read runs take it unchanged."""
    pytest.importorskip("matplotlib")  # it draws figures
    base = step_run(tmp_path / "host1")
    exp = spec.load(REPO / "experiments" / "step.yaml")
    meta = {"status": "complete", "spec_hash": exp.identity, "shard": part(exp, 1),
            "system": {"hostname": "lab1"}, "sessions": [{"wall_seconds": 40.0}]}
    write_json(base.path / "run.json", meta)
    bbr = [p.id for p in exp.points if p.params["cc"] == "bbr"]
    assert meta["shard"]["points"] == bbr  # the captured point is shard 1's
    assert cli.main(["merge", str(base.path), "--into", str(tmp_path / "results"), "--partial"]) == 0
    out = capsys.readouterr().out
    merged = RunDir.latest(tmp_path / "results", "step")
    assert f"results: {merged.path}" in out and (merged.path / "step.png").is_file()
    assert read_json(merged.path / "verdict.json")["points"] == {"finished": 1, "total": 2}
    assert cli.main(["plot", str(merged.path)]) == 0
    assert cli.main(["--results", str(tmp_path / "results"), "report"]) == 0
    assert "1 of 2" in (tmp_path / "results" / "report.md").read_text()
    assert cli.main(["export", str(merged.path), "--out", str(tmp_path / "tables")]) == 0
    rows = (tmp_path / "tables" / "points.csv").read_text().splitlines()
    assert len(rows) == 2 and json.loads(json.dumps(rows))


def test_an_experiment_that_cannot_be_merged_here_stops_no_other(tmp_path, table, capsys):
    import yaml

    exp, other = sweep(), sweep(name="traced")
    run_shards(exp, tmp_path)
    one, two = run_shards(other, tmp_path)
    for shard_run in (one, two):  # its trace is on the hosts, not on this machine
        raw = yaml.safe_load((shard_run.path / "spec.yaml").read_text())
        raw["link"]["trace"] = str(tmp_path / "elsewhere" / "lte.up")
        (shard_run.path / "spec.yaml").write_text(yaml.safe_dump(raw))
    capsys.readouterr()
    assert cli.main(["merge", str(tmp_path / "host1"), str(tmp_path / "host2"),
                     "--into", str(tmp_path / "results")]) == 2
    out, err = capsys.readouterr()
    merged = RunDir.latest(tmp_path / "results", "sweep")
    assert out.count("results: ") == 1 and f"results: {merged.path}" in out
    assert "bbrlab: merge: traced: link.trace:" in err and "no such trace file" in err


def test_a_shard_whose_spec_was_edited_to_measure_otherwise_is_refused(tmp_path, table):
    import yaml

    one, two = run_shards(sweep(), tmp_path)
    raw = yaml.safe_load((two.path / "spec.yaml").read_text())
    raw["seed"] = 2
    (two.path / "spec.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(BbrlabError, match="shards of different specs are not merged"):
        merge.merge_all([one.path, two.path], tmp_path / "results")


def test_a_gate_that_only_says_how_far_a_machine_was_calibrated_binds_no_shard_covered_further():
    """Lazy calibration: one shard's machine measured up to 10 Mbit/s (what its points
    needed), another's up to 100; the merged run is not judged as if 10 were a failure. A
    real failure binds every shard."""
    def shard(key, gate_bps, failed):
        meta = {"calibration": {"key": key, "gate": {"rate_bps": gate_bps, "failed": failed}}}
        return types.SimpleNamespace(meta=meta)

    covered_10 = shard("a", 10e6 * (1 + 1e-9), "not calibrated above 10 Mbit/s")
    covered_100 = shard("b", 100e6 * (1 + 1e-9), "not calibrated above 100 Mbit/s")
    failed_50 = shard("c", 50e6, "cubic: link_delivery 0.9 < 0.98")
    chosen, _ = merge._calibration([covered_10, covered_100])
    assert chosen["key"] == "b"
    chosen, why = merge._calibration([covered_10, covered_100, failed_50])
    assert chosen["key"] == "c" and "3 machines" in why
