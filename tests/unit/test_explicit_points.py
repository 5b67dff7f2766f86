"""`points:`: chosen points beside the cartesian sweep (rate/RTT pairs), crossed with the
file's axes, each refused case in one line."""

import pytest

from bbrlab.errors import SpecError
from bbrlab.schema import experiment as spec
from bbrlab.schema.selection import parse_only, select


def pairs(**top) -> dict:
    return {"name": "pairs", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "2bdp"},
            "flows": [{"cc": ["bbr", "cubic"], "duration": "10s"}],
            "points": [{"rate": "10Mbit", "rtt": "20ms"}, {"rate": "50Mbit", "link.rtt": "100ms"}], **top}


def test_each_chosen_point_is_crossed_with_the_sweep():
    exp = spec.build(pairs())
    got = [(p.params["cc"], p.link.rate, p.link.rtt) for p in exp.points]
    assert got == [("bbr", 10e6, 0.02), ("bbr", 50e6, 0.1), ("cubic", 10e6, 0.02), ("cubic", 50e6, 0.1)]
    assert [p.id for p in exp.points][:2] == ["cc=bbr,rate=10Mbit,rtt=20ms,rep1", "cc=bbr,rate=50Mbit,rtt=100ms,rep1"]
    assert exp.axes == {"cc": ["bbr", "cubic"], "rate": ["10Mbit", "50Mbit"], "rtt": ["20ms", "100ms"]}
    # the buffer in BDPs follows each point's own rate and RTT
    assert [p.link.buffer_packets for p in exp.points[:2]] == [
        spec.build(dict(pairs(), points=None, link={"rate": r, "rtt": t, "buffer": "2bdp"})).points[0].link.buffer_packets
        for r, t in (("10Mbit", "20ms"), ("50Mbit", "100ms"))]
    # --only picks among them; a claim may select on their keys
    chosen = select(exp, parse_only(["rate=50Mbit"]))
    assert [p.link.rtt for p in chosen] == [0.1, 0.1]
    claim = {"id": "c", "text": "t", "metric": "goodput_mbps", "where": {"rate": "50Mbit"}, "min": 1}
    assert spec.build(pairs(claims=[claim])).claims[0].where == {"rate": "50Mbit"}


def test_points_measure_what_they_set():
    one, other = spec.build(pairs()), spec.build(dict(pairs(), points=[{"rate": "10Mbit", "rtt": "30ms"}]))
    assert one.identity != other.identity


@pytest.mark.parametrize(("points", "says"), [
    ([], "points: expected a list of mappings"),
    ({"rate": "10Mbit"}, "points: expected a list of mappings"),
    ([{}], "points.0: expected a mapping of keys to values"),
    ([{"rate": ["10Mbit", "20Mbit"]}], "points.0.rate: one value per point"),
    ([{"rate": "10Mbit", "rtt": "20ms"}, {"rate": "50Mbit"}], "points.1: sets link.rate, points.0 sets link.rate, link.rtt"),
    ([{"rate": "10Mbit"}, {"rate": "10Mbit"}], "points.1: the same as points.0"),
    ([{"rate": "10Mbit"}, {"rate": "10000kbit"}], "points.1: the same as points.0"),
    ([{"cc": "reno"}], "points.0.cc: flows.0.cc is swept too"),
    ([{"rtte": "20ms"}], "points.0.rtte: unknown key (did you mean rtt?)"),
    ([{"rate": "10Mbit", "link.rate": "20Mbit"}], "points.0.link.rate: link.rate given twice in one point"),
])
def test_bad_points_are_refused_in_one_line(points, says):
    with pytest.raises(SpecError) as exc:
        spec.build(dict(pairs(), points=points))
    assert str(exc.value).startswith(says) and "\n" not in str(exc.value)


def test_set_and_quick_cannot_change_what_the_points_set():
    with pytest.raises(SpecError, match=r"^--set rtt: the file's points set rtt per point: change them there"):
        spec.build(pairs(), ["rtt=10ms"])
    with pytest.raises(SpecError, match=r"^quick.rate: the file's points set rate per point"):
        spec.build(pairs(quick={"rate": "1Mbit"}), quick=True)
    assert len(spec.build(pairs(), ["duration=5s"]).points) == 4  # the other keys as ever
