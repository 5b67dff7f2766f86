"""The aggregation and low-rtt-jitter figures and report tables, drawn from synthetic runs
of the experiments, and their claims judged on them."""

from pathlib import Path

import pytest

from bbrlab.verdicts import claims
from bbrlab.output.figures import legends, plots
from bbrlab.output.reports import report_links
from bbrlab.schema import experiment as spec

pytest.importorskip("matplotlib")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


@pytest.fixture
def full_run(synthetic_run):
    """make(NAME, METRICS_OF): a full-length run of NAME whose point's metrics are metrics_of(point)."""
    def make(name: str, metrics_of) -> tuple:
        exp = spec.load(EXPERIMENTS / f"{name}.yaml")
        return exp, synthetic_run(exp, lambda point, plan: dict(
            {"link_mbps": point.link.rate / 1e6, "loss": 0.0, "duration_s": 30.0}, **metrics_of(point)))

    return make


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


def test_the_allowance_claims_read_bbr_against_bbr_noagg_at_small_rtts(full_run):
    exp, rundir = full_run("aggregation", aggregation_metrics(1.6))
    verdict = claims.verdict(exp.claims, rundir.point_records())
    assert verdict["verdict"] == "reproduced", verdict["why"]
    gain, queue = verdict["claims"]
    assert sorted(c["point"] for c in gain["checks"]) == [
        f"rtt=2ms, slot_on={on}, cc=bbr vs rtt=2ms, slot_on={on}, cc=bbr_noagg" for on in ("ack", "data")]
    assert sorted(c["point"] for c in queue["checks"]) == sorted(
        f"rtt={rtt}, slot_on={on}, cc=bbr vs rtt={rtt}, slot_on={on}, cc=bbr_noagg"
        for rtt in ("2ms", "5ms") for on in ("ack", "data"))
    for name, metrics in (("none", aggregation_metrics(1.0)), ("no-queue", aggregation_metrics(1.6, 1.1))):
        exp, rundir = full_run("aggregation", metrics)
        assert claims.verdict(exp.claims, rundir.point_records())["verdict"] == "not reproduced", name


def test_the_aggregation_figure_and_table(full_run):
    exp, rundir = full_run("aggregation", aggregation_metrics(1.6))
    records = rundir.point_records()
    fig = plots.figure(exp, rundir, records, claims.verdict(exp.claims, records))
    (ack_top, data_top), (ack_bottom, _) = fig.axes[:2], fig.axes[2:]
    assert ack_top.get_title() == "ACKs leave in slots every 1-10 ms" and data_top.get_title().startswith("data ")
    goodput = {c.get_label(): list(c.lines[0].get_ydata()) for c in ack_top.containers}
    assert goodput == {"BBR": [44.0] * 4, "BBR without ACK-aggregation allowance": [27.5, 27.5, 43.0, 43.0],
                       "CUBIC": [45.0] * 4}
    assert list(ack_top.containers[0].lines[0].get_xdata()) == [2, 5, 10, 20]  # against the base RTT (ms)
    rtt = {c.get_label(): list(c.lines[0].get_ydata()) for c in ack_bottom.containers}
    assert rtt["BBR"] == [2 * (x + 6) for x in (2, 5, 10, 20)]  # twice bbr_noagg's: the allowance's queue
    (base,) = [line for line in ack_bottom.get_lines() if line.get_label() == "base RTT"]
    assert list(base.get_ydata()) == [2, 5, 10, 20] and ack_bottom.get_xlabel() == "base RTT (ms)"
    assert ack_top.get_ylim()[1] == pytest.approx(50 * 1.15)  # the link's rate in view
    assert all(legends.legend_overlaps(ax) == 0 for ax in fig.axes)
    plots._pyplot().close(fig)
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


def test_the_jitter_table_flags_variation_within_the_emulators_noise(full_run):
    exp, rundir = full_run("low-rtt-jitter", jitter_metrics)
    records = rundir.point_records()
    table = report_links.jitter_table(exp, records)
    rows = {tuple(line.split(" | ")[:2]): line for line in table if line.startswith("| 0.2 |")}
    assert rows[("| 0.2", "0.5")].endswith("| 0 | yes |")  # 0.5 ms under the idle spread of 0.6 ms
    assert rows[("| 0.2", "2")].endswith("| 0 | no |")
    assert rows[("| 0.2", "0")].endswith("| 0 | – |")
    assert " 1.30 " in rows[("| 0.2", "2")]  # the smallest RTT measured, not the configured 0.2 ms
    assert claims.verdict(exp.claims, records)["verdict"] == "reproduced"
    fig = plots.figure(exp, rundir, records, claims.verdict(exp.claims, records))
    assert [ax.get_title() for ax in fig.axes] == [f"base RTT {rtt} ms: reordering seen 0" for rtt in ("0.2", "1", "2")]
    panel = fig.axes[0]
    bbr = next(c for c in panel.containers if c.get_label() == "BBR")
    assert list(bbr.lines[0].get_xdata()) == [0, 0.5, 1, 2, 4] and set(bbr.lines[0].get_ydata()) == {45.5}
    labels = panel.get_legend_handles_labels()[1]
    assert "within the emulator's RTT noise (0.6 ms)" in labels  # the idle spread without variation
    assert "smallest RTT measured (1.3 ms)" in labels and "link rate 50 Mbit/s" in labels
    assert all(legends.legend_overlaps(ax) == 0 for ax in fig.axes)
    plots._pyplot().close(fig)


def test_reordering_fails_the_jitter_claim(full_run):
    exp, rundir = full_run("low-rtt-jitter",
                           lambda p: dict(jitter_metrics(p), reordering_events=3 if p.link.delay_variation else 0))
    assert claims.verdict(exp.claims, rundir.point_records())["verdict"] == "not reproduced"


def test_a_bbr_starved_by_the_variation_fails_the_jitter_claim(full_run):
    exp, rundir = full_run("low-rtt-jitter", lambda p: jitter_metrics(p, starved=True))
    verdict = claims.verdict(exp.claims, rundir.point_records())
    assert verdict["verdict"] == "not reproduced"
    assert [c["status"] for c in verdict["claims"]] == ["holds", "fails"]
