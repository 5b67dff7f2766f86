"""Calibration offline: the capture and timer parsers, the 100 ms peak, and the envelope."""

from __future__ import annotations

import struct

from pathlib import Path

import pytest
from bbrlab.runs import calibrate
from bbrlab.analysis import metrics, system_output
from bbrlab.errors import ParseError
from bbrlab.output.reports import calibration_table

FRAME = 1514


def pcap(frames: list[tuple[float, int]], nano: bool = False, big_endian: bool = False) -> bytes:
    """A classic pcap file with FRAMES ((epoch, wire length)), 64-byte snaps as tcpdump -s 64 writes."""
    order = ">" if big_endian else "<"
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, 64, 1)
    for t, wire in frames:
        sec = int(t)
        frac = round((t - sec) * (1e9 if nano else 1e6))
        out += struct.pack(order + "IIII", sec, frac, min(64, wire), wire) + b"\0" * min(64, wire)
    return out


def paced(rate_bps: float, seconds: float, t0: float = 1000.0) -> list[tuple[float, int]]:
    gap = FRAME * 8 / rate_bps
    return [(t0 + i * gap, FRAME) for i in range(int(seconds / gap))]


@pytest.mark.parametrize(("nano", "big"), [(False, False), (True, False), (False, True)])
def test_pcap_frames_keep_the_wire_length_and_time(nano, big):
    frames = [(1700000000.25, 1514), (1700000000.5, 66)]
    got = system_output.parse_pcap_frames(pcap(frames, nano, big))
    assert [n for _, n in got] == [1514, 66]
    assert got[0][0] == pytest.approx(1700000000.25, abs=1e-6) and got[1][0] == pytest.approx(1700000000.5, abs=1e-6)


def test_pcap_cut_off_mid_record_keeps_the_whole_records():
    data = pcap([(1.0, 1514), (2.0, 1514)])
    assert len(system_output.parse_pcap_frames(data[:-10])) == 1


@pytest.mark.parametrize("data", [b"", b"\x00" * 24, b"abcd" + b"\x00" * 30])
def test_pcap_not_a_capture(data):
    with pytest.raises(ParseError, match="^pcap:"):
        system_output.parse_pcap_frames(data)


def test_a_paced_link_never_peaks_above_its_rate():
    for rate in (10e6, 50e6, 100e6):
        assert metrics.peak_window_bps(paced(rate, 2.0)) / rate == pytest.approx(1.0, abs=0.013)
        assert metrics.peak_window_bps(paced(rate, 2.0)) <= rate * 1.0001


def test_a_clump_after_a_late_timer_reads_above_the_rate():
    """A 5 ms stall at 100 Mbit/s whose 41 frames leave at once: over the 100 ms that start
    there the link sent 5% more than its rate."""
    frames = paced(100e6, 1.0)
    gap = FRAME * 8 / 100e6
    stalled = [(t if t < 1000.5 else max(t, 1000.505), n) for t, n in frames]
    assert metrics.peak_window_bps(stalled) / 100e6 == pytest.approx(1.05, abs=0.005)
    assert gap * 41 == pytest.approx(0.005, abs=gap)


def test_peak_needs_a_whole_window():
    with pytest.raises(ValueError):
        metrics.peak_window_bps(paced(10e6, 0.05))
    with pytest.raises(ValueError):
        metrics.peak_window_bps(paced(10e6, 1.0), window=0)


CYCLICTEST = """\
# /dev/cpu_dma_latency set to 0us
000000 000000
000001 000000
000050 003000
000080 001900
000300 000090
002000 000010
# Total: 000005000
# Min Latencies: 00050
# Avg Latencies: 00071
# Max Latencies: 02345
# Histogram Overflows: 00000
"""


def test_cyclictest_histogram_and_summary():
    got = system_output.parse_cyclictest(CYCLICTEST)
    assert got == {"min_us": 50.0, "avg_us": 71.0, "p50_us": 50.0, "p99_us": 300.0, "max_us": 2345.0,
                   "samples": 5000}


