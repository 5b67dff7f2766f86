"""Bad input gets one clear line naming the problem and exit status 2: never a traceback,
never a silently different experiment. One test per way a file or a command line used to
be misread (docs/experiment-format.md, "What is refused")."""

import json
from pathlib import Path

import pytest
import yaml

from bbrlab import cli
from bbrlab.emulation import plan_text, topo
from bbrlab.errors import SpecError
from bbrlab.schema import experiment as spec
from bbrlab.schema import traces
from bbrlab.store.results import RunDir, read_json, write_json

REPO = Path(__file__).resolve().parents[2]
LINK = {"rate": "10Mbit", "rtt": "40ms", "buffer": "2bdp"}


def refused(capsys, *argv) -> str:
    """The one line of a command refused with exit status 2 (nothing on stdout)."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.startswith("bbrlab: "), (code, out, err)
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()[len("bbrlab: "):]


def write(tmp_path: Path, raw: dict, name: str = "mine.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return str(path)


def dry_run(capsys, *argv) -> str:
    code = cli.main(["run", *argv, "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


# ---------------------------------------------------------------- silent misreadings


def test_a_top_level_cc_that_no_group_takes_is_refused(capsys, tmp_path):
    mine = write(tmp_path, {"name": "mine", "link": LINK, "cc": ["bbr", "cubic"],
                            "flows": [{"cc": "reno", "duration": "10s"}]})
    assert refused(capsys, "run", mine, "--dry-run") == (
        "cc: no flow group takes the top-level cc: flows.0 (reno) names its own; give cc in one place")
    # a group that takes it is what a top-level cc is for
    write(tmp_path, {"name": "mine", "link": LINK, "cc": ["bbr", "cubic"],
                     "flows": [{"duration": "10s"}, {"cc": "reno", "duration": "10s"}]})
    assert "2 point(s)" in dry_run(capsys, mine)


@pytest.mark.parametrize("rate", ["0.5bit", "0.0001kbit", "999bit"])
def test_a_rate_tc_would_write_as_no_limit_is_refused(capsys, rate):
    assert refused(capsys, "run", "figure5", "--dry-run", "--set", f"rate={rate}") == (
        f"link.rate: {rate} is below 1kbit, the lowest rate the testbed shapes (tc takes whole bit/s, and 0bit "
        "means no limit at all)")


def test_a_key_given_twice_is_refused_with_both_lines(capsys, tmp_path):
    twice = tmp_path / "twice.yaml"
    twice.write_text("name: twice\nlink: {rate: 10Mbit, rtt: 40ms, buffer: 2bdp}\n"
                     "link:\n  rate: 20Mbit\n  rate: 30Mbit\n  rtt: 40ms\n  buffer: 2bdp\n"
                     "flows:\n  - {cc: bbr, duration: 10s}\n")
    assert refused(capsys, "run", str(twice), "--dry-run") == (
        f"{twice}: link: given twice, at lines 2 and 3 (YAML would keep the last one without a word): remove one")
    twice.write_text(twice.read_text().replace("link: {rate: 10Mbit, rtt: 40ms, buffer: 2bdp}\n", ""))
    assert refused(capsys, "run", str(twice), "--dry-run").startswith(f"{twice}: link.rate: given twice, at lines 3 and 4")
    # a run's spec.yaml is read the same way (plot, merge, report, resuming)
    with pytest.raises(SpecError, match=r"flows\.0\.cc: given twice, at lines 2 and 2"):
        spec.load_raw(_text(tmp_path / "spec.yaml", "name: x\nflows: [{cc: bbr, cc: cubic}]\n"))


def _text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_lab_manifest_with_a_key_given_twice_is_refused(tmp_path):
    from bbrlab.runs import lab

    folder = tmp_path / "1-twice"
    folder.mkdir()
    _text(folder / "lab.yaml", "lab: 1\nname: twice\nname: again\ntitle: t\nruns: []\n")
    with pytest.raises(SpecError, match=r"lab\.yaml: name: given twice, at lines 2 and 3"):
        lab.load(folder)


def test_set_loss_on_a_file_with_one_groups_own_loss_is_ambiguous(capsys):
    # cdn-mix: the client class has its own loss, the pop-to-pop class none, the link none
    assert refused(capsys, "run", "cdn-mix", "--dry-run", "--set", "loss=1%") == (
        "--set loss: ambiguous, say one of link.loss, flows.0.loss, flows.1.loss")
    assert "cdn-mix: 6 point(s)" in dry_run(capsys, "cdn-mix", "--set", "link.loss=1%")
    assert "figure8: 2 point(s)" in dry_run(capsys, "figure8", "--set", "loss=1%")  # link.loss: the one written


# ---------------------------------------------------------------- misleading


def trace_file(tmp_path: Path) -> Path:
    return traces.write(tmp_path / "lte.up", traces.synthesize("square", 2.0, 8e6, low_bps=2e6, period=1.0))


def test_a_trace_is_shaped_by_htb_unless_the_file_says_otherwise_and_never_by_netem(tmp_path):
    raw = {"link": {"trace": str(trace_file(tmp_path)), "rtt": "100ms", "buffer": "2bdp"},
           "flows": [{"cc": "bbr", "duration": "10s"}]}
    (default,) = spec.build(raw).points
    (htb,) = spec.build(raw, ["link.shaper=htb"]).points
    described = [plan_text.describe(topo.build_plan(p)) for p in (default, htb)]
    assert default.link.shaper == "htb" and described[0] == described[1]
    assert spec.build(raw).identity == spec.build(raw, ["link.shaper=htb"]).identity
    assert spec.build(raw, ["link.shaper=tbf"]).points[0].link.shaper == "tbf"
    with pytest.raises(SpecError, match=r"^link\.shaper: netem cannot replay a trace: it fixes each packet's "
                                        r"departure when the packet is queued.*leave shaper out \(htb\)"):
        spec.build(raw, ["link.shaper=netem"])


def test_the_trace_experiments_say_htb_and_plan_it(capsys):
    for name in ("cellular", "startup-lte", "trace-interval"):
        exp = spec.load(REPO / "experiments" / f"{name}.yaml")
        assert exp.raw["link"]["shaper"] == "htb" and {p.link.shaper for p in exp.points} == {"htb"}
        assert "htb" in plan_text.describe(topo.build_plan(exp.points[0]))


@pytest.mark.parametrize("override, message", [
    ("sampling.interval=1us", "sampling.interval: 1us is shorter than 10ms, the shortest this testbed samples at "
     "(a ping on every path and a read of the bottleneck's queue per sample: faster floods the link being measured)"),
    ("sampling.ss_interval=10ms", "sampling.ss_interval: 10ms is shorter than 100ms, the shortest this testbed "
     "samples at (one ss process per flow and sample, about 0.1 s of CPU each in the VM: faster takes the "
     "emulator's CPU from the flows)"),
])
def test_sampling_intervals_have_a_floor(capsys, override, message):
    assert refused(capsys, "run", "figure5", "--dry-run", "--set", override) == message


def test_a_file_that_is_not_utf8_is_one_line(capsys, tmp_path):
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: latin\n# caf\xe9\nlink: {rate: 10Mbit, rtt: 40ms, buffer: 2bdp}\n")
    assert refused(capsys, "run", str(latin), "--dry-run") == (
        f"{latin}: not UTF-8 text (byte 0xe9 at line 2): save it as UTF-8")


def test_export_into_a_file_is_one_line(capsys, tmp_path, step_run):
    run = step_run(tmp_path / "results")
    there = _text(tmp_path / "taken.csv", "mine\n")
    for fmt in ("csv", "flent"):
        assert refused(capsys, "export", str(run.path), "--format", fmt, "--out", str(there)) == (
            f"{there}: a file is there; export writes its files (points.csv, flows.csv, series.csv, or .flent.gz) "
            "into a folder: give --out a folder's name")
    assert there.read_text() == "mine\n"


def test_two_files_of_one_name_are_marked_by_list_and_refused_by_run(capsys, monkeypatch, tmp_path):
    text = (REPO / "experiments" / "figure6.yaml").read_text()
    one, two = _text(tmp_path / "one.yaml", text), _text(tmp_path / "two.yaml", text)
    monkeypatch.setattr(cli, "EXPERIMENTS", tmp_path)
    assert refused(capsys, "run", "two", "--dry-run") == (
        f"{two} and {one} are both named figure6: their runs would share results/figure6/; give each file its "
        "own name")
    assert refused(capsys, "suite") == (f"{two} and {one} are both named figure6: their runs would share "
                                        "results/figure6/; give each file its own name")
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "one              SAME NAME figure6 as two.yaml: their runs would share results/figure6/" in out
    assert "two              SAME NAME figure6 as one.yaml" in out
    _text(two, text.replace("name: figure6", "name: figure6-two"))
    assert "figure6-two: 1 point(s)" in dry_run(capsys, "two")


@pytest.mark.parametrize("cc, meant", [("cubci", "cubic"), ("bbr2", "bbr")])
def test_an_unknown_cc_is_refused_at_load_with_the_name_meant(capsys, cc, meant):
    message = refused(capsys, "run", "figure5", "--dry-run", "--set", f"cc={cc}")
    assert message.startswith(f"flows.0.cc: {cc!r} is not a congestion control the testbed offers "
                              f"(did you mean {meant}?) (offered: bbr, bbr3, bbr410, bbr_noagg, bic, cdg, cubic,")


def test_every_cc_of_the_testbed_is_taken(capsys):
    assert "cc=bbr410" in dry_run(capsys, "figure8", "--set", "cc=[bbr410]", "--set", "pacing=fq", "--quick")
    for cc in ("bbr3", "bbr_noagg", "reno", "dctcp", "yeah", "westwood"):
        assert f"cc={cc}" in dry_run(capsys, "figure8", "--set", f"cc=[{cc}]", "--quick")


def test_linux_410s_bbr_without_fq_is_warned_of(capsys):
    """4.10's BBR never asks TCP to pace: without fq on its sender it runs unpaced (as ReBBR's
    4.11 did), which is legitimate and said, once, on stderr."""
    assert cli.main(["run", "figure8-versions", "--dry-run", "--quick", "--set", "pacing=internal"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: pacing: internal: bbr410 never asks TCP to pace") == 1, err
    assert cli.main(["run", "figure8-versions", "--dry-run", "--quick"]) == 0
    assert "warning" not in capsys.readouterr().err
    # a file that runs it unpaced itself (ReBBR's setting, said in its notes) is not warned of
    assert cli.main(["run", "figure8-emulators", "--dry-run", "--quick"]) == 0
    assert "warning" not in capsys.readouterr().err


CLAIM = {"id": "c", "text": "a claim", "metric": "rtt_p50_ms", "max": 1}


@pytest.mark.parametrize("flows_cc, claims, message", [
    (["bbr", "cubic"], [dict(CLAIM, where={"cc": "reno"})],
     "claims.0 (c): where {cc: reno} selects no point of the grid (the grid has cc: bbr, cubic): it could never "
     "be evaluated"),
    ("bbr", [dict(CLAIM, where={"cc": "bbr"}, vs={"cc": "cubic"})],
     "claims.0 (c): vs {cc: cubic} pairs no point of the grid with one that differs from it in cc alone (the grid "
     "has cc: bbr): it could never be evaluated"),
    ("bbr", [dict(CLAIM, where={"loss": {"min": "5%"}})],
     "claims.0 (c): where {loss: {min: 5%}} selects no point of the grid (the grid has loss: 0%): it could "
     "never be evaluated"),
    ("bbr", [dict(CLAIM, min=5, max=1)], "claims.0: min 5 is above max 1: no value can pass"),
    ("bbr", [CLAIM, dict(CLAIM, metric="rtt_p95_ms")],
     "claims.1.id: 'c' is claims.0's id too: give each claim its own (verdicts name claims by id)"),
])
def test_a_claim_that_can_select_no_point_is_refused_at_load(capsys, tmp_path, flows_cc, claims, message):
    mine = write(tmp_path, {"name": "mine", "link": LINK, "flows": [{"cc": flows_cc, "duration": "10s"}],
                            "claims": claims})
    assert refused(capsys, "run", mine, "--dry-run") == message


def test_a_claim_is_checked_on_the_files_grid_not_on_what_set_leaves(capsys):
    # --set cc=bbr leaves figure5's CUBIC claims nothing to select: they are not evaluated, not refused
    out = dry_run(capsys, "figure5", "--set", "cc=bbr")
    assert "  cubic-fills-buffer (0): none of these points (not evaluated)" in out


def test_a_claim_on_a_sweep_of_short_flows_rates_selects_its_points(capsys, tmp_path):
    # a `rate` of short flows (20/s) is not a link's rate: read as written, not refused as one
    mine = write(tmp_path, {"name": "mine", "link": dict(LINK, rate="100Mbit"), "flows": [
        {"cc": "bbr", "workload": {"arrivals": "poisson", "rate": ["20/s", "40/s"], "sizes": "fixed 10KB",
                                   "duration": "10s"}}], "claims": [dict(CLAIM, metric="fct_p50_ms")]})
    assert "  c (2): rate=20/s; rate=40/s\n" in dry_run(capsys, mine)


def test_dry_run_lists_the_points_each_claim_selects(capsys):
    out = dry_run(capsys, "figure5")
    assert ("claims (the points each one selects):\n  cubic-fills-buffer (1): cc=cubic\n"
            "  bbr-below-cubic (1): cc=bbr vs cc=cubic\n  link-busy (2): cc=bbr; cc=cubic\n") in out
    out = dry_run(capsys, "figure8")
    assert "; and " in out and " more" in out  # a long list is cut


@pytest.mark.parametrize("sweep, message", [
    ("[10Mbit,10Mbit]", "link.rate: 10Mbit is in the sweep twice: every point would run twice; list each value once"),
    ("[10Mbit,10000kbit]", "link.rate: 10000kbit is in the sweep twice (as 10Mbit): every point would run twice; "
     "list each value once"),
])
def test_a_value_listed_twice_in_a_sweep_is_refused(capsys, sweep, message):
    assert refused(capsys, "run", "figure5", "--dry-run", "--set", f"rate={sweep}") == message


@pytest.mark.parametrize("options, message", [
    (["--only", "cc=cubic"], "the action bbr runs the points of cc=bbr, but --only cc=cubic asks for other points: "
     "use the action all with --only cc=cubic, or the action cubic"),
    (["--set", "cc=reno"], "the action bbr runs the points of cc=bbr, but figure5 has no cc sweep with --set "
     "cc=reno (every point runs reno): use the action all"),
    (["--set", "cc=[reno,cubic]"], "the action bbr runs the points of cc=bbr, but figure5 has none (cc: reno, cubic): "
     "use the action all"),
])
def test_a_figure_scripts_cc_action_says_what_conflicts_with_it(capsys, options, message):
    assert refused(capsys, "run", "figure5", "--action", "bbr", "--dry-run", *options) == message


def test_a_figure_scripts_cc_action_chooses_its_points(capsys):
    out = dry_run(capsys, "figure5", "--action", "bbr", "--only", "cc=bbr")
    assert out.startswith("figure5: 6 point(s), 3-8 repetitions (auto) (3 chosen by the action bbr and --only)")


def test_the_quick_profile_is_checked_when_the_file_is_loaded(capsys, tmp_path):
    base = {"name": "mine", "link": LINK, "flows": [{"cc": "bbr", "duration": "10s"}]}
    mine = write(tmp_path, dict(base, quick={"durration": "5s"}))
    assert refused(capsys, "run", mine, "--dry-run").startswith(
        "quick.durration: unknown key (did you mean duration?)")
    write(tmp_path, dict(base, quick={"duration": 5}))
    assert refused(capsys, "run", mine, "--dry-run") == "quick: flows.0.duration: 5 needs a unit: did you mean 5s?"


def test_a_startup_longer_than_the_flows_and_a_change_after_them_are_refused(capsys):
    assert refused(capsys, "run", "figure5", "--dry-run", "--set", "sampling.startup=40s") == (
        "sampling.startup: 40s is not shorter than the flows (30 s at cc=bbr): the steady-state metrics would have "
        "nothing left")
    assert refused(capsys, "run", "step", "--dry-run", "--set", "duration=15s") == (
        "link.changes: the change to 10Mbit at 20s comes when the flows have ended (15 s at cc=bbr): nothing would "
        "be sent at that rate")


def test_a_workload_above_the_generators_ceiling_warns(capsys, tmp_path):
    mine = write(tmp_path, {"name": "mine", "link": dict(LINK, rate="100Mbit"), "flows": [
        {"cc": "bbr", "workload": {"arrivals": "poisson", "rate": "500/s", "sizes": "fixed 10KB", "duration": "10s"}}]})
    assert cli.main(["run", mine, "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("mine: 1 point(s)") and err == (
        "bbrlab: mine: warning: flows.0.workload: 500 short flows/s, above the 400/s the short-flow generator "
        "sustains in the testbed VM (docs/field.md): the point may measure the generator's lateness, not the "
        "congestion control\n")
    assert cli.main(["run", mine, "--dry-run", "--set", "flows.0.workload.rate=300/s"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("value", ["1.0%", "1.00%"])
def test_only_compares_values_in_their_units(capsys, value):
    assert "(2 chosen by --only)" in dry_run(capsys, "figure8", "--only", f"loss={value}")


def test_compare_writes_the_format_its_out_names_and_by_default_beside_run_a(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # compare draws an overlay
    a, b = step_run(tmp_path / "a"), step_run(tmp_path / "b")
    assert refused(capsys, "compare", str(a.path), str(b.path), "--out", str(tmp_path / "c.jpg")) == (
        f"--out {tmp_path / 'c.jpg'}: the figure is written as png, svg, pdf: give a file name ending in .png, "
        ".svg or .pdf")
    for ext, magic in (("svg", b"<?xml"), ("pdf", b"%PDF"), ("png", b"\x89PNG")):
        assert cli.main(["compare", str(a.path), str(b.path), "--out", str(tmp_path / f"c.{ext}")]) == 0
        assert (tmp_path / f"c.{ext}").read_bytes().startswith(magic)
    capsys.readouterr()
    assert cli.main(["compare", str(a.path), str(b.path)]) == 0
    beside = a.path.parent / f"compare-{a.path.name}-vs-step-{b.path.name}.png"
    assert f"figure: {beside}\n" in capsys.readouterr().out and beside.read_bytes().startswith(b"\x89PNG")
    assert RunDir.latest(tmp_path / "a", "step").path == a.path  # a figure beside the run is not a run


# ---------------------------------------------------------------- smaller


def test_hours_are_not_a_unit_here(capsys):
    assert refused(capsys, "run", "figure5", "--dry-run", "--set", "duration=10h") == (
        "flows.0.duration: 10h: hours are not a unit here (time units: us, ms, s, min); write 600min")


def test_a_bytes_per_second_rate_is_named_as_written(capsys):
    assert refused(capsys, "run", "figure5", "--dry-run", "--set", "rate=10kbps") == (
        "link.rate: 10kbps needs a rate unit (tc reads kbps as kilobytes per second): write bit, kbit, Mbit, Gbit, "
        "e.g. 10kbit")


def test_a_tab_is_named_with_its_line(capsys, tmp_path):
    tab = _text(tmp_path / "tab.yaml", "name: tab\nlink:\n\trate: 10Mbit\n")
    assert refused(capsys, "run", str(tab), "--dry-run") == (
        f"{tab}: line 3: a tab; YAML indents with spaces only (replace the tab with spaces)")


def test_a_merge_of_an_incomplete_set_exits_non_zero_unless_partial(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # a merged run is drawn
    from bbrlab.runs import shard

    base = step_run(tmp_path / "host1")
    exp = spec.load(REPO / "experiments" / "step.yaml")
    write_json(base.path / "run.json", {"status": "complete", "spec_hash": exp.identity,
                                        "shard": shard.record(shard.parse("1/2"), shard.points_of(list(exp.points),
                                                                                                  shard.parse("1/2")))})
    assert cli.main(["merge", str(base.path), "--into", str(tmp_path / "results")]) == 1
    merged = RunDir.latest(tmp_path / "results", "step")
    assert capsys.readouterr().err.endswith(f"bbrlab: merge: incomplete: {merged.path} (--partial accepts that)\n")
    assert read_json(merged.path / "run.json")["status"] == "incomplete"
    assert cli.main(["merge", str(base.path), "--into", str(tmp_path / "again"), "--partial"]) == 0


def test_a_metric_missing_for_a_reason_is_judged_with_that_reason(capsys, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # it draws figures
    # the captured step point: BBR never reached 85% of 20 Mbit/s on that link
    run = step_run(tmp_path / "results")
    assert cli.main(["plot", str(run.path)]) == 0
    (check,) = read_json(run.path / "verdict.json")["claims"][0]["checks"]
    assert check["note"] == ("adapt_time_max_s: the flows never held 85% of 20 Mbit/s for 1 s after the change "
                             "at 10 s")
    point = next(run.points_dir.iterdir())
    assert json.loads((point / "metrics.json").read_text())["why_missing"] == {
        "adapt_time_max_s": "the flows never held 85% of 20 Mbit/s for 1 s after the change at 10 s"}


def test_a_dry_run_and_list_say_which_kernel_a_cc_needs(capsys):
    """Before root and the VM: bbr3 lives on the BBRv3 kernel, bbr410 on Debian's 6.1."""
    assert ("kernel: bbr3 needs the BBRv3 kernel (6.12 with Google's BBRv3 patch); in the testbed VM: "
            "BBRLAB_BBR3_KERNEL=1 vm/vm.sh kernel bbr3") in dry_run(capsys, "v3-loss", "--quick")
    assert "kernel: bbr410 needs Debian's 6.1 kernel" in dry_run(capsys, "figure8-versions", "--quick")
    assert "kernel: no one kernel offers bbr3 and bbr410" in dry_run(
        capsys, "figure8-versions", "--quick", "--set", "cc=[bbr410, bbr3]")
    assert "kernel:" not in dry_run(capsys, "figure8", "--quick")
    assert cli.main(["list"]) == 0
    listed = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert listed["v3-loss"].endswith("-- bbr3 needs the BBRv3 kernel (6.12 with Google's BBRv3 patch); "
                                      "in the testbed VM: BBRLAB_BBR3_KERNEL=1 vm/vm.sh kernel bbr3")
    assert "needs" not in listed["figure5"]


