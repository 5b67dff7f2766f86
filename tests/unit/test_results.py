"""Results on disk: atomic writes, run directories, staging and committing points, resuming."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bbrlab.store import results
from bbrlab.errors import BbrlabError
from bbrlab.store.results import RunDir

STAMP = "20240102-030405"


@pytest.fixture
def fixed_clock(monkeypatch):
    monkeypatch.setattr(results.time, "strftime", lambda fmt, *a: STAMP if "%Y" in fmt else "030405")


def make_run(root: Path, name: str, digest: str = "abc", status: str = "running", experiment="exp") -> Path:
    path = root / experiment / name
    path.mkdir(parents=True)
    (path / "run.json").write_text(json.dumps({"spec_hash": digest, "status": status,
                                               "measurement": results.MEASUREMENT}))
    return path


def finish_point(rundir: RunDir, point_id: str, **metrics) -> Path:
    staging = rundir.staging(point_id)
    results.write_json(staging / "point.json", {"id": point_id, "params": {"cc": point_id}})
    results.write_json(staging / "metrics.json", metrics)
    results.write_json(staging / "series.json", {"t0": 1.5})
    return rundir.commit_point(staging, point_id)


# ---------------------------------------------------------------- atomic writes


def test_write_atomic_writes_text_and_bytes_and_creates_parents(tmp_path):
    target = tmp_path / "a" / "b" / "f.txt"
    results.write_atomic(target, "héllo\n")
    assert target.read_bytes() == "héllo\n".encode()
    results.write_atomic(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    assert os.listdir(target.parent) == ["f.txt"]  # no temporary left behind


@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()])
def test_write_atomic_failure_keeps_the_old_file_and_no_temp(tmp_path, monkeypatch, exc):
    target = tmp_path / "run.json"
    target.write_text("old contents")

    def boom(fd):
        raise exc

    monkeypatch.setattr(results.os, "fsync", boom)
    with pytest.raises(type(exc)):
        results.write_atomic(target, "new contents that must not appear")
    monkeypatch.undo()
    assert target.read_text() == "old contents"
    assert os.listdir(tmp_path) == ["run.json"]


def test_write_atomic_failure_while_encoding(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        results.write_atomic(target, "bad \ud800 surrogate")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["f.txt"]


def test_write_atomic_failure_on_rename_removes_the_temp(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    monkeypatch.setattr(results.os, "replace", lambda a, b: (_ for _ in ()).throw(OSError("EXDEV")))
    with pytest.raises(OSError, match="EXDEV"):
        results.write_atomic(target, "x")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_write_and_read_json(tmp_path):
    target = tmp_path / "m.json"
    results.write_json(target, {"b": 1, "a": [1.5, None], "path": Path("/x")})
    text = target.read_text()
    assert text.endswith("}\n") and text.index('"b"') < text.index('"a"')  # order kept
    assert results.read_json(target) == {"b": 1, "a": [1.5, None], "path": "/x"}


@pytest.mark.parametrize("content", [None, "{not json", ""])
def test_read_json_errors_name_the_file(tmp_path, content):
    target = tmp_path / "metrics.json"
    if content is not None:
        target.write_text(content)
    with pytest.raises(BbrlabError, match="cannot read results file") as info:
        results.read_json(target)
    assert str(info.value).startswith(str(target))


# ---------------------------------------------------------------- run directories


def test_create_never_reuses_a_directory(tmp_path, fixed_clock):
    first, second, third = (RunDir.create(tmp_path, "exp") for _ in range(3))
    assert [r.path.name for r in (first, second, third)] == [STAMP, f"{STAMP}-1", f"{STAMP}-2"]
    assert all(r.path.is_dir() and not any(r.path.iterdir()) for r in (first, second, third))


def test_create_skips_an_existing_empty_directory(tmp_path, fixed_clock):
    (tmp_path / "exp" / STAMP).mkdir(parents=True)
    (tmp_path / "exp" / f"{STAMP}-1").mkdir()
    assert RunDir.create(tmp_path, "exp").path == tmp_path / "exp" / f"{STAMP}-2"


def test_create_gives_up_after_1000_attempts(tmp_path, fixed_clock):
    base = tmp_path / "exp"
    base.mkdir()
    for n in range(1000):
        (base / (STAMP if n == 0 else f"{STAMP}-{n}")).mkdir()
    with pytest.raises(BbrlabError, match="cannot create a new run directory"):
        RunDir.create(tmp_path, "exp")


def test_create_uses_the_real_clock(tmp_path):
    a, b = RunDir.create(tmp_path, "exp"), RunDir.create(tmp_path, "exp")
    assert a.path != b.path and a.path.parent == b.path.parent == tmp_path / "exp"


def test_open_requires_run_json(tmp_path):
    with pytest.raises(BbrlabError, match="no run.json"):
        RunDir.open(tmp_path)
    path = make_run(tmp_path, STAMP)
    assert RunDir.open(path).path == path


def test_find_resumable_picks_the_newest_unfinished_run_with_the_same_spec(tmp_path):
    assert RunDir.find_resumable(tmp_path, "exp", "abc") is None  # no experiment directory yet
    make_run(tmp_path, "20240101-000000", status="interrupted")
    make_run(tmp_path, "20240102-000000", status="incomplete")
    make_run(tmp_path, "20240102-000000-1", status="running")
    make_run(tmp_path, "20240103-000000", status="complete")
    make_run(tmp_path, "20240104-000000", digest="other", status="running")
    (tmp_path / "exp" / "20240105-000000").mkdir()  # no run.json
    make_run(tmp_path, "20240106-000000").joinpath("run.json").write_text("{torn")
    make_run(tmp_path, "20240107-000000", experiment="other-exp")
    found = RunDir.find_resumable(tmp_path, "exp", "abc")
    assert found is not None and found.path.name == "20240102-000000-1"


def test_find_resumable_ignores_finished_and_foreign_runs(tmp_path):
    make_run(tmp_path, "20240103-000000", status="complete")
    make_run(tmp_path, "20240104-000000", digest="other")
    assert RunDir.find_resumable(tmp_path, "exp", "abc") is None
    assert RunDir.find_resumable(tmp_path, "exp", "other").path.name == "20240104-000000"


def test_latest(tmp_path):
    with pytest.raises(BbrlabError, match="no results for exp"):
        RunDir.latest(tmp_path, "exp")
    make_run(tmp_path, "20240101-000000", status="complete")
    make_run(tmp_path, "20240102-000000", status="incomplete")
    (tmp_path / "exp" / "20240103-000000").mkdir()  # not a run yet
    assert RunDir.latest(tmp_path, "exp").path.name == "20240102-000000"


# ---------------------------------------------------------------- points


def test_staging_is_hidden_fresh_and_has_raw(tmp_path):
    rundir = RunDir(tmp_path / "run")
    staging = rundir.staging("cc=bbr,rep1")
    assert staging == rundir.points_dir / ".partial-cc=bbr,rep1" and (staging / "raw").is_dir()
    (staging / "raw" / "ping.txt").write_text("stale")
    (staging / "metrics.json").write_text("{}")
    assert rundir.finished_points() == set()
    again = rundir.staging("cc=bbr,rep1")
    assert again == staging and list(again.rglob("*")) == [again / "raw"]


def test_commit_point_moves_the_staging_into_place(tmp_path):
    rundir = RunDir(tmp_path)
    assert rundir.finished_points() == set()
    final = finish_point(rundir, "bbr", goodput_mbps=9.5)
    assert final == tmp_path / "points" / "bbr"
    assert sorted(p.name for p in rundir.points_dir.iterdir()) == ["bbr"]  # staging is gone
    assert rundir.finished_points() == {"bbr"}
    assert results.read_json(final / "metrics.json") == {"goodput_mbps": 9.5}


def test_commit_point_refuses_to_overwrite_a_finished_point(tmp_path):
    rundir = RunDir(tmp_path)
    final = finish_point(rundir, "bbr", goodput_mbps=9.5)
    staging = rundir.staging("bbr")
    results.write_json(staging / "metrics.json", {"goodput_mbps": 0.1})
    with pytest.raises(BbrlabError, match="refusing to overwrite a finished point"):
        rundir.commit_point(staging, "bbr")
    assert results.read_json(final / "metrics.json") == {"goodput_mbps": 9.5}
    assert staging.is_dir()  # left for discard()


def test_commit_point_refuses_even_an_empty_existing_directory(tmp_path):
    rundir = RunDir(tmp_path)
    (rundir.points_dir / "bbr").mkdir(parents=True)
    staging = rundir.staging("bbr")
    with pytest.raises(BbrlabError):
        rundir.commit_point(staging, "bbr")
    assert rundir.finished_points() == set() and staging.is_dir()


def test_discard_drops_or_hides_a_failed_point(tmp_path, fixed_clock):
    rundir = RunDir(tmp_path)
    finish_point(rundir, "cubic", goodput_mbps=9.0)
    rundir.discard(rundir.staging("bbr"))
    assert sorted(p.name for p in rundir.points_dir.iterdir()) == ["cubic"]
    staging = rundir.staging("bbr")
    (staging / "raw" / "iperf.json").write_text("partial")
    rundir.discard(staging, keep_as="bbr")
    kept = rundir.points_dir / ".failed-bbr-030405"
    assert not staging.exists() and (kept / "raw" / "iperf.json").read_text() == "partial"
    assert rundir.finished_points() == {"cubic"}
    assert [r["id"] for r in rundir.point_records()] == ["cubic"]
    rundir.discard(staging)  # already gone: nothing to do
    rundir.discard(staging, keep_as="bbr")
    assert kept.is_dir()


def test_failed_point_with_metrics_stays_hidden(tmp_path):
    rundir = RunDir(tmp_path)
    staging = rundir.staging("bbr")
    results.write_json(staging / "metrics.json", {"goodput_mbps": 1})
    rundir.discard(staging, keep_as="bbr")
    assert rundir.finished_points() == set() and rundir.point_records() == []


def test_point_records_and_series(tmp_path):
    rundir = RunDir(tmp_path)
    finish_point(rundir, "cubic", goodput_mbps=9.0)
    finish_point(rundir, "bbr", goodput_mbps=9.5)
    (rundir.points_dir / "half-copied").mkdir()  # no metrics.json: not a finished point
    records = rundir.point_records()
    assert [(r["id"], r["params"], r["metrics"]) for r in records] == [
        ("bbr", {"cc": "bbr"}, {"goodput_mbps": 9.5}), ("cubic", {"cc": "cubic"}, {"goodput_mbps": 9.0})]
    assert records[0]["dir"] == str(tmp_path / "points" / "bbr")
    assert rundir.series("bbr") == {"t0": 1.5}
    with pytest.raises(BbrlabError, match="cannot read"):
        rundir.series("nope")


def test_newest_orders_same_second_runs_by_their_number(tmp_path):
    for name in ("20261122-103806", "20261122-103806-2", "20261122-103806-10", "20261122-103805-3"):
        (tmp_path / "figure5" / name).mkdir(parents=True)
        (tmp_path / "figure5" / name / "run.json").write_text("{}")
    assert RunDir.newest(tmp_path, "figure5").path.name == "20261122-103806-10"
    assert [p.name for p in RunDir._runs(tmp_path, "figure5", "run.json")] == [
        "20261122-103805-3", "20261122-103806", "20261122-103806-2", "20261122-103806-10"]
    assert RunDir.latest(tmp_path, "figure5").path.name == "20261122-103806-10"
    assert RunDir.newest(tmp_path, "figure5", marker="verdict.json") is None
    assert RunDir.newest(tmp_path, "figure6") is None


# ---------------------------------------------------------------- run identity


def old_style_run(root: Path, exp, status: str = "incomplete") -> RunDir:
    """A run as written before the identity left claims and plot out: its run.json holds
    the hash of the whole archived text."""
    import hashlib

    rundir = RunDir.create(root, exp.name)
    (rundir.path / "spec.yaml").write_text(exp.source)
    results.write_json(rundir.path / "run.json", {
        "status": status, "spec_hash": hashlib.sha256(exp.source.encode()).hexdigest()[:16],
        "measurement": results.MEASUREMENT})
    return rundir


def build(**top):
    from bbrlab.schema import experiment as spec

    return spec.build({"name": "exp", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "1bdp"},
                       "flows": [{"cc": "bbr", "duration": "10s"}], **top})


def test_a_run_written_under_the_old_hash_resumes_when_only_its_claims_changed(tmp_path):
    ran = build(claims=[{"id": "a", "text": "t", "metric": "goodput_mbps", "min": 1}])
    today = build(claims=[{"id": "a", "text": "t", "metric": "goodput_mbps", "min": 2}], title="new")
    old = old_style_run(tmp_path, ran)
    assert RunDir.find_resumable(tmp_path, "exp", today.identity).path == old.path
    assert RunDir.find_resumable(tmp_path, "exp", build(seed=7).identity) is None  # measures otherwise
    (old.path / "spec.yaml").write_text("{torn")
    assert RunDir.find_resumable(tmp_path, "exp", today.identity) is None  # unreadable: never matched


def test_adopting_todays_spec_keeps_the_text_it_replaces(tmp_path):
    ran = build(claims=[{"id": "a", "text": "t", "metric": "goodput_mbps", "min": 1}])
    today = build(claims=[{"id": "a", "text": "t", "metric": "goodput_mbps", "min": 2}])
    old = old_style_run(tmp_path, ran, status="complete")
    assert old.adopt_spec(today.source, today.identity) is True
    meta = results.read_json(old.path / "run.json")
    assert (old.path / "spec.yaml").read_text() == today.source and meta["spec_hash"] == today.identity
    assert [r["spec"] for r in meta["replaced_specs"]] == [ran.source]
    assert old.adopt_spec(today.source, today.identity) is False  # nothing left to change
    assert len(results.read_json(old.path / "run.json")["replaced_specs"]) == 1
    other = build(seed=7)
    with pytest.raises(BbrlabError, match="measures something else"):
        old.adopt_spec(other.source, other.identity)
    assert (old.path / "spec.yaml").read_text() == today.source