def test_cyclictest_without_histogram_is_an_error():
    with pytest.raises(ParseError, match="^cyclictest:"):
        system_output.parse_cyclictest("T: 0 ( 1234) P:80 I:1000 C:   5000 Min:   50 Act:   60 Avg:   71 Max:  2345\n")


def record(rate: float, cc: str, count: int = 1, **mets) -> dict:
    return {"params": {"rate": f"{rate / 1e6:g}Mbit", "cc": cc}, "link": {"rate": rate},
            "flows": [{"cc": cc, "count": count}], "metrics": mets}


def test_envelope_ends_at_the_first_rate_that_misses_a_target():
    records = [
        record(10e6, "cubic", link_delivery=0.995, link_peak_beyond_pause=1.01, steady_link_efficiency=0.99,
               idle_rtt_error_ms=0.4),
        record(10e6, "bbr", link_peak_beyond_pause=1.02, bbr_bw_ratio=0.97, idle_rtt_error_ms=0.5),
        record(50e6, "cubic", link_delivery=0.99, link_peak_beyond_pause=1.02, steady_link_efficiency=0.97),
        record(50e6, "bbr", link_peak_beyond_pause=1.01, bbr_bw_ratio=1.02),
        record(100e6, "cubic", link_delivery=0.944, link_peak_beyond_pause=1.02, steady_link_efficiency=0.947),
        record(100e6, "bbr", link_peak_beyond_pause=1.04, bbr_bw_ratio=1.06),
    ]
    env = calibrate.envelope(records)
    assert [r["faithful"] for r in env["rates"]] == [True, True, False]
    assert env["faithful_up_to_bps"] == 50e6
    top = env["rates"][2]
    assert top["link_delivery"] == 0.944 and top["link_peak_beyond_pause"] == 1.04  # the worst point at each rate
    assert top["missed"] == ["cubic: link_delivery 0.944 < 0.98", "cubic: steady_link_efficiency 0.947 < 0.95",
                             "bbr: link_peak_beyond_pause 1.040 > 1.03", "bbr: bbr_bw_ratio 1.060 outside [0.861, 1.05]"]
    assert env["gate"] == {"rate_bps": 100e6, "failed": "; ".join(top["missed"])}
    assert env["idle_rtt_error_ms"] == 0.5


def test_bbr_starved_far_below_the_rate_is_not_faithful_though_cubic_fills_the_link():
    """With the host's CPUs busy elsewhere, BBR's estimate read 0.42 of 50 Mbit/s while one
    CUBIC flow still got 0.99 of the link: BBR's own pacing starved, the emulator is not to
    be trusted with BBR there."""
    env = calibrate.envelope([
        record(10e6, "cubic", link_delivery=1.0, link_peak_beyond_pause=0.96, steady_link_efficiency=0.999),
        record(10e6, "bbr", link_peak_beyond_pause=0.9, bbr_bw_ratio=1.009),
        record(50e6, "cubic", link_delivery=1.002, link_peak_beyond_pause=0.7, steady_link_efficiency=0.993),
        record(50e6, "bbr", link_peak_beyond_pause=0.6, bbr_bw_ratio=0.416)])
    assert env["faithful_up_to_bps"] == 10e6
    assert env["rates"][1]["missed"] == ["bbr: bbr_bw_ratio 0.416 outside [0.861, 1.05]"]
    assert env["rates"][1]["bbr_bw_ratio"] == 0.416


def test_only_cubic_points_judge_the_backlogged_link_and_the_payload_capacity():
    """BBR drains the buffer on purpose (its queue empties between samples, ProbeRTT dips
    its goodput): its delivery and efficiency say nothing about the link."""
    env = calibrate.envelope([record(100e6, "cubic", link_delivery=0.99, steady_link_efficiency=0.99,
                                     link_peak_beyond_pause=1.01),
                              record(100e6, "bbr", link_delivery=0.92, steady_link_efficiency=0.92, bbr_bw_ratio=1.0)])
    assert env["rates"][0]["faithful"] and env["rates"][0]["link_delivery"] == 0.99