def test_iperf3_durations_are_whole_seconds_and_flows_are_bounded(capsys):
    """duration: 2.5s became iperf3 -t 2.5, which iperf3 reads as 2; count: 70000 planned
    addresses like 10.273.114.2."""
    assert refused(capsys, "run", "figure5", "--dry-run", "--set", "duration=2.5s") == (
        "flows.0.duration: flow 1 would run 2.5 s, but iperf3 runs whole seconds (its -t drops a fraction): "
        "make it 2s or 3s")
    assert refused(capsys, "run", "figure5", "--dry-run", "--set", "count=70000").startswith(
        "flows: 70000 long flows in one point: at most 256")
    assert "cc=bbr" in dry_run(capsys, "figure5", "--set", "count=256")


@pytest.mark.parametrize("name", ["..", ".", ".hidden"])
def test_a_name_that_would_file_the_run_outside_its_folder_is_refused(tmp_path, capsys, name):
    """name: .. made the run's folder the checkout root, name: . the results root itself."""
    mine = tmp_path / "mine.yaml"
    mine.write_text(f"name: '{name}'\nlink: {{rate: 10Mbit, rtt: 40ms, buffer: 2bdp}}\n"
                    "flows: [{cc: bbr, duration: 10s}]\n")
    assert refused(capsys, "run", str(mine), "--dry-run") == (
        f"name: expected letters, digits, '-', '_' or '.', not starting with '.', got {name!r}")
