"""Unit parsers (rates, times, sizes, fractions) and the labels they format back to."""

from __future__ import annotations

import pytest
from bbrlab.schema import units
from bbrlab.errors import BbrlabError, SpecError

KEY = "link.some_key"


def refused(func, value, *args, match=None):
    """Call FUNC and return the SpecError message, which must name KEY."""
    with pytest.raises(SpecError, match=match) as info:
        func(value, KEY, *args)
    message = str(info.value)
    assert message.startswith(f"{KEY}:"), message
    return message


# ---------------------------------------------------------------- rates


@pytest.mark.parametrize(("text", "bps"), [
    ("10Mbit", 10e6), ("10mbit", 10e6), ("10 Mbit", 10e6), (" 10Mbit ", 10e6),
    ("128kbit", 128e3), ("1Gbit", 1e9), ("2.5Mbit", 2.5e6), ("1e3kbit", 1e6),
    ("1000bit", 1000.0), ("3KBIT", 3e3), ("0.5Mbit", 5e5), ("7.Mbit", 7e6),
])
def test_rate_accepts_units(text, bps):
    assert units.rate(text, KEY) == pytest.approx(bps)


@pytest.mark.parametrize("value", [10, 10.0, "10"])
def test_rate_bare_number_suggests_mbit(value):
    assert refused(units.rate, value) == f"{KEY}: {value} needs a unit: did you mean 10Mbit? (rates take bit, kbit, Mbit, Gbit)"


@pytest.mark.parametrize("value", ["10M", "10MB", "10 Mbits", "10ms", "10Mbit/s"])
def test_rate_needs_a_rate_unit(value):
    message = refused(units.rate, value)
    assert "needs a rate unit" in message and "bit, kbit, Mbit, Gbit" in message


@pytest.mark.parametrize(("value", "why"), [
    ("20mbps", "tc reads mbps as megabytes per second"), ("20Mbps", "tc reads Mbps as megabytes per second"),
    ("20MBps", "tc reads MBps as megabytes per second"), ("20kbps", "tc reads kbps as kilobytes per second"),
    ("20bps", "tc reads bps as bytes per second"), ("20gbps", "tc reads gbps as gigabytes per second"),
    ("20MB/s", ""), ("20Mb/s", ""),
])
def test_rate_ambiguous_spellings_are_refused_naming_the_accepted_ones(value, why):
    message = refused(units.rate, value)  # the user's own spelling is the one named
    assert f"{value} needs a rate unit" in message and "bit, kbit, Mbit, Gbit" in message
    assert why in message and ("tc reads" in message) == bool(why)
    assert "\n" not in message


@pytest.mark.parametrize("value", ["0Mbit", "0bit", "0.0kbit"])
def test_rate_must_be_positive(value):
    assert "positive" in refused(units.rate, value)


@pytest.mark.parametrize("value", ["-5Mbit", "fast", "Mbit", "", "1,5Mbit"])
def test_rate_unreadable_text(value):
    assert "cannot read" in refused(units.rate, value)


@pytest.mark.parametrize("value", [None, True, False, ["10Mbit"], {"rate": "10Mbit"}])
def test_rate_wrong_type(value):
    message = refused(units.rate, value)
    assert "expected a rate" in message and "'10Mbit'" in message


def test_spec_error_is_a_bbrlab_error():
    with pytest.raises(BbrlabError):
        units.rate("x", KEY)


# ---------------------------------------------------------------- durations


@pytest.mark.parametrize(("text", "seconds"), [
    ("40ms", 0.04), ("8s", 8.0), ("8sec", 8.0), ("2min", 120.0), ("250us", 250e-6),
    ("1.5s", 1.5), ("40 MS", 0.04), ("0ms", 0.0), ("0s", 0.0), ("1e2ms", 0.1),
])
def test_duration_accepts_units(text, seconds):
    assert units.duration(text, KEY) == pytest.approx(seconds)


@pytest.mark.parametrize("value", [40, "40", 0])
def test_duration_bare_number_suggests_ms(value):
    assert refused(units.duration, value) == f"{KEY}: {value} needs a unit: did you mean {value}ms?"


@pytest.mark.parametrize("value", ["40m", "40d"])
def test_duration_needs_a_time_unit(value):
    assert "needs a time unit" in refused(units.duration, value)


def test_duration_zero_allowed_by_default_but_not_when_positive_required():
    assert units.duration("0ms", KEY) == 0.0
    assert "must be positive" in refused(units.duration, "0ms", False)
    assert units.duration("1us", KEY, allow_zero=False) == pytest.approx(1e-6)


@pytest.mark.parametrize("value", ["-40ms", "soon", ""])
def test_duration_unreadable(value):
    assert "cannot read" in refused(units.duration, value)


def test_duration_wrong_type():
    assert "expected a time" in refused(units.duration, [1])


# ---------------------------------------------------------------- sizes


@pytest.mark.parametrize(("value", "nbytes"), [
    ("64KB", 64_000), ("3MB", 3_000_000), ("1MiB", 1_048_576), ("2KiB", 2048), ("1GiB", 1024**3),
    ("1500B", 1500), ("1.5KB", 1500), ("256 kB", 256_000), ("3GB", 3e9),
])
def test_size_accepts_units(value, nbytes):
    result = units.size(value, KEY)
    assert result == nbytes and isinstance(result, int)