def test_without_a_covered_sample_the_cubic_flows_goodput_bounds_the_delivery():
    env = calibrate.envelope([record(100e6, "cubic", steady_link_efficiency=0.998, link_peak_beyond_pause=1.0),
                              record(100e6, "bbr", bbr_bw_ratio=1.01)])
    (row,) = env["rates"]
    assert row["link_delivery"] == 0.998 and row["link_delivery_from"] == "CUBIC's goodput" and row["faithful"]
    env = calibrate.envelope([record(100e6, "cubic", steady_link_efficiency=0.96, link_peak_beyond_pause=1.0),
                              record(100e6, "bbr", bbr_bw_ratio=1.01)])
    assert env["rates"][0]["missed"] == ["cubic: link_delivery 0.960 < 0.98"]
    # under an AQM the same bound is CUBIC's back-off to a short queue, not the link's: not judged
    aqm_records = [record(50e6, "cubic", steady_link_efficiency=0.957, link_peak_beyond_pause=0.93,
                          queue_delay_p50_ms=3.6), record(50e6, "bbr", bbr_bw_ratio=1.014),
                   record(50e6, "cubic", 4, link_busy=0.997)]
    for rec in aqm_records:
        rec["link"].update(aqm="fq_codel", aqm_target_s=0.005)
    (row,) = calibrate.envelope(aqm_records)["rates"]
    assert row["faithful"] and row["link_delivery_from"] == "CUBIC's goodput (not judged under an AQM)"


def test_a_target_no_point_measured_is_not_met():
    env = calibrate.envelope([record(10e6, "cubic", link_delivery=0.99, steady_link_efficiency=0.99,
                                     link_peak_beyond_pause=1.0)])  # no BBR point: its estimate unknown
    assert not env["rates"][0]["faithful"] and env["rates"][0]["missed"] == ["bbr_bw_ratio not measured"]


def test_envelope_vouches_for_nothing_above_the_top_measured_rate():
    ok = {"link_delivery": 0.99, "steady_link_efficiency": 0.99, "link_peak_beyond_pause": 1.0}
    env = calibrate.envelope([record(10e6, "cubic", **ok), record(10e6, "bbr", bbr_bw_ratio=1.0),
                              record(100e6, "cubic", **ok), record(100e6, "bbr", bbr_bw_ratio=1.0)])
    assert env["faithful_up_to_bps"] == 100e6
    assert 100e6 < env["gate"]["rate_bps"] < 100.001e6 and "not calibrated above 100 Mbit/s" in env["gate"]["failed"]


def test_envelope_with_no_faithful_rate():
    env = calibrate.envelope([record(10e6, "cubic", link_delivery=0.5)])
    assert env["faithful_up_to_bps"] is None and env["gate"]["rate_bps"] == 10e6


def test_machine_key_is_stable_and_tells_machines_apart():
    a = {"hostname": "bbrlab", "kernel": "6.1.0-28-amd64", "cpus": 2, "virtualization": "qemu",
         "cpu_model": "QEMU Virtual CPU", "memory_gib": 2}
    assert calibrate.machine_key(a) == calibrate.machine_key(dict(reversed(list(a.items()))))
    assert calibrate.machine_key(a) != calibrate.machine_key(dict(a, virtualization="kvm"))
    assert len(calibrate.machine_key(a)) == 12


