"""Claims against hand-made point records: selection, bounds, ratios, repetitions with
their intervals, untrusted points, verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest
from bbrlab.verdicts import claims, set_aside
from bbrlab.schema import claim_format
from bbrlab.schema import experiment as spec
from bbrlab.errors import SpecError

# the claims engine is tested on a fixed set of four claims (figure 5's of before its sweep)
FIGURE5 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "figure5-claims.yaml"


def rec(params: dict | None = None, ccs=None, repetition: int | None = None, **metrics) -> dict:
    """A record shaped like the runner's point.json + metrics.json."""
    params = params or {}
    ccs = ccs or [params.get("cc", "bbr")]
    ident = ",".join(f"{k}={v}" for k, v in params.items())
    record = {"id": ident, "params": params, "flows": [{"cc": c} for c in ccs], "metrics": metrics}
    if repetition is not None:
        record["repetition"] = repetition
    return record


def reps(params: dict, metric: str, values, **extra) -> list[dict]:
    """One record per value: repetitions 1, 2, ... of one grid point."""
    return [rec(params, repetition=i, **{metric: v}, **extra) for i, v in enumerate(values, 1)]


def claim(metric="m", where=None, vs=None, min=None, max=None, relative_to=None) -> spec.Claim:  # noqa: A002
    return spec.Claim("c", "a claim", metric, where or {}, vs, min, max, relative_to)


def status(c: spec.Claim, records: list[dict]) -> str:
    return claims.evaluate_claim(c, records)["status"]


# ---------------------------------------------------------------- bounds


@pytest.mark.parametrize(("value", "lo", "hi", "expected"), [
    (5, 1, None, "holds"), (0.5, 1, None, "fails"), (1, 1, None, "holds"),
    (5, None, 10, "holds"), (10, None, 10, "holds"), (10.01, None, 10, "fails"),
    (5, 1, 10, "holds"), (11, 1, 10, "fails"), (0, 1, 10, "fails"),
])
def test_absolute_bounds(value, lo, hi, expected):
    assert status(claim(min=lo, max=hi), [rec(m=value)]) == expected


def test_every_selected_point_must_hold():
    records = [rec({"cc": "bbr"}, m=1), rec({"cc": "cubic"}, m=9)]
    result = claims.evaluate_claim(claim(max=5), records)
    assert result["status"] == "fails"
    assert [(c["point"], c["value"], c["status"]) for c in result["checks"]] == [
        ("cc=bbr", 1, "holds"), ("cc=cubic", 9, "fails")]
    assert status(claim(max=5, where={"cc": "bbr"}), records) == "holds"


def test_relative_to_scales_the_bound_by_another_metric():
    c = claim("rtt_p50_ms", max=1.5, relative_to="base_rtt_ms")
    result = claims.evaluate_claim(c, [rec(rtt_p50_ms=55.123456, base_rtt_ms=40)])
    (check,) = result["checks"]
    assert result["status"] == "holds" and check["value"] == 55.1235
    assert check["bound"] == "<= 1.5 x base_rtt_ms (40)"
    assert status(c, [rec(rtt_p50_ms=61, base_rtt_ms=40)]) == "fails"
    assert status(claim("rtt_p50_ms", min=2.5, relative_to="base_rtt_ms"), [rec(rtt_p50_ms=100, base_rtt_ms=40)]) == "holds"


def test_absolute_bound_text():
    (check,) = claims.evaluate_claim(claim(min=1, max=2.5), [rec(m=2)])["checks"]
    assert check["bound"] == ">= 1 and <= 2.5"


@pytest.mark.parametrize(("metrics", "note"), [
    ({"base_rtt_ms": 40}, "rtt_p50_ms missing"),
    ({"rtt_p50_ms": 50}, "base_rtt_ms missing"),
])
def test_missing_metrics_fail_with_a_note(metrics, note):
    result = claims.evaluate_claim(claim("rtt_p50_ms", max=1.5, relative_to="base_rtt_ms"), [rec(**metrics)])
    assert result["status"] == "fails"
    assert result["checks"] == [{"point": "point", "points": ["point"], "value": None, "n": 0, "status": "fails",
                                 "note": note}]


def test_nothing_selected_is_not_evaluated():
    result = claims.evaluate_claim(claim(max=1, where={"cc": "reno"}), [rec({"cc": "bbr"}, m=0)])
    assert result == {"id": "c", "text": "a claim", "metric": "m", "status": "not evaluated", "checks": []}
    assert status(claim(max=1), []) == "not evaluated"


# ---------------------------------------------------------------- where


def test_facts_type_numeric_params_and_fall_back_to_flows_and_metrics():
    fact = claims.facts(rec({"loss": "1%", "rate": "10Mbit", "rtt": "40ms", "buffer": "5bdp"}, ccs=["bbr"], loss=0.3))
    assert fact == {"loss": 0.01, "rate": 10e6, "rtt": 0.04, "buffer": "5bdp", "cc": "bbr", "aqm": "fifo"}
    assert claims.facts(rec(ccs=["cubic", "bbr", "bbr"]))["cc"] == "bbr+cubic"
    assert claims.facts(rec(loss=0.02))["loss"] == 0.02


