"""Mixed traffic classes in one point: metrics per flow group and per CC, and claims that
address one class (`where: {group: N}` or `{cc: NAME}` inside a mixed point)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bbrlab.analysis import analyze as analysis, classes
from bbrlab.verdicts import claims
from bbrlab.schema import experiment as spec
from bbrlab.emulation import topo
from bbrlab.schema.experiment import Claim

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def row(fid, cc, group, steady, goodput=None, retrans=0, start=0.0):
    return {"id": fid, "cc": cc, "group": group, "goodput_mbps": goodput if goodput is not None else steady,
            "steady_goodput_mbps": steady, "retransmits": retrans, "data_start_s": start}


def srtt(values, t0=0.0, step=0.5):
    return {"srtt_ms": [[t0 + i * step, v] for i, v in enumerate(values)]}


def mixed():
    """1 BBR flow (group 0) against 2 CUBIC flows (group 1) at 10 Mbit/s."""
    rows = [row("f1", "bbr", 0, 6.0, retrans=10), row("f2", "cubic", 1, 1.5, retrans=3),
            row("f3", "cubic", 1, 1.5, retrans=4)]
    series = {"f1": srtt([500, 45, 50, 55]), "f2": srtt([60, 70, 80, 90]), "f3": srtt([70, 80, 90, 100])}
    return classes.per_class(rows, series, [0.04, 0.04], startup=1.0, capacity_mbps=9.5)


def test_each_group_and_cc_gets_goodput_shares_rtt_percentiles_and_retransmits():
    out = mixed()
    g0, g1 = out["groups"]
    assert (g0["group"], g0["cc"], g0["flows"], g0["rtt_ms"]) == (0, "bbr", 1, 40.0)
    assert g0["share"] == pytest.approx(6 / 9, abs=1e-4) and g1["share"] == pytest.approx(3 / 9, abs=1e-4)
    assert g0["capacity_share"] == pytest.approx(6 / 9.5, abs=1e-4)
    assert g1["retransmits"] == 7 and g1["steady_goodput_mbps"] == 3.0
    # srtt from each flow's data start + startup (1 s): the samples at 0 and 0.5 s are left out
    assert g0["srtt_p50_ms"] == 52.5 and g0["srtt_p99_ms"] == pytest.approx(54.95)
    assert g1["srtt_p50_ms"] == 90
    assert out["by_cc"]["cubic"] == {k: v for k, v in g1.items() if k not in ("group", "class", "cc", "rtt_ms")}
    assert sum(c["share"] for c in out["by_cc"].values()) == pytest.approx(1.0, abs=1e-3)


def test_a_group_without_srtt_samples_has_no_percentiles():
    out = classes.per_class([row("f1", "bbr", 0, 5.0)], {}, [0.04], 1.0, 9.5)
    assert out["groups"][0]["srtt_p50_ms"] is None and out["groups"][0]["share"] == 1.0


def test_scope_reads_a_groups_or_a_ccs_metrics_over_the_points():
    mets = {"goodput_mbps": 9.0, "link_busy": 0.98, **mixed()}
    assert classes.scope(mets, {"group": 1})["share"] == pytest.approx(1 / 3, abs=1e-4)
    assert classes.scope(mets, {"group": 1})["link_busy"] == 0.98  # the point's, where the class has none
    assert classes.scope(mets, {"cc": "bbr"})["goodput_mbps"] == 6.0
    assert classes.scope(mets, {"group": 5}) == {}
    single = {"goodput_mbps": 9.0, "by_cc": {"bbr": {"goodput_mbps": 9.0, "share": 1.0}}}
    assert classes.scope(single, {"cc": "bbr"}) is single  # one CC: the point is the class


def test_a_real_single_flow_point_has_one_group_and_one_cc():
    exp = spec.load(EXPERIMENTS / "step.yaml")
    (point,) = [p for p in exp.points if p.params["cc"] == "bbr"]
    timings = json.loads((FIXTURES / "step-bbr" / "point.json").read_text())["timings"]
    _, m = analysis.analyze(point, topo.build_plan(point), FIXTURES / "step-bbr", timings["t0"],
                            timings["launches"], timings["end"])
    (group,) = m["groups"]
    assert group["share"] == 1.0 and group["cc"] == "bbr" and list(m["by_cc"]) == ["bbr"]
    assert group["steady_goodput_mbps"] == m["flows"][0]["steady_goodput_mbps"]
    assert set(classes.METRICS) <= set(m) and set(group) == set(classes.CLASS_METRICS) | {"group", "class", "cc", "rtt_ms"}
    assert 40 < group["srtt_p50_ms"] < 200 and group["srtt_p50_ms"] <= group["srtt_p99_ms"]


# ---------------------------------------------------------------- claims on a class


def record(buffer_bdp, bbr_share, rep=1):
    """A mixed point (1 BBR, 1 CUBIC) of a buffer sweep, shaped like point.json + metrics."""
    cubic = 1 - bbr_share
    mets = {"buffer_pkts": round(buffer_bdp * 33.33), "bdp_pkts": 33.33, "loss": 0.0,
            "groups": [{"group": 0, "cc": "bbr", "share": bbr_share, "steady_goodput_mbps": 9 * bbr_share},
                       {"group": 1, "cc": "cubic", "share": cubic, "steady_goodput_mbps": 9 * cubic}],
            "by_cc": {"bbr": {"share": bbr_share, "steady_goodput_mbps": 9 * bbr_share},
                      "cubic": {"share": cubic, "steady_goodput_mbps": 9 * cubic}}}
    return {"id": f"buffer={buffer_bdp}bdp,rep{rep}", "params": {"buffer": f"{buffer_bdp}bdp"}, "repetition": rep,
            "link": {"rate": 10e6, "buffer": {"value": buffer_bdp, "unit": "bdp"}},
            "flows": [{"cc": "bbr"}, {"cc": "cubic"}], "metrics": mets}


SWEEP = [record(b, s) for b, s in ((0.5, 0.8), (1, 0.62), (2, 0.5), (8, 0.3), (16, 0.25))]


def claim(where, metric="share", vs=None, **bounds):
    return Claim("c", "c", metric, where, vs, bounds.get("min"), bounds.get("max"), None)


def test_a_claim_reads_the_cc_it_names_inside_a_mixed_point():
    result = claims.evaluate_claim(claim({"cc": "bbr", "buffer_bdp": {"max": 1}}, min=0.5), SWEEP)
    assert [c["point"] for c in result["checks"]] == ["buffer=0.5bdp", "buffer=1bdp"]
    assert [c["value"] for c in result["checks"]] == [0.8, 0.62] and result["status"] == "holds"
    result = claims.evaluate_claim(claim({"cc": "cubic", "buffer_bdp": {"min": 8}}, min=0.5), SWEEP)
    assert [c["value"] for c in result["checks"]] == [0.7, 0.75] and result["status"] == "holds"


def test_a_claim_reads_the_group_it_names():
    result = claims.evaluate_claim(claim({"group": 1, "buffer_bdp": 16}, max=0.5), SWEEP)
    assert [c["value"] for c in result["checks"]] == [0.75] and result["status"] == "fails"
    assert claims.evaluate_claim(claim({"group": 2}, max=1), SWEEP)["status"] == "not evaluated"
    assert claims.evaluate_claim(claim({"cc": "reno"}, max=1), SWEEP)["status"] == "not evaluated"


def test_vs_compares_two_classes_of_the_same_point():
    result = claims.evaluate_claim(claim({"cc": "bbr", "buffer_bdp": 0.5}, "steady_goodput_mbps", {"cc": "cubic"},
                                         min=2), SWEEP)
    (check,) = result["checks"]
    assert check["point"] == "buffer=0.5bdp vs buffer=0.5bdp" and check["value"] == pytest.approx(4.0)


def test_single_cc_points_are_selected_and_read_as_before():
    plain = {"id": "cc=bbr,rep1", "params": {"cc": "bbr"}, "repetition": 1, "flows": [{"cc": "bbr"}],
             "metrics": {"goodput_mbps": 9.0, "by_cc": {"bbr": {"goodput_mbps": 9.0}}}}
    result = claims.evaluate_claim(claim({"cc": "bbr"}, "goodput_mbps", min=8), [plain])
    assert result["status"] == "holds" and result["checks"][0]["value"] == 9.0