def test_a_stored_calibration_is_found_for_this_machine_only(tmp_path, monkeypatch):
    monkeypatch.setenv("BBRLAB_CALIBRATION_DIR", str(tmp_path / "cal"))
    ident = {"hostname": "h", "kernel": "k", "cpus": 2, "virtualization": "qemu", "cpu_model": "m", "memory_gib": 2}
    path = calibrate.path_for(calibrate.machine_key(ident))
    assert path.parent == tmp_path / "cal"
    assert calibrate.load(ident) is None
    path.parent.mkdir(parents=True)
    path.write_text(f'{{"format": {calibrate.FORMAT}, "key": "x"}}')
    assert calibrate.load(ident) == {"format": calibrate.FORMAT, "key": "x"}
    assert calibrate.load(dict(ident, cpus=4)) is None
    path.write_text(f'{{"format": {calibrate.FORMAT - 1}, "key": "x"}}')
    assert calibrate.load(ident) is None  # judged by older targets: measured again
    path.write_text("{not json")
    assert calibrate.load(ident) is None  # a damaged file is measured again, not a traceback


def test_a_run_needs_the_rates_below_its_top_and_the_first_at_or_above_it():
    rates = [10e6, 50e6, 100e6]
    assert calibrate.rates_needed(10e6, rates) == [10e6]
    assert calibrate.rates_needed(1e6, rates) == [10e6]
    assert calibrate.rates_needed(25e6, rates) == [10e6, 50e6]
    assert calibrate.rates_needed(100e6, rates) == rates
    assert calibrate.rates_needed(200e6, rates) == rates  # beyond: all, and the gate says so
    assert calibrate.rates_needed(None, rates) == rates
    assert calibrate.fidelity_rates() == rates  # experiments/fidelity.yaml


@pytest.fixture
def bench(tmp_path, monkeypatch):
    """calibrate.ensure on a stand-in machine: each fidelity point measures what GOOD says of
    its rate (faithful or a missed delivery); MEASURED lists the rates of each measurement."""
    from bbrlab.runs import runner

    monkeypatch.setenv("BBRLAB_CALIBRATION_DIR", str(tmp_path / "cal"))
    ident = {"hostname": "h", "kernel": "k", "cpus": 2, "virtualization": "qemu"}
    monkeypatch.setattr(calibrate, "machine", lambda: ident)
    timers = []
    lateness = {"p50_us": 60, "p99_us": 300, "max_us": 900}
    monkeypatch.setattr(calibrate, "timer_lateness", lambda: timers.append(1) or lateness)
    good: dict[float, bool] = {}
    queues: dict[float, float] = {}  # CUBIC's standing queue under an AQM (ms), by rate
    busy: dict[float, float] = {}  # how busy the backlog of CUBIC flows keeps the link, by rate
    measured: list[list[float]] = []

    class Run:
        def __init__(self, exp, root):
            self.path = root / "fidelity" / f"run{len(measured)}"
            self.exp = exp
            # GOOD[rate]: True/False, or one of them per measurement of the rate, in turn
            self.ok = {r: v.pop(0) if isinstance(v, list) and len(v) > 1 else v[0] if isinstance(v, list) else v
                       for r, v in good.items()}

        def point_records(self):
            out = []
            for p in self.exp.points:
                cc, count = p.flows[0].cc, p.flows[0].count
                ok = self.ok.get(p.link.rate, True)
                mets = ({"link_delivery": 0.99 if ok else 0.90, "steady_link_efficiency": 0.97} if cc == "cubic"
                        else {"bbr_bw_ratio": 0.98})
                if p.link.aqm.kind != "fifo" and cc == "cubic":
                    mets["queue_delay_p50_ms"] = queues.get(p.link.rate, 4.0)
                if count > 1:
                    mets = {"link_busy": busy.get(p.link.rate, 0.995)}
                rec = record(p.link.rate, cc, count, link_peak_beyond_pause=1.01, idle_rtt_error_ms=0.3, **mets)
                rec["link"].update(aqm={"kind": p.link.aqm.kind, "params": [list(kv) for kv in p.link.aqm.params]},
                                   shaper=p.link.shaper)
                out.append(rec)
            return out

    def run_experiment(exp, root, **kwargs):
        measured.append(sorted({p.link.rate for p in exp.points}))
        designs.append({(p.link.aqm.kind, p.link.shaper, sum(g.count for g in p.flows)) for p in exp.points})
        return Run(exp, root)

    designs: list[set] = []
    monkeypatch.setattr(runner, "run_experiment", run_experiment)
    monkeypatch.setattr(calibrate, "designs", designs, raising=False)  # what each measurement built
    monkeypatch.setattr(calibrate, "queues", queues, raising=False)
    monkeypatch.setattr(calibrate, "busy", busy, raising=False)
    return good, measured, timers