def test_pacing_and_shaper_are_facts_when_no_axis_sweeps_them():
    """`--set pacing=fq` pins an axis: figure8-versions' claim on `pacing: fq` then judged
    nothing ("n/a", no claim selected a point) though its points ran paced by fq."""
    record = rec({"loss": "10%", "cc": "bbr410"}, m=0.9)
    record["pacing"], record["link"] = "fq", {"shaper": "mahimahi"}
    assert claims.facts(record) == {"loss": 0.1, "cc": "bbr410", "pacing": "fq", "shaper": "mahimahi", "aqm": "fifo"}
    result = claims.evaluate_claim(claim(min=0.75, where={"cc": "bbr410", "pacing": "fq", "shaper": "mahimahi"}), [record])
    assert [c["point"] for c in result["checks"]] == ["loss=10%, cc=bbr410"]
    record["pacing"] = "internal"
    assert claims.evaluate_claim(claim(min=0.75, where={"pacing": "fq"}), [record])["checks"] == []


def test_a_claim_on_a_droptail_queue_judges_nothing_of_a_point_under_an_aqm():
    """The fidelity run under fq_codel printed "[FAIL] ... link_delivery missing": a backlog
    no AQM lets form was asked of it. Its claim selects `aqm: fifo`, the AQM pinned by --set."""
    record = rec({"rate": "10Mbit"}, ccs=["cubic"], m=None)
    record["link"] = {"aqm": {"kind": "fq_codel", "params": []}}
    assert claims.facts(record)["aqm"] == "fq_codel"
    assert claims.evaluate_claim(claim(min=0.98, where={"cc": "cubic", "aqm": "fifo"}), [record])["checks"] == []
    record["link"] = {"aqm": {"kind": "fifo", "params": []}}
    assert len(claims.evaluate_claim(claim(min=0.98, where={"cc": "cubic", "aqm": "fifo"}), [record])["checks"]) == 1


@pytest.mark.parametrize(("where", "selected"), [
    ({"loss": {"min": "2%"}}, ["5%", "10%"]),
    ({"loss": {"max": "5%"}}, ["1%", "5%"]),  # bounds are inclusive
    ({"loss": {"min": "1%", "max": "5%"}}, ["1%", "5%"]),
    ({"loss": {"min": "5%"}}, ["5%", "10%"]),
    ({"loss": "5%"}, ["5%"]),
    ({"loss": "10%"}, ["10%"]),
    ({"loss": ["1%", "10%"]}, ["1%", "10%"]),
    ({"loss": "2%"}, []),
    ({"cc": "bbr"}, ["1%", "5%", "10%"]),
    ({"cc": ["reno", "cubic"]}, []),
    ({"buffer": "5bdp"}, []),  # not a fact of these points
])
def test_where_selects_points(where, selected):
    records = [rec({"loss": loss}, m=0) for loss in ("1%", "5%", "10%")]
    result = claims.evaluate_claim(claim(max=1, where=where), records)
    assert [c["point"] for c in result["checks"]] == [f"loss={loss}" for loss in selected]


def test_where_compares_rates_and_times_as_numbers():
    records = [rec({"rate": "10000kbit", "rtt": "0.04s"}, m=0)]
    assert status(claim(max=1, where={"rate": "10Mbit", "rtt": "40ms"}), records) == "holds"
    assert status(claim(max=1, where={"rate": {"min": "20Mbit"}}), records) == "not evaluated"


def test_where_unknown_bound_is_an_error_naming_the_key():
    with pytest.raises(SpecError, match=r"^where\.loss: unknown bound 'above'"):
        claims.evaluate_claim(claim(max=1, where={"loss": {"above": "1%"}}), [rec({"loss": "5%"}, m=0)])


# ---------------------------------------------------------------- vs


def test_vs_is_a_ratio_to_the_matching_point():
    records = [rec({"rate": r, "cc": cc}, m=v) for r, cc, v in
               [("10Mbit", "bbr", 40), ("10Mbit", "cubic", 200), ("20Mbit", "bbr", 30), ("20Mbit", "cubic", 50)]]
    result = claims.evaluate_claim(claim(where={"cc": "bbr"}, vs={"cc": "cubic"}, max=0.5), records)
    assert [(c["point"], c["value"], c["status"]) for c in result["checks"]] == [
        ("rate=10Mbit, cc=bbr vs rate=10Mbit, cc=cubic", 0.2, "holds"),
        ("rate=20Mbit, cc=bbr vs rate=20Mbit, cc=cubic", 0.6, "fails"),
    ]
    assert result["checks"][0]["detail"] == "40 / 200" and result["status"] == "fails"
    only_10 = claim(where={"cc": "bbr", "rate": "10Mbit"}, vs={"cc": "cubic"}, max=0.5)
    assert status(only_10, records) == "holds"


def test_vs_varies_only_what_vs_names():
    records = [rec({"pacing": p, "cc": cc}, m=v) for p, cc, v in
               [("fq", "bbr", 10), ("fq", "cubic", 100), ("internal", "bbr", 20), ("internal", "cubic", 1)]]
    result = claims.evaluate_claim(claim(where={"cc": "bbr", "pacing": "fq"}, vs={"pacing": "internal"}, max=1),
                                   records)
    assert [(c["point"], c["value"]) for c in result["checks"]] == [
        ("pacing=fq, cc=bbr vs pacing=internal, cc=bbr", 0.5)]
    assert result["status"] == "holds"


