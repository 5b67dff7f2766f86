"""`bbrlab pack RUN` / `unpack FILE`: one file a reviewer can mail; plot, report, export and
compare take it; a damaged or unsafe archive is refused in one line."""

import io
import tarfile

import pytest

from bbrlab import cli
from bbrlab.errors import BbrlabError
from bbrlab.store import pack


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def packed(tmp_path, step_run, capsys):
    pytest.importorskip("matplotlib")  # it draws figures
    run = step_run(tmp_path / "here")
    assert cli.main(["plot", str(run.path)]) == 0  # its verdict and figure
    capsys.readouterr()
    code, out, _ = run_cli(capsys, "pack", str(run.path))
    archive = run.path.with_name(run.path.name + ".tar.gz")
    assert code == 0 and out.strip() == f"archive: {archive}"
    return run, archive


def test_a_packed_run_unpacks_elsewhere_with_every_file(tmp_path, packed, capsys):
    run, archive = packed
    elsewhere = tmp_path / "reviewer"
    code, out, _ = run_cli(capsys, "--results", str(elsewhere), "unpack", str(archive))
    target = elsewhere / "step" / run.path.name
    assert code == 0 and out.strip() == f"results: {target}"
    ours = {p.relative_to(run.path): p.read_bytes() for p in run.path.rglob("*") if p.is_file()}
    theirs = {p.relative_to(target): p.read_bytes() for p in target.rglob("*") if p.is_file()}
    assert ours == theirs and any("raw" in str(p) for p in ours)  # the tools' raw output too
    # unpacked again: the same run, taken as it is
    assert run_cli(capsys, "--results", str(elsewhere), "unpack", str(archive))[0] == 0


def test_plot_export_compare_and_report_take_the_archive(tmp_path, packed, capsys):
    run, archive = packed
    root = tmp_path / "reviewer"
    code, out, _ = run_cli(capsys, "--results", str(root), "plot", str(archive))
    assert code == 0 and f"figure: {root / 'step' / run.path.name / 'step.png'}" in out
    code, out, _ = run_cli(capsys, "--results", str(root), "export", str(archive), "--out", str(tmp_path / "t"))
    assert code == 0 and (tmp_path / "t" / "points.csv").is_file()
    code, out, _ = run_cli(capsys, "--results", str(root), "compare", str(archive), str(run.path))
    assert code == 0 and "figure:" in out
    code, out, _ = run_cli(capsys, "--results", str(root), "report", str(archive))
    assert code == 0 and "| step | " in (root / "report.md").read_text()


def rewrite(archive, tmp_path, change):
    """ARCHIVE with its members passed through CHANGE(list of (TarInfo, bytes)) -> the same."""
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else b"") for m in tar.getmembers()]
    out = tmp_path / "bad.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for info, data in change(members):
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return out


def flipped(members):
    return [(i, d.replace(b"bbr", b"bbx", 1) if i.name.endswith("point.json") else d) for i, d in members]


def escaping(members):
    info = tarfile.TarInfo(members[0][0].name.split("/")[0] + "/x/../../../evil")
    return members + [(info, b"x")]


def linked(members):
    info = tarfile.TarInfo(members[0][0].name.rsplit("/", 1)[0] + "/link")
    info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    return members + [(info, b"")]


def no_manifest(members):
    return [(i, d) for i, d in members if not i.name.endswith(pack.MANIFEST)]


@pytest.mark.parametrize(("change", "says"), [
    (flipped, "does not match its manifest's sha256: damaged"),
    (escaping, "is not inside EXPERIMENT/STAMP/ as a run's file: refused"),
    (linked, "is a link or a device: refused"),
    (no_manifest, "no MANIFEST.json: not made by bbrlab pack"),
])
def test_a_damaged_or_unsafe_archive_is_refused_in_one_line(tmp_path, packed, capsys, change, says):
    _, archive = packed
    bad = rewrite(archive, tmp_path, change)
    code, out, err = run_cli(capsys, "--results", str(tmp_path / "r"), "unpack", str(bad))
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r").exists()  # nothing written


