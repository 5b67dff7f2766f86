"""Figures drawn from a results directory alone (synthetic series, the real plotting code)."""

import dataclasses
import struct
from pathlib import Path

import pytest

from bbrlab.output.figures import legends, plots, plots_loss, style
from bbrlab.output.figures.style import versions_named
from bbrlab.schema import experiment as spec
from bbrlab.emulation import topo

pytest.importorskip("matplotlib")
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_fidelity_figure_shows_what_the_link_sent_against_its_rate(synthetic_run):
    exp = spec.load(EXPERIMENTS / "fidelity.yaml", quick=True)
    assert exp.plot_kind == "link_fidelity"
    times = [i * 0.2 for i in range(150)]

    def metrics(point, plan):
        rate = point.link.rate / 1e6
        sent = 0.8043 if rate == 100 else 0.99  # the link fell short at 100 Mbit/s
        return {"link_mbps": rate, "payload_capacity_mbps": round(rate * 1448 / 1514, 4), "buffer_pkts": 1667,
                "duration_s": 30.0, "link_delivery": sent, "steady_link_efficiency": 0.97 * sent,
                "bbr_bw_ratio": 0.98}

    def series(point, plan):
        rate = point.link.rate / 1e6
        return {"flows": {"f1": {"cc": point.flows[0].cc, "start": 0.0,
                                 "throughput": [[t, 0.78 * rate] for t in range(1, 31)]}},
                "link_sent": [[t, 0.8 * rate] for t in times], "queue": [[t, 1200] for t in times],
                "link_rate": [[0.0, rate]]}

    rundir = synthetic_run(exp, metrics, series)
    verdict = {"verdict": "inconclusive", "why": ["link below its rate: point"], "claims": [],
               "cpu_bound_points": [], "link_short_points": ["rate=100Mbit, cc=cubic"]}
    fig = plots.figure(exp, rundir, rundir.point_records(), verdict)
    ratios, over_time = fig.axes
    lines = {line.get_label().split(" (")[0]: line for line in ratios.get_lines()}
    sent = lines["backlogged link sent / rate"]
    assert list(sent.get_xdata()) == [10, 50, 100] and list(sent.get_ydata()) == [0.99, 0.99, 0.8043]
    assert list(lines["BBR's median bw estimate / rate"].get_ydata()) == [0.98] * 3
    assert [t.get_text() for t in ratios.get_xticklabels()] == ["10", "50", "100"]
    over = {line.get_label(): line for line in over_time.get_lines()}
    assert set(over["bottleneck sent (its byte counter, per sample)"].get_ydata()) == {80.0}  # the top rate's
    assert over["CUBIC goodput (receiver, per iperf3 interval)"].get_color() == style.style("cubic")["color"]
    assert set(over["payload capacity 95.6 Mbit/s (1448 B in 1514 B frames)"].get_ydata()) == {95.6407}
    assert over_time.get_ylim()[1] == pytest.approx(115)  # the configured rate in view, with room above
    assert fig.texts[-1].get_text().startswith("verdict: inconclusive")
    assert all(legends.legend_overlaps(ax) == 0 for ax in fig.axes)
    path = plots.save(fig, rundir.path / "fidelity.png")
    assert png_size(path) == tuple(round(inches * 110) for inches in (12, 8.4))


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


def test_a_sweep_marks_the_curves_the_emulator_could_not_be_trusted_with(synthetic_run):
    exp = spec.load(EXPERIMENTS / "bw-sweep.yaml", ["loss=[1%,10%]"], quick=True)  # 1 and 10 Mbit/s, bbr and cubic
    rundir = synthetic_run(exp, lambda point, plan: {"link_mbps": point.link.rate / 1e6, "loss": point.link.loss,
                                                     "steady_goodput_mbps": point.link.rate / 2e6})
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