def test_vs_without_a_partner_is_not_evaluated():
    records = [rec({"rate": "10Mbit", "cc": "bbr"}, m=1), rec({"rate": "20Mbit", "cc": "cubic"}, m=1)]
    assert status(claim(where={"cc": "bbr"}, vs={"cc": "cubic"}, max=1), records) == "not evaluated"


@pytest.mark.parametrize(("mine", "theirs"), [(None, 10), (5, None), (5, 0)])
def test_vs_with_missing_or_zero_metric_fails(mine, theirs):
    records = [rec({"cc": "bbr"}, **({} if mine is None else {"m": mine})),
               rec({"cc": "cubic"}, **({} if theirs is None else {"m": theirs}))]
    result = claims.evaluate_claim(claim(where={"cc": "bbr"}, vs={"cc": "cubic"}, max=1), records)
    assert result["status"] == "fails" and result["checks"][0]["note"] == "m missing"


# ---------------------------------------------------------------- repetitions


def test_average_repetitions_with_ci95():
    records = [rec({"cc": "bbr"}, m=v, cpu_bound=b, host="vm") for v, b in ((1, False), (2, True), (3, False))]
    records.append(rec({"cc": "cubic"}, m=7, cpu_bound=False))
    merged = {r["params"]["cc"]: r["metrics"] for r in claims.average_repetitions(records)}
    bbr = merged["bbr"]
    assert bbr["m"] == 2 and bbr["m_ci95"] == pytest.approx(1.96 / 3 ** 0.5)
    assert bbr["repetitions"] == 3 and bbr["cpu_bound"] is True and bbr["host"] == "vm"
    assert merged["cubic"] == {"m": 7, "cpu_bound": False, "repetitions": 1}  # no ci95 from one run
    assert records[0]["metrics"] == {"m": 1, "cpu_bound": False, "host": "vm"}  # inputs untouched


def test_average_repetitions_groups_by_params_not_order_and_skips_partial_metrics():
    a = rec({"rate": "10Mbit", "cc": "bbr"}, m=1, x=5)
    b = rec({"cc": "bbr", "rate": "10Mbit"}, m=3)
    (merged,) = claims.average_repetitions([a, b])
    assert merged["metrics"]["m"] == 2 and merged["metrics"]["x"] == 5 and "x_ci95" not in merged["metrics"]
    assert merged["metrics"]["m_ci95"] == pytest.approx(1.96 * 2 ** 0.5 / 2 ** 0.5)


# ---------------------------------------------------------------- verdict


def figure5_records(bbr_rtt=45.0, cubic_rtt=200.0, cubic_p95=240.0, util=0.95, **extra) -> list[dict]:
    return [rec({"cc": cc}, rtt_p50_ms=rtt, rtt_p95_ms=p95, base_rtt_ms=40.0, full_buffer_rtt_ms=252.0,
                link_busy=util, **extra)
            for cc, rtt, p95 in (("bbr", bbr_rtt, 60.0), ("cubic", cubic_rtt, cubic_p95))]


def test_figure5_claims_reproduced():
    v = claims.verdict(spec.load(FIGURE5).claims, figure5_records())
    assert v["verdict"] == "reproduced" and (v["holds"], v["fails"]) == (4, 0)
    assert [r["status"] for r in v["claims"]] == ["holds"] * 4 and v["cpu_bound_points"] == []
    assert claims.verdict_lines(v)[0] == "verdict: reproduced"


@pytest.mark.parametrize(("kwargs", "failing"), [
    ({"bbr_rtt": 90.0}, ["bbr-bounded-queue"]),
    ({"cubic_p95": 190.0}, ["cubic-fills-buffer"]),
    ({"cubic_rtt": 80.0}, ["bbr-below-cubic"]),
    ({"util": 0.5}, ["link-busy"]),
])
def test_figure5_claims_not_reproduced(kwargs, failing):
    v = claims.verdict(spec.load(FIGURE5).claims, figure5_records(**kwargs))
    assert v["verdict"] == "not reproduced"
    assert [r["id"] for r in v["claims"] if r["status"] == "fails"] == failing
    assert v["fails"] == len(failing) and v["holds"] == 4 - len(failing)


# ---------------------------------------------------------------- repetitions: intervals


def test_a_single_repetition_is_judged_on_its_value_alone():
    (check,) = claims.evaluate_claim(claim(max=80), [rec(m=79.4)])["checks"]
    assert (check["value"], check["low"], check["high"], check["n"], check["status"]) == (79.4, 79.4, 79.4, 1, "holds")
    assert status(claim(max=80), [rec(m=81.1)]) == "fails"


@pytest.mark.parametrize(("values", "expected"), [
    ([1.40, 1.41, 1.42], "holds"),  # all of the interval below the bound
    ([1.60, 1.61, 1.62], "fails"),  # all of it above
    ([1.40, 1.60, 1.50], "inconclusive"),  # mean 1.5 holds, but the interval straddles 1.5
    ([1.40, 1.55], "inconclusive"),  # the mean (1.475) alone would have said holds
])
def test_a_check_is_judged_on_the_interval_of_its_repetitions(values, expected):
    result = claims.evaluate_claim(claim("rtt", max=1.5), reps({"cc": "bbr"}, "rtt", values))
    (check,) = result["checks"]
    assert check["status"] == result["status"] == expected and check["n"] == len(values)
    assert check["low"] <= check["value"] <= check["high"]
    assert (check.get("note") == claims.STRADDLES) == (expected == "inconclusive")