def test_unpacking_over_another_run_is_refused(tmp_path, packed, capsys):
    run, archive = packed
    root = tmp_path / "here"  # where the run itself lies
    (run.path / "spec.yaml").write_text((run.path / "spec.yaml").read_text() + "# edited\n")
    code, _, err = run_cli(capsys, "--results", str(root), "unpack", str(archive))
    assert code == 2 and "exists and holds another run" in err


def test_not_an_archive(tmp_path):
    junk = tmp_path / "x.tar.gz"
    junk.write_bytes(b"not gzip")
    with pytest.raises(BbrlabError, match="not a bbrlab archive"):
        pack.unpack(junk, tmp_path / "r")


def test_an_archive_stays_usable_after_plot_writes_beside_its_run(tmp_path, packed, capsys):
    _, archive = packed
    root = tmp_path / "reviewer"
    assert run_cli(capsys, "--results", str(root), "plot", str(archive), "--format", "svg")[0] == 0
    assert run_cli(capsys, "--results", str(root), "plot", "--kind", "rtt_timeseries", str(archive))[0] == 0
    code, _, err = run_cli(capsys, "--results", str(root), "export", str(archive), "--out", str(tmp_path / "t"))
    assert code == 0, err


def test_a_lab_run_is_reported_from_its_archive_not_from_a_newer_run_of_its_name(tmp_path, step_run, capsys):
    """The report on an archive is the archive's run, judged by the spec it ran, even when
    experiments/ has no file of its name or the results root holds a newer run of it."""
    pytest.importorskip("matplotlib")  # it draws figures
    run = step_run(tmp_path / "there")
    spec_yaml = run.path / "spec.yaml"
    spec_yaml.write_text(spec_yaml.read_text().replace("name: step", "name: lab9-step"))
    assert cli.main(["plot", str(run.path)]) == 0
    capsys.readouterr()
    code, out, _ = run_cli(capsys, "pack", str(run.path))
    assert code == 0
    archive = out.split("archive: ")[1].strip()
    root = tmp_path / "reviewer"
    code, out, err = run_cli(capsys, "--results", str(root), "report", archive)
    assert code == 0, err
    text = (root / "report.md").read_text()
    assert "| lab9-step | " in text and str(root / "lab9-step") in text


def test_an_unreadable_manifest_is_one_line(tmp_path, packed, capsys):
    _, archive = packed

    def garbled(members):
        return [(i, b"{not json" if i.name.endswith(pack.MANIFEST) else d) for i, d in members]

    code, _, err = run_cli(capsys, "--results", str(tmp_path / "r"), "unpack", str(rewrite(archive, tmp_path, garbled)))
    assert code == 2 and "MANIFEST.json cannot be read: damaged" in err and len(err.strip().splitlines()) == 1