def test_size_truncates_to_whole_bytes():
    assert units.size("1.0009KB", KEY) == 1000


@pytest.mark.parametrize("value", ["1500", 1500, 1500.0])
def test_size_bare_number_is_refused_with_byte_examples(value):
    assert refused(units.size, value) == f"{KEY}: {value} needs a unit: bytes like 1500B or 1.5KB"


@pytest.mark.parametrize("value", ["1500b", "256 kb", "3 packets", "1Mbit"])
def test_size_needs_a_size_unit(value):
    assert "needs a size unit" in refused(units.size, value)


@pytest.mark.parametrize("value", ["0B", "0KB", "0.0001B"])
def test_size_must_be_positive(value):
    assert "positive" in refused(units.size, value)


@pytest.mark.parametrize("value", [True, None, -5])
def test_size_refuses_bools_none_and_negatives(value):
    refused(units.size, value)


# ---------------------------------------------------------------- fractions


@pytest.mark.parametrize(("value", "frac"), [
    ("1%", 0.01), ("0.5%", 0.005), ("0%", 0.0), ("99.9%", 0.999), (" 10 % ", 0.1),
])
def test_fraction_accepts_percent(value, frac):
    assert units.fraction(value, KEY) == pytest.approx(frac)


@pytest.mark.parametrize("value", ["100%", "150%"])
def test_fraction_range_is_zero_to_one_exclusive(value):
    assert "[0, 100%)" in refused(units.fraction, value)


@pytest.mark.parametrize("value", [0, 1, 5])
def test_fraction_bare_number_suggests_percent(value):
    assert refused(units.fraction, value) == f"{KEY}: {value} needs a unit: did you mean {value}%?"


@pytest.mark.parametrize(("value", "meant"), [(0.5, "50%"), ("0.5", "50%"), (0.01, "1%"), (0.1, "10%")])
def test_a_bare_number_below_one_may_be_a_fraction_and_both_readings_are_named(value, meant):
    """loss: 0.01 suggested 0.01% alone; a user writing a fraction meant 1% (and tc reads a
    RED probability of 0.1 as 10%)."""
    assert refused(units.fraction, value) == (f"{KEY}: {value} needs a unit: did you mean {meant} "
                                              f"({value} as a fraction) or {value}%?")


@pytest.mark.parametrize(("key", "meant"), [("flows.0.duration", "30s"), ("flows.0.start", "30s"),
                                            ("link.rtt", "30ms"), ("link.jitter", "30ms")])
def test_a_bare_time_is_read_in_its_keys_own_scale(key, meant):
    """duration: 30 suggested 30ms: a flow's times are seconds, a link's delays milliseconds."""
    with pytest.raises(SpecError, match=f"did you mean {meant}\\?"):
        units.duration(30, key)


def test_a_bare_rate_in_the_thousands_is_read_as_bits_per_second():
    """rate: 1e7 suggested 1e+07Mbit (which, taken, is a 10 Tbit/s netem)."""
    with pytest.raises(SpecError, match="did you mean 10Mbit\\?"):
        units.rate(1e7, "link.rate")
    with pytest.raises(SpecError, match="did you mean 10Mbit\\?"):
        units.rate(10, "link.rate")


@pytest.mark.parametrize("value", ["1pct", "1 percent"])
def test_fraction_text_must_be_a_percentage(value):
    assert "percentage" in refused(units.fraction, value)


@pytest.mark.parametrize("value", [True, False, None])
def test_fraction_refuses_bools(value):
    refused(units.fraction, value)


# ---------------------------------------------------------------- formatting


@pytest.mark.parametrize(("bps", "text"), [
    (10e6, "10Mbit"), (128e3, "128kbit"), (1e9, "1Gbit"), (2.5e9, "2.5Gbit"), (1.5e6, "1.5Mbit"),
    (999, "999bit"), (1000, "1kbit"), (999_999, "999.999kbit"), (0, "0bit"),
])
def test_fmt_rate(bps, text):
    assert units.fmt_rate(bps) == text


@pytest.mark.parametrize("text", ["10Mbit", "128kbit", "1Gbit", "2.5Mbit", "1.5kbit"])
def test_fmt_rate_round_trips(text):
    assert units.fmt_rate(units.rate(text, KEY)) == text


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (0.04, "40ms"), (0.0005, "0.5ms"), (1, "1s"), (2.5, "2.5s"), (120, "120s"), (0.999, "999ms"),
])
def test_fmt_time(seconds, text):
    assert units.fmt_time(seconds) == text


@pytest.mark.parametrize(("value", "text"), [(0.01, "1%"), (0.005, "0.5%"), (0, "0%"), (0.25, "25%")])
def test_fmt_fraction(value, text):
    assert units.fmt_fraction(value) == text


@pytest.mark.parametrize("text", ["1%", "0.5%", "12.5%"])
def test_fmt_fraction_round_trips(text):
    assert units.fmt_fraction(units.fraction(text, KEY)) == text