def test_a_check_gives_the_t_interval_of_its_repetitions():
    (check,) = claims.evaluate_claim(claim(max=80), reps({"cc": "bbr"}, "m", [74, 78, 82]))["checks"]
    half = 4.302653 * 4 / 3 ** 0.5  # t(0.975, 2 df) x sd / sqrt(n)
    assert check["value"] == 78 and check["n"] == 3
    assert check["low"] == pytest.approx(78 - half, abs=1e-3) and check["high"] == pytest.approx(78 + half, abs=1e-3)


def test_relative_to_scales_each_repetition_by_its_own_metric():
    records = [rec(rtt=100.0, base=40.0, repetition=1), rec(rtt=150.0, base=60.0, repetition=2),
               rec(rtt=125.0, base=50.0, repetition=3)]
    result = claims.evaluate_claim(claim("rtt", max=2.5, relative_to="base"), records)
    (check,) = result["checks"]
    # every repetition sits at exactly 2.5x its own base: a zero-width interval on the bound
    assert result["status"] == "holds" and check["n"] == 3
    assert check["value"] == check["low"] == check["high"] == 125.0 and check["bound"] == "<= 2.5 x base (50)"
    # the means alone (125 / 50) would hold at 2.5 too, but one repetition is over: no longer certain
    records[0]["metrics"]["base"] = 39.0
    assert status(claim("rtt", max=2.5, relative_to="base"), records) == "inconclusive"


def test_vs_pairs_repetitions_by_number_and_uses_the_common_ones():
    bbr = [rec({"cc": "bbr"}, m=v, repetition=i) for i, v in ((1, 10.0), (2, 20.0), (3, 30.0))]
    cubic = [rec({"cc": "cubic"}, m=v, repetition=i) for i, v in ((3, 300.0), (1, 100.0), (2, 200.0))]
    result = claims.evaluate_claim(claim(where={"cc": "bbr"}, vs={"cc": "cubic"}, max=0.2), bbr + cubic)
    (check,) = result["checks"]
    # rep i over rep i: always 0.1 (in list order the ratios would spread from 0.033 to 0.15)
    assert (check["value"], check["low"], check["high"], check["n"]) == (0.1, 0.1, 0.1, 3)
    assert check["detail"] == "20 / 200" and check["points"] == ["cc=bbr", "cc=cubic"]
    assert result["status"] == "holds"
    (check,) = claims.evaluate_claim(claim(where={"cc": "bbr"}, vs={"cc": "cubic"}, max=0.2),
                                     bbr + cubic[1:])["checks"]
    assert check["n"] == 2 and check["detail"] == "15 / 150"  # repetition 3 has no partner


def test_a_repetition_without_the_metric_is_left_out():
    records = reps({}, "m", [1.0, 1.1]) + [rec(repetition=3, other=5)]
    (check,) = claims.evaluate_claim(claim(max=9), records)["checks"]
    assert check["n"] == 2 and check["status"] == "holds"


# ---------------------------------------------------------------- verdict


def test_the_verdict_is_one_of_four_words():
    c = (claim("m", max=80, where={"cc": "bbr"}),)
    assert claims.verdict(c, reps({"cc": "bbr"}, "m", [70, 71, 72]))["verdict"] == "reproduced"
    assert claims.verdict(c, reps({"cc": "bbr"}, "m", [84, 85, 86]))["verdict"] == "not reproduced"
    assert claims.verdict(c, reps({"cc": "bbr"}, "m", [74, 78, 82]))["verdict"] == "inconclusive"
    assert claims.verdict(c, reps({"cc": "cubic"}, "m", [74]))["verdict"] == "not evaluated"


def test_one_inconclusive_claim_and_none_failing_is_inconclusive():
    records = figure5_records()
    records[0]["repetition"] = 1
    records.append(dict(records[0], repetition=2, metrics=dict(records[0]["metrics"], rtt_p50_ms=95.0)))
    v = claims.verdict(spec.load(FIGURE5).claims, records)
    # the ratio to CUBIC pairs repetition 1 only (CUBIC ran once): it holds on that pair
    assert [r["status"] for r in v["claims"]] == ["inconclusive", "holds", "holds", "holds"]
    assert v["verdict"] == "inconclusive" and (v["holds"], v["fails"], v["inconclusive"]) == (3, 0, 1)
    assert v["why"][0] == ("interval straddles the bound: bbr-bounded-queue cc=bbr: 70.0 [-247.7, 387.7] n=2 "
                           "vs <= 2 x base_rtt_ms (40)")
    assert [c["points"] for c in claims.straddling(v)] == [["cc=bbr"]]
    lines = claims.verdict_lines(v)
    assert lines[:2] == ["verdict: inconclusive", f"  why: {v['why'][0]}"]
    assert lines[2].startswith("  [ ?? ] BBR's median RTT stays within 2x")
    assert lines[2].endswith("(cc=bbr: 70.0 [-247.7, 387.7] n=2)")
    assert claims.verdict_lines(v, why=False)[1].startswith("  [ ?? ] BBR's median RTT")


