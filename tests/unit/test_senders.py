"""analysis/senders.py: bulk flows that leave a plain link idle were held back by their
sending hosts (a paced BBR flow under software virtualization, its timers late), and the
point is set aside; anywhere a CC may leave the link idle by itself, nothing is said."""

from pathlib import Path

import pytest

from bbrlab.analysis import senders
from bbrlab.emulation import topo
from bbrlab.schema import experiment as spec

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def short(name: str, busy: float, *sets: str, which: int = 0) -> bool:
    point = spec.load(EXPERIMENTS / f"{name}.yaml", list(sets), quick=True).points[which]
    out = {"link_busy": busy}
    senders.summarize(point, topo.build_plan(point), out)
    return out["sender_short"]


def test_a_starved_flow_on_figure5s_link_is_the_senders_doing():
    # measured under TCG: BBR at 0.46 of 10 Mbit/s, its queue near empty; CUBIC at 0.96
    assert short("figure5", 0.4613) is True
    assert short("figure5", 0.9583) is False
    assert short("figure5", 0.85) is False


@pytest.mark.parametrize("sets", [
    ("link.loss=1%",),  # loss-based CCs back off: the link idles by the CC's doing
    ("flows.0.loss=0.5%",),
    ("link.buffer=10pkt",),  # under one BDP: CUBIC's back-off empties it
    ("link.aqm=fq_codel",),  # CoDel's drops, CUBIC's back-off
    ("link.delay_variation=5ms",),
    ("flows.0.start=8s",),  # nothing sends from the startup period on: idle by the plan
], ids=lambda sets: sets[0])
def test_where_a_cc_may_leave_the_link_idle_nothing_is_said(sets):
    assert short("figure5", 0.30, *sets) is False


def test_flows_with_a_gap_between_them_leave_the_link_idle_by_the_plan():
    point = spec.load(EXPERIMENTS / "figure5.yaml", quick=True).points[0]
    plan = topo.build_plan(point)
    assert senders.covered(plan, point.sampling.startup)
    first = plan.flows[0]
    later = [first, topo.FlowPlan(**{**first.__dict__, "id": "f2", "start": first.start + first.duration + 5})]
    assert not senders.covered(topo.Plan(**{**plan.__dict__, "flows": tuple(later)}), point.sampling.startup)


def test_a_point_without_the_links_counter_says_nothing():
    point = spec.load(EXPERIMENTS / "figure5.yaml", quick=True).points[0]
    out = {"link_busy": None}
    senders.summarize(point, topo.build_plan(point), out)
    assert out == {"link_busy": None, "sender_short": False}
