"""The names of the metrics a point's analysis writes. Each analysis module that writes
metrics.json keys declares them beside its code (METRICS), as each plot kind declares the
series it reads; the table of names (schema/metric_names.py: unit, meaning, what a claim may
read) holds exactly what they declare, and what they write is what they declare: read from
real analyses of captured and synthetic points, not from their source text."""

import importlib
import json
import pkgutil
import shutil
from pathlib import Path

import pytest

from bbrlab import analysis as analysis_package
from bbrlab.analysis import analyze, aqm_metrics, classes, cpu_metrics, fct, irtt_output, senders, trace_metrics
from bbrlab.analysis.system_output import QdiscSample
from bbrlab.emulation import topo
from bbrlab.schema import experiment as spec, traces
from bbrlab.schema.metric_names import ALL_METRICS, CLAIMABLE

REPO = Path(__file__).resolve().parents[2]
STEP_BBR = REPO / "tests" / "fixtures" / "step-bbr"
TIMINGS = json.loads((STEP_BBR / "point.json").read_text())["timings"]
WRITERS = {info.name: module for info in pkgutil.iter_modules(analysis_package.__path__)
           if hasattr(module := importlib.import_module(f"bbrlab.analysis.{info.name}"), "METRICS")}


def declared() -> set[str]:
    return {name for module in WRITERS.values() for name in module.METRICS}


# ---------------------------------------------------------------- points to analyze: (point, folder, t0, launches, end)

def captured(tmp_path: Path):
    """The step experiment's BBR point as the testbed captured it: one flow, two rate changes."""
    (point,) = [p for p in spec.load(REPO / "experiments" / "step.yaml").points if p.params["cc"] == "bbr"]
    return point, STEP_BBR, TIMINGS["t0"], TIMINGS["launches"], TIMINGS["end"]


def two_flows(tmp_path: Path):
    """The same link with two BBR flows (the second: the first's iperf3 files again) and the
    frames that left the bottleneck captured: fairness and the link's 100 ms peak."""
    from test_calibrate import pcap

    raw = {key: value for key, value in spec.load_raw(REPO / "experiments" / "step.yaml").items()
           if key in ("name", "link", "pacing")}
    (point,) = spec.build(dict(raw, flows=[{"cc": "bbr", "count": 2, "duration": "30s"}],
                               sampling={"link_pcap": True})).points
    folder = tmp_path / "two-flows"
    shutil.copytree(STEP_BBR, folder)
    for role in ("client", "server"):
        shutil.copy(folder / "raw" / f"iperf3-f1-{role}.json", folder / "raw" / f"iperf3-f2-{role}.json")
    frames = [(TIMINGS["t0"] + 3 + k / 1000, 1514) for k in range(2000)]  # 12 Mbit/s for 2 s
    (folder / "raw" / "bottleneck.pcap").write_bytes(pcap(frames))
    launched = TIMINGS["launches"]["f1"]
    return point, folder, TIMINGS["t0"], {"f1": launched, "f2": launched}, TIMINGS["end"]


def on_a_trace(tmp_path: Path):
    """The captured flow on a link that replays a trace: judged against its schedule."""
    path = traces.write(tmp_path / "link.trace", traces.synthesize("square", 60.0, 10e6, low_bps=40e6, period=60.0))
    (point,) = spec.build({"link": {"trace": str(path), "rtt": "40ms", "buffer": "67pkt", "loss": "1%"},
                           "flows": [{"cc": "bbr", "duration": "30s"}]}).points
    return point, STEP_BBR, TIMINGS["t0"], TIMINGS["launches"], TIMINGS["end"]


def short_flows(tmp_path: Path):
    """Two classes of short flows (the programs' captured output), no long flow."""
    from test_fct import T0, mix_point

    point, _, raw = mix_point(tmp_path)
    (raw / "ping-g1.txt").write_text((REPO / "tests" / "fixtures" / "ping_bbr.txt").read_text())
    return point, tmp_path, T0, {}, 8.0


POINTS = {"captured": captured, "two flows": two_flows, "on a trace": on_a_trace, "short flows": short_flows}


def analyzed(tmp_path: Path, name: str) -> dict:
    tmp_path.mkdir(parents=True, exist_ok=True)
    point, folder, t0, launches, end = POINTS[name](tmp_path)
    return analyze.analyze(point, topo.build_plan(point), folder, t0, launches, end)[1]


# ---------------------------------------------------------------- the table against the declarations

def test_the_table_names_exactly_what_the_analysis_modules_declare():
    assert sorted(WRITERS) == ["analyze", "aqm_metrics", "classes", "cpu_metrics", "fct", "irtt_output", "senders",
                               "trace_metrics"]
    assert sorted(declared() - set(ALL_METRICS)) == []  # written without a unit and a meaning
    assert sorted(set(ALL_METRICS) - declared()) == []  # in the table, written by no module


@pytest.mark.parametrize("name", POINTS)
def test_a_point_s_analysis_writes_only_declared_names(tmp_path, name):
    assert sorted(set(analyzed(tmp_path, name)) - declared()) == []