def test_the_footer_stays_inside_a_narrow_figure():
    """Each verdict line is cut to the figure's width: drawn, it ends inside the figure."""
    plt = plots._pyplot()
    fig = plt.figure(figsize=(8, 6))
    long_why = "CPU-bound points: " + ", ".join(f"delay_variation=1ms, cc=bbr, build=b{i}" for i in range(6))
    plots._footer(fig, {"verdict": "inconclusive", "why": [long_why], "claims": [], "cpu_bound_points": []})
    (text,) = fig.texts
    fig.canvas.draw()
    box = text.get_window_extent(fig.canvas.get_renderer())
    plt.close(fig)
    assert box.x1 <= fig.bbox.x1 and "…" in text.get_text()


def test_no_legend_covers_the_data(step_run, tmp_path):
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


def _legend_box(ax):
    """AX's legend's box in AX's coordinates (shares of its width and height)."""
    return ax.get_legend().get_window_extent().transformed(ax.transAxes.inverted())


def test_a_legend_over_the_data_moves_to_the_corner_the_data_leave_empty():
    plt = plots._pyplot()
    fig, ax = plt.subplots(figsize=(7, 5))
    for i in range(4):  # high on the left and across the top, low nowhere on the right
        ax.plot([0, 5, 10], [9 - i, 9.5 - i / 4, 9.8 - i / 8], marker="o", label=f"flow {i}")
    ax.plot([0, 3], [1, 2], label="a short one, low on the left")
    ax.set_ylim(0, 10)
    ax.legend(fontsize=7, loc="lower left")
    fig.canvas.draw()
    assert legends.legend_overlaps(ax) > 0
    legends.clear_legends(fig)
    box = _legend_box(ax)
    assert legends.legend_overlaps(ax) == 0 and box.x1 <= 1 and box.x1 > 0.9 and box.y0 < 0.1  # lower right
    assert ax.get_ylim() == (0, 10)  # the data's scale untouched
    plt.close(fig)


def test_a_legend_with_no_empty_corner_goes_beside_the_last_panel_which_keeps_its_size():
    plt = plots._pyplot()
    fig, ax = plt.subplots(figsize=(7, 5))
    for i in range(12):  # lines across the whole axes at every height
        ax.plot([0, 10], [i, i + 0.5], label=f"a line with a long name, number {i}")
    ax.legend(fontsize=8, loc="upper right")
    fig.canvas.draw()
    inches = ax.get_window_extent().width / fig.dpi
    legends.clear_legends(fig)
    box = ax.get_legend().get_window_extent()
    assert legends.legend_overlaps(ax) == 0 and box.x0 > ax.get_window_extent().x1  # beside the axes
    assert box.x1 <= fig.bbox.width and fig.get_figwidth() > 7  # the figure widened to hold it
    assert ax.get_window_extent().width / fig.dpi == pytest.approx(inches, rel=0.01)  # the panel as it was
    plt.close(fig)


def test_a_legend_with_no_empty_corner_left_of_a_panel_gets_headroom_in_decades():
    """The slowdown figure's shape: points across a log axis, under its legend, and a panel
    to its right: the axes' top is raised (in decades) until the legend covers nothing."""
    plt = plots._pyplot()
    fig, (ax, _) = plt.subplots(1, 2, figsize=(10, 5))
    ax.set_xscale("log")
    ax.set_yscale("log")
    for i in range(8):  # across the whole axes at every height: no corner left empty
        ax.plot([1e5, 1e6, 2e7], [1.0 + 0.04 * i] * 3, marker="o", label=f"class {i}")
    ax.legend(fontsize=7, loc="upper right")
    fig.canvas.draw()
    (bottom, top), covered = ax.get_ylim(), legends.legend_overlaps(ax)
    legends.clear_legends(fig)
    assert covered > 0 and legends.legend_overlaps(ax) == 0 and _legend_box(ax).y1 > 0.9  # at the top
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] == bottom and ax.get_ylim()[1] > top
    plt.close(fig)


