"""BBR's own state in analysis (analysis/bbr_state.py): the sampler's JSON lines checked and
turned into a flow's series (its phase, v3's bounds), and analyze() adding them beside the
ss series it already had."""

import json
import shutil
from pathlib import Path

import pytest

from bbrlab.analysis import analyze as analysis
from bbrlab.analysis import bbr_state
from bbrlab.emulation import topo
from bbrlab.errors import ParseError
from bbrlab.schema import experiment as spec

STEP_BBR = Path(__file__).resolve().parents[1] / "fixtures" / "step-bbr"
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
PEER = "10.0.3.2:5201"


def line(t, local="10.0.1.1:40000", peer=PEER, cc="bbr", cwnd=20, acked=1000, bbr=None) -> str:
    return json.dumps({"t": t, "local": local, "peer": peer, "cc": cc, "cwnd": cwnd, "srtt_us": 41000,
                       "bytes_acked": acked, "bbr": bbr, "bbr_raw": None}) + "\n"


def v1(gain) -> dict:
    return {"version": 1, "bw_bps": 9.5e6, "min_rtt_us": 40000, "pacing_gain": gain, "cwnd_gain": 2.0}


def v3(phase, inflight_hi=60, bw_lo=None) -> dict:
    return dict(v1(1.0), version=3, bw_hi_bps=9.8e6, bw_lo_bps=bw_lo, inflight_hi_pkts=inflight_hi,
                inflight_lo_pkts=None, extra_acked_pkts=2, mode="PROBE_BW", phase=phase)


def test_the_sampler_lines_give_the_bbr_sockets_only():
    text = (line(100.0, bbr=v1(2.8867)) + line(100.0, peer="10.0.3.2:5202", cc="cubic")
            + line(100.5, bbr=v3("PROBE_BW_UP")) + line(101.0, bbr=v1(1.0))[:40])  # the last one cut off
    states = bbr_state.parse_bbr(text, "bbr-snd1.jsonl")
    assert [(s.t, s.version, s.phase) for s in states] == [(100.0, 1, None), (100.5, 3, "PROBE_BW_UP")]
    assert states[1].inflight_hi_pkts == 60 and states[1].bw_lo_bps is None and states[0].cwnd == 20
    assert bbr_state.parse_bbr("", "bbr-snd1.jsonl") == []


@pytest.mark.parametrize("text, problem", [
    ("{not json\n", "bbr-snd1.jsonl:1: not a JSON line"),
    ('{"t": 1.0, "local": "a:1"}\n', "bbr-snd1.jsonl:1: field 'peer' missing"),
    ('{"t": 1.0, "local": "a:1", "peer": "b:2", "bbr": {"version": 1}}\n', "field 'bw_bps' missing"),
    ('{"t": 1.0, "local": "a:1", "peer": "b:2", "bbr": [1]}\n', "'bbr' is neither null"),
])
def test_a_bad_line_is_an_error_that_names_its_file_and_line(text, problem):
    with pytest.raises(ParseError, match=problem):
        bbr_state.parse_bbr(text, "bbr-snd1.jsonl")


@pytest.mark.parametrize("gain, cwnd, phase", [
    (2.8867, 10, "STARTUP"), (0.3465, 30, "DRAIN"), (1.25, 30, "PROBE_BW_UP"), (0.75, 30, "PROBE_BW_DOWN"),
    (1.0, 30, "PROBE_BW_CRUISE"), (1.0, 4, "PROBE_RTT"), (1.0, None, "PROBE_BW_CRUISE")])
def test_v1s_phase_is_read_from_its_pacing_gain(gain, cwnd, phase):
    assert bbr_state.v1_phase(gain, cwnd) == phase


def test_a_v1_flow_has_its_phase_and_no_bounds_from_the_data_socket_only():
    text = (line(100.0, bbr=v1(2.8867)) + line(100.5, bbr=v1(1.25), acked=50_000)
            + line(100.5, local="10.0.1.1:39999", bbr=v1(1.0), acked=300)  # iperf3's control connection
            + line(101.0, cwnd=4, bbr=v1(1.0), acked=90_000))
    series = bbr_state.flow_series(bbr_state.parse_bbr(text, "f"), PEER, t0=99.0)
    assert series == {"bbr_version": 1, "bbr_phase": [[1.0, "STARTUP"], [1.5, "PROBE_BW_UP"], [2.0, "PROBE_RTT"]]}
    assert bbr_state.flow_series(bbr_state.parse_bbr(text, "f"), "10.0.3.2:5999", 99.0) == {}


def test_a_v3_flow_has_its_own_phase_and_bounds_an_unset_one_giving_no_point():
    text = (line(100.0, bbr=v3("STARTUP", inflight_hi=None)) + line(100.5, bbr=v3("PROBE_BW_DOWN", 80, 8e6))
            + line(101.0, bbr=v3("PROBE_BW_CRUISE", 72)))
    series = bbr_state.flow_series(bbr_state.parse_bbr(text, "f"), PEER, t0=100.0)
    assert series["bbr_version"] == 3
    assert series["bbr_phase"] == [[0.0, "STARTUP"], [0.5, "PROBE_BW_DOWN"], [1.0, "PROBE_BW_CRUISE"]]
    assert series["bbr_inflight_hi_pkts"] == [[0.5, 80], [1.0, 72]]
    assert series["bbr_bw_hi_mbps"] == [[0.0, 9.8], [0.5, 9.8], [1.0, 9.8]] and series["bbr_bw_lo_mbps"] == [[0.5, 8.0]]


def test_analyze_adds_the_bbr_series_beside_the_ss_ones(tmp_path):
    exp = spec.load(EXPERIMENTS / "step.yaml")
    (point,) = [p for p in exp.points if p.params["cc"] == "bbr"]
    plan = topo.build_plan(point)
    timings = json.loads((STEP_BBR / "point.json").read_text())["timings"]
    folder = tmp_path / "point"
    shutil.copytree(STEP_BBR, folder)

    def flow_series():
        series, _ = analysis.analyze(point, plan, folder, timings["t0"], timings["launches"], timings["end"])
        return series["flows"]["f1"]
    before = flow_series()
    assert "bbr_phase" not in before  # a run without the sampler's file: the series it always had
    (flow,) = plan.flows
    t0 = timings["t0"]
    (folder / "raw" / f"bbr-{flow.sender}.jsonl").write_text(
        "".join(line(t0 + t, peer=f"{flow.dst}:{flow.port}", bbr=v3(phase, 50 + t)) for t, phase in
                [(0.5, "STARTUP"), (1.0, "DRAIN"), (1.5, "PROBE_BW_DOWN"), (2.0, "PROBE_BW_CRUISE")]))
    after = flow_series()
    assert {k: v for k, v in after.items() if not k.startswith("bbr_") or k == "bbr_bw_mbps"} == before
    assert after["bbr_version"] == 3 and [p for _, p in after["bbr_phase"]][:2] == ["STARTUP", "DRAIN"]
    assert after["bbr_inflight_hi_pkts"][0] == [0.5, 50.5] and len(after["bbr_bw_lo_mbps"]) == 0