def test_the_first_run_calibrates_up_to_its_rate_and_a_faster_run_adds_the_rest(tmp_path, bench, capsys):
    good, measured, timers = bench
    cal = calibrate.ensure(tmp_path, 10e6)  # figure 5: 10 Mbit/s only
    assert measured == [[10e6]] and timers == [1]
    assert cal["faithful_up_to_bps"] == 10e6 and "not calibrated above 10 Mbit/s" in cal["gate"]["failed"]
    assert "measuring it first at 10 Mbit/s (about 1 min" in capsys.readouterr().err
    assert calibrate.ensure(tmp_path, 10e6) == cal and calibrate.ensure(tmp_path, 5e6) == cal  # covered
    assert measured == [[10e6]]
    cal = calibrate.ensure(tmp_path, 100e6)  # a faster run: only the rates still missing
    assert measured == [[10e6], [50e6, 100e6]] and timers == [1]  # the timer kept
    assert [r["rate_mbps"] for r in cal["rates"]] == [10, 50, 100] and cal["faithful_up_to_bps"] == 100e6
    assert len(cal["runs"]) == 2 and len(cal["points"]) == 6 and "extended" in cal
    assert "stops at 10 Mbit/s; measuring 50, 100 Mbit/s too" in capsys.readouterr().err
    assert calibrate.load() == cal  # the cache keeps both measurements in one file


def test_a_calibration_failed_while_the_host_was_busy_is_measured_again_before_the_next_run(tmp_path, bench, capsys):
    from bbrlab.runs import hostload

    good, measured, _ = bench
    good[10e6] = [False, False, True]  # a starved flow, twice: the rate declared unfaithful
    cal = calibrate.ensure(tmp_path, 10e6)
    assert cal["faithful_up_to_bps"] is None and measured == [[10e6], [10e6]]
    capsys.readouterr()
    quiet = {str(Path(r).resolve()): {"other_cpus_max": 0.2, "busy": False} for r in cal["runs"]}
    assert hostload.stamp_calibrations(calibrate.store(), quiet) == [Path(cal["file"])]
    assert calibrate.ensure(tmp_path, 10e6)["host_load"]["busy"] is False and len(measured) == 2  # its gate stands
    busy = {str(Path(cal["runs"][0]).resolve()): {"other_cpus_max": 1.2, "busy": True}}
    hostload.stamp_calibrations(calibrate.store(), busy)
    assert calibrate.load()["host_load"]["other_cpus_max"] == 1.2  # the worst of its runs
    cal = calibrate.ensure(tmp_path, 10e6)
    assert measured == [[10e6], [10e6], [10e6]] and cal["faithful_up_to_bps"] == 10e6 and "host_load" not in cal
    assert ("calibration failed while other programs on the host took 1.20 CPUs while it measured; measuring it "
            "again at 10 Mbit/s") in capsys.readouterr().err


def test_a_calibration_that_failed_below_the_run_is_not_extended(tmp_path, bench):
    good, measured, _ = bench
    good[10e6] = False
    cal = calibrate.ensure(tmp_path, 10e6)
    assert cal["faithful_up_to_bps"] is None and cal["gate"]["rate_bps"] == 10e6
    assert calibrate.ensure(tmp_path, 100e6) == cal and measured == [[10e6], [10e6]]  # measured again once; the gate at 10 stands