def test_analyze_declares_exactly_the_keys_it_writes_itself(tmp_path, monkeypatch):
    """Its helpers' writing silenced, what remains is analyze.py's own, `update(key=...)`
    included; the points together reach every key it declares (none is dead)."""
    for module, name, nothing in ((classes, "per_class", {}), (fct, "summarize", {}), (fct, "programs", {}),
                                  (fct, "per_class", []), (aqm_metrics, "summarize", None),
                                  (irtt_output, "summarize", None), (trace_metrics, "summarize", ({}, [])),
                                  (trace_metrics, "kept", None), (cpu_metrics, "summarize", None),
                                  (senders, "summarize", None)):
        monkeypatch.setattr(module, name, lambda *args, nothing=nothing: nothing)
    written = set().union(*(analyzed(tmp_path / name.replace(" ", "-"), name) for name in POINTS))
    assert sorted(written - set(analyze.METRICS)) == []
    assert sorted(set(analyze.METRICS) - written) == []


# ---------------------------------------------------------------- each helper: what it writes, given all it reads

def queue_samples() -> list[QdiscSample]:
    """An fq_codel bottleneck sampled every 0.5 s: its backlog, CE marks and last sojourn."""
    return [QdiscSample(t=100.0 + k / 2, kind="fq_codel", handle="1:", parent="root", backlog_bytes=15_000,
                        backlog_pkts=10, drops=0, sent_bytes=k * 625_000, sent_pkts=k * 416, overlimits=0,
                        requeues=0, options={}, xstats={"ecn_mark": 3 * k, "ldelay": 4000}) for k in range(20)]


def the_queue() -> dict:
    out: dict = {}
    aqm_metrics.summarize(queue_samples(), lambda t: 10e6, 100.0, 2.0, 10.0, {}, out)
    return out


def the_probe() -> dict:
    trips = [irtt_output.RoundTrip(100.0 + k / 10, 20.0 + k % 3, 21.0, "false") for k in range(50)]
    trips.append(irtt_output.RoundTrip(104.0, None, None, "true_up"))
    out: dict = {}
    irtt_output.summarize({"g1": trips}, 100.0, 1.0, 10.0, {}, out)
    return out


def the_trace() -> dict:
    s = traces.schedule(traces.parse("".join(f"{t}\n" for t in traces.synthesize("constant", 2.0, 8e6))), 0.01)
    counter = [(t / 10, int(s.capacity_bits(0, t / 10) / 8), 10) for t in range(0, 41)]
    log = "".join(f"{k} {k / 100:.6f} {k / 100 + 0.001:.6f} 0\n" for k in range(300))
    out = trace_metrics.summarize(s, log, counter, 1.0, 4.0, 4.0, 0.85)[0]
    trace_metrics.kept([{"planned": 10.0, "issued": 10.001, "at": 10.2}], out)
    return out


def the_short_flows() -> dict:
    from test_fct import rows

    return {**fct.summarize(rows()), **fct.programs([{"role": "send", "cpu_s": 0.2}], rows())}


def the_classes() -> dict:
    flows = [{"id": f"f{g + 1}", "cc": cc, "group": g, "data_start_s": 0.0, "goodput_mbps": 4.0,
              "steady_goodput_mbps": 4.5, "retransmits": 3, "sent_bytes": 10_000_000} for g, cc in enumerate(("bbr", "cubic"))]
    series = {f["id"]: {"srtt_ms": [[t, 50.0] for t in range(10)]} for f in flows}
    return classes.per_class(flows, series, [0.04, 0.01], 2.0, 9.5)


def the_cpus() -> dict:
    from test_analysis import PROC_STAT

    out: dict = {}
    cpu_metrics.summarize(PROC_STAT, 100.0, 5.0, {}, out)
    return out


def the_senders() -> dict:
    (point,) = [p for p in spec.load(REPO / "experiments" / "step.yaml").points if p.params["cc"] == "bbr"]
    out: dict = {"link_busy": 0.5}
    senders.summarize(point, topo.build_plan(point), out)
    return {k: v for k, v in out.items() if k != "link_busy"}


@pytest.mark.parametrize(("module", "writes"), [(aqm_metrics, the_queue), (irtt_output, the_probe),
                                                (trace_metrics, the_trace), (fct, the_short_flows),
                                                (classes, the_classes), (cpu_metrics, the_cpus),
                                                (senders, the_senders)],
                         ids=lambda x: getattr(x, "__name__", ""))
def test_each_helper_writes_exactly_what_its_module_declares(module, writes):
    assert sorted(set(writes())) == sorted(set(module.METRICS))


def test_claimable_metrics_are_the_numbers():
    assert "rtt_p50_ms" in CLAIMABLE and "groups" not in CLAIMABLE and "cpu_bound" not in CLAIMABLE
    assert "share" in CLAIMABLE and "trace_delivery" in CLAIMABLE  # of a class; of a trace point
    assert all(len(entry) == 2 and all(entry) for entry in ALL_METRICS.values())
