"""Flow completion times on fixtures: per-flow FCT and slowdown by hand, buckets, CDFs,
unfinished flows counted, the programs' output parsed (and refused with file and line),
and a class's metrics read by a claim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bbrlab.analysis import analyze as analysis, classes, fct, tool_output
from bbrlab.verdicts import claims
from bbrlab.schema import experiment as spec, traces
from bbrlab.emulation import topo
from bbrlab.errors import ParseError
from bbrlab.schema.claim_format import parse as parse_claims

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
T0 = 1000.0
RATE = 20e6


def records() -> list[dict]:
    out = []
    for name in ("shortflows-g1.jsonl", "shortflows-g2.jsonl"):
        out += tool_output.parse_shortflows((FIXTURES / name).read_text(), name)[0]
    return out


def rows() -> list[dict]:
    return fct.rows(records(), {0: 0.05, 1: 0.01}, RATE, T0)


def test_bytes_on_the_wire_count_each_segment_s_headers():
    assert fct.wire_bytes(1440) == 1448 + 66  # with the 8-byte length: one full 1514-byte frame
    assert fct.wire_bytes(1441) == 1449 + 2 * 66
    assert fct.wire_bytes(10_000) == 10_008 + 7 * 66


def test_ideal_fct_and_slowdown_floored_at_one():
    assert fct.ideal_seconds(1440, 0.01, 10e6) == pytest.approx(0.01 + 1514 * 8 / 10e6)
    assert fct.slowdown(0.005, 1440, 0.01, 10e6) == 1.0
    assert fct.slowdown(0.1, 10_000, 0.05, RATE) == pytest.approx(0.1 / (0.05 + 10_470 * 8 / RATE))
    with pytest.raises(ValueError):
        fct.ideal_seconds(1000, 0.01, 0)


def test_the_time_to_send_through_a_schedule_waits_out_its_pauses():
    fixed = lambda a, b: RATE * (b - a)  # noqa: E731
    assert fct.send_seconds(1e6, 3.0, fixed) == pytest.approx(1e6 / RATE, abs=1e-4)
    # nothing in the first second of every two, 10 Mbit/s in the second

    def cumulative(t: float) -> float:
        passes, into = divmod(t, 2.0)
        return 10e6 * (passes + max(0.0, into - 1.0))

    paused = traces.Schedule("pauses", 1.0, 2.0, (0.0, 1.0), (0.0, 10e6), 5e6, 1.0)
    assert paused.capacity_bits(0, 1) == 0 and paused.capacity_bits(0.5, 4.5) == pytest.approx(cumulative(4.5) - cumulative(0.5))
    wire = fct.wire_bytes(1_000_000) * 8
    from_zero, from_one = fct.send_seconds(wire, 0.0, paused.capacity_bits), fct.send_seconds(wire, 1.0, paused.capacity_bits)
    assert from_one == pytest.approx(wire / 10e6, abs=1e-3) and from_zero == pytest.approx(1 + wire / 10e6, abs=1e-3)
    # the same FCT is slow when it met the link at its fast stretch, and ideal when it met the pause
    fct_s = 0.04 + from_zero
    assert fct.trace_slowdown(fct_s, 1_000_000, 0.04, 0.0, paused.capacity_bits) == pytest.approx(1.0, abs=1e-3)
    assert fct.trace_slowdown(fct_s, 1_000_000, 0.04, 1.0, paused.capacity_bits) > 1.5
    with pytest.raises(ValueError, match="the link offers less"):
        fct.send_seconds(1e6, 0.0, lambda a, b: 0.0)


def test_rows_on_a_trace_judge_each_flow_from_when_it_started():
    half = lambda a, b: RATE / 2 * (b - a)  # noqa: E731
    by_id = {r["id"]: r for r in fct.rows(records(), {0: 0.05, 1: 0.01}, RATE, T0, half)}
    first = by_id["g1-1"]
    assert first["slowdown"] == pytest.approx(max(1.0, 0.1 / (0.05 + 10_470 * 8 / (RATE / 2))), abs=1e-3)


@pytest.mark.parametrize("size, name", [(1, "to100k"), (100_000, "to100k"), (100_001, "to1m"), (1_000_000, "to1m"),
                                        (3_000_000, "to3m"), (3_000_001, "over3m")])
def test_buckets(size, name):
    assert fct.bucket(size) == name


def test_rows_by_hand():
    by_id = {r["id"]: r for r in rows()}
    first = by_id["g1-1"]
    assert (first["fct_ms"], first["connect_ms"], first["total_ms"], first["start_s"]) == (100.0, 50.0, 150.0, 0.1)
    assert first["slowdown"] == pytest.approx(0.1 / (0.05 + 10_470 * 8 / RATE), abs=1e-4)
    assert by_id["g1-3"]["tput_mbps"] == pytest.approx(10.0) and by_id["g1-3"]["late_ms"] == pytest.approx(2.0)
    unfinished = by_id["g1-4"]
    assert not unfinished["completed"] and unfinished["fct_ms"] is None and unfinished["bytes_acked"] == 28960


def test_a_sequential_flow_is_late_against_when_it_was_due_not_its_planned_time():
    record = dict(records()[0], at=0.0, due=5.0, start=T0 + 5.003)
    (row,) = fct.rows([record], {0: 0.05, 1: 0.01}, RATE, T0)
    assert row["late_ms"] == pytest.approx(3.0)


def test_summary_counts_the_unfinished_and_gives_percentiles_of_the_completed():
    out = fct.summarize(rows())
    assert (out["flows_planned"], out["flows_started"], out["flows_completed"], out["flows_unfinished"]) == (6, 6, 5, 1)
    assert out["completed_share"] == pytest.approx(5 / 6, abs=1e-4)
    # completed FCTs: 10, 100, 200, 2000, 4000 ms
    assert out["fct_p50_ms"] == 200.0 and out["fct_p95_ms"] == pytest.approx(3600.0)
    assert out["fct_to100k_p50_ms"] == pytest.approx(55.0) and out["flows_to100k"] == 3  # 1 KB, 10 KB, 50 KB
    assert out["fct_to3m_p50_ms"] == 2000.0 and out["fct_over3m_p50_ms"] == 4000.0
    assert out["tput_over3m_p50_mbps"] == pytest.approx(10.0)
    assert out["slowdown_to1m_p50"] == pytest.approx(0.2 / (0.01 + fct.wire_bytes(200_000) * 8 / RATE), abs=1e-3)


def test_an_empty_class_has_counts_and_no_percentiles():
    out = fct.summarize([])
    assert out["flows_planned"] == 0 and out["fct_p50_ms"] is None and out["tput_over3m_p50_mbps"] is None


def test_per_class_entries_and_cdfs():
    entries = fct.per_class(rows(), [(0, "client", "bbr", 0.05), (1, "pop", "bbr", 0.01)])
    assert [(e["group"], e["class"], e["rtt_ms"], e["flows_completed"], e["flows_unfinished"]) for e in entries] == [
        (0, "client", 50.0, 3, 1), (1, "pop", 10.0, 2, 0)]
    cdfs = fct.cdfs(rows())
    assert cdfs["client"]["all"] == [[100.0, 0.3333], [2000.0, 0.6667], [4000.0, 1.0]]
    assert cdfs["pop"]["to100k"] == [[10.0, 1.0]] and cdfs["client"]["cc"] == "bbr"


def test_a_cdf_keeps_at_most_its_points_and_the_largest_value():
    points = fct.cdf(list(range(1000)), points=10)
    assert len(points) == 10 and points[-1] == [999, 1.0] and points[0] == [99, 0.1]


def test_the_program_s_lines_parse_and_bad_lines_name_the_file_and_line():
    recs, summary = tool_output.parse_shortflows((FIXTURES / "shortflows-g1.jsonl").read_text(), "g1.jsonl")
    assert len(recs) == 4 and summary["cpu_s"] == 0.2
    good = (FIXTURES / "shortflows-g1.jsonl").read_text().splitlines()[0]
    for text, message in [(good + "\n{not json\n", "g1.jsonl:2: not a JSON line"),
                          ('[1, 2]\n', "g1.jsonl:1: expected a flow record"),
                          (good.replace('"size":10000', '"size":"big"'), "g1.jsonl:1: field 'size'"),
                          (good.replace('"end":1000.25', '"end":null'), "g1.jsonl:1: a completed flow without")]:
        with pytest.raises(ParseError) as exc:
            tool_output.parse_shortflows(text, "g1.jsonl")
        assert str(exc.value).startswith(message)
    assert tool_output.parse_shortflows("", "x") == ([], None)


MIX = {"link": {"rate": "20Mbit", "rtt": "50ms", "buffer": "2bdp"}, "cc": "bbr",
       "flows": [{"class": "client", "workload": {"rate": "1/s", "sizes": "fixed 10KB", "duration": "5s"}},
                 {"class": "pop", "rtt": "10ms", "workload": {"rate": "1/s", "sizes": "fixed 10KB", "duration": "5s"}}]}


def mix_point(folder: Path):
    """MIX's point, its plan, and FOLDER/raw holding both classes' captured program output."""
    point = spec.build(MIX).points[0]
    raw = folder / "raw"
    raw.mkdir()
    for g in (1, 2):
        (raw / f"shortflows-g{g}.jsonl").write_text((FIXTURES / f"shortflows-g{g}.jsonl").read_text())
    return point, topo.build_plan(point), raw


def test_analysis_counts_a_scheduled_flow_its_program_never_wrote(tmp_path):
    point, plan, raw = mix_point(tmp_path)
    schedule = {"flows": [{"id": "g2-1", "at": 0.5, "size": 1000, "cc": "bbr", "group": 1, "class": "pop"},
                          {"id": "g2-9", "at": 4.0, "size": 1000, "cc": "bbr", "group": 1, "class": "pop"}]}
    (raw / "shortflows-schedule-g2.json").write_text(json.dumps(schedule))
    (raw / "shortflows-sink-rcv1.jsonl").write_text('{"summary": {"role": "sink", "cpu_s": 0.1}}\n')
    series, out = {}, {"groups": []}
    analysis._shortflows(point, plan, raw, T0, series, out)
    assert (out["flows_planned"], out["flows_completed"], out["flows_unfinished"]) == (7, 5, 2)
    pop = [g for g in out["groups"] if g["group"] == 1][0]
    assert pop["class"] == "pop" and pop["flows_unfinished"] == 1 and pop["rtt_ms"] == 10.0
    assert out["shortflow_cpu_s_per_flow"] == pytest.approx(0.4 / 7, abs=1e-6)
    assert out["shortflow_late_p99_ms"] is not None and len(series["shortflows"]) == 7
    assert set(series["fct_cdf"]) == {"client", "pop"}


def test_a_claim_reads_a_short_flow_class_by_its_group():
    entries = fct.per_class(rows(), [(0, "client", "bbr", 0.05), (1, "pop", "bbr", 0.01)])
    mets = {**fct.summarize(rows()), "groups": entries, "loss": 0.0}
    assert classes.scope(mets, {"group": 1})["fct_p50_ms"] == pytest.approx(105.0)
    (claim,) = parse_claims([{"id": "pop", "text": "t", "metric": "fct_p50_ms", "where": {"group": 1}, "max": 200}])
    record = {"params": {}, "repetition": 1, "flows": [{"cc": "bbr"}, {"cc": "bbr"}], "metrics": mets, "link": {}}
    result = claims.evaluate_claim(claim, [record])
    assert result["status"] == "holds" and result["checks"][0]["value"] == pytest.approx(105.0)
    record["flows"] = [{"cc": "bbr", "name": "client"}, {"cc": "bbr", "name": "pop"}]
    (by_name,) = parse_claims([{"id": "pop", "text": "t", "metric": "fct_p50_ms", "where": {"class": "pop"},
                                "max": 200}])
    assert claims.evaluate_claim(by_name, [record])["checks"][0]["value"] == pytest.approx(105.0)
    (absent,) = parse_claims([{"id": "x", "text": "t", "metric": "fct_p50_ms", "where": {"class": "web"}, "max": 1}])
    assert claims.evaluate_claim(absent, [record])["status"] == "not evaluated"


def test_a_short_flow_point_is_analyzed_whole_and_writes_only_known_metric_names(tmp_path):
    from bbrlab.schema.metric_names import ALL_METRICS

    point, plan, raw = mix_point(tmp_path)
    (raw / "ping-g1.txt").write_text((FIXTURES / "ping_bbr.txt").read_text())
    series, out = analysis.analyze(point, plan, tmp_path, T0, {}, 8.0)
    assert sorted(set(out) - set(ALL_METRICS)) == []
    assert out["flows"] == [] and out["flows_completed"] == 5 and out["flows_unfinished"] == 1
    assert [g["class"] for g in out["groups"]] == ["client", "pop"] and len(series["shortflows"]) == 6
    (tmp_path / "raw" / "ping-g1.txt").unlink()
    assert analysis.analyze(point, plan, tmp_path, T0, {}, 8.0)[1]["flows_planned"] == 6  # no ping: still analyzed
