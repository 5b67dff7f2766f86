"""The data bbrlab reads but does not ship (schema/datasets.py) and `bbrlab fetch-data`
(runs/fetch.py): the read order, the one line said when a file is missing, and the fetch
checked offline against a file:// mirror of stand-in files (never the network)."""

import hashlib
from pathlib import Path

import pytest

from bbrlab import cli
from bbrlab.runs import fetch
from bbrlab.schema import datasets, traces
from bbrlab.schema import experiment as spec
from bbrlab.verdicts import reference_numbers

REPO = Path(__file__).resolve().parents[2]
FETCH = "run `./bbrlab fetch-data`"


@pytest.fixture
def folders(monkeypatch, tmp_path):
    """data/ in a checkout and shared/ beside it, both empty, and neither variable set."""
    monkeypatch.setattr(datasets, "DATA", tmp_path / "repo" / "data")
    monkeypatch.setattr(datasets, "SHARED", tmp_path / "shared")
    monkeypatch.delenv("BBRLAB_TRACES", raising=False)
    monkeypatch.delenv("BBRLAB_REFERENCE", raising=False)
    return tmp_path / "repo" / "data", tmp_path / "shared"


def put(path: Path, text: str = "1\n2\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_read_order_is_the_variable_alone_else_data_then_shared(folders):
    data, shared = folders
    assert datasets.folders("traces", {}) == (data / "traces", shared / "traces")
    assert datasets.folders("reference", {}) == (data / "reference", shared / "reference")
    assert datasets.folders("traces", {"BBRLAB_TRACES": "/x"}) == (Path("/x"),)
    assert datasets.destination("traces", {}) == data / "traces"
    assert datasets.destination("reference", {"BBRLAB_REFERENCE": "/y"}) == Path("/y")


def test_a_path_through_the_unset_variable_is_the_first_folder_that_has_the_file(folders):
    data, shared = folders
    value = "$BBRLAB_TRACES/Verizon-LTE-short.up"
    assert traces.resolve(value, "link.trace") == data / "traces" / "Verizon-LTE-short.up"  # none: the first
    put(shared / "traces" / "Verizon-LTE-short.up")
    assert traces.resolve(value, "link.trace") == shared / "traces" / "Verizon-LTE-short.up"
    put(data / "traces" / "Verizon-LTE-short.up")
    assert traces.resolve(value, "link.trace") == data / "traces" / "Verizon-LTE-short.up"
    put(shared / "reference" / "rebbr" / "experiment4.csv")
    assert reference_numbers.csv_path({"csv": "${BBRLAB_REFERENCE}/rebbr/experiment4.csv"}) == \
        shared / "reference" / "rebbr" / "experiment4.csv"


def test_a_missing_file_fetch_data_provides_is_one_line_naming_it_and_the_command(folders):
    data, shared = folders
    with pytest.raises(datasets.MissingData) as err:
        spec.load(REPO / "experiments" / "cellular.yaml")
    assert str(err.value) == (f"link.trace: needs trace Verizon-LTE-short.up (not in {data / 'traces'} or "
                              f"{shared / 'traces'}): {FETCH}")
    lacking = reference_numbers.missing({"csv": "$BBRLAB_REFERENCE/rebbr/experiment4.csv"})
    assert lacking.needs.startswith("needs reference file rebbr/experiment4.csv (not in ") and lacking.needs.endswith(FETCH)
    note = reference_numbers.note("cellular", {"csv": "$BBRLAB_REFERENCE/rebbr/experiment4.csv"})
    assert note.startswith("cellular is compared with no reference here: it needs reference file")


def test_a_missing_file_of_ones_own_is_its_readers_to_report(folders, tmp_path):
    assert datasets.check(tmp_path / "mine.up", "traces", "link.trace") == tmp_path / "mine.up"
    other = datasets.DATA / "traces" / "TMobile-LTE-short.up"  # not one fetch-data provides
    assert datasets.check(other, "traces", "link.trace") == other
    assert reference_numbers.missing({"csv": str(tmp_path / "mine.csv")}) is None
    assert reference_numbers.missing({"series": {"bbr": {1: 2.0}}}) is None


def test_folders_are_shown_from_the_checkout():
    assert datasets.shown(datasets.ROOT / "data" / "traces") == "data/traces"
    assert datasets.shown(datasets.ROOT.parent / "shared" / "traces") == "../shared/traces"
    assert datasets.shown(Path("/elsewhere/traces")) in ("/elsewhere/traces", "../elsewhere/traces")


# ---------------------------------------------------------------- the commands


def test_list_marks_what_lacks_a_trace_and_run_refuses_it_in_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("BBRLAB_TRACES", str(tmp_path))
    code = cli.main(["list"])
    out, _ = capsys.readouterr()
    assert code == 0 and "INVALID" not in out
    (line,) = [x for x in out.splitlines() if x.startswith("cellular ")]
    assert line == f"cellular         needs trace Verizon-LTE-short.up (not in $BBRLAB_TRACES={tmp_path}): {FETCH}"
    assert [x.split()[0] for x in out.splitlines()] == [p.stem for p in sorted((REPO / "experiments").glob("*.yaml"))]
    code = cli.main(["run", "cellular", "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"bbrlab: cellular needs trace Verizon-LTE-short.up (not in $BBRLAB_TRACES={tmp_path}): {FETCH}\n"


def test_list_and_run_say_when_the_reference_file_is_missing(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("BBRLAB_REFERENCE", str(tmp_path))  # the traces: conftest's stand-ins
    assert cli.main(["list"]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("cellular ")]
    assert line.endswith(f" -- needs reference file rebbr/experiment4.csv (not in $BBRLAB_REFERENCE={tmp_path}): "
                         f"{FETCH}")
    assert cli.main(["run", "cellular", "--dry-run", "--quick"]) == 0
    err = capsys.readouterr().err
    assert err == (f"bbrlab: cellular is compared with no reference here: it needs reference file "
                   f"rebbr/experiment4.csv (not in $BBRLAB_REFERENCE={tmp_path}): {FETCH}\n")


def test_the_report_leaves_out_what_lacks_a_trace_and_names_it(capsys, monkeypatch, tmp_path, step_run):
    pytest.importorskip("matplotlib")  # it draws figures
    from bbrlab.output.reports import summary

    rundir = step_run(tmp_path / "results")
    summary.finish(rundir, spec.load(REPO / "experiments" / "step.yaml"))  # its verdict: a finished run
    capsys.readouterr()
    monkeypatch.setenv("BBRLAB_TRACES", str(tmp_path / "none"))
    code = cli.main(["--results", str(tmp_path / "results"), "report"])
    out, err = capsys.readouterr()
    assert code == 0 and out == f"report: {tmp_path / 'results' / 'report.md'}\n"
    lines = err.splitlines()
    assert lines == [f"bbrlab: report: leaving out {name}, which needs trace {trace} (not in "
                     f"$BBRLAB_TRACES={tmp_path / 'none'}): {FETCH}"
                     for name, trace in (("cellular", "Verizon-LTE-short.up"), ("startup-lte", "Verizon-LTE-short.down"),
                                         ("trace-interval", "Verizon-LTE-short.up"))]
    text = (tmp_path / "results" / "report.md").read_text()
    assert "| step |" in text and "Left out for want of data: cellular needs trace Verizon-LTE-short.up" in text


def test_a_suite_refuses_only_what_lacks_a_trace(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("BBRLAB_TRACES", str(tmp_path / "none"))
    ran = []

    def preflight(points):  # what the suite would run; stop there
        ran.append(sorted({p.experiment for p in points}))
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_preflight", preflight)
    assert cli.main(["--results", str(tmp_path), "suite", "cellular", "step"]) == 130
    err = capsys.readouterr().err
    assert ran == [["step"]]
    assert err.startswith(f"bbrlab: suite: skipping cellular, which needs trace Verizon-LTE-short.up (not in "
                          f"$BBRLAB_TRACES={tmp_path / 'none'}): {FETCH}\n")
    assert cli.main(["--results", str(tmp_path), "suite", "cellular"]) == 2  # nothing else was asked for
    code = cli.main(["--results", str(tmp_path), "suite", "--shard", "1/2"])
    assert code == 2 and "--shard: every host runs its part of the whole suite, but here cellular needs trace" \
        in capsys.readouterr().err


# ---------------------------------------------------------------- fetch-data, offline


@pytest.fixture
def mirror(monkeypatch, tmp_path, folders):
    """Two stand-in files pinned as the real ones are, served from a file:// folder laid out
    as GitHub's raw files (BASE/OWNER/REPO/COMMIT/PATH)."""
    base = tmp_path / "mirror"
    kinds = {}
    for kind, name, text in (("traces", "a.up", "1\n2\n3\n"), ("reference", "rebbr/x.csv", "congestion_control\n")):
        source = datasets.Source("owner/repo", "c" * 40, f"files/{Path(name).name}",
                                 hashlib.sha256(text.encode()).hexdigest())
        put(base / source.repo / source.commit / source.path, text)
        kinds[kind] = datasets.Kind(kind, datasets.KINDS[kind].variable, datasets.KINDS[kind].what, {name: source})
    monkeypatch.setattr(datasets, "KINDS", kinds)
    return base.as_uri()


def test_fetch_writes_checked_files_where_they_are_read_and_a_second_fetch_downloads_nothing(mirror, folders):
    data, _ = folders
    done, errors = fetch.lines(fetch.fetch_all(mirror))
    assert errors == []
    assert done[0] == "fetched a.up into " + datasets.shown(data / "traces") + " (6 bytes, sha256 checked)"
    assert (data / "traces" / "a.up").read_text() == "1\n2\n3\n"
    assert (data / "reference" / "rebbr" / "x.csv").is_file()
    assert done[-1].startswith("data: traces in ")
    assert not [p for p in data.rglob(".*")]  # no half-written file left behind
    done, errors = fetch.lines(fetch.fetch_all("file:///nowhere"))  # nothing to download
    assert errors == [] and done[0].startswith("have a.up (")


def test_fetch_leaves_a_good_copy_in_shared_alone_and_replaces_a_bad_one(mirror, folders):
    data, shared = folders
    put(shared / "traces" / "a.up", "1\n2\n3\n")
    put(data / "reference" / "rebbr" / "x.csv", "tampered\n")
    outcomes = fetch.fetch_all(mirror)
    assert outcomes[0].line == f"have a.up ({datasets.shown(shared / 'traces')})"
    assert not (data / "traces" / "a.up").exists()
    assert outcomes[1].line.startswith("fetched rebbr/x.csv into ")
    assert (data / "reference" / "rebbr" / "x.csv").read_text() == "congestion_control\n"


def test_a_file_with_other_bytes_or_none_is_not_written_and_said_in_one_line(mirror, folders, tmp_path):
    data, _ = folders
    (tmp_path / "mirror" / "owner" / "repo" / ("c" * 40) / "files" / "a.up").write_text("9\n")
    (tmp_path / "mirror" / "owner" / "repo" / ("c" * 40) / "files" / "x.csv").unlink()
    done, errors = fetch.lines(fetch.fetch_all(mirror))
    assert done == [] and len(errors) == 3 and errors[-1] == "2 of 2 files not fetched"
    assert errors[0].startswith(f"{mirror}/owner/repo/{'c' * 40}/files/a.up: sha256 ") and "(not written)" in errors[0]
    assert errors[1].startswith(f"{mirror}/owner/repo/{'c' * 40}/files/x.csv: ")
    assert not data.exists()


def test_the_command_takes_its_base_from_the_option_or_the_variable(capsys, mirror, folders, monkeypatch):
    assert fetch.base_url(None, {}) == "https://raw.githubusercontent.com"
    assert fetch.base_url(None, {"BBRLAB_DATA_URL": "file:///m"}) == "file:///m"
    assert fetch.base_url("file:///n", {"BBRLAB_DATA_URL": "file:///m"}) == "file:///n"
    monkeypatch.setenv("BBRLAB_DATA_URL", mirror)
    assert cli.main(["fetch-data"]) == 0
    out, err = capsys.readouterr()
    assert "fetched a.up" in out and err == ""
    assert cli.main(["fetch-data", "--from", "file:///nowhere"]) == 0  # all there already
    (folders[0] / "traces" / "a.up").unlink()
    assert cli.main(["fetch-data", "--from", "file:///nowhere"]) == 2
    err = capsys.readouterr().err
    assert err.endswith("bbrlab: fetch-data: 1 of 2 files not fetched\n") and "Traceback" not in err


# ---------------------------------------------------------------- the pins


@pytest.mark.parametrize("kind, name", [(k, n) for k, kind in datasets.KINDS.items() for n in kind.files])
def test_every_pin_matches_the_copy_bbrlab_reads_here(kind, name):
    """Skipped only where the file is in none of the default folders (a fresh clone); CI has
    them beside the checkout (shared/), so there it always runs."""
    path = datasets.find(kind, name, {})  # the default read order, not conftest's stand-ins
    if path is None:
        pytest.skip(f"needs {datasets.KINDS[kind].what} {name}: run `{datasets.FETCH}`")
    source = datasets.KINDS[kind].files[name]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == source.sha256, path
    assert source.url() == f"https://raw.githubusercontent.com/{source.repo}/{source.commit}/{source.path}"
    assert len(source.commit) == 40


def test_an_experiment_lacking_data_goes_by_its_name_not_its_file_name(monkeypatch, tmp_path):
    from bbrlab.runs import suite

    monkeypatch.setenv("BBRLAB_TRACES", str(tmp_path / "none"))
    mine = tmp_path / "my-lte.yaml"
    mine.write_text((REPO / "experiments" / "cellular.yaml").read_text().replace("name: cellular", "name: lte-mine"))
    exps, lacking = suite.load_each([mine])
    assert exps == [] and list(lacking) == ["lte-mine"]