def test_a_failing_claim_makes_it_not_reproduced_even_beside_an_inconclusive_one():
    records = figure5_records(util=0.5)
    records[0]["repetition"] = 1
    records.append(dict(records[0], repetition=2, metrics=dict(records[0]["metrics"], rtt_p50_ms=95.0)))
    v = claims.verdict(spec.load(FIGURE5).claims, records)
    assert v["verdict"] == "not reproduced" and (v["holds"], v["fails"], v["inconclusive"]) == (2, 1, 1)
    assert v["why"][0].startswith("fails: link-busy cc=")


def test_a_cpu_bound_points_checks_are_inconclusive_never_holding():
    records = figure5_records(cpu_bound=False)
    records.append(rec({"cc": "bbr"}, rtt_p50_ms=45.0, base_rtt_ms=40.0, link_busy=0.95, cpu_bound=True,
                       rtt_p95_ms=60.0, full_buffer_rtt_ms=252.0))
    v = claims.verdict(spec.load(FIGURE5).claims, records)
    assert v["verdict"] == "inconclusive" and v["cpu_bound_points"] == ["cc=bbr"]
    by_id = {r["id"]: r for r in v["claims"]}
    assert by_id["bbr-bounded-queue"]["status"] == "inconclusive"  # it would hold: it counts neither way
    assert by_id["bbr-bounded-queue"]["checks"][0]["note"] == "CPU-bound"
    assert by_id["cubic-fills-buffer"]["status"] == "holds"
    assert [c["status"] for c in by_id["link-busy"]["checks"]] == ["inconclusive", "holds"]
    assert v["why"] == ["CPU-bound points: cc=bbr"] and claims.straddling(v) == []
    lines = claims.verdict_lines(v)
    assert lines[2].endswith("(cc=bbr: 45.0 [45, 45] n=2 (CPU-bound))")
    assert lines[-1] == "  warning: CPU-bound points (emulation not trustworthy): cc=bbr"
    # nor does a failing CPU-bound point count against a claim
    failing = claims.verdict(spec.load(FIGURE5).claims, figure5_records(util=0.1, cpu_bound=True))
    assert failing["verdict"] == "inconclusive" and failing["fails"] == 0


def test_a_link_below_its_rate_sets_its_points_aside_too():
    records = figure5_records()
    records[1]["metrics"]["link_short"] = True
    v = claims.verdict(spec.load(FIGURE5).claims, records)
    assert v["verdict"] == "inconclusive" and v["link_short_points"] == ["cc=cubic"]
    assert v["why"] == ["link below its rate: cc=cubic"]
    assert claims.verdict_lines(v)[-1].endswith("(the emulator's limit): cc=cubic")
    records[0]["metrics"]["cpu_bound"] = True
    v = claims.verdict(spec.load(FIGURE5).claims, records)
    assert v["verdict"] == "inconclusive" and v["why"] == ["CPU-bound points: cc=bbr", "link below its rate: cc=cubic"]
    vs_check = next(r for r in v["claims"] if r["id"] == "bbr-below-cubic")["checks"][0]
    assert vs_check["status"] == "inconclusive" and vs_check["note"] == "CPU-bound, link below its rate"


def test_a_link_off_its_schedule_sets_its_points_aside_and_says_so():
    records = figure5_records()
    records[0]["metrics"]["off_schedule"] = True
    v = claims.verdict(spec.load(FIGURE5).claims, records)
    assert v["verdict"] == "inconclusive" and v["off_schedule_points"] == ["cc=bbr"]
    assert v["why"] == ["link off its schedule: cc=bbr"] and v["cpu_bound_points"] == []
    assert claims.verdict_lines(v)[-1] == ("  warning: the link did not keep its schedule (a rate change in force "
                                           "late, or a trace's updates skipped): cc=bbr")
    records[0]["metrics"]["off_schedule"] = False
    assert claims.verdict(spec.load(FIGURE5).claims, records)["off_schedule_points"] == []
    records[0]["metrics"]["sender_short"] = True  # a starved BBR flow: undecided, never "not reproduced"
    records[0]["metrics"]["link_busy"] = 0.46
    v = claims.verdict(spec.load(FIGURE5).claims, records)
    assert v["verdict"] == "inconclusive" and v["sender_short_points"] == ["cc=bbr"] and v["fails"] == 0
    assert v["why"] == ["senders held back: cc=bbr"]
    assert claims.verdict_lines(v)[-1] == ("  warning: the flows left a plain link idle, held back by their sending "
                                           "hosts (late pacing timers, CPU): cc=bbr")


def test_packets_dropped_inside_the_emulator_set_the_point_aside():
    """Mahimahi's chain drops a packet outside its link when a shell is late to read its TUN
    device: a loss nobody asked for, so the point is not judged."""
    records = figure5_records()
    records[1]["metrics"]["emulator_drops"] = 3
    v = claims.verdict(spec.load(FIGURE5).claims, records)
    assert v["verdict"] == "inconclusive" and v["emulator_drop_points"] == ["cc=cubic"], v
    assert v["why"] == ["dropped inside the emulator: cc=cubic"]
    assert claims.verdict_lines(v)[-1] == ("  warning: Mahimahi's chain dropped packets outside its link (a shell "
                                           "late to read its TUN device: the emulator's limit): cc=cubic")
    records[1]["metrics"]["emulator_drops"] = 0  # counted, none: judged
    assert claims.verdict(spec.load(FIGURE5).claims, records)["emulator_drop_points"] == []


