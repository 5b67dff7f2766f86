"""Several runs together: how their setups differ (output/reports/differences.py), said in a line by
`plot --kind KIND RUN1 RUN2 ...` and in every multi-run kind's labels, each run's curves,
bars or panels named by its run, each run's own guides (rate, base RTT) where the runs differ
in them, and no run's parameters given as everyone's."""

import json
from pathlib import Path

import pytest

from bbrlab import cli
from bbrlab.output.reports import differences
from bbrlab.output.figures import multirun, plot_kinds, plots
from bbrlab.schema import experiment as spec
from bbrlab.store.results import RunDir, write_json

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
TIMES = [i * 0.5 for i in range(40)]
# each kind that draws several runs, with an experiment of its own to draw
KINDS = {"rtt_timeseries": "figure5", "loss_goodput": "figure8", "sweep_normalized": "bw-sweep", "rate_step": "step",
         "link_fidelity": "fidelity", "buffer_rtt": "figure5-buffers", "buffer_retransmits": "v3-shallow",
         "coexist_share": "coexist", "class_share": "rtt-mix", "trace_replay": "trace-interval",
         "aggregation_goodput": "aggregation", "jitter_goodput": "low-rtt-jitter", "aqm_latency": "figure5-aqm",
         "headend": "headend", "fct_cdf": "cdn-mix", "bbr_state": "v3-shallow", "quic_rates": "quic-jitter",
         "quic_timeline": "quic-jitter"}


def _metrics(point, plan) -> dict:
    """Every metric a kind reads, plausible for POINT's link."""
    link = point.link
    rate, base = link.rate / 1e6, link.rtt * 1e3
    ccs = sorted({f.cc for f in plan.flows} | {w.cc for w in plan.workloads})
    each = 0.9 * rate / max(len(plan.flows), 1)
    return {
        "base_rtt_ms": base, "link_mbps": rate, "duration_s": point.duration, "loss": link.loss,
        "steady_goodput_mbps": 0.9 * rate, "goodput_mbps": 0.9 * rate, "steady_utilization": 0.9,
        "queue_delay_p50_ms": 5.0, "rtt_p50_ms": base + 5, "rtt_p5_ms": base + 1, "rtt_p95_ms": base + 10,
        "steady_rtt_p50_ms": base + 5, "steady_rtt_p95_ms": base + 10, "buffer_pkts": link.buffer_packets,
        "bdp_pkts": link.bdp_packets, "full_buffer_rtt_ms": base + link.full_buffer_seconds() * 1e3,
        "retransmit_rate": 0.01, "payload_capacity_mbps": 0.95 * rate, "link_delivery": 0.99,
        "steady_link_efficiency": 0.95, "idle_rtt_spread_ms": 0.1, "idle_rtt_min_ms": base, "reordering_events": 0,
        "trace_delivery": 0.97, "schedule_late_p99_ms": 1.0, "adapt_time_max_s": 1.0,
        "by_cc": {cc: {"share": 1 / len(ccs), "srtt_p50_ms": base + 5, "retransmit_rate": 0.01} for cc in ccs},
        "groups": [{"group": i, "class": g.name or f"g{i + 1}", "cc": g.cc, "flows": g.count, "share": 1 / len(point.flows),
                    "rtt_ms": (g.rtt or link.rtt) * 1e3, "steady_goodput_mbps": each, "srtt_p50_ms": base + 5,
                    "retransmit_rate": 0.01} for i, g in enumerate(point.flows)],
        "flows": [{"goodput_mbps": each * (1 + k / 10)} for k in range(len(plan.flows))]}


def _series(point, plan) -> dict:
    """Every series a kind reads: the probe's RTT, each flow's own samples (a BBR's state
    too), the link's rate and what it sent, each short flow's completion."""
    link = point.link
    rate, base = link.rate / 1e6, link.rtt * 1e3
    flows = {f.id: {"cc": f.cc, "tool": f.tool, "start": f.start, "data_start": 0.5,
                    "throughput": [[t, 0.9 * rate] for t in TIMES], "srtt_ms": [[t, base + 5] for t in TIMES],
                    "cwnd": [[t, 20] for t in TIMES], "pacing_mbps": [[t, rate] for t in TIMES],
                    "rtt_sample_ms": [[t, base + 4] for t in TIMES],
                    "bbr_phase": [[t, "PROBE_BW_CRUISE"] for t in TIMES] if "bbr" in f.cc else [],
                    "bbr_version": 3 if f.cc == "bbr3" else 1} for f in plan.flows}
    short = [{"class": w.cls, "cc": w.cc, "fct_ms": 50.0 * (k + 1), "slowdown": 1.0 + k, "size": 10_000 * 10 ** (k % 3)}
             for w in plan.workloads for k in range(6)]
    return {"rtt": {"g1": [[t, base + 5 + t % 2] for t in TIMES]}, "flows": flows, "link_rate": [[0.0, rate]],
            "link_sent": [[t, 0.95 * rate] for t in TIMES], "shortflows": short}


