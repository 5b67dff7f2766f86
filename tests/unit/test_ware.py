"""The Ware et al. (IMC 2019) coexistence model as a pure function."""

import pytest

from bbrlab.analysis import ware

# coexist's link: 10 Mbit/s, 40 ms (one BDP is 33.3 packets of 1500 B), flows of 240 s
LINK = {"rate_bps": 10e6, "rtt_s": 0.04, "duration_s": 240.0}


def test_in_a_deep_buffer_one_bbr_flow_gets_at_most_about_half():
    """The simple form: about half, whatever the number of loss-based flows; the full form
    tends to it as the buffer grows, less BBR's time in ProbeRTT."""
    deep = ware.share(1000, **LINK)
    assert deep.p == pytest.approx(0.5, abs=1e-3)
    assert deep.bbr <= 0.5


def test_the_full_form_by_hand_at_8_bdp():
    c = 10e6 / 8 / 1500
    q = 8 * c * 0.04
    p = 0.5 - 1 / 16 - 4 / q
    t_probe = (q / c + 0.2 + 0.04) * (240 / 10)
    got = ware.share(8, **LINK)
    assert got.p == pytest.approx(p)
    assert got.bbr == pytest.approx((1 - p) * (240 - t_probe) / 240)
    assert got.bbr + got.loss_based == pytest.approx(1.0)
    assert got.probe_fraction == pytest.approx(0.056)  # (0.32 + 0.2 + 0.04) / 10


def test_bbr_takes_nearly_all_in_a_shallow_buffer_and_its_share_falls_as_the_buffer_grows():
    shares = [ware.share(x, **LINK).bbr for x in (0.5, 1, 2, 4, 8, 16, 32)]
    assert ware.share(0.5, **LINK).p == 0.0 and shares[0] > 0.9
    assert all(a >= b for a, b in zip(shares, shares[1:]))
    assert shares[-1] < 0.5  # 32 BDP: half at most, less its ProbeRTT time


def test_more_bbr_flows_leave_less_to_the_loss_based_ones_and_the_count_of_those_does_not_matter():
    assert ware.share(2, n_bbr=4, **LINK).p < ware.share(2, n_bbr=1, **LINK).p


@pytest.mark.parametrize("bad", [{"buffer_bdp": 0}, {"n_bbr": 0}, {"duration_s": 0}])
def test_impossible_inputs_are_refused(bad):
    args = {"buffer_bdp": 1, **LINK, **bad}
    with pytest.raises(ValueError):
        ware.share(**args)
