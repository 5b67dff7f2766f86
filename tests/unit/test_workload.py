"""Short-flow workloads: size CDFs and distributions, Poisson arrivals from a rate or a load,
the schedule (deterministic from the seed), the spec's keys and errors, and the plan."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from bbrlab.schema import experiment as spec, workload
from bbrlab.emulation import plan_text, topo
from bbrlab.errors import SpecError

REPO = Path(__file__).resolve().parents[2]
SMALL = "tests/fixtures/sizes-small.cdf"


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "sizes.cdf"
    path.write_text(text)
    return str(path)


# ---------------------------------------------------------------- sizes


def test_a_cdf_file_is_read_with_comments_and_two_or_three_columns(tmp_path):
    sizes = workload.parse_sizes(SMALL, "k")
    assert sizes.kind == "cdf" and sizes.points == ((1000, 0.5), (11000, 0.9), (111000, 1.0))
    two = workload.parse_sizes(write(tmp_path, "10 0\n20 50\n30 100\n"), "k")  # in percent
    assert two.points == ((10, 0.0), (20, 0.5), (30, 1.0))


def test_the_mean_of_an_interpolated_cdf_by_hand():
    # 0.5 x 1000 (the mass at the first point) + 0.4 x 6000 + 0.1 x 61000
    assert workload.parse_sizes(SMALL, "k").mean == pytest.approx(500 + 2400 + 6100)


@pytest.mark.parametrize("text, message", [
    ("1000 1 0.5\n500 2 1.0\n", "sizes.cdf:2: sizes and probabilities must not decrease"),
    ("1000 1 0.5\n2000 2 0.4\n3000 3 1\n", "sizes.cdf:2: sizes and probabilities must not decrease"),
    ("# head\n1000 one 0.5 x\n", "sizes.cdf:2: expected `size index cdf`"),
    ("1000 1 half\n", "sizes.cdf:1: not numbers"),
    ("1000 1 0.5\n2000 2 0.9\n", "the last probability must be 1"),
    ("# nothing\n", "holds no points"),
    ("-5 1 1\n", "sizes.cdf:1: sizes and probabilities are not negative"),
])
def test_cdf_errors_name_the_key_the_file_and_the_line(tmp_path, text, message):
    with pytest.raises(SpecError) as exc:
        workload.parse_sizes(write(tmp_path, text), "flows.0.workload.sizes")
    assert str(exc.value).startswith("flows.0.workload.sizes: ") and message in str(exc.value)


def test_draws_interpolate_between_the_points_around_a_uniform_number():
    sizes = workload.parse_sizes(SMALL, "k")
    rng = random.Random(3)
    draws = [sizes.draw(rng) for _ in range(20000)]
    assert min(draws) == 1000 and max(draws) <= 111000
    assert sum(d == 1000 for d in draws) / len(draws) == pytest.approx(0.5, abs=0.02)
    assert sum(d <= 6000 for d in draws) / len(draws) == pytest.approx(0.7, abs=0.02)  # halfway to 0.9
    assert sum(draws) / len(draws) == pytest.approx(sizes.mean, rel=0.05)


@pytest.mark.parametrize("text, mean", [("fixed 1MB", 1e6), ("lognormal 10KB 1", 1e4 * 2.718281828 ** 0.5),
                                        ("pareto 10KB 2", 2e4)])
def test_named_distributions_and_their_means(text, mean):
    sizes = workload.parse_sizes(text, "k")
    assert sizes.mean == pytest.approx(mean)
    rng = random.Random(1)
    draws = [sizes.draw(rng) for _ in range(40000)]
    assert sum(draws) / len(draws) == pytest.approx(mean, rel=0.1)


@pytest.mark.parametrize("text, message", [
    ("fixed", "fixed takes 1 value"), ("fixed 1000", "needs a unit"), ("lognormal 10KB 9", "SIGMA"),
    ("pareto 10KB 1", "above 1"), ("fixd 1MB", "did you mean fixed?"), ("1MB", "is not a distribution"),
    (5, "expected path of a CDF file"), ("no/such.cdf", "cannot read"),
])
def test_size_errors_name_the_key(text, message):
    with pytest.raises(SpecError) as exc:
        workload.parse_sizes(text, "flows.1.workload.sizes")
    assert str(exc.value).startswith("flows.1.workload.sizes: ") and message in str(exc.value)


# ---------------------------------------------------------------- arrivals and the schedule


def wl(**raw) -> workload.Workload:
    return workload.parse({"sizes": "fixed 100KB", "duration": "1000s", **raw}, "w")


def test_poisson_arrivals_at_a_rate():
    times = [t for t, _ in workload.flows(wl(rate="5/s"), 0, 10e6)]
    assert len(times) == pytest.approx(5000, rel=0.05)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert sum(gaps) / len(gaps) == pytest.approx(0.2, rel=0.05)
    assert sum(g > 0.4 for g in gaps) / len(gaps) == pytest.approx(2.718281828 ** -2, abs=0.02)  # exponential


def test_a_load_gives_the_rate_that_fills_that_share_of_the_link():
    w = wl(load="40%")
    assert w.arrival_rate(10e6) == pytest.approx(0.4 * 10e6 / (8 * 100e3))  # 5 flows/s
    assert len(workload.flows(w, 0, 10e6)) == pytest.approx(5000, rel=0.05)


def test_the_schedule_is_the_seed_s_and_each_group_draws_its_own():
    w = wl(rate="3/s", sizes=SMALL, seed=7)
    assert workload.flows(w, 0, 10e6) == workload.flows(w, 0, 10e6)
    assert workload.flows(w, 0, 10e6) != workload.flows(w, 1, 10e6)
    assert workload.flows(w, 0, 10e6) != workload.flows(wl(rate="3/s", sizes=SMALL, seed=8), 0, 10e6)
    assert all(0 < t < 1000 for t, _ in workload.flows(w, 0, 10e6))


def test_schedule_doc_ports_in_the_lossy_block_and_the_deadline():
    doc = workload.schedule_doc(wl(rate="2/s", duration="10s"), 1, "pop", "cubic", "10.0.3.2", 20e6, 0.01,
                                2.0, 15.0, (24576, 4096), port_serial=4094)
    assert doc["dst"] == "10.0.3.2" and doc["port"] == workload.SINK_PORT and doc["deadline"] == 27.0
    rows = doc["flows"]
    assert rows[0]["id"] == "g2-1" and {r["cc"] for r in rows} == {"cubic"} and {r["class"] for r in rows} == {"pop"}
    assert [r["cport"] for r in rows[:3]] == [28670, 28671, 24576]  # wraps inside the block
    assert all(2.0 <= r["at"] < 12.0 for r in rows)


def test_sequential_flows_one_after_another_with_a_deadline_for_all():
    w = workload.parse({"arrivals": "sequential", "sizes": "fixed 1MB", "count": 3, "gap": "2s"}, "w")
    planned = workload.flows(w, 0, 10e6)
    assert planned == [(0.0, 1_000_000)] * 3
    doc = workload.schedule_doc(w, 0, "g1", "bbr", "10.0.2.2", 10e6, 0.04, 0.0, 15.0, None)
    assert doc["sequential"] and doc["gap"] == 2.0 and "cport" not in doc["flows"][0]
    assert doc["deadline"] == pytest.approx(15 + 3 * (2 + 4 * (0.8 + 0.12) + 5))


@pytest.mark.parametrize("raw, message", [
    ({"duration": "10s", "rate": "2/s"}, "w.sizes: required"),
    ({"sizes": "fixed 1KB", "duration": "10s"}, "w: give exactly one of rate"),
    ({"sizes": "fixed 1KB", "duration": "10s", "rate": "2/s", "load": "10%"}, "w: give exactly one of rate"),
    ({"sizes": "fixed 1KB", "rate": "2/s"}, "w.duration: required"),
    ({"sizes": "fixed 1KB", "duration": "10s", "rate": 2}, "w.rate: expected flows per second like 20/s"),
    ({"sizes": "fixed 1KB", "duration": "10s", "load": "120%"}, "w.load"),
    ({"sizes": "fixed 1KB", "duration": "10s", "load": 0.3}, "w.load"),
    ({"sizes": "fixed 1KB", "duration": "10s", "rate": "2/s", "count": 3}, "w.count: only with arrivals: sequential"),
    ({"sizes": "fixed 1KB", "arrivals": "sequential", "count": 0}, "w.count"),
    ({"sizes": "fixed 1KB", "arrivals": "sequential", "count": 2, "rate": "1/s"}, "w.rate: only with arrivals: poisson"),
    ({"sizes": "fixed 1KB", "arrivals": "burst"}, "w.arrivals"),
    ({"sizes": "fixed 1KB", "duration": "10s", "rate": "2/s", "seed": "x"}, "w.seed"),
    ({"sizes": "fixed 1KB", "duration": "10s", "rate": "2/s", "reseed": "yes"}, "w.reseed: expected true or false"),
    ({"sizes": "fixed 1KB", "duration": "10s", "rate": "2/s", "sise": 1}, "w.sise"),
])
def test_workload_errors_name_their_key(raw, message):
    with pytest.raises(SpecError) as exc:
        workload.parse(raw, "w")
    assert str(exc.value).startswith(message)


# ---------------------------------------------------------------- the spec and the plan

LINK = {"rate": "20Mbit", "rtt": "50ms", "buffer": "2bdp"}
CLIENT = {"class": "client", "rtt": "50ms", "loss": "0.05%",
          "workload": {"load": "30%", "sizes": SMALL, "duration": "60s", "seed": 1}}
POP = {"class": "pop-to-pop", "rtt": "10ms", "workload": {"rate": "2/s", "sizes": "fixed 1MB", "duration": "60s"}}


def mix(**top) -> spec.Experiment:
    return spec.build({"link": dict(LINK), "cc": ["bbr", "cubic"], "flows": [dict(CLIENT), dict(POP)], **top})


def test_one_cc_axis_for_every_group_that_names_none():
    exp = mix()
    assert exp.axes == {"cc": ["bbr", "cubic"]}
    assert [[g.cc for g in p.flows] for p in exp.points] == [["bbr", "bbr"], ["cubic", "cubic"]]
    assert spec.build(exp.raw, ["cc=cubic"]).axes == {}


def test_the_top_level_cc_is_part_of_what_a_run_measures():
    assert mix().identity != mix(cc=["bbr"]).identity


def test_a_workload_group_in_the_spec():
    group = mix().points[0].flows[0]
    assert group.name == "client" and group.loss == pytest.approx(0.0005) and group.rtt == 0.05
    assert group.workload.load == 0.3 and group.workload.duration == 60 and group.count == 1
    assert mix().points[0].duration == 60


@pytest.mark.parametrize("changes, message", [
    ({"flows.0.count": 3}, "flows.0.count: not with a workload"),
    ({"flows.0.duration": "10s"}, "flows.0.duration: not with a workload"),
    ({"flows.0.loss": 0.5}, "flows.0.loss: 0.5 needs a unit"),
    ({"flows.0.class": "a b"}, "flows.0.class: expected a name"),
    ({"flows.1.workload.rate": "fast"}, "flows.1.workload.rate: expected flows per second"),
    ({"cc": "BBR!"}, "cc: expected a congestion control name"),
])
def test_spec_errors_of_short_flows_name_the_key(changes, message):
    groups = [dict(CLIENT, workload=dict(CLIENT["workload"])), dict(POP, workload=dict(POP["workload"]))]
    raw = {"link": dict(LINK), "cc": "bbr", "flows": groups}
    for path, value in changes.items():
        spec.set_path(raw, path, value)
    with pytest.raises(SpecError) as exc:
        spec.build(raw)
    assert str(exc.value).startswith(message)


def test_a_workload_axis_sweeps():
    downloads = {"arrivals": "sequential", "count": 2, "sizes": ["fixed 1MB", "fixed 20MB"]}
    raw = {"link": dict(LINK), "flows": [{"cc": "bbr", "workload": downloads}]}
    exp = spec.build(raw)
    assert exp.axes == {"sizes": ["fixed 1MB", "fixed 20MB"]}
    assert [p.flows[0].workload.sizes.mean for p in exp.points] == [1e6, 20e6]


def test_the_plan_gives_each_short_flow_class_one_sender_and_its_own_lossy_delay_line():
    plan = topo.build_plan(mix().points[0])
    assert plan.flows == () and [h for h, _ in plan.hosts] == ["snd1", "snd2", "r1", "r2", "rcv1", "rcv2"]
    client, pop = plan.workloads
    assert (client.cls, client.sender, client.receiver, client.cc, client.rtt) == ("client", "snd1", "rcv1", "bbr", 0.05)
    assert (pop.cls, pop.sender, pop.port, pop.loss) == ("pop-to-pop", "snd2", workload.SINK_PORT, 0.0)
    lossy = [a for i in plan.intfs() if i.name == "r2-eth1" for a in i.tc]
    clean = [a for i in plan.intfs() if i.name == "r2-eth2" for a in i.tc]
    assert any("loss" in argv and "0.05%" in argv for argv in lossy)
    assert not any("loss" in argv for argv in clean)
    assert plan.groups == [(0, "snd1", client.dst), (1, "snd2", pop.dst)]
    assert plan.traffic_hosts() == {"snd1", "snd2", "rcv1", "rcv2"}
    text = plan_text.describe(plan)
    assert "short flows" in text and "client (group 1)" in text


def test_reseed_gives_each_repetition_its_own_flows_and_both_ccs_of_one_repetition_the_same():
    def schedules(reseed: bool) -> dict[tuple[str, int], list]:
        raw = {"link": dict(LINK), "cc": ["bbr", "cubic"], "repeat": 3,
               "flows": [dict(CLIENT, workload=dict(CLIENT["workload"], seed=5, reseed=reseed))]}
        out = {}
        for p in spec.build(raw).points:
            w = topo.build_plan(p).workloads[0]
            out[(p.flows[0].cc, p.repetition)] = (w.workload.seed, workload.flows(w.workload, w.group, 20e6))
        return out

    fixed, varied = schedules(False), schedules(True)
    assert {seed for seed, _ in fixed.values()} == {5}
    assert len({str(f) for _, f in fixed.values()}) == 1
    assert [varied[("bbr", r)][0] for r in (1, 2, 3)] == [5, 6, 7]
    assert all(varied[("bbr", r)] == varied[("cubic", r)] for r in (1, 2, 3))
    assert varied[("bbr", 1)][1] != varied[("bbr", 2)][1] != varied[("bbr", 3)][1]
    assert varied[("bbr", 1)] == fixed[("bbr", 1)]  # repetition 1 is the plain seed's


def test_a_group_s_own_loss_for_iperf3_flows_too():
    raw = {"link": dict(LINK, loss="1%"), "flows": [{"cc": "bbr", "duration": "10s"},
                                                    {"cc": "bbr", "duration": "10s", "loss": "0%"}]}
    plan = topo.build_plan(spec.build(raw).points[0])
    assert any("loss" in a for i in plan.intfs() if i.name == "r2-eth1" for a in i.tc)
    assert not any("loss" in a for i in plan.intfs() if i.name == "r2-eth2" for a in i.tc)