def _member(name, data=b"x", kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info, data


def _top(members):
    return "/".join(members[0][0].name.split("/")[:2])


def with_manifest(members):
    """MEMBERS with their manifest written to match them: what an attacker would do."""
    import hashlib
    import json

    top = _top(members)
    files = {i.name[len(top) + 1:]: {"bytes": len(d), "sha256": hashlib.sha256(d).hexdigest()}
             for i, d in members if i.isfile() and not i.name.endswith(pack.MANIFEST)}
    manifest = json.dumps({"format": 1, "run": top, "files": files}).encode()
    return [(i, manifest if i.name.endswith(pack.MANIFEST) else d) for i, d in members]


def test_an_empty_component_never_writes_outside_the_results_root(tmp_path, packed, capsys):
    """`EXPERIMENT/STAMP//abs/path` joined to an absolute path and replaced that file."""
    _, archive = packed
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")

    def absolute(members):
        return with_manifest(members + [_member(f"{_top(members)}/{victim}", b"theirs\n")])

    bad = rewrite(archive, tmp_path, absolute)
    code, _, err = run_cli(capsys, "--results", str(tmp_path / "r"), "unpack", str(bad))
    assert code == 2 and "is not inside EXPERIMENT/STAMP/ as a run's file: refused" in err, err
    assert victim.read_text() == "mine\n" and not (tmp_path / "r").exists()


@pytest.mark.parametrize("where", [0, 1])
def test_dot_as_experiment_or_stamp_is_refused(tmp_path, packed, capsys, where):
    _, archive = packed

    def dotted(members):
        out = []
        for info, data in members:
            parts = info.name.split("/")
            parts[where] = "."
            info.name = "/".join(parts)
            out.append((info, data))
        return out

    code, _, err = run_cli(capsys, "--results", str(tmp_path / "r"), "unpack", str(rewrite(archive, tmp_path, dotted)))
    assert code == 2 and "refused" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r").exists()


def test_a_member_larger_than_its_manifest_says_is_refused_before_it_is_read(tmp_path, packed, capsys, monkeypatch):
    """A 200 MB member in a small archive: its header's size against the manifest's, no read."""
    _, archive = packed

    def bomb(members):
        return [(i, b"\0" * (200 << 20) if i.name.endswith("raw/cpu.txt") else d) for i, d in members]

    bad = rewrite(archive, tmp_path, bomb)
    assert bad.stat().st_size < 1 << 20
    reads = []
    real = tarfile.TarFile.extractfile
    monkeypatch.setattr(tarfile.TarFile, "extractfile", lambda self, m: reads.append(m.name) or real(self, m))
    code, _, err = run_cli(capsys, "--results", str(tmp_path / "r"), "unpack", str(bad))
    assert code == 2 and f"{200 << 20} bytes, its manifest says" in err, err
    assert all(name.endswith(pack.MANIFEST) for name in reads)  # only the manifest was read


def test_an_archive_above_the_cap_is_refused(tmp_path, packed, capsys, monkeypatch):
    _, archive = packed
    monkeypatch.setattr(pack, "SIZE_CAP", 1000)
    code, _, err = run_cli(capsys, "--results", str(tmp_path / "r"), "unpack", str(archive))
    assert code == 2 and "above the cap of 1000: refused" in err, err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("layout", "says"), [
    (lambda m: m + [_member(f"{_top(m)}/run.json", b"again")], "twice: refused"),
    (lambda m: m + [_member(f"{_top(m)}/run.json/x", b"under a file")], "is both a file and a folder: refused"),
    (lambda m: m + [_member(f"{_top(m)}/spec.yaml", kind=tarfile.DIRTYPE)], "is both a file and a folder: refused"),
    (lambda m: [_member(_top(m), kind=tarfile.REGTYPE)] + m, "refused"),
    (lambda m: m + [_member(f"{_top(m)}/points/x", link="../../../..", kind=tarfile.LNKTYPE)],
     "is a link or a device: refused"),
])
def test_layouts_that_crashed_are_one_line_and_leave_nothing(tmp_path, packed, capsys, layout, says):
    _, archive = packed
    bad = rewrite(archive, tmp_path, lambda m: with_manifest(layout(m)))
    code, _, err = run_cli(capsys, "--results", str(tmp_path / "r"), "unpack", str(bad))
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r").exists()


def test_the_experiment_is_the_one_its_spec_names(tmp_path, packed, capsys):
    """A folder name that is not its spec's would file the run as another experiment."""
    _, archive = packed

    def renamed(members):
        for info, _ in members:
            info.name = "figure5/" + info.name.split("/", 1)[1]
        return members

    code, _, err = run_cli(capsys, "--results", str(tmp_path / "r"), "unpack", str(rewrite(archive, tmp_path, renamed)))
    assert code == 2 and "lies under 'figure5' but its spec.yaml names 'step': refused" in err, err


def test_a_digest_mismatch_found_while_writing_leaves_nothing(tmp_path, packed, capsys):
    """Contents are checked as they stream into a hidden folder: a late mismatch removes it."""
    _, archive = packed
    root = tmp_path / "r"
    (root / "step").mkdir(parents=True)
    code, _, err = run_cli(capsys, "--results", str(root), "unpack", str(rewrite(archive, tmp_path, flipped)))
    assert code == 2 and "does not match its manifest's sha256" in err
    assert list((root / "step").iterdir()) == []  # no half-written run, hidden or not


def test_pack_refuses_a_spec_that_names_no_experiment(tmp_path, step_run):
    run = step_run(tmp_path / "here")
    spec_yaml = run.path / "spec.yaml"
    spec_yaml.write_text(spec_yaml.read_text().replace("name: step", "name: ..", 1))
    with pytest.raises(BbrlabError, match="names no experiment bbrlab can file"):
        pack.pack(run)