def test_cellulars_legend_on_an_unseen_trace_covers_none_of_its_points(synthetic_run, tmp_path):
    """On a trace ReBBR did not measure, the legend gains a "not drawn" entry; inside the axes
    it covered CUBIC's 0 % point and the ideal and Mathis lines it lists."""
    from bbrlab.schema import traces

    unseen = traces.write(tmp_path / "unseen.up", traces.synthesize("walk", 60.0, 9e6, step=0.5, seed=3))
    exp = spec.load(EXPERIMENTS / "cellular.yaml", [f"trace={unseen}", "loss=[0%,0.01%,1%,10%,50%]"])

    def metrics(point, plan):
        p, bbr = point.link.loss, point.params["cc"] == "bbr"
        return {"link_mbps": 10.0, "loss": p, "base_rtt_ms": 100.0, "bbr_bw_p50_mbps": 26.0 if bbr else None,
                "steady_goodput_mbps": 8.5 * (1 - p) if bbr else 0.25 + 2 * (p < 0.01)}

    rundir = synthetic_run(exp, metrics)
    verdict = {"verdict": "inconclusive", "why": [], "claims": [], "cpu_bound_points": []}
    fig = plots.figure(exp, rundir, rundir.point_records(), verdict)
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    box = _legend_box(ax)
    covered = legends.legend_overlaps(ax)
    plots._pyplot().close(fig)
    assert any(label.startswith("not drawn: ReBBR") for label in labels) and "ideal: bw x (1 - p)" in labels
    assert covered == 0 and box.x0 > 1  # beside the axes: nothing in them covered


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


def loss_run(synthetic_run, losses):
    """figure8's spec over LOSSES (as written), bbr and cubic, with made-up goodputs."""
    exp = spec.load(EXPERIMENTS / "figure8.yaml", [f"loss=[{','.join(losses)}]"], quick=True)

    def metrics(point, plan):
        p = point.link.loss
        return {"link_mbps": 100.0, "loss": p, "base_rtt_ms": 100.0,
                "steady_goodput_mbps": 95 * (1 - p) if point.params["cc"] == "bbr" else 90 / (1 + 200 * p)}

    return exp, synthetic_run(exp, metrics)


@pytest.mark.parametrize("kind", ["loss_goodput", "sweep_normalized"])
def test_zero_loss_has_its_own_place_on_the_log_axis(synthetic_run, kind):
    exp, rundir = loss_run(synthetic_run, ["0%", "0.1%", "1%", "10%"])
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


def test_a_mixed_class_point_draws_each_class_in_its_ccs_colour(synthetic_run):
    """A user's file with three classes (no plot kind: RTT over time) gets an entry and a
    colour per class, not one "bbr+cubic+reno" line."""
    from bbrlab.output.figures import plots_paper

    exp = spec.build({"name": "mine", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "2bdp"},
                      "flows": [{"class": "fast", "cc": "bbr", "duration": "10s"},
                                {"class": "slow", "cc": "cubic", "duration": "10s"},
                                {"class": "old", "cc": "reno", "duration": "10s"}]})
    assert exp.plot_kind == "rtt_timeseries"
    rtts = {"g1": 50.0, "g2": 90.0, "g3": 140.0}
    rundir = synthetic_run(exp, lambda point, plan: {
        "base_rtt_ms": 40.0, "full_buffer_rtt_ms": 120.0, "rtt_p50_ms": 94.0,
        "groups": [{"group": i, "class": c, "cc": cc, "rtt_ms": 40.0} for i, (c, cc) in
                   enumerate((("fast", "bbr"), ("slow", "cubic"), ("old", "reno")))]},
        lambda point, plan: {"rtt": {g: [[t / 10, v + (t % 3)] for t in range(100)] for g, v in rtts.items()},
                             "flows": {}})
    plt = plots._pyplot()
    fig = plots_paper.rtt_timeseries(plt, exp, rundir, rundir.point_records())
    handles, labels = fig.axes[0].get_legend_handles_labels()
    plt.close(fig)
    drawn = {label: h.get_color() for h, label in zip(handles, labels) if "median RTT" in label}
    assert drawn == {"fast (BBR): median RTT 51 ms": style.style("bbr")["color"],
                     "slow (CUBIC): median RTT 91 ms": style.style("cubic")["color"],
                     "old (Reno): median RTT 141 ms": style.style("reno")["color"]}