@pytest.fixture
def quick_run(synthetic_run):
    """make(ROOT, NAME, SETS=(), KERNEL="6.1.0") -> RunDir: a finished run of experiment NAME
    (its quick profile, SETS applied) under ROOT, on KERNEL, its points' metrics and series
    made up but of the shape the analysis writes."""
    def make(root: Path, name: str, sets: tuple = (), kernel: str = "6.1.0") -> RunDir:
        exp = spec.load(EXPERIMENTS / f"{name}.yaml", list(sets), quick=True)
        return synthetic_run(exp, _metrics, _series, root=root, testbed={"kernel": kernel})

    return make


def panel_texts(fig) -> list[str]:
    """Every word a figure's panels show: their titles, legend entries, tick labels and text
    (not the figure's title)."""
    found = []
    for ax in fig.axes:
        found += [ax.get_title()] + [t.get_text() for t in [*ax.get_xticklabels(), *ax.texts]]
        found += [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
    return found + [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def drawn(monkeypatch, capsys, *argv) -> tuple[str, str, str, list[str]]:
    """`bbrlab plot ARGV...`: (exit status, stdout, the figure's title, its panels' words),
    the figure kept from being written."""
    pytest.importorskip("matplotlib")
    kept = []
    monkeypatch.setattr(plots, "save", lambda fig, base, formats=("png",): kept.append(fig) or base)
    code = cli.main(["plot", *argv])
    out = capsys.readouterr().out
    (fig,) = kept
    title, words = fig._suptitle.get_text(), panel_texts(fig)
    plots._pyplot().close(fig)
    return code, out, title, words


def test_the_kinds_listed_here_are_every_kind_that_draws_several_runs():
    assert set(KINDS) == {name for name, kind in plot_kinds.PLOTS.items() if not kind.one_point}


def test_two_runs_differ_in_their_rtt_and_their_kernel(tmp_path, quick_run):
    one = quick_run(tmp_path / "a", "figure5-aqm")
    two = quick_run(tmp_path / "b", "figure5-aqm", ("rtt=30ms",), kernel="6.12.0")
    differ = differences.between([one, two])
    assert differ.keys == ("rtt", "kernel") and differ.values == (("40ms", "6.1.0"), ("30ms", "6.12.0"))
    assert differ.line() == "the runs' setups differ: rtt: 40ms vs 30ms; kernel: 6.1.0 vs 6.12.0"
    assert differ.labels == ["run 1 (rtt 40ms; kernel 6.1.0)", "run 2 (rtt 30ms; kernel 6.12.0)"]


def test_the_same_setup_written_otherwise_is_the_same(tmp_path, quick_run):
    one = quick_run(tmp_path / "a", "figure5-aqm")
    two = quick_run(tmp_path / "b", "figure5-aqm", ("rtt=0.04s",))
    differ = differences.between([one, two])
    assert differ.keys == () and differ.line() == "" and differ.labels == ["run 1", "run 2"]


def test_a_flow_group_more_a_swept_value_and_a_cc_s_build_are_differences(tmp_path, quick_run):
    one = quick_run(tmp_path / "a", "step")
    two = quick_run(tmp_path / "b", "step", ("cc=[bbr]", "link.rtt=[20ms,40ms]"))
    meta = json.loads((two.path / "run.json").read_text())
    meta["testbed"]["congestion_controls"] = {"bbr": "5A1C"}
    (two.path / "run.json").write_text(json.dumps(meta))
    differ = differences.between([one, two])
    assert dict(zip(differ.keys, differ.values[1])) == {"rtt": "20ms/40ms", "cc": "bbr"}  # one run only has a build
    assert differ.values[0] == ("40ms", "bbr/cubic")


def test_a_spec_that_no_longer_builds_is_compared_as_written(tmp_path, quick_run):
    one, two = quick_run(tmp_path / "a", "step"), quick_run(tmp_path / "b", "step")
    for run, rate in ((one, "10Mbit"), (two, "20Mbit")):
        text = (run.path / "spec.yaml").read_text().replace("rate: 10Mbit", f"rate: {rate}", 1)
        (run.path / "spec.yaml").write_text(text + "no_longer_a_key: 1\n")
    differ = differences.between([one, two])
    assert differ.line() == "the runs' setups differ: rate: 10Mbit vs 20Mbit"  # link.rate as written


def test_plot_says_how_two_runs_differ_and_names_each_run_in_its_panels(tmp_path, monkeypatch, capsys, quick_run):
    one = quick_run(tmp_path / "a", "figure5-aqm")
    two = quick_run(tmp_path / "b", "figure5-aqm", ("rtt=30ms",))
    code, out, title, words = drawn(monkeypatch, capsys, "--kind", "aqm_latency", str(one.path), str(two.path))
    assert code == 0 and out.splitlines()[0] == "the runs' setups differ: rtt: 40ms vs 30ms"
    # a column per CC and run, each titled by its run; each run's own base RTT beside its CDFs
    assert "BBR, run 1 (rtt 40ms) flow: latency under load" in words
    assert "CUBIC, run 2 (rtt 30ms) flow: latency under load" in words
    assert "fq_codel: BBR's own RTT (ss), median 35 ms" in words  # under the title naming its run
    assert {"base RTT 40 ms", "base RTT 30 ms"} <= set(words)
    # the title names both runs; their parameter lines give each run's own RTT, none as everyone's
    shared, *own = title.split("\n")[1:]
    assert "run 1 (rtt 40ms), run 2 (rtt 30ms)" in title.split("\n")[0] and "base RTT" not in shared
    assert [line.split(",")[0] for line in own] == ["run 1: base RTT 40\u00a0ms", "run 2: base RTT 30\u00a0ms"]


def test_plot_of_runs_of_one_setup_names_them_by_their_place_and_says_nothing_more(tmp_path, monkeypatch, capsys, quick_run):
    one, two = quick_run(tmp_path / "a", "figure5-aqm"), quick_run(tmp_path / "b", "figure5-aqm")
    code, out, title, words = drawn(monkeypatch, capsys, "--kind", "aqm_latency", str(one.path), str(two.path))
    assert code == 0 and out.startswith("figure: ") and "differ" not in out
    assert {"BBR, run 1 flow: latency under load", "BBR, run 2 flow: latency under load"} <= set(words)
    assert len(title.splitlines()) == 2  # the runs' title and the one parameter line they share


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_names_each_run_by_how_it_differs(tmp_path, monkeypatch, capsys, kind, quick_run):
    one = quick_run(tmp_path / "a", KINDS[kind])
    two = quick_run(tmp_path / "b", KINDS[kind], kernel="6.12.0")
    code, out, title, words = drawn(monkeypatch, capsys, "--kind", kind, str(one.path), str(two.path))
    assert code == 0 and out.splitlines()[0] == "the runs' setups differ: kernel: 6.1.0 vs 6.12.0"
    for label in ("run 1 (kernel 6.1.0)", "run 2 (kernel 6.12.0)"):
        assert any(label in text for text in words), f"{kind}: no panel names {label}: {words}"


def guide_lines(fig, text: str) -> list[tuple[str, list, object, object]]:
    """(label, y values, colour, line style) of every line in FIG's panels whose legend label
    starts with TEXT: the guides a kind draws under that name."""
    return [(line.get_label(), list(line.get_ydata()), line.get_color(), line.get_linestyle())
            for ax in fig.axes for line in ax.get_lines() if line.get_label().startswith(text)]


def two_runs_drawn(quick_run, tmp_path, kind: str, sets: tuple, kernel: str = "6.1.0"):
    """KIND drawn over two runs of its experiment, the second with SETS on KERNEL: (the
    figure, the runs' labels)."""
    pytest.importorskip("matplotlib")
    one = quick_run(tmp_path / "a", KINDS[kind])
    two = quick_run(tmp_path / "b", KINDS[kind], sets, kernel=kernel)
    fig, _ = multirun.figure([one, two], kind)
    return fig, differences.between([one, two]).labels


# per kind: what the second run sets, and each guide's name with its first y value in each run
GUIDES = {
    "rate_step": (("rate=20Mbit",), {"bottleneck rate": (10, 20)}),
    "buffer_rtt": (("rtt=30ms",), {"base RTT": (40, 30), "2 x base RTT": (80, 60),
                                   "RTT behind a full buffer": (120, 90)}),  # behind 2 BDP: 3 x the base
    "headend": (("rtt=30ms",), {"base RTT": (40, 30), "base + the full buffer": (40 + 800 / 1.3, 30 + 800 / 1.3)}),
    "aggregation_goodput": (("rate=100Mbit",), {"link rate": (50, 100)}),
    "jitter_goodput": (("rate=100Mbit",), {"link rate": (50, 100)}),
}


@pytest.mark.parametrize("kind", sorted(GUIDES))
def test_each_run_s_guide_is_drawn_where_the_runs_differ_in_it(tmp_path, kind, quick_run):
    sets, expected = GUIDES[kind]
    fig, runs = two_runs_drawn(quick_run, tmp_path, kind, sets)
    try:
        for text, values in expected.items():
            found = guide_lines(fig, text)
            for run, value in zip(runs, values):  # each run's line, named by its run, at its own value
                mine = [line for line in found if line[0].endswith(run)]
                assert mine, f"{kind}: no {text!r} line names {run}: {[line[0] for line in found]}"
                assert all(line[1][0] == pytest.approx(value, rel=0.02) for line in mine), (kind, text, mine)
            # the two runs' lines are told apart by their look, not only by their label
            looks = {(line[2], str(line[3])) for line in found}
            assert len(looks) == 2, (kind, text, found)
    finally:
        plots._pyplot().close(fig)


@pytest.mark.parametrize("kind", sorted(GUIDES))
def test_a_guide_the_runs_share_is_one_line_naming_no_run(tmp_path, kind, quick_run):
    _, expected = GUIDES[kind]
    fig, _ = two_runs_drawn(quick_run, tmp_path, kind, (), kernel="6.12.0")
    try:
        for text, (value, _) in expected.items():
            labels = {line[0] for line in guide_lines(fig, text)}
            assert len(labels) == 1 and "run" not in labels.pop(), (kind, text)
            assert all(line[1][0] == pytest.approx(value, rel=0.02) for line in guide_lines(fig, text))
    finally:
        plots._pyplot().close(fig)


def test_headend_titles_each_run_s_base_rtt(tmp_path, quick_run):
    fig, _ = two_runs_drawn(quick_run, tmp_path, "headend", ("rtt=30ms",))
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    plots._pyplot().close(fig)
    assert titles == ["10 Mbit/s, 40 ms (run 1), 30 ms (run 2) base RTT"]


def test_aggregation_titles_each_run_s_slots(tmp_path, quick_run):
    fig, _ = two_runs_drawn(quick_run, tmp_path, "aggregation_goodput", ("slot_max=20ms",))
    titles = [ax.get_title().replace("\n", " ") for ax in fig.axes if ax.get_title()]
    plots._pyplot().close(fig)
    assert titles == ["ACKs leave in slots every 1-10 ms (run 1), ACKs leave in slots every 1-20 ms (run 2)"]


def test_jitter_titles_each_run_s_reordering_and_keeps_every_run_s_rate_in_view(tmp_path, quick_run):
    pytest.importorskip("matplotlib")
    one = quick_run(tmp_path / "a", "low-rtt-jitter")
    two = quick_run(tmp_path / "b", "low-rtt-jitter", ("rate=100Mbit",))
    for metrics in two.points_dir.glob("*/metrics.json"):
        write_json(metrics, dict(json.loads(metrics.read_text()), reordering_events=1))
    fig, _ = multirun.figure([one, two], "jitter_goodput")
    (ax,) = [ax for ax in fig.axes if ax.get_title()]
    title, top = ax.get_title().replace("\n", " "), ax.get_ylim()[1]
    plots._pyplot().close(fig)
    assert title == "base RTT 1 ms: reordering seen 0 (run 1), 4 (run 2)"  # run 2's four points, one each
    assert top >= 100  # run 2's rate, not run 1's 50 Mbit/s


@pytest.mark.parametrize("kind", sorted(GUIDES))
def test_each_run_s_guides_leave_every_legend_clear_of_the_data_and_inside_the_figure(tmp_path, kind, quick_run):
    from bbrlab.output.figures import legends

    fig, _ = two_runs_drawn(quick_run, tmp_path, kind, GUIDES[kind][0])
    try:
        edge = fig.bbox
        for ax in (ax for ax in fig.axes if ax.get_legend()):
            box = ax.get_legend().get_window_extent()
            assert legends.legend_overlaps(ax) == 0, (kind, ax.get_title())
            assert edge.x0 <= box.x0 and box.x1 <= edge.x1, (kind, box, edge)  # no label cut at the edge
    finally:
        plots._pyplot().close(fig)
