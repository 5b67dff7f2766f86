"""bbrlab compare A B: metric deltas per matching point and an overlay figure."""

import json

from bbrlab import cli


def test_compare_gives_deltas_per_matching_point_and_an_overlay(capsys, tmp_path, step_run):
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
