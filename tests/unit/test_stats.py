"""Confidence intervals over repetitions, and where one lies against a claim's bounds."""

import pytest

from bbrlab.analysis import stats


def test_interval_is_students_t():
    iv = stats.interval([74.0, 78.0, 82.0])
    half = 4.302653 * 4.0 / 3 ** 0.5  # t(0.975, 2 df) from a printed table; sd 4
    assert (iv.mean, iv.n, iv.single) == (78.0, 3, False)
    assert iv.low == pytest.approx(78 - half, abs=1e-5) and iv.high == pytest.approx(78 + half, abs=1e-5)
    wider = stats.interval([74.0, 78.0, 82.0], confidence=0.99)
    assert wider.low < iv.low and wider.high > iv.high and wider.confidence == 0.99


def test_more_repetitions_narrow_the_interval():
    few = stats.interval([79.4, 81.1])
    many = stats.interval([79.4, 81.1] * 4)
    assert few.low < many.low < many.high < few.high
    assert few.high - few.low == pytest.approx(2 * 12.7062 * (1.7 / 2 ** 0.5) / 2 ** 0.5, rel=1e-4)


def test_one_value_is_its_own_interval_marked_as_a_single_run():
    iv = stats.interval([79.4])
    assert (iv.mean, iv.low, iv.high, iv.n, iv.single) == (79.4, 79.4, 79.4, 1, True)


def test_identical_values_give_a_zero_width_interval():
    iv = stats.interval([0.5, 0.5, 0.5])
    assert (iv.low, iv.high) == (0.5, 0.5)


@pytest.mark.parametrize(("values", "confidence"), [([], 0.95), ([1.0, 2.0], 1.0), ([1.0, 2.0], 0.0)])
def test_interval_refuses_what_it_cannot_compute(values, confidence):
    with pytest.raises(ValueError, match="^interval: "):
        stats.interval(values, confidence)


@pytest.mark.parametrize(("low", "high", "bounds", "expected"), [
    (74, 82, {"high": 80}, "inconclusive"),
    (70, 78, {"high": 80}, "holds"),
    (81, 90, {"high": 80}, "fails"),
    (70, 80, {"high": 80}, "holds"),  # bounds are inclusive, as a single value's check
    (80, 90, {"high": 80}, "inconclusive"),  # 80 itself would pass
    (0.9, 1.1, {"low": 0.85}, "holds"),
    (0.8, 0.9, {"low": 0.85}, "inconclusive"),
    (0.5, 0.84, {"low": 0.85}, "fails"),
    (2, 3, {"low": 1, "high": 5}, "holds"),
    (0, 0.5, {"low": 1, "high": 5}, "fails"),
    (6, 7, {"low": 1, "high": 5}, "fails"),
    (0, 6, {"low": 1, "high": 5}, "inconclusive"),  # wider than the allowed range
    (4, 6, {"low": 1, "high": 5}, "inconclusive"),
])
def test_classify_an_interval_against_bounds(low, high, bounds, expected):
    iv = stats.Interval(mean=(low + high) / 2, low=low, high=high, n=3)
    assert stats.classify(iv, **bounds) == expected


def test_a_single_value_is_never_inconclusive():
    for value in (79.4, 80.0, 80.1):
        assert stats.classify(stats.interval([value]), high=80) == ("fails" if value > 80 else "holds")


def test_classify_needs_a_bound():
    with pytest.raises(ValueError, match="^classify: "):
        stats.classify(stats.interval([1.0]))
