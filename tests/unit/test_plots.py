"""Figures drawn from a results directory alone (synthetic series, the real plotting code)."""

import dataclasses
import struct
from pathlib import Path

import pytest

from bbrlab.output import plots, plots_loss
from bbrlab.output.style import versions_named
from bbrlab.spec import experiment as spec
from bbrlab.emulation import topo
from bbrlab.store.results import RunDir, write_json

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
    verdict = {"verdict": "inconclusive", "why": ["link below its rate: point"], "claims": [],
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
    assert "loss 0.001% … 50% (13 values)" in line
    assert "bottleneck 100 Mbit/s, base RTT 100 ms" in line and len(line) < 150  # one line at the figure's width
    short = plots._params_line([record], {"loss": ["1%", "10%"], "cc": ["bbr", "cubic"]})
    assert "loss 1%, 10% (swept)" in short


def test_a_sweep_marks_the_curves_the_emulator_could_not_be_trusted_with(tmp_path):
    exp = spec.load(EXPERIMENTS / "bw-sweep.yaml", quick=True)  # 1 and 10 Mbit/s, 1% loss, bbr and cubic
    exp = dataclasses.replace(exp, axes=dict(exp.axes, loss=["1%", "10%"]))
    rundir = RunDir.create(tmp_path, exp.name)
    for rate in ("1Mbit", "10Mbit"):
        for loss in ("1%", "10%"):
            for cc in ("bbr", "cubic"):
                params = {"rate": rate, "loss": loss, "cc": cc}
                pid = ",".join(f"{k}={v}" for k, v in params.items())
                link = 1.0 if rate == "1Mbit" else 10.0
                write_json(rundir.points_dir / pid / "point.json", {"id": pid, "params": params, "flows": [{"cc": cc}]})
                write_json(rundir.points_dir / pid / "metrics.json", {
                    "link_mbps": link, "loss": float(loss[:-1]) / 100, "steady_goodput_mbps": link / 2})
    records = rundir.point_records()
    verdict = {"fidelity_gate": {"rate_bps": 1e7, "failed": "x", "points": [
        "rate=10Mbit, loss=1%, cc=bbr", "rate=10Mbit, loss=10%, cc=bbr", "rate=10Mbit, loss=1%, cc=cubic"]},
        "cpu_bound_points": [], "link_short_points": []}
    untrusted = plots.untrusted_points(verdict)
    assert len(untrusted) == 3
    plt = plots._pyplot()
    fig = plots_loss.sweep_normalized(plt, exp, rundir, records, untrusted)
    labels = {ax.get_title(): ax.get_legend_handles_labels()[1] for ax in fig.axes}
    plt.close(fig)
    assert labels["BBR"] == ["rate=1Mbit", "rate=10Mbit (emulator-limited)"]
    assert labels["CUBIC"] == ["rate=1Mbit", "rate=10Mbit (hollow: emulator-limited)"]


@pytest.mark.parametrize(("word", "color"), [
    ("reproduced", "#2e7d32"), ("not reproduced", "#b71c1c"), ("inconclusive", "#e65100"),
    ("not evaluated", "#616161"),
    ("reproduced (inconclusive: CPU-bound)", "#e65100"),  # a verdict.json from before the single word
])
def test_the_footer_is_coloured_by_the_verdict_word(word, color):
    plt = plots._pyplot()
    fig = plt.figure()
    plots._footer(fig, {"verdict": word, "why": ["interval straddles the bound: c point: 1"], "claims": [],
                        "cpu_bound_points": []})
    (text,) = fig.texts
    plt.close(fig)
    assert text.get_color() == color
    assert text.get_text().startswith(f"verdict: {word}\n  why: interval straddles the bound")


def test_no_legend_covers_the_data(step_run, tmp_path):
    from bbrlab.output import legends

    run = step_run(tmp_path)
    exp = spec.build(spec.load_raw(run.path / "spec.yaml"), default_name="step")
    verdict = {"verdict": "inconclusive", "why": [], "claims": [], "cpu_bound_points": []}
    for kind in ("rate_step", "rtt_timeseries", "throughput_timeseries"):
        fig = plots.figure(dataclasses.replace(exp, plot_kind=kind), run, run.point_records(), verdict)
        covered = {i: legends.legend_overlaps(ax) for i, ax in enumerate(fig.axes)}
        plots._pyplot().close(fig)
        assert not any(covered.values()), (kind, covered)


def test_a_legend_at_the_top_gets_headroom_above_data_that_fills_the_axes(step_run, tmp_path):
    """Figure 5's shape: CUBIC's RTT sits near the RTT behind a full buffer, the top of the axes."""
    import json
    import shutil

    from bbrlab.output import legends

    run = step_run(tmp_path)
    bbr = run.points_dir / "cc=bbr,rep1"
    cubic = run.points_dir / "cc=cubic,rep1"
    shutil.copytree(bbr, cubic)
    record = json.loads((cubic / "point.json").read_text())
    record.update(id="cc=cubic,rep1", params={"cc": "cubic"}, flows=[dict(record["flows"][0], cc="cubic")])
    (cubic / "point.json").write_text(json.dumps(record))
    series = json.loads((cubic / "series.json").read_text())
    full = json.loads((bbr / "metrics.json").read_text())["full_buffer_rtt_ms"]
    series["rtt"] = {g: [[t, full * (1.4 + 0.05 * (i % 3))] for i, (t, _) in enumerate(pts)]
                     for g, pts in series["rtt"].items()}
    (cubic / "series.json").write_text(json.dumps(series))
    exp = spec.build(spec.load_raw(run.path / "spec.yaml"), default_name="step")
    verdict = {"verdict": "inconclusive", "why": [], "claims": [], "cpu_bound_points": []}
    fig = plots.figure(dataclasses.replace(exp, plot_kind="rtt_timeseries"), run, run.point_records(), verdict)
    covered = [legends.legend_overlaps(ax) for ax in fig.axes]  # the RTT over time, and its CDF
    plots._pyplot().close(fig)
    assert covered == [0, 0]


def test_a_legend_at_the_top_of_a_log_axis_gets_headroom_in_decades():
    """The slowdown figure's shape: points near the top right of a log axis, under its legend."""
    from bbrlab.output import legends

    plt = plots._pyplot()
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.set_xscale("log")
    ax.set_yscale("log")
    for i in range(8):
        ax.plot([1e5 * 2 ** i, 2e7], [1.0 + 0.01 * i, 1.3 - 0.005 * i], marker="o", label=f"class {i}")
    ax.scatter([1e6, 2e7, 1.5e7], [1.29, 1.3, 1.28])
    ax.legend(fontsize=7, loc="upper right")
    fig.canvas.draw()
    assert legends.legend_overlaps(ax) > 0
    legends.clear_legends(fig)
    assert legends.legend_overlaps(ax) == 0 and ax.get_yscale() == "log" and ax.get_ylim()[0] > 0
    plt.close(fig)


def test_figure5_s_repetitions_keep_one_legend_entry_per_cc_and_the_cdf_axis_at_1(step_run, tmp_path):
    """Three runs of each of three CCs: one entry per CC naming every run's median, and the
    CDF's axis ends at 1 (no legend of its own to make room for)."""
    import json
    import shutil

    run = step_run(tmp_path)
    bbr = run.points_dir / "cc=bbr,rep1"
    medians = {}
    for cc in ("bbr", "bbr_noagg", "cubic"):
        for rep in (1, 2, 3):
            pid = f"cc={cc},rep{rep}"
            folder = run.points_dir / pid
            if folder != bbr:
                shutil.copytree(bbr, folder)
            record = json.loads((folder / "point.json").read_text())
            record.update(id=pid, params={"cc": cc}, repetition=rep, flows=[dict(record["flows"][0], cc=cc)])
            (folder / "point.json").write_text(json.dumps(record))
            mets = json.loads((folder / "metrics.json").read_text())
            mets["rtt_p50_ms"] = medians.setdefault(cc, {})[rep] = 60.0 + 10 * rep + (100 if cc == "cubic" else 0)
            (folder / "metrics.json").write_text(json.dumps(mets))
    exp = spec.build(spec.load_raw(run.path / "spec.yaml"), default_name="step")
    verdict = {"verdict": "inconclusive", "why": [], "claims": [], "cpu_bound_points": []}
    fig = plots.figure(dataclasses.replace(exp, plot_kind="rtt_timeseries"), run, run.point_records(), verdict)
    ax, cdf = fig.axes[:2]
    labels = ax.get_legend_handles_labels()[1]
    top = cdf.get_ylim()[1]
    plots._pyplot().close(fig)
    assert cdf.get_legend() is None and top <= 1.01
    assert "CUBIC, 3 runs: median RTT 170, 180, 190 ms" in labels, labels
    assert sum("3 runs" in label for label in labels) == 3, labels


@pytest.mark.parametrize(("values", "labelled"), [
    ([0.001, 0.01, 0.1, 1, 2, 5, 10, 15, 20, 25, 30, 40, 50], [0.001, 0.01, 0.1, 1, 2, 5, 10, 20, 50]),
    ([0.1, 1, 10, 20], [0.1, 1, 10, 20]), ([10, 15], [10, 15]), ([5], [5])])
def test_a_log_axis_labels_the_swept_values_that_have_room(values, labelled):
    """ReBBR's 13 loss rates crowd 10-50 %: their labels ran into each other ("15202530")."""
    assert plots_loss.spaced_ticks(values) == labelled


def loss_run(tmp_path, losses):
    """figure8's spec over LOSSES (as written), bbr and cubic, with made-up goodputs."""
    exp = spec.load(EXPERIMENTS / "figure8.yaml", [f"loss=[{','.join(losses)}]"], quick=True)
    rundir = RunDir.create(tmp_path, exp.name)
    for loss in losses:
        for cc in ("bbr", "cubic"):
            params = {"loss": loss, "cc": cc}
            pid = ",".join(f"{k}={v}" for k, v in params.items())
            p = float(loss[:-1]) / 100
            write_json(rundir.points_dir / pid / "point.json", {"id": pid, "params": params, "flows": [{"cc": cc}]})
            write_json(rundir.points_dir / pid / "metrics.json", {
                "link_mbps": 100.0, "loss": p, "base_rtt_ms": 100.0,
                "steady_goodput_mbps": 95 * (1 - p) if cc == "bbr" else 90 / (1 + 200 * p)})
    return exp, rundir


@pytest.mark.parametrize("kind", ["loss_goodput", "sweep_normalized"])
def test_zero_loss_has_its_own_place_on_the_log_axis(tmp_path, kind):
    exp, rundir = loss_run(tmp_path, ["0%", "0.1%", "1%", "10%"])
    plt = plots._pyplot()
    fig = getattr(plots_loss, kind)(plt, exp, rundir, rundir.point_records())
    fig.canvas.draw()
    ax = fig.axes[0]
    zero_at = plots_loss.zero_position([0.0, 0.1, 1.0, 10.0])
    assert zero_at == pytest.approx(0.1 / plots_loss.ZERO_STEP)
    measured = [line for line in ax.get_lines() if len(line.get_xdata()) == 4]
    assert measured and all(min(line.get_xdata()) == pytest.approx(zero_at) for line in measured)
    assert ax.get_xlim()[0] < zero_at  # in view, not off the left edge
    labels = [t.get_text() for t in ax.get_xticklabels()]
    plt.close(fig)
    assert labels[0] == "0" and "0.1" in labels and "10" in labels


def test_without_zero_loss_the_axis_is_the_swept_values():
    assert plots_loss.zero_position([0.1, 1.0]) is None
    assert plots_loss.zero_position([0.0]) == 1.0


def test_a_mixed_class_point_draws_each_class_in_its_ccs_colour(tmp_path):
    """A user's file with three classes (no plot kind: RTT over time) gets an entry and a
    colour per class, not one "bbr+cubic+reno" line."""
    from bbrlab.output import plots_paper, style

    exp = spec.build({"name": "mine", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "2bdp"},
                      "flows": [{"class": "fast", "cc": "bbr", "duration": "10s"},
                                {"class": "slow", "cc": "cubic", "duration": "10s"},
                                {"class": "old", "cc": "reno", "duration": "10s"}]})
    assert exp.plot_kind == "rtt_timeseries"
    (point,) = exp.points
    rundir = RunDir.create(tmp_path, exp.name)
    rtts = {"g1": 50.0, "g2": 90.0, "g3": 140.0}
    write_json(rundir.points_dir / point.id / "point.json", {
        "id": point.id, "params": {}, "flows": [dataclasses.asdict(g) for g in point.flows]})
    write_json(rundir.points_dir / point.id / "metrics.json", {
        "base_rtt_ms": 40.0, "full_buffer_rtt_ms": 120.0, "rtt_p50_ms": 94.0,
        "groups": [{"group": i, "class": c, "cc": cc} for i, (c, cc) in
                   enumerate((("fast", "bbr"), ("slow", "cubic"), ("old", "reno")))]})
    write_json(rundir.points_dir / point.id / "series.json", {
        "rtt": {g: [[t / 10, v + (t % 3)] for t in range(100)] for g, v in rtts.items()}, "flows": {}})
    plt = plots._pyplot()
    fig = plots_paper.rtt_timeseries(plt, exp, rundir, rundir.point_records())
    handles, labels = fig.axes[0].get_legend_handles_labels()
    plt.close(fig)
    drawn = {label: h.get_color() for h, label in zip(handles, labels) if "median RTT" in label}
    assert drawn == {"fast (BBR): median RTT 51 ms": style.style("bbr")["color"],
                     "slow (CUBIC): median RTT 91 ms": style.style("cubic")["color"],
                     "old (Reno): median RTT 141 ms": style.style("reno")["color"]}


