"""Metric functions on hand-computable inputs, edge cases and error messages."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from bbrlab.analysis.fairness import adaptation_time, align_series, convergence_time, jain_index, jain_over_time
from bbrlab.analysis.metrics import (
    aggregate_steady_goodput_bps,
    backlogged_delivery,
    bbr_model,
    goodput_bps,
    ideal_goodput_bps,
    link_busy,
    peak_beyond_pause,
    percentile,
    queue_delay_ms,
    steady_goodput_bps,
    steady_state,
    summary,
    throughput_series,
    utilization,
)
from bbrlab.analysis.tool_output import Interval, parse_iperf3

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def iv(start: float, end: float, nbytes: int) -> Interval:
    return Interval(start, end, nbytes, 0.0, None, None, None)


# ---------------------------------------------------------------- distributions


@pytest.mark.parametrize(("q", "expected"), [(0, 1), (25, 1.75), (50, 2.5), (100, 4)])
def test_percentile_interpolates_linearly(q, expected):
    assert percentile([4, 1, 3, 2], q) == pytest.approx(expected)


def test_percentile_single_value_and_errors():
    assert percentile([7.0], 37) == 7.0
    with pytest.raises(ValueError, match="empty"):
        percentile([], 50)
    with pytest.raises(ValueError, match="0..100"):
        percentile([1], 101)


def test_summary_fields():
    s = summary([5, 1, 4, 2, 3])
    assert s["n"] == 5 and s["mean"] == 3
    assert (s["min"], s["max"]) == (1, 5)
    assert s["p5"] == pytest.approx(1.2)
    assert (s["p25"], s["p50"], s["p75"]) == (2, 3, 4)
    assert s["p95"] == pytest.approx(4.8)
    assert s["p99"] == pytest.approx(4.96)
    with pytest.raises(ValueError, match="empty"):
        summary([])


# ---------------------------------------------------------------- throughput


def test_goodput():
    assert goodput_bps(1_000_000, 2) == 4e6
    assert goodput_bps(0, 1) == 0
    with pytest.raises(ValueError, match="positive duration"):
        goodput_bps(10, 0)
    with pytest.raises(ValueError, match="non-negative byte"):
        goodput_bps(-1, 1)


def test_throughput_series_per_interval():
    assert throughput_series([iv(0, 1, 1000), iv(1, 2, 3000)]) == [(0.5, 8000), (1.5, 24000)]


def test_throughput_series_rebins_by_bytes():
    intervals = [iv(0, 1, 1000), iv(1, 2, 3000)]
    assert throughput_series(intervals, window=0.5) == [
        (0.25, 8000), (0.75, 8000), (1.25, 24000), (1.75, 24000)]
    coarse = throughput_series(intervals, window=1.5)
    assert coarse[0] == (0.75, pytest.approx(2500 * 8 / 1.5))
    assert coarse[1] == (1.75, pytest.approx(24000))  # last bin cut at t=2


def test_throughput_series_conserves_bytes_of_real_intervals():
    result = parse_iperf3((FIXTURES / "iperf3_server_bbr.json").read_text())
    series = throughput_series(result.intervals, window=0.4)
    edges = [0.4 * k for k in range(len(series))] + [result.intervals[-1].end]
    widths = [hi - lo for lo, hi in itertools.pairwise(edges)]
    total = sum(bps * w / 8 for (_, bps), w in zip(series, widths, strict=True))
    assert total == pytest.approx(result.bytes_received)


def test_throughput_series_edge_cases():
    assert throughput_series([iv(0, 1, 125), iv(1, 1, 0)]) == [(0.5, 1000)]
    with pytest.raises(ValueError, match="no duration"):
        throughput_series([iv(1, 1, 10)])
    with pytest.raises(ValueError, match="at least one"):
        throughput_series([])
    with pytest.raises(ValueError, match="window must be positive"):
        throughput_series([iv(0, 1, 1)], window=0)


def test_utilization_and_ideal_goodput():
    assert utilization(9e6, 10e6) == pytest.approx(0.9)
    with pytest.raises(ValueError, match="link rate"):
        utilization(1, 0)
    assert ideal_goodput_bps(10e6, 0.01) == pytest.approx(9.9e6)
    with pytest.raises(ValueError, match="0..1"):
        ideal_goodput_bps(10e6, 1.5)


def test_steady_state_skips_startup():
    assert steady_state([(0, 0), (1, 10), (2, 20), (3, 30)], 1.5) == 25
    assert steady_state([(5, 7)], 0) == 7
    with pytest.raises(ValueError, match="no samples left"):
        steady_state([(0, 1), (1, 1)], 5)
    with pytest.raises(ValueError, match="empty"):
        steady_state([], 1)


# ---------------------------------------------------------------- fairness


def two_flows():
    return align_series([[(0, 10), (1, 10), (2, 10)], [(1, 20), (2, 40)]], step=0.5)


def test_align_series_grid_values_and_mask():
    aligned = two_flows()
    assert aligned.times == (0, 0.5, 1, 1.5, 2)
    assert aligned.values == ((10, 0), (10, 0), (10, 20), (10, 30), (10, 40))
    assert [row[1] for row in aligned.active] == [False, False, True, True, True]
    with pytest.raises(ValueError, match="step must be positive"):
        align_series([[(0, 1)]], 0)
    with pytest.raises(ValueError, match="non-empty"):
        align_series([[], []], 1)


def test_jain_index_bounds_and_conventions():
    assert jain_index([3, 3, 3, 3]) == 1
    assert jain_index([1, 0, 0, 0]) == 0.25
    assert jain_index([10, 20]) == pytest.approx(0.9)
    assert jain_index([0, 0]) == 1.0  # documented convention
    assert jain_index([5, 0, 5], mask=[True, False, True]) == 1
    with pytest.raises(ValueError, match="at least one"):
        jain_index([1], mask=[False])
    with pytest.raises(ValueError, match="non-negative"):
        jain_index([1, -1])
    with pytest.raises(ValueError, match="mask has 1 entries for 2"):
        jain_index([1, 2], mask=[True])


def test_jain_over_time_ignores_inactive_flows():
    series = jain_over_time(two_flows())
    assert [t for t, _ in series] == [0, 0.5, 1, 1.5, 2]
    assert [j for _, j in series][:2] == [1, 1]  # flow 2 not started: not "starved"
    assert series[2][1] == pytest.approx(0.9)
    assert series[4][1] == pytest.approx(2500 / 3400)
    nobody = [(False, False)] * 5
    assert jain_over_time(two_flows(), nobody) == []
    with pytest.raises(ValueError, match="rows"):
        jain_over_time(two_flows(), nobody[:2])


def test_convergence_time():
    series = [(0, 0.5), (1, 0.95), (2, 0.8), (3, 0.95), (4, 0.96), (5, 0.97)]
    assert convergence_time(series, 0.9, hold=1.5) == 3
    assert convergence_time(series, 0.9, hold=0) == 1
    assert convergence_time([(0, 0.5), (1, 0.95)], hold=5) == 1  # holds until the end
    assert convergence_time([(0, 0.5), (1, 0.6)]) is None
    with pytest.raises(ValueError, match="empty"):
        convergence_time([])


def test_adaptation_time_up_and_down():
    up = [(0, 5e6), (1, 5e6), (2, 6e6), (3, 9.5e6), (4, 10e6), (5, 9.6e6)]
    assert adaptation_time(up, 1.5, 10e6) == 1.5
    assert adaptation_time(up, 1.5, 10e6, frac=0.99) is None
    down = [(0, 10e6), (1, 10e6), (2, 8e6), (3, 5.2e6), (4, 5e6)]
    assert adaptation_time(down, 1.5, 5e6) == 1.5
    assert adaptation_time(down, 1.5, 5e6, frac=1.0) == 2.5  # only exactly 5e6 counts
    with pytest.raises(ValueError, match="no sample before"):
        adaptation_time(up, 0, 10e6)
    with pytest.raises(ValueError, match="frac"):
        adaptation_time(up, 1.5, 10e6, frac=0)


# ---------------------------------------------------------------- delay


def test_queue_delay():
    assert queue_delay_ms([40, 45, 50], 40) == [0, 5, 10]
    assert queue_delay_ms([42, 40, 47]) == [2, 0, 7]
    assert queue_delay_ms([39], 40) == [0]
    with pytest.raises(ValueError, match="empty"):
        queue_delay_ms([])


# ---------------------------------------------------------------- steady goodput


def test_steady_goodput_skips_startup_and_weights_a_short_last_interval():
    # 1 s of startup at 1 Mbit/s, then 2 s at 8 Mbit/s, then a 0.1 s tail at 0.8 Mbit/s.
    intervals = [iv(0, 1, 125_000), iv(1, 2, 1_000_000), iv(2, 3, 1_000_000), iv(3, 3.1, 10_000)]
    got = steady_goodput_bps(intervals, skip_s=1.0)
    assert got == pytest.approx(8 * 2_010_000 / 2.1)  # not the plain mean of three rates (5.6 Mbit/s)
    assert steady_goodput_bps(intervals, skip_s=0) == pytest.approx(8 * 2_135_000 / 3.1)


def test_steady_goodput_needs_an_interval_after_startup():
    with pytest.raises(ValueError, match="after 5 s"):
        steady_goodput_bps([iv(0, 1, 1000), iv(1, 2, 1000)], skip_s=5)


def test_aggregate_steady_goodput_of_flows_taking_turns_stays_within_the_link():
    # Two flows each get the whole 8 Mbit/s link, one after the other (a delayed handshake):
    # summing their per-flow rates would report 16 Mbit/s.
    first = [iv(0, 1, 1_000_000), iv(1, 2, 1_000_000)]
    second = [iv(0, 1, 1_000_000), iv(1, 2, 1_000_000)]
    assert steady_goodput_bps(first, 0) + steady_goodput_bps(second, 0) == pytest.approx(16e6)
    assert aggregate_steady_goodput_bps([(0.0, first), (2.0, second)], skip_s=0) == pytest.approx(8e6)
    # the startup is skipped from the first flow's start; later flows count whole
    assert aggregate_steady_goodput_bps([(0.0, first), (2.0, second)], skip_s=1) == pytest.approx(8e6)


def test_aggregate_steady_goodput_of_one_flow_is_its_steady_goodput():
    intervals = [iv(0, 1, 125_000), iv(1, 2, 1_000_000), iv(2, 3, 1_000_000), iv(3, 3.1, 10_000)]
    assert aggregate_steady_goodput_bps([(5.0, intervals)], 1.0) == pytest.approx(steady_goodput_bps(intervals, 1.0))
    with pytest.raises(ValueError, match="after 9 s"):
        aggregate_steady_goodput_bps([(5.0, intervals)], 9)


# ---------------------------------------------------------------- the bottleneck itself

def test_link_busy_counts_the_frames_the_bottleneck_sent_against_its_changing_rate():
    # 10 Mbit/s, then 20 Mbit/s from t=2: 1.25 MB/s then 2.5 MB/s would be fully busy.
    counter = [(0.0, 0), (1.0, 1_250_000), (2.0, 2_500_000), (3.0, 5_000_000), (4.0, 6_250_000)]
    steps = [(0.0, 10e6), (2.0, 20e6)]
    assert link_busy(counter, steps, 0, 3) == pytest.approx(1.0)
    assert link_busy(counter, steps, 1, 4) == pytest.approx(8 * 5_000_000 / (10e6 + 20e6 + 20e6))
    with pytest.raises(ValueError, match="fewer than two"):
        link_busy(counter, steps, 3.5, 9)


def test_backlogged_delivery_judges_only_gaps_the_queue_alone_covers_and_not_just_after_a_rate_change():
    # (t, bytes sent, bytes queued) at 10 Mbit/s (1.25 MB/s): full rate with a queue that
    # covers the next second, a stall with such a queue, then a queue too short to prove
    # the link had work (a paced sender), an empty one, and a change to 20 Mbit/s.
    samples = [(0.0, 0, 1_300_000), (1.0, 1_250_000, 1_300_000), (2.0, 1_875_000, 60_000),
               (3.0, 1_900_000, 0), (4.0, 1_950_000, 0), (5.0, 2_000_000, 2_600_000), (5.5, 2_100_000, 2_600_000),
               (6.5, 2_600_000, 2_600_000), (7.5, 5_100_000, 2_600_000)]
    ratio, covered = backlogged_delivery(samples, [(0.0, 10e6), (5.2, 20e6)], 0, 10)
    assert covered == pytest.approx(3.0)  # [0,1], [1,2], [6.5,7.5]: the two gaps before 6.2 s are settling
    assert ratio == pytest.approx(8 * (1_875_000 + 2_500_000) / (10e6 * 2 + 20e6))
    with pytest.raises(ValueError, match="never held a whole sampling interval"):
        backlogged_delivery(samples, [(0.0, 10e6)], 2.0, 4.5)


def test_a_few_packets_queued_at_both_ends_do_not_prove_the_link_had_work():
    """BBR at 10% loss: 3-5 packets queued at each 200 ms sample, the link idle in between
    (measured: read as 0.63 of 100 Mbit/s and flagged 'link below its rate')."""
    samples = [(0.2 * i, 1_575_000 * i, 6000) for i in range(10)]  # 63 Mbit/s, 4 packets waiting
    with pytest.raises(ValueError):
        backlogged_delivery(samples, [(0.0, 100e6)], 0, 2)


def test_bbr_model_reads_startup_exit_and_steady_estimate():
    samples = [(0.5, 2.885, 2e6), (1.5, 2.885, 8e6), (2.5, 0.35, 9.5e6), (3.5, 1.25, 9.6e6),
               (10.5, 1.0, 9.0e6), (11.5, 0.75, 10e6), (12.5, 1.0, 9.4e6)]
    model = bbr_model(samples, steady_from=10.0)
    assert model["left_startup_by_s"] == 2.5 and model["bw_at_startup_exit_bps"] == 9.5e6
    assert model["bw_p50_bps"] == 9.4e6
    assert model["bw_held_share"] == 0.0  # the filter moved between every two samples


def test_bbr_model_counts_the_samples_that_held_the_estimate_to_the_bit():
    # figure 8 at 15% loss: bw held for five 1 s samples (48 round trips of 100 ms), then
    # for four; two equal samples in a row are the max filter, not the long-term mode
    held = [1.96e6] * 5 + [2.50e6, 2.47e6, 2.47e6] + [4.19e6] * 4 + [3.90e6]
    samples = [(5.0 + k, 1.0, bw) for k, bw in enumerate(held)]
    assert bbr_model(samples, steady_from=5.0)["bw_held_share"] == pytest.approx(9 / 13)
    assert bbr_model(samples[:2], steady_from=5.0)["bw_held_share"] is None  # too few to tell


def test_bbr_model_of_a_flow_still_in_startup_or_too_short_for_a_steady_state():
    model = bbr_model([(0.5, 2.885, 1e6), (1.5, 2.885, 3e6)], steady_from=5.0)
    assert model == {"left_startup_by_s": None, "bw_at_startup_exit_bps": None, "bw_p50_bps": None,
                     "bw_held_share": None}
    with pytest.raises(ValueError):
        bbr_model([], steady_from=0.0)


def test_retransmit_rate_counts_originals_and_retransmissions():
    from bbrlab.analysis.metrics import retransmit_rate

    rows = [{"retransmits": 10, "sent_bytes": 1448 * 990}, {"retransmits": 0, "sent_bytes": 1448 * 1000},
            {"retransmits": None, "sent_bytes": 1448 * 50}]
    assert retransmit_rate(rows, 1448) == round(10 / 2000, 6)
    assert retransmit_rate([{"retransmits": 3}], 1448) is None


def test_the_peak_beyond_a_pause_is_never_below_zero():
    """A 20 ms pause caught up reads 1.2 over 100 ms: 1.0 of it the shaper's; a 217 ms idle
    gap (BBR's ProbeRTT at 10 Mbit/s) once gave -1.17, a share below zero."""
    assert peak_beyond_pause(1.2, 0.02) == pytest.approx(1.0)
    assert peak_beyond_pause(1.0, 0.2168) == 0.0
