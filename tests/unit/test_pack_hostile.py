"""Archives built at random from members with hostile names, types and manifests: unpacking
one either refuses it in one line (BbrlabError) or files its run under RESULTS/step/STAMP,
and never writes, links or replaces anything outside the results root."""

import hashlib
import io
import json
import tarfile
import tempfile
from pathlib import Path

import pytest

from bbrlab.errors import BbrlabError
from bbrlab.store import pack
from seeding import seeded

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

STAMP = "20261127-000000"
CANARY = Path(tempfile.gettempdir()) / "bbrlab-canary"  # an absolute place outside every root


def components():
    return st.sampled_from(["", ".", "..", "...", "step", STAMP, "points", "raw", "x", "run.json", "spec.yaml",
                            pack.MANIFEST, "etc", ".hidden", "a b", "é", str(CANARY).lstrip("/"), "outside"])


@st.composite
def hostile(draw):
    """(name, type, link target, bytes) of one member."""
    parts = draw(st.lists(components(), min_size=1, max_size=6))
    if draw(st.booleans()):
        parts[:2] = ["step", STAMP]
    name = ("/" if draw(st.booleans()) and not draw(st.booleans()) else "") + "/".join(parts)
    kind = draw(st.sampled_from([tarfile.REGTYPE, tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE,
                                 tarfile.LNKTYPE, tarfile.FIFOTYPE]))
    link = draw(st.sampled_from(["/etc/passwd", "../../..", str(CANARY / "f"), "step/" + STAMP + "/run.json"]))
    return name, kind, link, draw(st.binary(max_size=64))


@st.composite
def benign(draw):
    """A file a run could hold: the archives that must unpack."""
    parts = draw(st.lists(st.sampled_from(["points", "raw", "cc=bbr,rep0", "a.json", "ss-f1.txt", "x"]),
                          min_size=1, max_size=3))
    return f"step/{STAMP}/" + "/".join(parts), tarfile.REGTYPE, "", draw(st.binary(max_size=64))


def honest():
    """The files of a small run pack would write, by relative path."""
    return {"spec.yaml": b"name: step\n", "run.json": b"{}\n", "points/cc=bbr,rep0/metrics.json": b"{}\n"}


def build(path: Path, base: dict, extra: list, sign: bool) -> None:
    """An archive of BASE's files and the EXTRA members, its manifest listing its regular
    files with their true sizes and digests when SIGN (an attacker can always do that)."""
    members = [(f"step/{STAMP}/{name}", tarfile.REGTYPE, "", data) for name, data in base.items()] + extra
    prefix = f"step/{STAMP}/"
    listed = {name[len(prefix):]: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
              for name, kind, _, data in members if kind == tarfile.REGTYPE and name.startswith(prefix)}
    manifest = json.dumps({"format": 1, "files": listed if sign else {}}).encode()
    members.insert(0, (prefix + pack.MANIFEST, tarfile.REGTYPE, "", manifest))
    with tarfile.open(path, "w:gz") as tar:
        for name, kind, link, data in members:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, link
            info.size = len(data) if kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.is_symlink(), p.read_bytes() if p.is_file() and not p.is_symlink() else None)
            for p in sorted(folder.rglob("*"))} if folder.exists() else {}


@seeded(examples=300)
@hypothesis.given(extra=st.lists(st.one_of(hostile(), benign(), benign()), max_size=4),
                  sign=st.sampled_from([True, True, True, False]), keep_base=st.sampled_from([True, True, True, False]))
def test_no_archive_writes_outside_its_results_root(extra, sign, keep_base):
    with tempfile.TemporaryDirectory() as scratch:
        sandbox = Path(scratch)
        (sandbox / "outside").mkdir()
        (sandbox / "outside" / "precious").write_text("mine")
        root = sandbox / "results"
        archive = sandbox / "in.tar.gz"
        build(archive, honest() if keep_base else {}, extra, sign)
        before = snapshot(sandbox / "outside"), snapshot(CANARY)
        try:
            run = pack.unpack(archive, root)
        except BbrlabError as exc:
            assert "\n" not in str(exc)
            assert not root.exists() or snapshot(root) == {}, snapshot(root)  # a refusal leaves nothing
        else:
            assert run.path == root / "step" / STAMP
            written = snapshot(root)
            assert all(name == "step" or name.startswith(f"step/{STAMP}") for name in written)
            assert not any(link for link, _ in written.values())
        assert (snapshot(sandbox / "outside"), snapshot(CANARY)) == before
        expected = ["in.tar.gz", "outside"] + (["results"] if root.exists() else [])
        assert sorted(p.name for p in sandbox.iterdir()) == expected
