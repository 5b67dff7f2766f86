"""Analysis helpers that decide whether a point can be trusted."""

import json
from pathlib import Path

import pytest

from bbrlab.analysis import analyze as analysis
from bbrlab.analysis import cpu_metrics
from bbrlab.analysis.reanalysis import reanalyze
from bbrlab.schema import experiment as spec
from bbrlab.emulation import topo
from bbrlab.errors import ParseError

# Two samples 1 s apart: all CPUs half busy, but cpu0 fully busy and cpu1 idle.
PROC_STAT = ("### 100.0\ncpu  10 0 10 80 0 0 0 0\ncpu0 9 0 1 40 0 0 0 0\ncpu1 1 0 9 40 0 0 0 0\n"
             "### 101.0\ncpu  60 0 10 130 0 0 0 0\ncpu0 59 0 1 40 0 0 0 0\ncpu1 1 0 9 90 0 0 0 0\n")


def test_cpu_series_keeps_each_cpu_so_one_saturated_cpu_shows():
    series = cpu_metrics.cpu_series(PROC_STAT, t0=100.0)
    assert series["cpu"] == [(0.5, pytest.approx(0.5))]
    assert series["cpu0"] == [(0.5, pytest.approx(1.0))] and series["cpu1"] == [(0.5, pytest.approx(0.0))]


def test_during_prefers_samples_taken_while_the_flows_ran():
    assert cpu_metrics.during([(-1.0, 0.9), (0.5, 0.2), (2.0, 0.4), (9.0, 1.0)], end=3.0) == [0.2, 0.4]
    assert cpu_metrics.during([(-1.0, 0.9)], end=3.0) == [0.9]  # nothing during: what there is


# ---------------------------------------------------------------- a real point, end to end

STEP_BBR = Path(__file__).resolve().parents[1] / "fixtures" / "step-bbr"  # the step experiment's BBR point,
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"         # captured in the TCG testbed VM


def test_a_real_step_point_judges_the_link_at_each_rate_and_bbr_against_what_it_really_sent():
    exp = spec.load(EXPERIMENTS / "step.yaml")
    (point,) = [p for p in exp.points if p.params["cc"] == "bbr"]
    timings = json.loads((STEP_BBR / "point.json").read_text())["timings"]
    series, m = analysis.analyze(point, topo.build_plan(point), STEP_BBR, timings["t0"], timings["launches"],
                                 timings["end"])
    # Captured on the earlier htb bottleneck, which sent only ~85% of 20 Mbit/s. BBR's queue
    # never held a whole sampling interval's worth, so this point alone cannot prove the
    # link had work: its delivery is not judged (the machine's calibration judges the link).
    assert m["link_delivery_by_rate"] == [] and m["link_delivery"] is None and not m["link_short"]
    # BBR is then judged against the configured rates: it followed the step down within a
    # second, and never reached 85% of 20 Mbit/s on that link.
    assert m["adapt_targets_mbps"] == [20.0, 10.0]
    assert m["adapt_times_s"][0] is None and m["adapt_times_s"][1] < 1.0, m["adapt_times_s"]
    # The bottleneck's own counter, capacity counted at each configured rate.
    assert 0.8 < m["link_busy"] < 0.95
    during_20 = [v for t, v in series["link_sent"] if 12 <= t <= 19]
    assert 14 < sum(during_20) / len(during_20) < 20
    # What BBR itself believed: it left STARTUP within its first seconds near 10 Mbit/s,
    # and its steady estimate sits between the two rates it saw.
    (flow,) = m["flows"]
    assert 0 < flow["bbr_left_startup_by_s"] < 3 and 7 < flow["bbr_bw_at_startup_exit_mbps"] < 12
    assert 8 < flow["bbr_bw_p50_mbps"] < 20
    assert flow["bbr_bw_held_share"] == m["bbr_bw_held_share"] == 0.0  # no loss: never in long-term mode


def _run_with_the_step_point(tmp_path, with_raw=True):
    """A run directory of the step experiment whose BBR point holds stale derived files."""
    import shutil

    from bbrlab.store.results import RunDir, write_json

    exp = spec.load(EXPERIMENTS / "step.yaml")
    (point,) = [p for p in exp.points if p.params["cc"] == "bbr"]
    rundir = RunDir.create(tmp_path, "step")
    shutil.copy(EXPERIMENTS / "step.yaml", rundir.path / "spec.yaml")
    write_json(rundir.path / "run.json", {"status": "incomplete"})
    folder = rundir.points_dir / point.id
    shutil.copytree(STEP_BBR, folder, ignore=None if with_raw else shutil.ignore_patterns("raw"))
    write_json(folder / "metrics.json", {"goodput_mbps": -1.0})
    write_json(folder / "series.json", {})
    return exp, rundir, folder