def test_a_rate_that_misses_a_target_once_is_measured_again_and_both_attempts_kept(tmp_path, bench, capsys):
    good, measured, _ = bench
    good[50e6] = [False, True]  # a transient: the first measurement at 50 Mbit/s starved
    cal = calibrate.ensure(tmp_path)
    assert measured == [[10e6, 50e6, 100e6], [50e6]] and cal["faithful_up_to_bps"] == 100e6
    assert len(cal["runs"]) == 2 and len(cal["points"]) == 6  # the last attempt's points judge the rate
    (kept,) = cal["attempts"]["50"]
    assert kept["missed"] == ["cubic: link_delivery 0.900 < 0.98"] and len(kept["points"]) == 2
    assert "50 Mbit/s missed a target (cubic: link_delivery 0.900 < 0.98); measuring again (attempt 2 of 2)" in \
        capsys.readouterr().err
    row = next(line for line in calibration_table.table(cal) if line.lstrip().startswith("50 Mbit/s"))
    assert row.endswith("yes (failed once, passed on repeat: cubic: link_delivery 0.900 < 0.98)"), row


def test_a_rate_that_misses_on_every_attempt_is_not_faithful(tmp_path, bench):
    good, measured, _ = bench
    good[50e6] = False
    cal = calibrate.ensure(tmp_path)
    assert measured == [[10e6, 50e6, 100e6], [50e6]] and cal["faithful_up_to_bps"] == 10e6
    assert cal["gate"]["rate_bps"] == 50e6 and len(cal["attempts"]["50"]) == 1
    row = next(line for line in calibration_table.table(cal) if line.lstrip().startswith("50 Mbit/s"))
    assert row.endswith("NO: cubic: link_delivery 0.900 < 0.98 (on each of 2 attempts)"), row


def test_without_a_rate_every_rate_is_measured_at_once(tmp_path, bench):
    _, measured, _ = bench
    cal = calibrate.ensure(tmp_path)
    assert measured == [[10e6, 50e6, 100e6]] and cal["faithful_up_to_bps"] == 100e6


def test_an_aqm_path_has_a_calibration_of_its_own_that_holds_the_aqm_to_its_target(tmp_path, bench):
    good, measured, _ = bench
    plain = calibrate.ensure(tmp_path, 10e6)
    fq = calibrate.ensure(tmp_path, 10e6, "fq_codel-htb")
    # under the AQM the link is also loaded by four CUBIC flows at once
    assert calibrate.designs == [{("fifo", "netem", 1)}, {("fq_codel", "htb", 1)}, {("fq_codel", "htb", 4)}]
    assert fq["path"] == "fq_codel-htb" and fq["file"].endswith(f"{fq['key']}-fq_codel-htb.json")
    assert fq["faithful_up_to_bps"] == 10e6 and fq["rates"][0]["aqm_target_ms"] == 5.0
    assert calibrate.load() == plain and calibrate.load(path="fq_codel-htb") == fq  # side by side
    assert fq["rates"][0]["link_busy"] == 0.995 and "link_busy" in fq["targets"] and "link_busy" not in plain["targets"]
    assert "busy, backlog" in calibration_table.table(fq)[2] and "busy" not in calibration_table.table(plain)[2]
    assert calibrate.ensure(tmp_path, 10e6, "fq_codel-htb") == fq and len(measured) == 3  # reused
    calibrate.queues[10e6] = 40.0  # the AQM let CUBIC's queue stand far above its target
    calibrate.queues[50e6] = 40.0
    cake = calibrate.ensure(tmp_path, 10e6, "cake-cake")
    assert cake["faithful_up_to_bps"] is None
    assert cake["gate"]["failed"] == "cubic: queue_delay_p50_ms 40.0 > 3 x the AQM's target 5 ms"
    assert calibration_table.table(cake)[0].endswith("shaper cake, queue cake")


