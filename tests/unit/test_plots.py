"""Figures drawn from a results directory alone (synthetic series, the real plotting code)."""

import dataclasses
import struct
from pathlib import Path

import pytest

from bbrlab import plots, spec, topo
from bbrlab.results import RunDir, write_json

pytest.importorskip("matplotlib")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_fidelity_figure_shows_what_the_link_sent_against_its_rate(tmp_path):
    exp = spec.load(EXPERIMENTS / "fidelity.yaml")
    assert exp.plot_kind == "link_fidelity"
    point = exp.points[0]
    rundir = RunDir.create(tmp_path, exp.name)
    times = [i * 0.2 for i in range(150)]
    plan = topo.build_plan(point)
    write_json(rundir.points_dir / point.id / "point.json", {
        "id": point.id, "params": {}, "flows": [{"cc": "cubic"}], "summary": plan.summary,
        "flow_plan": [dataclasses.asdict(f) for f in plan.flows], "link": dataclasses.asdict(point.link)})
    write_json(rundir.points_dir / point.id / "metrics.json", {
        "link_mbps": 100.0, "payload_capacity_mbps": 95.6407, "buffer_pkts": 1667, "duration_s": 30.0,
        "link_delivery": 0.8043})
    write_json(rundir.points_dir / point.id / "series.json", {
        "flows": {"f1": {"cc": "cubic", "start": 0.0, "throughput": [[t, 78.0] for t in range(1, 31)]}},
        "link_sent": [[t, 80.0] for t in times], "queue": [[t, 1200] for t in times], "link_rate": [[0.0, 100.0]]})
    verdict = {"verdict": "not reproduced (inconclusive: link below its rate)", "claims": [],
               "cpu_bound_points": [], "link_short_points": ["point"]}
    path = plots.draw(exp, rundir, rundir.point_records(), verdict)
    assert path == rundir.path / "fidelity.png"
    width, height = png_size(path)
    assert width > 1000 and height > 600 and path.stat().st_size > 40_000  # two panels, legend, title, verdict


def test_a_long_sweep_is_named_by_its_range_in_the_title():
    exp = spec.load(EXPERIMENTS / "figure8.yaml")
    point = exp.points[0]
    plan = topo.build_plan(point)
    record = {"summary": plan.summary, "flow_plan": [dataclasses.asdict(f) for f in plan.flows],
              "link": dataclasses.asdict(point.link)}
    line = plots._params_line([record], exp.axes)
    assert "loss 0.001% … 50% (13 values, swept)" in line
    assert "bottleneck 100 Mbit/s, base RTT 100 ms" in line and len(line) < 140
    short = plots._params_line([record], {"loss": ["1%", "10%"], "cc": ["bbr", "cubic"]})
    assert "loss 1%, 10% (swept)" in short