def test_why_names_three_checks_of_a_kind_and_counts_the_rest():
    records = [rec({"loss": f"{n}%"}, m=9) for n in range(1, 6)]
    records += [r for n in (10, 20) for r in reps({"loss": f"{n}%"}, "m", [4.0, 5.0, 6.0])]
    v = claims.verdict((claim(max=5),), records)
    assert v["verdict"] == "not reproduced"
    assert v["why"] == ["fails: c loss=1%: 9.0 vs <= 5", "fails: c loss=2%: 9.0 vs <= 5", "fails: c loss=3%: 9.0 vs <= 5",
                        "fails: and 2 more checks",
                        "interval straddles the bound: c loss=10%: 5.0 [2.516, 7.484] n=3 vs <= 5",
                        "interval straddles the bound: c loss=20%: 5.0 [2.516, 7.484] n=3 vs <= 5"]


def test_an_untrusted_point_is_not_reported_when_no_claim_reads_it():
    v = claims.verdict((claim(max=1, where={"cc": "bbr"}),),
                       [rec({"cc": "bbr"}, m=0), rec({"cc": "cubic"}, m=0, cpu_bound=True)])
    assert v["verdict"] == "reproduced" and v["why"] == [] and v["cpu_bound_points"] == ["cc=cubic"]


def test_nothing_evaluated_is_not_inconclusive():
    v = claims.verdict((claim(max=1, where={"cc": "reno"}),), [rec({"cc": "bbr"}, m=0, cpu_bound=True)])
    assert v["verdict"] == "not evaluated" and v["cpu_bound_points"] == ["cc=bbr"]
    assert (v["holds"], v["fails"], v["inconclusive"]) == (0, 0, 0)
    assert v["why"] == ["no claim selected a point of this run"]
    v = claims.verdict((), figure5_records())
    assert v["verdict"] == "not evaluated" and v["why"] == ["the experiment has no claims"]


def test_verdict_lines_marks():
    records = figure5_records(util=0.5)
    cs = spec.load(FIGURE5).claims + (spec.Claim("x", "never", "m", {"cc": "reno"}, None, None, 1, None),)
    v = claims.verdict(cs, records)
    lines = claims.verdict_lines(v)
    assert lines[0] == "verdict: not reproduced"
    assert v["why"] == ["fails: link-busy cc=bbr: 0.5 vs >= 0.85", "fails: link-busy cc=cubic: 0.5 vs >= 0.85"]
    assert lines[1:3] == [f"  why: {w}" for w in v["why"]]
    assert lines[3].startswith("  [PASS] BBR's median RTT stays within 2x") and "(cc=bbr: 45.0)" in lines[3]
    assert lines[5].startswith("  [PASS] BBR's median RTT is at most half") and "cc=bbr vs cc=cubic: 0.225" in lines[5]
    assert lines[6].startswith("  [FAIL] Both keep the link busy") and "cc=cubic: 0.5" in lines[6]
    assert lines[7] == "  [n/a ] never"


def test_a_failed_fidelity_check_makes_points_at_its_rate_or_above_inconclusive():
    def at(mbit, loss, value, changes=()):
        r = rec({"rate": f"{mbit}Mbit", "loss": loss}, m=value)
        r["link"] = {"rate": mbit * 1e6, "changes": [{"at": 10.0, "rate": c * 1e6} for c in changes]}
        return r

    c = (claim("m", min=1),)
    gate = {"rate_bps": 100e6, "run": "results/fidelity/x", "failed": "one flow gets 95%: 0.74"}
    low = [at(10, "1%", 2), at(10, "2%", 2)]
    v = claims.verdict(c, low, gate)
    assert v["verdict"] == "reproduced" and v["fidelity_gate"] is None
    v = claims.verdict(c, low + [at(10, "5%", 0.5, changes=[200])] + [at(100, f"{n}%", 2) for n in range(4)], gate)
    assert v["verdict"] == "inconclusive" and v["fails"] == 0  # 0.5 at 200 Mbit/s does not count against
    assert v["fidelity_gate"]["points"][0] == "rate=10Mbit, loss=5%" and len(v["fidelity_gate"]["points"]) == 5
    assert v["why"] == ["at or above 100 Mbit/s, where this machine's emulator failed its fidelity check "
                        f"({claims.RECALIBRATE}): "
                        "rate=10Mbit, loss=5%, rate=100Mbit, loss=0%, rate=100Mbit, loss=1% and 2 more"]
    assert v["claims"][0]["checks"][2]["note"] == "at or above the fidelity gate"
    assert claims.verdict_lines(v)[-1] == (
        "  warning: this machine's emulator failed its fidelity check at 100 Mbit/s (one flow gets 95%: 0.74); "
        "not trustworthy at that rate or above: rate=10Mbit, loss=5%, rate=100Mbit, loss=0%, "
        "rate=100Mbit, loss=1% and 2 more; measure again: sudo ./figure5.sh calibrate (inside the VM or on a "
        "testbed host: sudo bbrlab calibrate)")


