"""The bottleneck's AQM: link.aqm read and checked, its tc commands, its counters read back."""

from __future__ import annotations

import json

import pytest

from bbrlab.analysis import aqm_metrics, system_output
from bbrlab.emulation import aqm_qdisc as aqm_tc
from bbrlab.emulation import plan_text, shapers, topo
from bbrlab.errors import SpecError
from bbrlab.schema import experiment as spec


def raw(**link) -> dict:
    return {"name": "t", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "175pkt", **link},
            "flows": [{"cc": "cubic", "duration": "10s"}]}


def point(**link):
    return spec.build(raw(**link)).points[0]


def error(text_or_raw, **link) -> str:
    with pytest.raises(SpecError) as info:
        spec.build(text_or_raw if isinstance(text_or_raw, dict) else raw(**link))
    return str(info.value)


def test_fifo_is_the_default_and_today_s_bottleneck():
    link = point().link
    assert link.aqm.kind == "fifo" and link.shaper == "netem"
    assert shapers.setup("r1-eth0", link) == (("tc", "qdisc", "replace", "dev", "r1-eth0", "root", "handle", "10:",
                                               "netem", "limit", "175", "rate", "10000000bit"),)


def test_fq_codel_is_htb_s_leaf_with_rfc_8290_s_defaults_and_the_buffer_as_its_limit():
    link = point(aqm="fq_codel").link
    assert link.shaper == "htb"
    cmds = shapers.setup("r1-eth0", link)
    assert cmds[-1] == ("tc", "qdisc", "replace", "dev", "r1-eth0", "parent", "1:1", "handle", "10:", "fq_codel",
                        "limit", "175", "target", "5000us", "interval", "100000us", "flows", "1024",
                        "quantum", "1514", "ecn")
    assert link.aqm.marks and link.aqm.label() == "fq_codel"


def test_cake_shapes_by_itself_and_its_rate_changes_in_place():
    link = point(aqm="cake", cake={"flow_mode": "flows", "overhead": 18}).link
    assert link.shaper == "cake"
    (cmd,) = shapers.setup("r1-eth0", link)
    assert cmd[:9] == ("tc", "qdisc", "replace", "dev", "r1-eth0", "root", "handle", "10:", "cake")
    assert cmd[9:] == ("bandwidth", "10000000bit", "rtt", "100000us", "besteffort", "flows", "no-ack-filter",
                       "overhead", "18", "memlimit", str(175 * aqm_tc.CAKE_TRUESIZE))
    assert shapers.rate_change("r1-eth0", link, 20e6)[-2:] == ("bandwidth", "20000000bit")
    assert link.aqm.label() == "cake (flow_mode flows, overhead 18)"


def test_cake_under_htb_is_unlimited_and_an_aqm_is_tbf_s_child():
    under_htb = shapers.setup("r1-eth0", point(aqm="cake", shaper="htb").link)
    assert under_htb[-1][8:11] == ("10:", "cake", "unlimited")
    tbf_link = point(aqm="codel", shaper="tbf").link
    under_tbf = shapers.setup("r1-eth0", tbf_link)
    assert under_tbf[0][6:9] == ("handle", "1:", "tbf")
    assert under_tbf[0][-2:] == ("limit", "175")  # the buffer in packets, as tc takes it
    assert shapers.rate_change("r1-eth0", tbf_link, 20e6)[-2:] == ("limit", "175")
    assert under_tbf[1][5:10] == ("parent", "1:1", "handle", "10:", "codel")


def test_a_label_spells_each_parameter_in_its_own_unit():
    red = point(aqm="red", red={"probability": "2%", "ecn": True}).link.aqm
    assert red.label() == "red (min 44158, max 132475, probability 2%, ecn true)"  # thresholds derived
    assert point(aqm="codel", codel={"target": "2ms"}).link.aqm.label() == "codel (target 2ms)"


