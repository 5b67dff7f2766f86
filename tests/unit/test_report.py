"""The one-page report, written from results directories alone (no testbed)."""

import shutil
from pathlib import Path

import yaml

from bbrlab.output.reports import report
from bbrlab.schema import experiment as spec
from bbrlab.store.results import RunDir, write_atomic, write_json

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def fake_run(root: Path, name: str, quick: bool, goodput: dict, model: dict | None = None) -> RunDir:
    """A finished run as the runner leaves it: spec, run.json, verdict, points, figure."""
    exp = spec.load(EXPERIMENTS / f"{name}.yaml", quick=quick)
    rundir = RunDir.create(root, name)
    write_atomic(rundir.path / "spec.yaml", exp.source)
    write_json(rundir.path / "run.json", {"status": "complete", "points_total": len(exp.points), "git": "a" * 40,
                                          "system": {"kernel": "6.1.0-test", "cpus": 2, "virtualization": "qemu"}})
    for point in exp.points:
        folder = rundir.points_dir / point.id
        cc = point.flows[0].cc
        write_json(folder / "point.json", {"id": point.id, "params": point.params, "flows": [{"cc": cc}]})
        metrics = {"loss": point.link.loss, "steady_goodput_mbps": goodput[(cc, point.link.loss)]}
        for metric, values in (model or {}).items():  # metric -> {(cc, loss): value}
            if (cc, point.link.loss) in values:
                metrics[metric] = values[(cc, point.link.loss)]
        write_json(folder / "metrics.json", metrics)
    write_json(rundir.path / "verdict.json", {
        "verdict": "reproduced", "cpu_bound_points": [], "holds": 1, "fails": 0,
        "claims": [{"id": "c", "text": "BBR beats CUBIC", "metric": "m", "status": "holds",
                    "checks": [{"point": "loss=1%", "value": 42.0, "ok": True}]}],
        "overhead": {"wall_seconds": 130.0, "configured_flow_seconds": 120.0, "ratio": 1.083,
                     "setup_seconds_mean": 2.5}})
    write_atomic(rundir.path / f"{name}.png", b"\x89PNG\r\n\x1a\n")
    return rundir


def test_report_has_summary_sections_and_ours_next_to_rebbr(tmp_path):
    goodput = {(cc, loss): value for cc, base in (("bbr", 90.0), ("cubic", 5.0))
               for loss, value in ((0.001, base), (0.01, base / 2), (0.1, base / 4))}
    run = fake_run(tmp_path, "figure8", quick=True, goodput=goodput)
    exps = [spec.load(EXPERIMENTS / f"{n}.yaml") for n in ("figure8", "figure6")]
    out = report.write(tmp_path, exps)
    text = out.read_text()
    assert out == tmp_path / "report.md"
    assert "| figure8 | reproduced | 6 | 130 | 1.08 |" in text
    shutil.rmtree(run.points_dir / "loss=0.1%,cc=cubic,rep1")  # a run still to be resumed
    assert "| figure8 | reproduced | 5 of 6 | 130 | 1.08 |" in report.write(tmp_path, exps).read_text()
    assert "Not run yet: figure6." in text
    assert f"![figure8]({run.path.relative_to(tmp_path) / 'figure8.png'})" in text
    assert "[PASS] BBR beats CUBIC  (loss=1%: 42.0)" in text
    assert "overhead ratio 1.08" in text and "kernel 6.1.0-test" in text
    # ours (quick profile: 0.1, 1, 10 %) beside ReBBR's published numbers
    ref = yaml.safe_load((EXPERIMENTS / "figure8.yaml").read_text())["reference"]["series"]
    assert f"| 1 | 45.00 | {ref['bbr'][1]:.2f} | 2.50 | {ref['cubic'][1]:.2f} |" in text
    assert f"| 10 | 22.50 | {ref['bbr'][10]:.2f} | 1.25 | {ref['cubic'][10]:.2f} |" in text
    assert f"| 50 | – | {ref['bbr'][50]:.2f} | – | {ref['cubic'][50]:.2f} |" in text


def test_an_experiment_this_kernel_cannot_run_is_named_with_what_it_needs(tmp_path):
    """The whole suite on Debian's kernel skips the BBRv3 experiments: the report says they
    need the BBRv3 kernel, not that they have not run yet; one with a run (from that kernel)
    is reported on as any other."""
    goodput = {(cc, loss): 1.0 for cc in ("bbr", "cubic") for loss in (0.001, 0.01, 0.1)}
    fake_run(tmp_path, "figure8", quick=True, goodput=goodput)
    exps = [spec.load(EXPERIMENTS / f"{n}.yaml") for n in ("figure8", "figure6", "v3-shallow")]
    why = "needs congestion control(s) bbr3, which kernel 6.1.0-test does not offer"
    text = report.write(tmp_path, exps, not_here={"v3-shallow": why, "figure8": why}).read_text()
    assert "Not run yet: figure6." in text
    assert f"Not run on this kernel: v3-shallow {why}." in text
    assert "| figure8 | reproduced |" in text and "figure8 needs" not in text


def test_report_uses_the_newest_finished_run(tmp_path):
    goodput = {(cc, loss): 1.0 for cc in ("bbr", "cubic") for loss in (0.001, 0.01, 0.1)}
    fake_run(tmp_path, "figure8", quick=True, goodput=goodput)
    newer = fake_run(tmp_path, "figure8", quick=True, goodput=goodput)
    (newer.path / "verdict.json").write_text((newer.path / "verdict.json").read_text()
                                             .replace('"reproduced"', '"not reproduced"'))
    text = report.write(tmp_path, [spec.load(EXPERIMENTS / "figure8.yaml")]).read_text()
    assert "| figure8 | not reproduced |" in text and str(newer.path) in text


