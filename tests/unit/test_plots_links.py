"""The aggregation and low-rtt-jitter figures and report tables, drawn from synthetic runs
of the experiments, and their claims judged on them."""

import dataclasses
from pathlib import Path

import pytest

from bbrlab.verdicts import claims
from bbrlab.output import plots, report_links
from bbrlab.spec import experiment as spec
from bbrlab.emulation import topo
from bbrlab.store.results import RunDir, write_json

pytest.importorskip("matplotlib")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def synthetic_run(tmp_path, name: str, metrics_of) -> tuple:
    """A full-length run of NAME whose point's metrics are metrics_of(point)."""
    exp = spec.load(EXPERIMENTS / f"{name}.yaml")
    rundir = RunDir.create(tmp_path, exp.name)
    for point in exp.points:
        plan = topo.build_plan(point)
        write_json(rundir.points_dir / point.id / "point.json", {
            "id": point.id, "params": point.params, "repetition": 1, "summary": plan.summary,
            "flows": [dataclasses.asdict(g) for g in point.flows],
            "flow_plan": [dataclasses.asdict(f) for f in plan.flows], "link": dataclasses.asdict(point.link)})
        write_json(rundir.points_dir / point.id / "metrics.json",
                   dict({"link_mbps": point.link.rate / 1e6, "loss": 0.0, "duration_s": 30.0}, **metrics_of(point)))
    return exp, rundir


def aggregation_metrics(allowance_gain: float, queue_ratio: float = 2.0):
    """bbr_noagg's goodput is bbr's / ALLOWANCE_GAIN at 5 ms and less, and bbr's median RTT
    is QUEUE_RATIO x bbr_noagg's."""
    def metrics_of(point):
        cc, rtt = point.flows[0].cc, point.link.rtt
        goodput = {"cubic": 45.0, "bbr": 44.0, "bbr_noagg": 44.0 / allowance_gain if rtt <= 0.005 else 43.0}[cc]
        noagg_rtt = rtt * 1e3 + 6
        median = {"cubic": rtt * 1e3 + 40, "bbr": noagg_rtt * queue_ratio, "bbr_noagg": noagg_rtt}[cc]
        return {"steady_goodput_mbps": goodput, "steady_rtt_p50_ms": median, "rtt_p50_ms": median}
    return metrics_of


def test_the_allowance_claims_read_bbr_against_bbr_noagg_at_small_rtts(tmp_path):
    exp, rundir = synthetic_run(tmp_path, "aggregation", aggregation_metrics(1.6))
    verdict = claims.verdict(exp.claims, rundir.point_records())
    assert verdict["verdict"] == "reproduced", verdict["why"]
    gain, queue = verdict["claims"]
    assert sorted(c["point"] for c in gain["checks"]) == [
        f"rtt=2ms, slot_on={on}, cc=bbr vs rtt=2ms, slot_on={on}, cc=bbr_noagg" for on in ("ack", "data")]
    assert sorted(c["point"] for c in queue["checks"]) == sorted(
        f"rtt={rtt}, slot_on={on}, cc=bbr vs rtt={rtt}, slot_on={on}, cc=bbr_noagg"
        for rtt in ("2ms", "5ms") for on in ("ack", "data"))
    for name, metrics in (("none", aggregation_metrics(1.0)), ("no-queue", aggregation_metrics(1.6, 1.1))):
        exp, rundir = synthetic_run(tmp_path / name, "aggregation", metrics)
        assert claims.verdict(exp.claims, rundir.point_records())["verdict"] == "not reproduced", name


def test_the_aggregation_figure_and_table(tmp_path):
    exp, rundir = synthetic_run(tmp_path, "aggregation", aggregation_metrics(1.6))
    records = rundir.point_records()
    path = plots.draw(exp, rundir, records, claims.verdict(exp.claims, records))
    assert path.is_file() and path.stat().st_size > 20_000
    table = report_links.aggregation_table(exp, records)
    row = next(line for line in table if line.startswith("| ack | 2 |"))
    assert row.endswith("| 1.60 |")  # bbr / bbr_noagg
    assert report_links.jitter_table(exp, records) == []


def jitter_metrics(point, starved: bool = False):
    """BBR at 99% of CUBIC's goodput, or (STARVED) losing more the larger variation / RTT."""
    link, cc = point.link, point.flows[0].cc
    smallest = link.rtt * 1e3 + 1.1  # the emulator's own addition
    bbr = 46.0 / (1 + link.delay_variation / link.rtt / 4) if starved else 45.5
    return {"steady_goodput_mbps": 46.0 if cc == "cubic" else bbr,
            "idle_rtt_min_ms": smallest, "idle_rtt_spread_ms": 0.6 + link.delay_variation * 1e3 * 0.8,
            "reordering_events": 0}


def test_the_jitter_table_flags_variation_within_the_emulators_noise(tmp_path):
    exp, rundir = synthetic_run(tmp_path, "low-rtt-jitter", jitter_metrics)
    records = rundir.point_records()
    table = report_links.jitter_table(exp, records)
    rows = {tuple(line.split(" | ")[:2]): line for line in table if line.startswith("| 0.2 |")}
    assert rows[("| 0.2", "0.5")].endswith("| 0 | yes |")  # 0.5 ms under the idle spread of 0.6 ms
    assert rows[("| 0.2", "2")].endswith("| 0 | no |")
    assert rows[("| 0.2", "0")].endswith("| 0 | – |")
    assert " 1.30 " in rows[("| 0.2", "2")]  # the smallest RTT measured, not the configured 0.2 ms
    assert claims.verdict(exp.claims, records)["verdict"] == "reproduced"
    path = plots.draw(exp, rundir, records, claims.verdict(exp.claims, records))
    assert path.is_file()


def test_reordering_fails_the_jitter_claim(tmp_path):
    exp, rundir = synthetic_run(tmp_path, "low-rtt-jitter",
                                lambda p: dict(jitter_metrics(p), reordering_events=3 if p.link.delay_variation else 0))
    assert claims.verdict(exp.claims, rundir.point_records())["verdict"] == "not reproduced"


def test_a_bbr_starved_by_the_variation_fails_the_jitter_claim(tmp_path):
    exp, rundir = synthetic_run(tmp_path, "low-rtt-jitter", lambda p: jitter_metrics(p, starved=True))
    verdict = claims.verdict(exp.claims, rundir.point_records())
    assert verdict["verdict"] == "not reproduced"
    assert [c["status"] for c in verdict["claims"]] == ["holds", "fails"]
