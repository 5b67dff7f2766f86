"""The table of metric names (metric_names.py) is what analysis.py really writes: claims are
checked against it when a spec is loaded, and the format reference lists it."""

import json
import re
from pathlib import Path

from bbrlab.analysis import analyze as analysis, metrics
from bbrlab.spec import experiment as spec
from bbrlab.emulation import topo
from bbrlab.spec.metric_names import ALL_METRICS, CLAIMABLE, METRICS

REPO = Path(__file__).resolve().parents[2]
STEP_BBR = REPO / "tests" / "fixtures" / "step-bbr"


def test_every_metric_of_a_captured_point_is_in_the_table():
    (point,) = [p for p in spec.load(REPO / "experiments" / "step.yaml").points if p.params["cc"] == "bbr"]
    timings = json.loads((STEP_BBR / "point.json").read_text())["timings"]
    _, written = analysis.analyze(point, topo.build_plan(point), STEP_BBR, timings["t0"], timings["launches"],
                                  timings["end"])
    assert sorted(set(written) - set(ALL_METRICS)) == []


def test_every_metric_analysis_can_write_is_in_the_table():
    """Also the ones only some points write (several flows, a capture, rate changes)."""
    source = (REPO / "mininet" / "bbrlab" / "analysis" / "analyze.py").read_text()
    names = set(re.findall(r'out\["([a-z0-9_]+)"\]', source))
    for beside in ("aqm_metrics.py", "irtt.py"):  # the queue discipline's, irtt's probe
        names |= set(re.findall(r'out\["([a-z0-9_]+)"\]', (REPO / "mininet" / "bbrlab" / "analysis" / beside).read_text()))
    start = source.index("out: dict = {")
    names |= set(re.findall(r'"([a-z0-9_]+)": ', source[start:source.index("\n    }\n", start)]))
    summary = metrics.summary([1.0, 2.0])
    names |= {f"rtt_{k}_ms" for k in summary if k != "n"}  # analysis: out.update(rtt_{k}_ms ...)
    assert sorted(names - set(METRICS)) == []
    assert sorted(set(METRICS) - names) == []  # and nothing the analysis no longer writes


def test_claimable_metrics_are_the_numbers():
    assert "rtt_p50_ms" in CLAIMABLE and "groups" not in CLAIMABLE and "cpu_bound" not in CLAIMABLE
    assert "share" in CLAIMABLE and "trace_delivery" in CLAIMABLE  # of a class; of a trace point
    assert all(len(entry) == 2 and all(entry) for entry in ALL_METRICS.values())