def test_classes_on_paths_of_their_own_get_their_own_base_rtt(synthetic_run):
    """cdn-mix's PoPs at 10 ms on a 50 ms link (drawn as RTT over time): each class's RTT
    against its own base RTT and full buffer, not the link's, below which the PoPs would sit."""
    exp = dataclasses.replace(spec.load(EXPERIMENTS / "cdn-mix.yaml", quick=True), plot_kind="rtt_timeseries")
    queue = exp.points[0].link.full_buffer_seconds() * 1e3

    def metrics(point, plan):
        return {"base_rtt_ms": 50.0, "full_buffer_rtt_ms": 50.0 + queue, "loss": 0.0, "link_mbps": 20.0,
                "groups": [{"group": w.group, "class": w.cls, "cc": w.cc, "rtt_ms": w.rtt * 1e3} for w in plan.workloads]}

    def series(point, plan):  # each class's path and a third of the queue
        return {"rtt": {f"g{w.group + 1}": [[t / 10, w.rtt * 1e3 + queue / 3] for t in range(200)]
                        for w in plan.workloads}, "flows": {}}

    rundir = synthetic_run(exp, metrics, series)
    verdict = {"verdict": "inconclusive", "why": [], "claims": [], "cpu_bound_points": []}
    fig = plots.figure(exp, rundir, rundir.point_records(), verdict)
    ax, cdf = fig.axes
    guides = {}
    for line in ax.get_lines():
        if line.get_transform() != ax.transData:  # across the axes: a guide
            guides.setdefault(line.get_linestyle(), set()).add(round(line.get_ydata()[0], 3))
    labels = ax.get_legend_handles_labels()[1]
    plots._pyplot().close(fig)
    assert guides == {"--": {10.0, 50.0}, ":": {round(10 + queue, 3), round(50 + queue, 3)}}
    assert "base RTT: client 50 ms, pop-to-pop 10 ms" in labels and "base RTT 50 ms" not in labels
    assert f"RTT behind a full buffer: client {50 + queue:.0f} ms, pop-to-pop {10 + queue:.0f} ms" in labels
    assert {label.split(":")[0] for label in labels if "median RTT" in label} == {
        "client (BBR)", "pop-to-pop (BBR)", "client (CUBIC)", "pop-to-pop (CUBIC)"}  # each class's own entry


def test_a_figure_with_bbrv3_labels_linux_bbr_as_v1_and_only_there():
    mixed = [{"flows": [{"cc": "bbr"}]}, {"flows": [{"cc": "bbr3"}]}]
    with style.versions_named(mixed):
        assert style.style("bbr")["label"] == "BBR v1" and style.style("bbr3")["label"] == "BBRv3"
    assert style.style("bbr")["label"] == "BBR"
    with style.versions_named([{"flows": [{"cc": "bbr"}, {"cc": "cubic"}]}]):
        assert style.style("bbr")["label"] == "BBR"  # the paper's figures keep the paper's name


def test_a_pacing_sweep_draws_each_ccs_curve_once_per_pacing(synthetic_run):
    """figure8-versions sweeps pacing beside cc: each CC gets one curve per pacing (the second
    dash-dotted), not one line zig-zagging between them at each loss rate."""
    axes = ["loss=[10%,20%]", "cc=[bbr410,bbr]", "pacing=[fq,internal]"]
    exp = spec.load(EXPERIMENTS / "figure8-versions.yaml", axes)
    rundir = synthetic_run(exp, lambda point, plan: {
        "link_mbps": 100.0, "loss": point.link.loss, "base_rtt_ms": 100.0, "bbr_bw_p50_mbps": 50.0,
        "steady_goodput_mbps": (80 if point.params["pacing"] == "internal" else 40) * (1 - point.link.loss)})
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
