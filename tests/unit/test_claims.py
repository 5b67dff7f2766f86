"""Claims against hand-made point records: selection, bounds, ratios, repetitions, verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest
from bbrlab import claims, spec
from bbrlab.errors import SpecError

FIGURE5 = Path(__file__).resolve().parents[2] / "experiments" / "figure5.yaml"


def rec(params: dict | None = None, ccs=None, **metrics) -> dict:
    """A record shaped like the runner's point.json + metrics.json."""
    params = params or {}
    ccs = ccs or [params.get("cc", "bbr")]
    ident = ",".join(f"{k}={v}" for k, v in params.items())
    return {"id": ident, "params": params, "flows": [{"cc": c} for c in ccs], "metrics": metrics}


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
    assert [(c["point"], c["value"], c["ok"]) for c in result["checks"]] == [("cc=bbr", 1, True), ("cc=cubic", 9, False)]
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
    assert result["checks"] == [{"point": "point", "value": None, "ok": False, "note": note}]


def test_nothing_selected_is_not_evaluated():
    result = claims.evaluate_claim(claim(max=1, where={"cc": "reno"}), [rec({"cc": "bbr"}, m=0)])
    assert result == {"id": "c", "text": "a claim", "metric": "m", "status": "not evaluated", "checks": []}
    assert status(claim(max=1), []) == "not evaluated"


# ---------------------------------------------------------------- where


def test_facts_type_numeric_params_and_fall_back_to_flows_and_metrics():
    fact = claims.facts(rec({"loss": "1%", "rate": "10Mbit", "rtt": "40ms", "buffer": "5bdp"}, ccs=["bbr"], loss=0.3))
    assert fact == {"loss": 0.01, "rate": 10e6, "rtt": 0.04, "buffer": "5bdp", "cc": "bbr"}
    assert claims.facts(rec(ccs=["cubic", "bbr", "bbr"]))["cc"] == "bbr+cubic"
    assert claims.facts(rec(loss=0.02))["loss"] == 0.02