def test_a_figure_with_bbrv3_labels_linux_bbr_as_v1_and_only_there():
    from bbrlab.output import style

    mixed = [{"flows": [{"cc": "bbr"}]}, {"flows": [{"cc": "bbr3"}]}]
    with style.versions_named(mixed):
        assert style.style("bbr")["label"] == "BBR v1" and style.style("bbr3")["label"] == "BBRv3"
    assert style.style("bbr")["label"] == "BBR"
    with style.versions_named([{"flows": [{"cc": "bbr"}, {"cc": "cubic"}]}]):
        assert style.style("bbr")["label"] == "BBR"  # the paper's figures keep the paper's name


def test_a_pacing_sweep_draws_each_ccs_curve_once_per_pacing():
    """figure8-versions sweeps pacing beside cc: each CC gets one curve per pacing (the second
    dash-dotted), not one line zig-zagging between them at each loss rate."""
    import tempfile

    axes = ["loss=[10%,20%]", "cc=[bbr410,bbr]", "pacing=[fq,internal]"]
    exp = spec.load(EXPERIMENTS / "figure8-versions.yaml", axes)
    with tempfile.TemporaryDirectory() as scratch:
        rundir = RunDir.create(Path(scratch), exp.name)
        for point in exp.points:
            p = point.link.loss
            write_json(rundir.points_dir / point.id / "point.json",
                       {"id": point.id, "params": point.params, "flows": [{"cc": point.params["cc"]}]})
            write_json(rundir.points_dir / point.id / "metrics.json", {
                "link_mbps": 100.0, "loss": p, "base_rtt_ms": 100.0, "bbr_bw_p50_mbps": 50.0,
                "steady_goodput_mbps": (80 if point.params["pacing"] == "internal" else 40) * (1 - p)})
        plt = plots._pyplot()
        with versions_named(rundir.point_records()):  # as plots.figure draws it: bbr named by its kernel
            fig = plots_loss.loss_goodput(plt, exp, rundir, rundir.point_records())
        ax = fig.axes[0]
        measured = {label: line for line, label in zip(*ax.get_legend_handles_labels()) if label.endswith("(measured)")}
        plt.close(fig)
    assert sorted(measured) == ["BBR (Linux 4.10), pacing fq (measured)", "BBR (Linux 4.10), pacing internal (measured)",
                                "BBR (Linux 6.1), pacing fq (measured)", "BBR (Linux 6.1), pacing internal (measured)"]
    lines = {label: handle.lines[0] for label, handle in measured.items()}
    assert lines["BBR (Linux 4.10), pacing fq (measured)"].get_linestyle() == "-"
    assert lines["BBR (Linux 4.10), pacing internal (measured)"].get_linestyle() == "-."
    assert list(lines["BBR (Linux 4.10), pacing internal (measured)"].get_ydata()) == pytest.approx([72.0, 64.0])