def test_red_derives_its_thresholds_from_the_buffer():
    args = aqm_tc.args(point(aqm="red").link)
    limit = 175 * 1514
    assert args[:7] == ("red", "limit", str(limit), "min", str(limit // 2 // 3), "max", str(limit // 2))


def test_a_sweep_over_aqms_tunes_each_with_its_own_block():
    exp = spec.build(raw(aqm=["fifo", "fq_codel", "cake"], fq_codel={"target": "2ms", "interval": "50ms"}))
    kinds = {p.params["aqm"]: p.link for p in exp.points}
    assert set(kinds) == {"fifo", "fq_codel", "cake"} and exp.axes == {"aqm": ["fifo", "fq_codel", "cake"]}
    assert kinds["fq_codel"].aqm.get("target") == 0.002 and kinds["cake"].aqm.get("flow_mode") == "triple-isolate"


@pytest.mark.parametrize("link, message", [
    ({"aqm": "fq_codel", "fq_codel": {"bogus": 1}}, "link.fq_codel.bogus: unknown key"),
    ({"aqm": "codel", "codel": {"quantum": 1514}}, "link.codel.quantum: unknown key"),
    ({"aqm": "fq_codel", "fq_codel": {"target": "100ms"}},
     "link.fq_codel.target: 100ms must be shorter than link.fq_codel.interval (100ms)"),
    ({"aqm": "codel", "codel": {"target": 5}}, "link.codel.target: "),
    ({"aqm": "fq_codel", "fq_codel": {"ecn": "yes"}}, "link.fq_codel.ecn: expected true or false"),
    ({"aqm": "cake", "cake": {"flow_mode": "per-flow"}}, "link.cake.flow_mode: 'per-flow' is not one of"),
    ({"aqm": "fq_codel", "cake": {"flow_mode": "flows"}}, "link.cake: parameters for cake, but link.aqm is "
                                                          "fq_codel"),
    ({"aqm": "sfq"}, "link.aqm: 'sfq' is not one of fifo, fq_codel"),
    ({"aqm": "fq_codel", "shaper": "cake"}, "link.shaper: cake is CAKE's own shaper, but link.aqm is fq_codel"),
    ({"aqm": "cake", "burst": "64KB"}, "link.burst: cake's rate has no burst"),
    ({"aqm": "red", "red": {"min": "200KB", "max": "100KB"}}, "link.red: expected 0 < min < max"),
    ({"aqm": "fq_codel", "buffer": "1pkt"}, "link.buffer: 1 pkt is under 2 packets"),
    ({"aqm": "codel", "shaper": "netem"}, "link.shaper: netem holds the packets its rate delays in its own queue"),
])
def test_bad_aqm_input_is_refused_naming_the_key(link, message):
    assert error(None, **link).startswith(message)


def test_ecn_is_asked_per_group_and_refused_where_nothing_marks():
    text = raw(aqm="fq_codel")
    text["flows"][0]["ecn"] = True
    plan = topo.build_plan(spec.build(text).points[0])
    assert plan.sysctls["snd1"]["net.ipv4.tcp_ecn"] == "1" and "net.ipv4.tcp_ecn" not in plan.sysctls["rcv1"]
    assert "and in snd1: net.ipv4.tcp_ecn=1" in plan_text.describe(plan)
    del text["link"]["aqm"]
    assert error(text).startswith("flows.0.ecn: nothing marks on a droptail FIFO bottleneck")
    text["link"]["aqm"] = "fifo"  # said explicitly: ECN negotiated on purpose
    assert spec.build(text).points[0].flows[0].ecn is True
    text["flows"][0]["ecn"] = "on"
    assert error(text).startswith("flows.0.ecn: expected true or false")


def _tc_block(t: float, qdiscs: list[dict]) -> str:
    return f"### {t}\n{json.dumps(qdiscs)}\n"


def _qdisc(**extra) -> dict:
    return {"kind": "fq_codel", "handle": "10:", "parent": "1:1", "bytes": 0, "packets": 0, "drops": 0,
            "overlimits": 0, "requeues": 0, "backlog": 0, "qlen": 0, **extra}


def test_an_aqm_s_own_counters_are_kept_and_summarized():
    text = (_tc_block(100.0, [_qdisc(ecn_mark=3, drops=1)])
            + _tc_block(103.0, [_qdisc(ecn_mark=40, drops=2, backlog=12500, qlen=9)])
            + _tc_block(104.0, [_qdisc(ecn_mark=55, drops=2, backlog=6250, qlen=5)]))
    samples = system_output.parse_tc_qdiscs(text)
    assert samples[1].xstats == {"ecn_mark": 40}
    series, out = {}, {}
    aqm_metrics.summarize(samples, aqm_metrics.stepwise([(0.0, 10e6)]), 100.0, 2.0, 10.0, series, out)
    assert out["aqm_ce_marks"] == 52
    assert out["queue_delay_p50_ms"] == pytest.approx(7.5) and out["queue_delay_p95_ms"] == pytest.approx(9.75)
    assert series["queue_delay"] == [[0.0, 0.0], [3.0, 10.0], [4.0, 5.0]] and "aqm_delay_p50_ms" not in out


def test_cake_s_tins_give_its_marks_and_sojourn_and_a_fifo_has_none():
    cake = _qdisc(kind="cake", tins=[{"sent_packets": 900, "ecn_mark": 7, "avg_delay_us": 4800},
                                     {"sent_packets": 0, "ecn_mark": 0, "avg_delay_us": 0}])
    sample = system_output.parse_tc_qdiscs(_tc_block(1.0, [cake]))[0]
    assert aqm_metrics.ce_marks(sample) == 7 and aqm_metrics.aqm_delay_ms(sample) == 4.8
    fifo = system_output.parse_tc_qdiscs(_tc_block(1.0, [_qdisc(kind="pfifo")]))[0]
    assert aqm_metrics.ce_marks(fifo) is None and aqm_metrics.aqm_delay_ms(fifo) is None


def test_the_queue_s_delay_is_at_the_rate_then_configured():
    text = _tc_block(100.0, [_qdisc(backlog=12500)]) + _tc_block(105.0, [_qdisc(backlog=12500)])
    series, out = {}, {}
    aqm_metrics.summarize(system_output.parse_tc_qdiscs(text), aqm_metrics.stepwise([(0.0, 10e6), (4.0, 20e6)]), 100.0, 0.0,
                          10.0, series, out)
    assert series["queue_delay"] == [[0.0, 10.0], [5.0, 5.0]]


def test_on_a_trace_the_queue_s_delay_is_at_the_rate_the_schedule_then_offered():
    from bbrlab.schema.traces import Schedule

    schedule = Schedule(trace="t", interval=0.01, period=2.0, times=(0.0, 1.0), rates=(10e6, 5e6),
                        trace_average=7.5e6, scale=1.0)
    assert [schedule.rate_at(t) for t in (-1.0, 0.5, 1.5, 2.5, 3.5)] == [10e6, 10e6, 5e6, 10e6, 5e6]
    text = _tc_block(100.0, [_qdisc(backlog=12500)]) + _tc_block(101.5, [_qdisc(backlog=12500)])
    series, out = {}, {}
    aqm_metrics.summarize(system_output.parse_tc_qdiscs(text), schedule.rate_at, 100.0, 0.0, 10.0, series, out)
    assert series["queue_delay"] == [[0.0, 10.0], [1.5, 20.0]]