def test_a_point_under_an_aqm_is_gated_by_that_aqms_own_calibration():
    def at(mbit, aqm, value):
        r = rec({"rate": f"{mbit}Mbit", "aqm": aqm}, m=value)
        r["link"] = {"rate": mbit * 1e6, "aqm": {"kind": aqm}, "shaper": "netem" if aqm == "fifo" else "htb"}
        return r

    c = (claim("m", min=1),)
    gate = {"rate_bps": 100e6, "failed": "x", "paths": {"fq_codel-htb": {"rate_bps": 20e6, "failed": "y"}}}
    v = claims.verdict(c, [at(10, "fifo", 2), at(50, "fifo", 2), at(10, "fq_codel", 2), at(50, "fq_codel", 0.5)],
                       gate)
    assert v["verdict"] == "inconclusive" and v["fidelity_gate"]["points"] == ["rate=50Mbit, aqm=fq_codel"]
    assert v["why"][0].startswith("at or above 100 Mbit/s (under fq_codel-htb: 20), where")
    cake = at(50, "cake", 0.5)  # an AQM the run has no calibration of: the droptail gate binds
    assert claims.verdict(c, [cake], gate)["verdict"] == "not reproduced"


def test_a_failing_claim_shows_its_failed_checks_first():
    # as a verdict.json written before checks had a status reads (their "ok")
    v = {"verdict": "not reproduced", "cpu_bound_points": [], "claims": [{
        "text": "BBR beats CUBIC", "status": "fails",
        "checks": [{"point": f"loss={n}%", "value": 3.0, "ok": True} for n in range(1, 6)]
        + [{"point": "loss=50%", "value": 1.2, "ok": False}]}]}
    line = claims.verdict_lines(v)[1]
    assert line.startswith("  [FAIL] BBR beats CUBIC  (loss=50%: 1.2; loss=1%: 3.0;")
    assert line.endswith("; 2 more)")


def test_an_inconclusive_claim_shows_its_undecided_checks_first():
    checks = [{"point": f"loss={n}%", "value": 3.0, "low": 2.5, "high": 3.5, "n": 3, "status": "holds"}
              for n in (1, 2)]
    checks.append({"point": "loss=5%", "value": 1.1, "low": 0.9, "high": 1.3, "n": 3, "status": "inconclusive",
                   "note": claims.STRADDLES})
    v = {"verdict": "inconclusive", "cpu_bound_points": [], "why": ["x"],
         "claims": [{"text": "BBR beats CUBIC", "status": "inconclusive", "checks": checks}]}
    assert claims.verdict_lines(v)[2] == ("  [ ?? ] BBR beats CUBIC  (loss=5%: 1.1 [0.9, 1.3] n=3; "
                                          "loss=1%: 3.0 [2.5, 3.5] n=3; loss=2%: 3.0 [2.5, 3.5] n=3)")


def test_a_verdict_on_part_of_a_run_says_what_it_rests_on():
    v = {"verdict": "reproduced", "claims": [], "cpu_bound_points": [], "points": {"finished": 73, "total": 130}}
    assert claims.verdict_lines(v)[0] == "verdict (73 of 130 points so far): reproduced"
    v["points"]["finished"] = 130
    assert claims.verdict_lines(v)[0] == "verdict: reproduced"


def test_a_claim_on_the_rtt_selects_a_point_whose_rtt_is_not_swept():
    """quic-jitter with --set rtt=0.5ms --set delay_variation=2ms (no longer axes): the claim
    on BBR where the variation reaches min_rtt still selects the BBR point; set aside as
    CPU-bound it is undecided, and the run at most inconclusive, not "reproduced" on CUBIC's
    claim alone."""
    link = {"rate": 8e6, "rtt": 0.0005, "delay_variation": 0.002, "jitter": 0.0}
    bbr = dict(rec({"cc": "bbr"}, g=5.0, cpu_bound=True), link=link)
    cubic = dict(rec({"cc": "cubic"}, g=6.0, eff=0.95, cpu_bound=False), link=link)
    on_bbr = claim("g", where={"cc": "bbr", "rtt": {"max": "1ms"}, "delay_variation": {"min": "2ms"}},
                   vs={"cc": "cubic"}, min=0.9)
    elsewhere = claim("g", where={"cc": "bbr", "rtt": "10ms"}, vs={"cc": "cubic"}, min=0.9)
    on_cubic = claim("eff", where={"cc": "cubic"}, min=0.9)
    v = claims.verdict((on_bbr, elsewhere, on_cubic), [bbr, cubic])
    assert [r["status"] for r in v["claims"]] == ["inconclusive", "not evaluated", "holds"]
    assert v["claims"][0]["checks"][0]["note"] == set_aside.CPU_BOUND
    assert v["verdict"] == "inconclusive"


def test_a_claim_whose_point_failed_is_undecided_never_not_evaluated():
    """figure 5's BBR point failed to run: its claims are undecided ("??" with the error),
    the run at most inconclusive; a claim on CUBIC's point alone is judged as before."""
    cubic = [r for r in figure5_records() if r["params"]["cc"] == "cubic"]
    stand_in = dict(rec({"cc": "bbr"}), error="iperf3 exited 1")
    v = claims.verdict(spec.load(FIGURE5).claims, cubic, failed=[stand_in])
    by_id = {r["id"]: r for r in v["claims"]}
    assert by_id["bbr-bounded-queue"]["status"] == "inconclusive" and v["verdict"] == "inconclusive"
    assert by_id["cubic-fills-buffer"]["status"] == "holds"
    line = next(x for x in claims.verdict_lines(v) if "BBR" in x and "??" in x)
    assert "cc=bbr: the point failed: iperf3 exited 1" in line, line
    assert claims.verdict(spec.load(FIGURE5).claims, cubic)["verdict"] != "inconclusive"  # before: n/a, not ??
    assert "not measured: bbr-bounded-queue cc=bbr: the point failed: iperf3 exited 1" in v["why"], v["why"]


