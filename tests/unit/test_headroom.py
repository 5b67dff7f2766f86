"""The headroom (runs/headroom.py): how many BBR flows each faithful rate carries before a
point turns CPU-bound, probed 2, 4, 8, ... at once until one is; what a run is told of it."""

import pytest

from bbrlab import cli
from bbrlab.output.reports import calibration_table
from bbrlab.runs import headroom, runner
from bbrlab.schema import experiment as spec

FIDELITY = headroom.EXPERIMENT


def points(*sets: str) -> list[spec.Point]:
    return list(spec.load(FIDELITY, ["cc=bbr", *sets], quick=True).points)


def test_the_counts_double_up_to_the_most_asked_for():
    assert headroom.counts(16) == [2, 4, 8, 16]
    assert headroom.counts(6) == [2, 4, 6] and headroom.counts(2) == [2] and headroom.counts(0) == []


LIMIT = 100e6  # a fake probe is CPU-bound where flows x rate reach it


class Run:
    def __init__(self, exp, number):
        self.path, self.exp = f"/r/{number}", exp

    def point_records(self):
        (p,) = self.exp.points
        n = sum(g.count for g in p.flows)
        bound = n * p.link.rate >= LIMIT
        held = n == 2 and p.link.rate == 50e6
        busy = round(min(0.99, n * p.link.rate / 1e8), 3)
        return [{"metrics": {"cpu_bound": bound, "sender_short": held, "cpu_busy_mean": busy,
                             "cpu_core_busy_max": 0.5, "link_busy": 0.99}}]


def calibration(rates=(10, 50, 100), single_bound=()):
    return {"key": "k1", "file": "", "rates": [{"rate_mbps": r, "faithful": r != 100} for r in rates],
            "points": [{"link": {"rate": r * 1e6}, "flows": [{"cc": "bbr", "count": 1}],
                        "metrics": {"cpu_bound": r in single_bound}} for r in rates]}


@pytest.fixture
def probed(monkeypatch):
    """runner.run_experiment faked: a point is CPU-bound when flows x rate reach 100 Mbit/s."""
    made = []

    def run_experiment(exp, root, **kwargs):
        (p,) = exp.points
        made.append((p.link.rate / 1e6, sum(g.count for g in p.flows), {g.cc for g in p.flows},
                     p.sampling.link_pcap, p.duration))
        return Run(exp, len(made))

    monkeypatch.setattr(runner, "run_experiment", run_experiment)
    return made


def test_each_faithful_rate_is_probed_until_a_point_turns_cpu_bound(probed, tmp_path):
    head = headroom.measure(tmp_path, calibration())
    # 10 Mbit/s: 2, 4, 8 carried, 16 bound; 50: 2 bound; 100 Mbit/s is not faithful: not probed
    assert [(rate, n) for rate, n, *_ in probed] == [(10, 2), (10, 4), (10, 8), (10, 16), (50, 2)]
    assert all(ccs == {"bbr"} and not pcap and duration == 12 for _, _, ccs, pcap, duration in probed)
    assert head["rates"]["10"]["carries"] == 8 and head["rates"]["10"]["bound_at"] == 16
    assert head["rates"]["50"]["carries"] == 1 and head["rates"]["50"]["bound_at"] == 2
    assert head["rates"]["10"]["why"] == ["CPU-bound"]
    assert head["rates"]["50"]["why"] == ["CPU-bound", "senders held back"]
    assert "100" not in head["rates"] and head["cc"] == "bbr"
    assert [p["flows"] for p in head["rates"]["10"]["probes"]] == [2, 4, 8, 16]


def test_a_rate_whose_one_flow_was_cpu_bound_carries_none_and_none_bound_says_so(probed, tmp_path):
    head = headroom.measure(tmp_path, calibration((10, 50), single_bound=(50,)), up_to=4)
    assert head["rates"]["50"] == {"carries": 0, "probed_up_to": 4, "bound_at": 1, "probes": [], "why": ["CPU-bound"]}
    assert head["rates"]["10"]["carries"] == 4 and head["rates"]["10"]["bound_at"] is None
    lines = calibration_table._headroom(head)
    assert "10 Mbit/s: 4 or more (none set aside)" in lines[1] and "with 2, 4 flows: 0.20, 0.40" in lines[1]
    assert "50 Mbit/s: 0 (1: CPU-bound)" in lines[2]


HEAD = {"cc": "bbr", "profile": "quick", "rates": {
    "10": {"carries": 8, "bound_at": 16, "why": ["CPU-bound"], "probes": [{"flows": 16, "cpu_busy_mean": 0.93}]},
    "50": {"carries": 2, "bound_at": 4, "why": ["CPU-bound"], "probes": [{"flows": 4, "cpu_busy_mean": 0.95}]},
    "100": {"carries": 16, "bound_at": None, "why": [], "probes": []}}}


def test_points_beyond_the_headroom_are_named_once_per_flow_count_and_rate():
    cal = {"key": "k1", "headroom": HEAD}
    assert headroom.warnings(cal, points("count=4", "rate=10Mbit")) == []
    at20, at50 = headroom.warnings(cal, points("count=4", "rate=[20Mbit,50Mbit]"))  # 20: judged by 50's probes
    assert at20.startswith("warning: 1 point(s) with 4 flows at 20 Mbit/s exceed") and "flow(s) at 50 Mbit/s" in at20
    assert at50.startswith("warning: 1 point(s) with 4 flows at 50 Mbit/s exceed")
    (line,) = headroom.warnings(cal, points("count=4", "rate=50Mbit", "rtt=[10ms,20ms]"))
    assert "2 point(s) with 4 flows at 50 Mbit/s" in line
    assert "2 bbr flow(s) at 50 Mbit/s (4: CPU-bound, CPUs 0.95 busy; calibration k1)" in line
    assert headroom.warnings(cal, points("count=32", "rate=100Mbit")) == []  # none bound up to 16: not claimed
    assert headroom.warnings(cal, points("count=32", "rate=200Mbit")) == []  # above the probes: the gate speaks
    assert headroom.warnings(None, points("count=32")) == []  # no calibration: nothing to say


def test_a_calibration_without_headroom_says_how_to_measure_it():
    (line,) = headroom.told({"key": "k1"}, points("count=2"))
    assert "has not measured" in line and "figure5.sh calibrate" in line
    assert headroom.told({"key": "k1"}, points()) == []  # one flow: nothing to carry
    assert headroom.warnings({"key": "k1"}, points("count=2")) == []  # a run is not told again and again
    assert headroom.told({"key": "k1", "headroom": HEAD}, points("count=4", "rate=50Mbit"))[0].startswith("warning")


@pytest.mark.parametrize("value", ["1", "-2", "many"])
def test_a_bad_most_flows_is_one_line_and_exit_2(value, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["calibrate", "--headroom", value])
    assert exc.value.code == 2
    assert "--headroom: " in capsys.readouterr().err.splitlines()[-1]
