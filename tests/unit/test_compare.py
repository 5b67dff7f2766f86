"""bbrlab compare A B: metric deltas per matching point and an overlay figure."""

import json

import pytest

from bbrlab import cli


def test_compare_gives_deltas_per_matching_point_and_an_overlay(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # compare draws an overlay
    a = step_run(tmp_path / "a")
    b = step_run(tmp_path / "b")
    metrics = b.points_dir / "cc=bbr,rep1" / "metrics.json"
    mets = json.loads(metrics.read_text())
    was = mets["steady_goodput_mbps"]
    mets["steady_goodput_mbps"] = was / 2
    metrics.write_text(json.dumps(mets))
    out = tmp_path / "overlay.png"
    code = cli.main(["compare", str(a.path), str(b.path), "--out", str(out)])
    text, _ = capsys.readouterr()
    assert code == 0
    line = next(x for x in text.splitlines() if x.strip().startswith("steady_goodput_mbps"))
    assert line.split()[1:] == [f"{was:.4g}", f"{was / 2:.4g}", f"{-was / 2:.4g}", "0.500", "Mbit/s"]
    assert "cc=bbr:" in text and "only in" not in text
    assert out.stat().st_size > 0 and f"figure: {out}" in text
    assert "differ" not in text  # two runs of one setup: nothing more said


def test_compare_says_how_the_runs_setups_differ_before_pairing_their_points(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # compare draws an overlay
    a, b = step_run(tmp_path / "a"), step_run(tmp_path / "b")
    spec_b = b.path / "spec.yaml"
    spec_b.write_text(spec_b.read_text().replace("rtt: 40ms", "rtt: 30ms"))
    code = cli.main(["compare", str(a.path), str(b.path), "--metric", "rtt_p50_ms", "--out", str(tmp_path / "o.png")])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and lines[:3] == [f"A: {a.path} (rtt 40ms)", f"B: {b.path} (rtt 30ms)",
                                       "the runs' setups differ: rtt: 40ms vs 30ms"]
    assert "cc=bbr, A (rtt 40ms) vs B (rtt 30ms):" in lines  # the points still paired, and said to differ


def test_compare_names_unmatched_points_and_refuses_unknown_metrics(capsys, tmp_path, step_run):
    a = step_run(tmp_path / "a")
    b = step_run(tmp_path / "b")
    point = b.points_dir / "cc=bbr,rep1" / "point.json"
    record = json.loads(point.read_text())
    record["params"] = {"cc": "cubic"}
    point.write_text(json.dumps(record))
    assert cli.main(["compare", str(a.path), str(b.path), "--out", str(tmp_path / "x.png")]) == 0
    text = capsys.readouterr().out
    assert "only in A: cc=bbr" in text and "only in B: cc=cubic" in text and not (tmp_path / "x.png").exists()
    assert cli.main(["compare", str(a.path), str(b.path), "--metric", "goodput_mpbs"]) == 2
    assert capsys.readouterr().err == ("bbrlab: --metric goodput_mpbs: not a metric the analysis writes "
                                       "(did you mean goodput_mbps?)\n")


def _repeat(run, goodputs, share):
    """The run's one point as len(GOODPUTS) repetitions with these steady goodputs and BBR shares."""
    import shutil
    first = run.points_dir / "cc=bbr,rep1"
    for k, (goodput, bbr_share) in enumerate(zip(goodputs, share), start=1):
        folder = run.points_dir / f"cc=bbr,rep{k}"
        if k > 1:
            shutil.copytree(first, folder)
        record = json.loads((folder / "point.json").read_text())
        record.update(id=folder.name, repetition=k)
        (folder / "point.json").write_text(json.dumps(record))
        mets = json.loads((folder / "metrics.json").read_text())
        mets["steady_goodput_mbps"] = goodput
        mets["by_cc"] = {"bbr": {"share": bbr_share}}
        (folder / "metrics.json").write_text(json.dumps(mets))


def test_compare_of_repeated_points_says_whether_b_lies_within_a_s_spread(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # compare draws an overlay
    a, b = step_run(tmp_path / "a"), step_run(tmp_path / "b")
    _repeat(a, [10.0, 11.0, 12.0], [0.5, 0.6, 0.7])
    _repeat(b, [13.0, 13.0, 13.0], [0.55, 0.65, 0.6])
    code = cli.main(["compare", str(a.path), str(b.path), "--metric", "steady_goodput_mbps", "--metric", "share",
                     "--out", str(tmp_path / "o.png")])
    text = capsys.readouterr().out
    assert code == 0
    goodput = next(x for x in text.splitlines() if x.strip().startswith("steady_goodput_mbps")).split()
    # mean 11 with t(0.975, 2) x 1 / sqrt(3) = 2.484 either side; B's 13 is beyond A's 12
    assert goodput[1:5] == ["11", "13", "2", "1.182"] and goodput[5] == "±2.484" and goodput[-2:] == ["NO", "Mbit/s"]
    share = next(x for x in text.splitlines() if x.strip().startswith("share[bbr]")).split()
    assert share[1:3] == ["0.6", "0.6"] and share[-2:] == ["yes", "fraction"]
    assert ("B's mean lies within the range of A's repetitions for 1 of 2 values; outside it: "
            "cc=bbr: steady_goodput_mbps") in text
