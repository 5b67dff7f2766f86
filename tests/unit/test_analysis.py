"""Analysis helpers that decide whether a point can be trusted."""

import pytest

from bbrlab import analysis

# Two samples 1 s apart: all CPUs half busy, but cpu0 fully busy and cpu1 idle.
PROC_STAT = ("### 100.0\ncpu  10 0 10 80 0 0 0 0\ncpu0 9 0 1 40 0 0 0 0\ncpu1 1 0 9 40 0 0 0 0\n"
             "### 101.0\ncpu  60 0 10 130 0 0 0 0\ncpu0 59 0 1 40 0 0 0 0\ncpu1 1 0 9 90 0 0 0 0\n")


def test_cpu_series_keeps_each_cpu_so_one_saturated_cpu_shows():
    series = analysis._cpu_series(PROC_STAT, t0=100.0)
    assert series["cpu"] == [(0.5, pytest.approx(0.5))]
    assert series["cpu0"] == [(0.5, pytest.approx(1.0))] and series["cpu1"] == [(0.5, pytest.approx(0.0))]


def test_during_prefers_samples_taken_while_the_flows_ran():
    assert analysis._during([(-1.0, 0.9), (0.5, 0.2), (2.0, 0.4), (9.0, 1.0)], end=3.0) == [0.2, 0.4]
    assert analysis._during([(-1.0, 0.9)], end=3.0) == [0.9]  # nothing during: what there is