# ---------------------------------------------------------------- sources and their conditions


def _share_claim(**extra) -> dict:
    return {"id": "v3-share", "text": "BBRv3's share stays between 0.35 and 0.65", "metric": "steady_utilization", "min": 0.35,
            "max": 0.65, **extra}


def test_a_claim_names_its_source_or_is_the_testbeds_own():
    (c,) = claim_format.parse([_share_claim(source="slides: IETF 117, BBRv3 update, slide 19")])
    assert c.source == "slides: IETF 117, BBRv3 update, slide 19" and c.kind == "slides"
    (own,) = claim_format.parse([_share_claim()])
    assert own.source == "testbed" and own.kind == "testbed"
    for bad in ("a blog", "blog: somewhere", "paper:", 7):
        with pytest.raises(SpecError, match=r"claims\.0\.source: expected `testbed` .* or \"KIND: reference\""):
            claim_format.parse([_share_claim(source=bad)])
    with pytest.raises(SpecError, match=r"claims\.0\.conditions\.bdp: not a sweep axis"):
        claim_format.parse([_share_claim(conditions={"bdp": {"max": 62}})])


def test_points_outside_the_sources_conditions_are_not_judged():
    """v3-coexist's claim as Google states it: coexistence up to a BDP of about 62 packets.
    At 100 packets the run is outside it: "outside its stated conditions", never "fails"."""
    (c,) = claim_format.parse([_share_claim(source="slides: BBRv3 design target", conditions={"bdp_pkts": {"max": 62}})])
    inside = rec({"buffer": "2bdp"}, steady_utilization=0.5, bdp_pkts=33, buffer_pkts=66)
    outside = rec({"buffer": "16bdp"}, steady_utilization=0.21, bdp_pkts=100, buffer_pkts=1600)
    result = claims.evaluate_claim(c, [inside, outside])
    assert result["status"] == "holds" and [k["point"] for k in result["checks"]] == ["buffer=2bdp"]
    assert result["outside"] == {"conditions": {"bdp_pkts": {"max": 62}}, "points": ["buffer=16bdp"]}
    assert result["source"] == "slides: BBRv3 design target"
    v = claims.verdict((c,), [outside])
    assert v["verdict"] == "not evaluated" and v["claims"][0]["status"] == claims.OUTSIDE
    assert v["why"] == ["this run's points lie outside the conditions the claims' sources state"]
    assert claims.verdict_lines(v)[-1] == ("  [out ] BBRv3's share stays between 0.35 and 0.65  (outside its source's "
                                           "conditions, bdp_pkts <= 62: buffer=16bdp)")
    mine = claim_format.parse([{"id": "mine", "text": "ours", "metric": "steady_utilization", "max": 1}])[0]
    v = claims.verdict((mine, c), [outside])  # the testbed's own claim decides; the outside one does not
    assert v["verdict"] == "reproduced"
    lines = claims.verdict_lines(v)
    assert lines[1] == "  the authors' claims:" and lines[2].startswith("  [out ] BBRv3's share")
    assert lines[3] == "  this testbed's own observations:" and lines[4].startswith("  [PASS] ours")


def test_every_claim_the_project_ships_names_its_source():
    """The experiment files' and the labs' claims say whose they are: an author's (with where
    they say it) or this testbed's own observation; a user's file may leave it out."""
    import yaml

    repo = Path(__file__).resolve().parents[2]
    files = sorted(repo.glob("experiments/*.yaml")) + sorted(repo.glob("labs/**/*.yaml"))
    unsourced, kinds = [], set()
    for path in files:
        raw = yaml.safe_load(path.read_text())
        for c in (raw.get("claims") or []) if isinstance(raw, dict) else []:
            if "source" not in c:
                unsourced.append(f"{path.relative_to(repo)}: {c.get('id')}")
            else:
                kinds.add(str(c["source"]).split(":")[0])
    assert unsourced == []
    assert {"paper", "testbed"} <= kinds <= set(claim_format.SOURCE_KINDS)


def test_a_failed_point_outside_the_sources_conditions_is_outside_not_undecided():
    """figure8-emulators at 4 Mbit/s: CUBIC's point at 40% loss failed (the chain's loss took
    iperf3's control connection), and the paper's claim holds at figure 8's BDP of 833
    packets only: the point, as it was set up (33 packets), is outside, not undecided; a failed
    point whose conditions cannot be read (its idle RTT was never measured) stays undecided."""
    (c,) = claim_format.parse([_share_claim(source="paper: figure 8", conditions={"bdp_pkts": {"min": 800}})])
    measured = rec({"loss": "10%"}, steady_utilization=0.07, bdp_pkts=33.33)
    stand_in = dict(rec({"loss": "40%"}, bdp_pkts=33.33), error="iperf3: control socket has closed unexpectedly")
    result = claims.evaluate_claim(c, [measured], failed=[stand_in])
    assert result["status"] == claims.OUTSIDE and result["checks"] == [], result
    assert result["outside"]["points"] == ["loss=10%", "loss=40%"]
    (floor,) = claim_format.parse([_share_claim(source="post: x", conditions={"min_rtt": {"max": "128us"}})])
    assert claims.evaluate_claim(floor, [], failed=[stand_in])["status"] == "inconclusive"
