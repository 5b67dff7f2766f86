"""Mahimahi traces replayed at the bottleneck: reading, synthesis, the rate schedule, the
spec keys and the Plan, the executor's timing (fake clock and pipe, no tc), and the
metrics of a trace point. Every trace here is synthetic and made by the test itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from bbrlab import cli
from bbrlab.emulation import plan_text, schedule, topo
from bbrlab.schema import experiment as spec, traces
from bbrlab.analysis import trace_metrics
from bbrlab.errors import SpecError, TestbedError

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def write_trace(tmp_path, times, name="link.trace"):
    return traces.write(tmp_path / name, list(times))


# ---------------------------------------------------------------- reading


def test_a_trace_repeats_from_its_last_line_and_repeated_lines_are_more_opportunities(tmp_path):
    trace = traces.load(write_trace(tmp_path, [1, 1, 3, 4]))
    assert (trace.period_ms, trace.opportunities) == (4, 4)
    assert trace.average_bps == pytest.approx(4 * 1500 * 8 / 0.004)  # 12 Mbit/s
    assert traces.parse("1\n").average_bps == pytest.approx(12e6)  # Mahimahi's README: "1" is 12 Mbit/s


@pytest.mark.parametrize("text, says", [
    ("", "empty trace"),
    ("\n\n", "empty trace"),
    ("0\n0\n", "lasts 0 ms"),
    ("1\n2\nx3\n", ":3: 'x3' is not a whole number"),
    ("1\n-2\n", ":2: '-2' is not a whole number"),
    ("1.5\n", ":1: '1.5'"),
    ("5\n7\n6\n", ":3: 6 comes before 7"),
])
def test_a_malformed_trace_is_one_error_naming_the_file_and_line(tmp_path, text, says):
    path = tmp_path / "bad.trace"
    path.write_text(text)
    with pytest.raises(traces.TraceError) as err:
        traces.load(path)
    assert str(path) in str(err.value) and says in str(err.value)


def test_a_missing_trace_names_the_path(tmp_path):
    with pytest.raises(traces.TraceError, match="no such trace file"):
        traces.load(tmp_path / "nope.up")


def test_trace_paths_expand_the_traces_variable_and_are_taken_from_the_repository(tmp_path):
    env = {"BBRLAB_TRACES": str(tmp_path)}
    assert traces.resolve("$BBRLAB_TRACES/a.up", "link.trace", env) == tmp_path / "a.up"
    assert traces.resolve("${BBRLAB_TRACES}/a.up", "link.trace", env) == tmp_path / "a.up"
    assert traces.resolve("$BBRLAB_TRACES/a.up", "k", {}) == traces.REPO / "data" / "traces" / "a.up"  # datasets.py
    assert traces.resolve("x/a.up", "k", {}) == traces.REPO / "x" / "a.up"
    with pytest.raises(SpecError, match=r"link.trace: .*\$NOPE, which is not set"):
        traces.resolve("$NOPE/a.up", "link.trace", {})


# ---------------------------------------------------------------- schedule


def test_the_rate_over_each_interval_is_its_opportunities_times_1500_bytes(tmp_path):
    # 10 ms: 3 opportunities in [0, 10), 1 in [10, 20), 2 in [20, 30) (the last line is 30:
    # it wraps to the start of the next pass, into the first interval)
    trace = traces.parse("1\n2\n15\n22\n25\n30\n")
    s = traces.schedule(trace, 0.010)
    assert s.times == (0.0, 0.01, 0.02) and s.period == 0.03
    assert [round(r) for r in s.rates] == [3 * 12000 / 0.01, 1 * 12000 / 0.01, 2 * 12000 / 0.01]
    assert s.average == pytest.approx(trace.average_bps)


def test_empty_intervals_share_the_opportunities_of_the_one_that_ends_them():
    # nothing in [10, 30): those 20 ms and [30, 40) form one 30 ms entry of 3 opportunities
    trace = traces.parse("\n".join(["5"] * 2 + ["35"] * 3 + ["40"]) + "\n")
    s = traces.schedule(trace, 0.010)
    assert s.times == (0.0, 0.01) and s.rates[1] == pytest.approx(3 * 12000 / 0.03)
    assert min(s.rates) > 0
    assert s.average == pytest.approx(trace.average_bps)  # the average is kept exactly


def test_an_outage_over_the_end_of_a_pass_wraps_into_the_next():
    # opportunities only in [20, 30); the last line (60) wraps into [0, 10): so the run of
    # empty intervals [30, 60) ends at the interval [0, 10) of the next pass
    trace = traces.parse("25\n25\n60\n")
    s = traces.schedule(trace, 0.010)
    assert s.times[0] == 0.0 and s.rates[0] == s.rates[-1]  # the wrapping entry, on both sides
    assert s.average == pytest.approx(trace.average_bps)
    assert s.capacity_bits(0, 0.06) == pytest.approx(3 * 12000)


@pytest.mark.parametrize("interval", [0.001, 0.01, 0.1])
def test_every_interval_keeps_the_average_and_a_scaled_schedule_has_the_asked_average(interval):
    times = traces.synthesize("walk", 3.0, 10e6, seed=7)
    trace = traces.parse("".join(f"{t}\n" for t in times))
    s = traces.schedule(trace, interval)
    assert s.average == pytest.approx(trace.average_bps, rel=1e-9)
    assert s.capacity_bits(0.5, 0.5 + 3 * trace.seconds) == pytest.approx(3 * s.period_bits)
    scaled = traces.schedule(trace, interval, 5e6)
    assert scaled.average == pytest.approx(5e6) and scaled.scale == pytest.approx(5e6 / trace.average_bps)


def test_a_schedule_needs_a_whole_number_of_milliseconds():
    with pytest.raises(ValueError, match="whole number of ms"):
        traces.schedule(traces.parse("1\n"), 0.0025)


# ---------------------------------------------------------------- synthesis


def test_synthetic_traces_have_their_rate_and_length_and_are_seeded():
    const = traces.parse("".join(f"{t}\n" for t in traces.synthesize("constant", 2.0, 12e6)))
    assert const.period_ms == 2000 and const.average_bps == pytest.approx(12e6)
    square = traces.synthesize("square", 4.0, 8e6, low_bps=2e6, period=2.0)
    first, second = sum(t <= 1000 for t in square), sum(1000 < t <= 2000 for t in square)
    assert first == pytest.approx(4 * second, rel=0.02)  # 8 then 2 Mbit/s
    assert square[-1] == 4000
    assert traces.synthesize("walk", 2.0, 10e6, seed=3) == traces.synthesize("walk", 2.0, 10e6, seed=3)
    assert traces.synthesize("walk", 2.0, 10e6, seed=3) != traces.synthesize("walk", 2.0, 10e6, seed=4)
    with pytest.raises(ValueError, match="unknown trace kind"):
        traces.synthesize("sine", 1.0, 1e6)


def test_bbrlab_trace_writes_and_summarizes_and_names_a_bad_input_in_one_line(tmp_path, capsys):
    out = tmp_path / "sq.up"
    assert cli.main(["trace", "synth", "square", str(out), "--seconds", "4s", "--rate", "8Mbit", "--low", "2Mbit"]) == 0
    assert "average 5" in capsys.readouterr().out and out.is_file()
    assert cli.main(["trace", "show", str(out)]) == 0
    assert "every  10ms" in capsys.readouterr().out
    for argv, said in ((["show", str(tmp_path / "none")], "no such trace file"),
                       (["synth", "walk", str(tmp_path / "w.up"), "--rate", "fast"], "--rate"),
                       (["synth", "constant", str(tmp_path / "z.up"), "--seconds", "0s"], "positive length"),
                       (["synth", "constant", str(tmp_path)], f"cannot write {tmp_path} (Is a directory)"),
                       (["synth", "constant", str(tmp_path / "no" / "such" / "dir.up")], "cannot write")):
        assert cli.main(["trace", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1 and "Traceback" not in err, (argv, err)


# ---------------------------------------------------------------- spec and plan


def trace_spec(path, **link):
    return {"link": {"trace": str(path), "rtt": "100ms", "buffer": "2bdp", **link},
            "flows": [{"cc": "bbr", "duration": "10s"}]}


def test_link_rate_is_the_traces_average_unless_given_then_the_trace_is_scaled_to_it(tmp_path):
    path = write_trace(tmp_path, traces.synthesize("constant", 1.0, 6e6))
    (p,) = spec.build(trace_spec(path)).points
    assert p.link.rate == pytest.approx(6e6) and p.link.trace == str(path) and p.link.trace_interval == 0.01
    plan = topo.build_plan(p)
    assert plan.schedule.schedule.average == pytest.approx(6e6)
    (p,) = spec.build(trace_spec(path, rate="3Mbit", trace_interval="100ms")).points
    plan = topo.build_plan(p)
    assert plan.schedule.schedule.average == pytest.approx(3e6) and plan.schedule.schedule.interval == 0.1
    # the buffer in BDPs is of the average rate
    assert p.link.buffer_packets == round(2 * 3e6 * 0.1 / 8 / 1500)


@pytest.mark.parametrize("link, says", [
    ({"trace": "/nonexistent/x.up"}, "link.trace: /nonexistent/x.up: no such trace file"),
    ({"trace_interval": "2.5ms"}, "link.trace_interval: expected a whole number of ms"),
    ({"trace_interval": "2s"}, "link.trace_interval"),
    ({"changes": [{"at": "1s", "rate": "1Mbit"}]}, "link.changes: cannot be combined with link.trace"),
])
def test_trace_keys_are_checked_at_load(tmp_path, link, says):
    path = write_trace(tmp_path, [1, 2, 3])
    with pytest.raises(SpecError, match=says.replace(".", r"\.")):
        spec.build(trace_spec(path, **link))


def test_a_malformed_trace_is_named_with_its_key(tmp_path):
    bad = tmp_path / "bad.up"
    bad.write_text("1\nten\n")
    with pytest.raises(SpecError, match=r"^link\.trace: .*bad\.up:2: 'ten'"):
        spec.build(trace_spec(bad))


def test_trace_interval_without_a_trace_is_refused():
    raw = {"link": {"rate": "1Mbit", "rtt": "10ms", "buffer": "10pkt", "trace_interval": "10ms"},
           "flows": [{"cc": "bbr", "duration": "1s"}]}
    with pytest.raises(SpecError, match="link.trace_interval: only with link.trace"):
        spec.build(raw)


def test_the_plan_carries_one_batch_line_per_update_built_by_the_shaper(tmp_path):
    path = write_trace(tmp_path, traces.synthesize("square", 2.0, 8e6, low_bps=2e6, period=1.0))
    (p,) = spec.build(trace_spec(path)).points
    plan = topo.build_plan(p)
    rs = plan.schedule
    assert rs.host == "r1" and len(rs.lines) == len(rs.schedule.times) == 200
    first = rs.lines[0].split()
    # a trace is shaped by htb unless the file says otherwise: its class's rate is changed
    assert p.link.shaper == "htb" and first[:3] == ["class", "change", "dev"]
    assert first[first.index("rate") + 1] == f"{int(rs.schedule.rates[0])}bit"
    assert ["tc"] + first == list(shapers_change(p, rs.schedule.rates[0]))
    assert plan.summary["trace"]["updates_per_pass"] == 200
    assert "200 updates per pass" in plan_text.describe(plan) and "tc -batch -" in plan_text.describe(plan)


def shapers_change(p, rate):
    from bbrlab.emulation import shapers

    return shapers.rate_change("r1-eth0", p.link, rate)


def test_dry_run_prints_the_schedules_summary(tmp_path, capsys):
    path = write_trace(tmp_path, traces.synthesize("constant", 1.0, 6e6))
    exp = tmp_path / "t.yaml"
    exp.write_text(f"link: {{trace: {path}, rtt: 100ms, buffer: 2bdp}}\nflows: [{{cc: bbr, duration: 5s}}]\n")
    assert cli.main(["run", str(exp), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"link schedule: trace {path}, 6 Mbit/s on average, 1 s then repeats" in out


# ---------------------------------------------------------------- the executor


class FakeClock:
    """A monotonic clock that moves only when the feeder waits (plus planned lateness)."""

    def __init__(self, start=100.0, late=(), stop_after=10):
        self.now, self.late, self.writes, self.stop_after = start, list(late), [], stop_after

    def __call__(self):
        return self.now

    def wait(self, seconds):
        self.now += seconds + (self.late.pop(0) if self.late else 0.0)
        return len(self.writes) >= self.stop_after

    def write(self, line):
        self.writes.append((self.now, line))


def test_updates_are_due_at_start_plus_k_intervals_and_wrap_at_the_end_of_the_trace():
    clock = FakeClock(stop_after=7)
    feeder = schedule.Feeder((0.0, 0.01, 0.02), 0.03, ("a", "b", "c"), clock.write, clock.wait, clock)
    feeder.run(start=100.0)
    assert [line for _, line in clock.writes] == list("abcabca")
    assert [round(t - 100.0, 6) for t, _ in clock.writes] == [0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06]


def test_lateness_does_not_accumulate_and_is_recorded():
    # every wake-up 3 ms late: a sleep(interval) loop would be 3 ms later each time; here
    # every update is due at its own deadline and written 3 ms after it
    clock = FakeClock(late=[0.003] * 50, stop_after=20)
    feeder = schedule.Feeder((0.0, 0.01), 0.02, ("a", "b"), clock.write, clock.wait, clock)
    clock.now = 99.99  # the feeder starts before its first deadline
    feeder.run(start=100.0)
    dues = [d for _, d, _, _ in feeder.records]
    assert dues == pytest.approx([0.01 * k for k in range(20)])
    assert [w - d for _, d, w, _ in feeder.records] == pytest.approx([0.003] * 20)


def test_a_late_wake_up_applies_only_the_newest_due_update_and_counts_the_skipped():
    clock = FakeClock(late=[0.0, 0.035], stop_after=4)
    feeder = schedule.Feeder((0.0, 0.01, 0.02, 0.03), 0.04, ("a", "b", "c", "d"), clock.write, clock.wait, clock)
    clock.now = 99.995
    feeder.run(start=100.0)
    # a at 0; the wake-up for b comes at 0.045: b, c, d and the next a (0.04) are due
    assert [(k, s) for k, _, _, s in feeder.records] == [(0, 0), (4, 3), (5, 0), (6, 0)]
    assert [line for _, line in clock.writes] == ["a", "a", "b", "c"]
    stats = trace_metrics.lateness(feeder.records)
    assert stats["schedule_updates"] == 4 and stats["schedule_skipped"] == 3
    assert stats["schedule_late_max_ms"] == pytest.approx(5.0)


def test_a_link_is_off_its_schedule_when_a_change_comes_late_or_a_trace_skips_one_update_in_a_hundred():
    def kept(events, **counts):
        out = dict(counts)
        trace_metrics.kept(events, out)
        return out

    fired = [{"planned": 10.0, "issued": 10.002, "at": 10.3}, {"planned": 20.0, "issued": 20.001, "at": 20.2}]
    assert kept(fired) == {"change_late_max_s": 0.3, "off_schedule": False}
    fired[1]["at"] = 20.68  # a busy guest: the second change in force 0.68 s late
    assert kept(fired) == {"change_late_max_s": 0.68, "off_schedule": True}
    assert kept(None) == {"off_schedule": False}  # a record without events: nothing to judge
    assert kept([], schedule_updates=297, schedule_skipped=2)["off_schedule"] is False
    assert kept([], schedule_updates=297, schedule_skipped=3)["off_schedule"] is True
    assert kept([], schedule_updates=0)["off_schedule"] is False


def test_the_feeder_stops_when_asked_while_waiting():
    clock = FakeClock(stop_after=0)
    feeder = schedule.Feeder((0.0, 0.5), 1.0, ("a", "b"), clock.write, lambda s: True, clock)
    clock.now = 99.0
    feeder.run(start=100.0)
    assert feeder.records == [] and clock.writes == []


class FakePipe:
    def __init__(self, fail_after=None):
        self.lines, self.closed, self.fail_after = [], False, fail_after

    def write(self, text):
        if self.fail_after is not None and len(self.lines) >= self.fail_after:
            raise BrokenPipeError
        self.lines.append(text)

    def flush(self):
        pass

    def close(self):
        self.closed = True


class FakeProc:
    def __init__(self, returncode=0, fail_after=None):
        self.stdin, self.returncode, self.argv = FakePipe(fail_after), returncode, None

    def wait(self, timeout=None):
        return self.returncode

    def kill(self):
        pass


class FakeTestbed:
    def __init__(self, proc):
        self.proc, self.invalidated, self.popened = proc, [], []

    def invalidate(self, host):
        self.invalidated.append(host)

    def node(self, name):
        testbed = self

        class Node:
            def popen(self, argv, **kwargs):
                testbed.popened.append((name, argv, kwargs.get("stdin")))
                testbed.proc.argv = argv
                return testbed.proc
        return Node()


def trace_plan(tmp_path, interval="10ms"):
    path = write_trace(tmp_path, traces.synthesize("square", 1.0, 8e6, low_bps=2e6, period=0.5))
    (p,) = spec.build(trace_spec(path, trace_interval=interval)).points
    return topo.build_plan(p)


def test_one_long_lived_tc_batch_in_the_router_gets_the_lines_and_is_stopped_for_sure(tmp_path):
    import time

    plan = trace_plan(tmp_path)
    proc = FakeProc()
    testbed = FakeTestbed(proc)
    runner = schedule.LinkSchedule(testbed, plan.schedule, tmp_path)
    runner.start(time.monotonic())
    time.sleep(0.08)
    runner.stop()
    runner.check()
    assert testbed.popened == [("r1", ["tc", "-batch", "-"], -1)]  # one process, fed through stdin
    assert testbed.invalidated == ["r1"]  # the next point sets r1's queueing up again
    assert proc.stdin.closed and len(proc.stdin.lines) >= 3
    assert proc.stdin.lines[0] == plan.schedule.lines[0] + "\n"
    records = trace_metrics.parse_log((tmp_path / schedule.LOG_NAME).read_text())
    assert records[0][0] == 0 and len(records) == len(proc.stdin.lines)
    first = (tmp_path / schedule.LOG_NAME).read_text().splitlines()[1].split()
    assert first[0] == "0" and float(first[4]) == pytest.approx(plan.schedule.schedule.rates[0], abs=1)


def test_a_tc_that_refuses_an_update_fails_the_point(tmp_path):
    import time

    plan = trace_plan(tmp_path)
    proc = FakeProc(returncode=1, fail_after=1)
    (tmp_path / schedule.ERR_NAME).write_text("")
    runner = schedule.LinkSchedule(FakeTestbed(proc), plan.schedule, tmp_path)
    runner.start(time.monotonic())
    time.sleep(0.05)
    runner.stop()
    with pytest.raises(TestbedError, match="link schedule's tc -batch stopped"):
        runner.check()


def test_without_a_trace_the_schedule_does_nothing(tmp_path):
    runner = schedule.LinkSchedule(FakeTestbed(FakeProc()), None, tmp_path)
    runner.start(0.0)
    runner.stop()
    runner.check()
    assert not (tmp_path / schedule.LOG_NAME).exists()


# ---------------------------------------------------------------- metrics


def test_the_link_is_judged_against_what_the_schedule_offered():
    trace = traces.parse("".join(f"{t}\n" for t in traces.synthesize("square", 2.0, 8e6, low_bps=2e6, period=1.0)))
    s = traces.schedule(trace, 0.01)
    # a link that sent 95% of what the schedule offered, sampled every 100 ms, with 125 KB
    # queued at every sample: more than the 100 KB the schedule offers in 100 ms at its peak
    counter = [(t / 10, int(0.95 * s.capacity_bits(0, t / 10) / 8), 125_000) for t in range(0, 61)]
    out = trace_metrics.delivered(s, counter, 1.0, 6.0)
    assert out["trace_mbps"] == pytest.approx(5.0, abs=0.01)
    assert out["trace_offered_mbps"] == pytest.approx(5.0, abs=0.01)  # whole cycles: the average
    assert out["link_delivered_mbps"] == pytest.approx(4.75, abs=0.01)
    assert out["trace_delivery"] == pytest.approx(0.95, abs=1e-3)
    assert out["trace_backlogged_delivery"] == pytest.approx(0.95, abs=1e-3)
    summary, offered = trace_metrics.summarize(s, "", counter, 1.0, 6.0, 6.0, 0.85)
    assert summary["link_delivery"] == pytest.approx(0.95, abs=1e-3) and not summary["link_short"]
    assert summary["link_busy"] == summary["trace_delivery"] and summary["schedule_updates"] == 0
    assert len(offered) == 60 and offered[0][1] == pytest.approx(8.0, rel=0.03) and offered[5][1] == pytest.approx(2.0, rel=0.03)
    # a few packets queued at every sample prove nothing (the queue may empty in between):
    # not judged, so a lossy CUBIC's point is not called an unfaithful link
    few = [(t, b, 3 * 1514) for t, b, _ in counter]
    assert trace_metrics.delivered(s, few, 1.0, 6.0)["trace_backlogged_delivery"] is None
    summary = trace_metrics.summarize(s, "", few, 1.0, 6.0, 6.0, 0.85)[0]
    assert summary["link_delivery"] is None and summary["link_short"] is False
    # where 50 KB are queued: judged in the 2 Mbit/s half-periods only (25 KB offered per 100 ms)
    half = [(t, b, 50_000) for t, b, _ in counter]
    assert trace_metrics.delivered(s, half, 1.0, 6.0)["trace_backlogged_s"] == pytest.approx(2.5, abs=0.3)


def test_a_bad_schedule_record_is_a_parse_error():
    from bbrlab.errors import ParseError

    with pytest.raises(ParseError, match="link-schedule.txt:2"):
        trace_metrics.parse_log("# k due written skipped\n1 2\n")


def test_a_feeder_that_fails_fails_the_point(tmp_path):
    import time

    class Exploding(FakeProc):
        def __init__(self):
            super().__init__()
            self.stdin.write = self.explode

        def explode(self, text):
            raise RuntimeError("no more")

    runner = schedule.LinkSchedule(FakeTestbed(Exploding()), trace_plan(tmp_path).schedule, tmp_path)
    runner.start(time.monotonic())
    time.sleep(0.05)
    runner.stop()
    with pytest.raises(TestbedError, match="the link schedule stopped: no more"):
        runner.check()


def test_a_runs_identity_follows_what_the_trace_holds_not_its_path(tmp_path):
    one = write_trace(tmp_path, traces.synthesize("constant", 1.0, 6e6), "one.up")
    same = write_trace(tmp_path, traces.synthesize("constant", 1.0, 6e6), "same.up")
    other = write_trace(tmp_path, traces.synthesize("constant", 1.0, 3e6), "other.up")
    ident = [spec.identity(trace_spec(p), "x") for p in (one, same, other)]
    assert ident[0] != ident[1]  # the path is part of the spec as written ...
    raw = trace_spec(one)
    before = spec.identity(raw, "x")
    one.write_text(other.read_text())  # ... and what the file holds too
    assert spec.identity(raw, "x") != before
    (p,) = spec.build(trace_spec(same)).points
    assert topo.build_plan(p).summary["trace"]["sha256"] == traces.load(same).digest


def test_a_real_point_analyzed_as_a_trace_is_judged_against_the_schedule(tmp_path):
    """The step experiment's captured BBR point (10, 20, then 10 Mbit/s for 10 s each) read
    as if a trace had set those rates: the same numbers, now from the schedule."""
    import json
    import shutil
    from pathlib import Path

    from bbrlab.analysis import analyze as analysis

    step = Path(__file__).resolve().parents[1] / "fixtures" / "step-bbr"
    folder = tmp_path / "point"
    shutil.copytree(step, folder)
    path = write_trace(tmp_path, traces.synthesize("square", 30.0, 10e6, low_bps=20e6, period=20.0))
    raw = {"link": {"trace": str(path), "rtt": "40ms", "buffer": "67pkt"}, "flows": [{"cc": "bbr", "duration": "30s"}]}
    (point,) = spec.build(raw).points
    timings = json.loads((step / "point.json").read_text())["timings"]
    series, m = analysis.analyze(point, topo.build_plan(point), folder, timings["t0"], timings["launches"],
                                 timings["end"])
    assert m["trace_mbps"] == pytest.approx(13.33, abs=0.01)
    assert m["schedule_updates"] == 0  # no record of the schedule in this capture
    # the link sent what the 10 -> 20 -> 10 schedule offered, less what it lost at 20 Mbit/s
    assert 0.85 < m["trace_delivery"] < 1.0 and m["link_busy"] == m["trace_delivery"]
    # BBR's queue never held a sampling interval's worth (the fixed-rate analysis of the same
    # capture does not judge it either): the link's fidelity is not judged from it
    assert m["link_delivery"] is None and m["link_short"] is False and m["link_delivery_by_rate"] == []
    during_20 = [v for t, v in series["link_rate"] if 11 <= t <= 19]
    assert during_20 and all(v == pytest.approx(20.0, rel=0.02) for v in during_20)


def test_a_trace_points_ideal_is_what_the_trace_offered_during_the_flows_not_its_files_average(tmp_path):
    """A trace whose first half is slow (10 Mbit/s for 30 s, then 40: 25 on average) under a
    30 s flow: the flow saw 10, and its goodput is judged against 10 x (1 - p)."""
    import json
    import shutil
    from pathlib import Path

    from bbrlab.analysis import analyze as analysis

    step = Path(__file__).resolve().parents[1] / "fixtures" / "step-bbr"
    folder = tmp_path / "point"
    shutil.copytree(step, folder)
    path = write_trace(tmp_path, traces.synthesize("square", 60.0, 10e6, low_bps=40e6, period=60.0))
    raw = {"link": {"trace": str(path), "rtt": "40ms", "buffer": "67pkt", "loss": "1%"},
           "flows": [{"cc": "bbr", "duration": "30s"}]}
    (point,) = spec.build(raw).points
    timings = json.loads((step / "point.json").read_text())["timings"]
    _, m = analysis.analyze(point, topo.build_plan(point), folder, timings["t0"], timings["launches"], timings["end"])
    assert m["trace_mbps"] == pytest.approx(25.0, abs=0.05)  # the file's average
    assert m["trace_offered_mbps"] == pytest.approx(10.0, abs=0.05)  # what the flow saw
    assert m["ideal_goodput_mbps"] == pytest.approx(m["trace_offered_mbps"] * 0.99)
    assert m["goodput_vs_ideal"] == pytest.approx(m["steady_goodput_mbps"] / m["ideal_goodput_mbps"], abs=1e-3)
    assert m["goodput_vs_ideal"] > 1.0  # the capture was a 10/20/10 link: more than the slow half offered


def test_a_title_names_the_trace_that_ran(tmp_path):
    one = write_trace(tmp_path, traces.synthesize("constant", 2.0, 8e6), name="Other-LTE.up")
    raw = {"title": "goodput over the trace {trace}", "link": {"trace": str(one), "rtt": "40ms", "buffer": "67pkt"},
           "flows": [{"cc": "bbr", "duration": "10s"}]}
    assert spec.build(raw).title == "goodput over the trace Other-LTE.up"
    two = write_trace(tmp_path, traces.synthesize("constant", 2.0, 4e6), name="Slow.up")
    swept = dict(raw, link=dict(raw["link"], trace=[str(one), str(two)]))
    assert spec.build(swept).title == "goodput over the trace Other-LTE.up and Slow.up"
    with pytest.raises(SpecError, match=r"title: names \{trace\} but no point replays a trace"):
        spec.build(dict(raw, link={"rate": "10Mbit", "rtt": "40ms", "buffer": "67pkt"}))
    # the shipped experiments say the trace they replay, not a fixed name
    cellular = spec.load(EXPERIMENTS / "cellular.yaml", [f"trace={one}"], quick=True)
    assert "Other-LTE.up" in cellular.title and "Verizon" not in cellular.title