def test_report_gives_todays_notes_even_for_a_run_made_before_they_were_written(tmp_path):
    goodput = {(cc, loss): 1.0 for cc in ("bbr", "cubic") for loss in (0.001, 0.01, 0.1)}
    fake_run(tmp_path, "figure8", quick=True, goodput=goodput)
    raw = yaml.safe_load((EXPERIMENTS / "figure8.yaml").read_text())
    raw["notes"] = ["netem drops  packets\n independently.", "The emulator is slow."]
    text = report.write(tmp_path, [spec.build(raw)]).read_text()
    assert "Where this testbed differs from the paper:\n\n- netem drops packets independently.\n" \
           "- The emulator is slow.\n" in text


def test_report_shows_bbrs_own_estimate_beside_its_goodput(tmp_path):
    goodput = {(cc, loss): 2.0 for cc in ("bbr", "cubic") for loss in (0.001, 0.01, 0.1)}
    estimate = {("bbr", 0.001): 80.0, ("bbr", 0.01): 3.5, ("bbr", 0.1): 2.1}
    held = {("bbr", 0.001): 0.0, ("bbr", 0.01): 0.0, ("bbr", 0.1): 0.64}
    fake_run(tmp_path, "figure8", quick=True, goodput=goodput,
             model={"bbr_bw_p50_mbps": estimate, "bbr_bw_held_share": held})
    text = report.write(tmp_path, [spec.load(EXPERIMENTS / "figure8.yaml")]).read_text()
    ref = yaml.safe_load((EXPERIMENTS / "figure8.yaml").read_text())["reference"]["series"]
    assert ("| loss % | bbr ours | bbr's own bandwidth estimate | bbr's estimate held (long-term mode) "
            "| bbr ReBBR (CS244 2017) | cubic ours | cubic ReBBR (CS244 2017) |") in text
    assert f"| 1 | 2.00 | 3.50 | 0% | {ref['bbr'][1]:.2f} | 2.00 | {ref['cubic'][1]:.2f} |" in text
    assert f"| 10 | 2.00 | 2.10 | 64% | {ref['bbr'][10]:.2f} |" in text
    assert f"| 20 | – | – | – | {ref['bbr'][20]:.2f} |" in text
    assert "|---|---|---|---|---|---|---|" in text and "long-term (\"policer\") mode" in text


def test_report_gives_the_verdict_word_and_why_under_it(tmp_path):
    goodput = {(cc, loss): 1.0 for cc in ("bbr", "cubic") for loss in (0.001, 0.01, 0.1)}
    run = fake_run(tmp_path, "figure8", quick=True, goodput=goodput)
    verdict = yaml.safe_load((run.path / "verdict.json").read_text())
    why = ["interval straddles the bound: c loss=1%: 42.0 [38, 46] n=3 vs >= 40", "CPU-bound points: loss=10%"]
    verdict.update({"verdict": "inconclusive", "why": why, "holds": 0, "inconclusive": 1,
                    "points": {"finished": 8, "total": 8}})  # two repetitions added beyond the planned 6
    verdict["claims"][0].update(status="inconclusive")
    verdict["claims"][0]["checks"][0].update(status="inconclusive", low=38.0, high=46.0, n=3,
                                             note="interval straddles the bound")
    write_json(run.path / "verdict.json", verdict)
    for loss in ("0.1%", "1%"):
        folder = run.points_dir / f"loss={loss},cc=bbr,rep2"
        write_json(folder / "point.json", {"params": {"loss": loss, "cc": "bbr"}, "flows": [{"cc": "bbr"}]})
        write_json(folder / "metrics.json", {"loss": float(loss[:-1]) / 100, "steady_goodput_mbps": 1.0})
    text = report.write(tmp_path, [spec.load(EXPERIMENTS / "figure8.yaml")]).read_text()
    assert "| figure8 | inconclusive | 8 |" in text and "8 of 8 points" in text
    assert "[ ?? ] BBR beats CUBIC  (loss=1%: 42.0 [38, 46] n=3)" in text
    assert "  why:" not in text  # said once, under the block
    assert ("```\n\nWhy inconclusive: interval straddles the bound: c loss=1%: 42.0 [38, 46] n=3 vs >= 40; "
            "CPU-bound points: loss=10%.\n") in text


def test_the_calibration_a_run_was_judged_against_is_named():
    from bbrlab.output.reports.report import _calibration_line

    cal = {"key": "fbcd20baed95", "created": "2026-11-23T06:40:00+0000", "shaper": "netem",
           "faithful_up_to_bps": 50e6, "gate": {"rate_bps": 100e6, "failed": "cubic: link_delivery 0.954 < 0.98"},
           "timer": {"p99_us": 331.6}, "idle_rtt_error_ms": 1.25}
    assert _calibration_line(cal) == (
        "calibration fbcd20baed95 (2026-11-23T06:40:00+0000): shaper netem, faithful up to 50 Mbit/s; "
        "beyond: cubic: link_delivery 0.954 < 0.98; timer lateness p99 332 us; idle-path RTT error 1.25 ms")
    assert "without a calibration" in _calibration_line(None)


def test_a_report_with_no_runs_says_so_and_exits_non_zero(capsys, tmp_path):
    from bbrlab import cli

    code = cli.main(["--results", str(tmp_path), "report"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (f"bbrlab: {tmp_path}: no finished run of any experiment to report on "
                   "(run one first, e.g. bbrlab run figure5, or give --results DIR)\n")
    assert list(tmp_path.iterdir()) == []