def test_under_an_aqm_one_cubic_flows_back_off_does_not_fail_the_link():
    """The fq_codel path was declared unfaithful at 10 Mbit/s because one CUBIC flow used 0.872
    of the link under CoDel (BBR's estimate 0.996, the queue at its target): CUBIC's back-off,
    recorded, not judged; the same flow on a FIFO is still judged."""
    def rows(aqm):
        recs = [record(10e6, "cubic", steady_link_efficiency=0.872, link_peak_beyond_pause=0.98,
                       queue_delay_p50_ms=6.1), record(10e6, "bbr", bbr_bw_ratio=0.996)]
        if aqm:
            recs.append(record(10e6, "cubic", 4, link_busy=0.996))
            for rec in recs:
                rec["link"].update(aqm="fq_codel", aqm_target_s=0.005)
        return calibrate.envelope(recs)["rates"]
    (under,) = rows(aqm=True)
    assert under["faithful"] and under["steady_link_efficiency"] == 0.872, under["missed"]
    (fifo,) = rows(aqm=False)
    assert "cubic: steady_link_efficiency 0.872 < 0.95" in fifo["missed"]


def test_under_an_aqm_the_link_is_judged_busy_under_the_backlog_of_four_cubic_flows():
    """Under an AQM one flow leaves the link idle a while whatever the link does: the link
    is judged by how busy four CUBIC flows keep it, and a calibration without them proves
    nothing of it."""
    def row(*backlog):
        recs = [record(10e6, "cubic", steady_link_efficiency=0.9, link_peak_beyond_pause=0.98, queue_delay_p50_ms=4.0),
                record(10e6, "bbr", bbr_bw_ratio=0.996), *backlog]
        for rec in recs:
            rec["link"].update(aqm="fq_codel", aqm_target_s=0.005)
        (only,) = calibrate.envelope(recs)["rates"]
        return only
    assert row(record(10e6, "cubic", 4, link_busy=0.993))["faithful"]
    slow = row(record(10e6, "cubic", 4, link_busy=0.931))
    assert slow["missed"] == ["cubic x4: link_busy 0.931 < 0.95"] and slow["link_busy"] == 0.931
    assert row()["missed"] == ["link_busy not measured"]
    # on a FIFO the one CUBIC flow keeps the buffer backlogged: no backlog point is asked for
    fifo = [record(10e6, "cubic", link_delivery=0.99, steady_link_efficiency=0.97, link_peak_beyond_pause=1.0),
            record(10e6, "bbr", bbr_bw_ratio=0.996)]
    assert calibrate.envelope(fifo)["rates"][0]["faithful"]


def test_an_aqm_rate_whose_backlog_missed_is_measured_again_with_its_backlog(tmp_path, bench):
    good, measured, _ = bench
    calibrate.busy[10e6] = 0.9
    cal = calibrate.ensure(tmp_path, 10e6, "fq_codel-htb")
    # the backlog of the first attempt missed; the second measures the rate's points again
    assert calibrate.designs == [{("fq_codel", "htb", 1)}, {("fq_codel", "htb", 4)}] * 2, calibrate.designs
    assert cal["attempts"]["10"][0]["missed"] == ["cubic x4: link_busy 0.900 < 0.95"]
    assert len(cal["points"]) == 3 and cal["faithful_up_to_bps"] is None


def test_a_what_if_under_an_aqm_loads_the_link_with_its_backlog_too(tmp_path, bench):
    """benchmarks/shapers.py asks for an AQM by --set, not by its path: the same targets."""
    cal = calibrate.measure(tmp_path, overrides=["aqm=fq_codel", "shaper=htb", "rate=10Mbit"])
    assert calibrate.designs == [{("fq_codel", "htb", 1)}, {("fq_codel", "htb", 4)}]
    assert cal["faithful_up_to_bps"] == 10e6 and cal["file"].endswith("-whatif.json")


def test_a_what_ifs_rates_are_narrowed_to_the_one_that_missed_when_measured_again(tmp_path, bench):
    good, measured, _ = bench
    good[50e6] = [False, True]
    cal = calibrate.measure(tmp_path, overrides=["rate=[10Mbit,50Mbit]"])
    assert measured == [[10e6, 50e6], [50e6]] and len(cal["points"]) == 4 and cal["faithful_up_to_bps"] == 50e6