def test_a_run_is_analyzed_again_from_its_raw_files(tmp_path):
    from bbrlab.store.results import read_json

    exp, rundir, folder = _run_with_the_step_point(tmp_path)
    assert reanalyze(rundir, exp) == 1
    m = read_json(folder / "metrics.json")
    assert 5 < m["goodput_mbps"] < 20 and m["link_delivery"] is None  # derived again, as analyze does now
    assert read_json(folder / "series.json")["link_sent"]
    assert (folder / "raw" / "cpu.txt").is_file()  # what was measured stays


def test_a_repetition_that_repeat_auto_added_is_analyzed_again_too(tmp_path):
    from bbrlab.errors import BbrlabError

    exp, rundir, folder = _run_with_the_step_point(tmp_path)
    folder.rename(folder.with_name(folder.name.replace("rep1", "rep5")))
    with pytest.raises(BbrlabError, match="rep5: this point is not in the run's spec.yaml"):
        reanalyze(rundir, exp)  # repeat: 1
    assert reanalyze(rundir, spec.load(EXPERIMENTS / "step.yaml", ["repeat=auto"])) == 1


def test_a_copy_without_raw_files_is_refused_before_anything_changes(tmp_path):
    from bbrlab.errors import BbrlabError
    from bbrlab.store.results import read_json

    exp, rundir, folder = _run_with_the_step_point(tmp_path, with_raw=False)
    with pytest.raises(BbrlabError, match="no raw/ directory"):
        reanalyze(rundir, exp)
    assert read_json(folder / "metrics.json") == {"goodput_mbps": -1.0}


def test_a_flow_whose_data_connection_never_came_up_fails_with_both_ends_words():
    # captured at 50% loss on the data direction: every SYN of iperf3's data stream was lost
    folder = Path(__file__).resolve().parents[1] / "fixtures" / "iperf3-no-stream"
    with pytest.raises(ParseError) as err:
        analysis._iperf3_pair(folder, "f1")
    text = str(err.value)
    assert text.startswith("flow f1: client: ") and "unable to connect stream: Connection timed out" in text
    assert "server: iperf3 reported an error: error - idle timeout for receiving data" in text


@pytest.mark.parametrize("rtt, visible", [
    (0.010, False),  # 48 round trips are 0.48 s: a long-term hold spans no three 1 s samples
    (0.100, True),  # figure 8: holds of 4.8 s; the max filter keeps a sample 1 s
    (0.200, False),  # the max filter alone keeps a sample 2 s, across three samples
    (0.500, False),  # measured: 0.75 of a steady flow's samples "held" at 0.001% loss
])
def test_held_share_is_given_only_where_long_term_mode_and_the_max_filter_differ(rtt, visible):
    assert analysis.held_share_visible(rtt, 1.0) is visible
    assert analysis.held_share_visible(rtt / 5, 0.2) is visible  # the same in round trips per sample


def test_the_held_share_is_given_only_for_a_flow_that_lost_packets(tmp_path):
    """Linux BBR's long-term mode engages on losses only: the same captured BBR point with
    its retransmissions erased gets no held share (a trace point without loss read 0.54)."""
    import re
    import shutil

    exp = spec.load(EXPERIMENTS / "step.yaml")
    (point,) = [p for p in exp.points if p.params["cc"] == "bbr"]
    timings = json.loads((STEP_BBR / "point.json").read_text())["timings"]
    folder = tmp_path / "point"
    shutil.copytree(STEP_BBR, folder)
    client = folder / "raw" / "iperf3-f1-client.json"
    client.write_text(re.sub(r'"retransmits":\s*\d+', '"retransmits": 0', client.read_text()))
    _, m = analysis.analyze(point, topo.build_plan(point), folder, timings["t0"], timings["launches"], timings["end"])
    (flow,) = m["flows"]
    assert flow["retransmits"] == 0 and flow["bbr_bw_p50_mbps"] is not None
    assert flow["bbr_bw_held_share"] is None and m["bbr_bw_held_share"] is None