@pytest.mark.parametrize(("where", "selected"), [
    ({"loss": {"min": "2%"}}, ["5%", "10%"]),
    ({"loss": {"max": "5%"}}, ["1%", "5%"]),  # bounds are inclusive
    ({"loss": {"min": "1%", "max": "5%"}}, ["1%", "5%"]),
    ({"loss": {"min": 0.05}}, ["5%", "10%"]),
    ({"loss": "5%"}, ["5%"]),
    ({"loss": 0.1}, ["10%"]),
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
    assert [(c["point"], c["value"], c["ok"]) for c in result["checks"]] == [
        ("rate=10Mbit, cc=bbr vs rate=10Mbit, cc=cubic", 0.2, True),
        ("rate=20Mbit, cc=bbr vs rate=20Mbit, cc=cubic", 0.6, False),
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


def test_verdict_averages_repetitions_first():
    c = (claim("rtt", max=1.5, where={"cc": "bbr"}),)
    assert claims.verdict(c, [rec({"cc": "bbr"}, rtt=1.4), rec({"cc": "bbr"}, rtt=1.55)])["verdict"] == "reproduced"
    assert claims.verdict(c, [rec({"cc": "bbr"}, rtt=1.4), rec({"cc": "bbr"}, rtt=1.8)])["verdict"] == "not reproduced"


def test_cpu_bound_makes_the_verdict_inconclusive():
    records = figure5_records(cpu_bound=False)
    records.append(rec({"cc": "bbr"}, rtt_p50_ms=45.0, base_rtt_ms=40.0, link_busy=0.95, cpu_bound=True,
                       rtt_p95_ms=60.0, full_buffer_rtt_ms=252.0))
    v = claims.verdict(spec.load(FIGURE5).claims, records)
    assert v["verdict"] == "reproduced (inconclusive: CPU-bound)" and v["cpu_bound_points"] == ["cc=bbr"]
    lines = claims.verdict_lines(v)
    assert lines[-1] == "  warning: CPU-bound points (emulation not trustworthy): cc=bbr"
    failing = claims.verdict(spec.load(FIGURE5).claims, figure5_records(util=0.1, cpu_bound=True))
    assert failing["verdict"] == "not reproduced (inconclusive: CPU-bound)"


def test_a_link_below_its_rate_makes_the_verdict_inconclusive_too():
    records = figure5_records()
    records[1]["metrics"]["link_short"] = True
    v = claims.verdict(spec.load(FIGURE5).claims, records)
    assert v["verdict"] == "reproduced (inconclusive: link below its rate)" and v["link_short_points"] == ["cc=cubic"]
    assert claims.verdict_lines(v)[-1].endswith("(the emulator's limit): cc=cubic")
    records[0]["metrics"]["cpu_bound"] = True
    assert claims.verdict(spec.load(FIGURE5).claims, records)["verdict"] == \
        "reproduced (inconclusive: CPU-bound, link below its rate)"


def test_nothing_evaluated_is_not_inconclusive():
    v = claims.verdict((claim(max=1, where={"cc": "reno"}),), [rec({"cc": "bbr"}, m=0, cpu_bound=True)])
    assert v["verdict"] == "not evaluated" and v["cpu_bound_points"] == ["cc=bbr"]
    assert (v["holds"], v["fails"]) == (0, 0)
    assert claims.verdict((), figure5_records())["verdict"] == "not evaluated"


def test_verdict_lines_marks():
    records = figure5_records(util=0.5)
    cs = spec.load(FIGURE5).claims + (spec.Claim("x", "never", "m", {"cc": "reno"}, None, None, 1, None),)
    lines = claims.verdict_lines(claims.verdict(cs, records))
    assert lines[0] == "verdict: not reproduced"
    assert lines[1].startswith("  [PASS] BBR's median RTT stays within 2x") and "(cc=bbr: 45.0)" in lines[1]
    assert lines[3].startswith("  [PASS] BBR's median RTT is at most half") and "cc=bbr vs cc=cubic: 0.225" in lines[3]
    assert lines[4].startswith("  [FAIL] Both keep the link busy") and "cc=cubic: 0.5" in lines[4]
    assert lines[5] == "  [n/a ] never"


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
    v = claims.verdict(c, low + [at(10, "5%", 2, changes=[200])] + [at(100, f"{n}%", 2) for n in range(4)], gate)
    assert v["verdict"] == "reproduced (inconclusive: link below its rate)"
    assert v["fidelity_gate"]["points"][0] == "rate=10Mbit, loss=5%" and len(v["fidelity_gate"]["points"]) == 5
    assert claims.verdict_lines(v)[-1] == (
        "  warning: this machine's emulator failed its fidelity check at 100 Mbit/s (one flow gets 95%: 0.74); "
        "not trustworthy at that rate or above: rate=10Mbit, loss=5%, rate=100Mbit, loss=0%, "
        "rate=100Mbit, loss=1% and 2 more")


def test_a_failing_claim_shows_its_failed_checks_first():
    v = {"verdict": "not reproduced", "cpu_bound_points": [], "claims": [{
        "text": "BBR beats CUBIC", "status": "fails",
        "checks": [{"point": f"loss={n}%", "value": 3.0, "ok": True} for n in range(1, 6)]
        + [{"point": "loss=50%", "value": 1.2, "ok": False}]}]}
    line = claims.verdict_lines(v)[1]
    assert line.startswith("  [FAIL] BBR beats CUBIC  (loss=50%: 1.2; loss=1%: 3.0;")
    assert line.endswith("; 2 more)")


def test_a_verdict_on_part_of_a_run_says_what_it_rests_on():
    v = {"verdict": "reproduced", "claims": [], "cpu_bound_points": [], "points": {"finished": 73, "total": 130}}
    assert claims.verdict_lines(v)[0] == "verdict (73 of 130 points so far): reproduced"
    v["points"]["finished"] = 130
    assert claims.verdict_lines(v)[0] == "verdict: reproduced"
