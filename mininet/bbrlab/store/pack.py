"""One file for one run: `bbrlab pack RUN` and its inverse, `bbrlab unpack FILE`.

The archive (gzip'd tar, like flent's one data file) holds everything a run needs to be
replotted, analysed again and judged elsewhere: spec.yaml, run.json, every finished point
with its raw tool output, and the run's verdict and figures, under EXPERIMENT/STAMP/, with a
manifest of each file's size and sha256. A reviewer mails it; `plot`, `report`, `export` and
`compare` take it where they take a run directory (it is unpacked into the results root
first, once). Unpacking checks the manifest and takes regular files and folders only, each
inside EXPERIMENT/STAMP/: no links, no absolute paths, no "..".
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from pathlib import Path

from .. import __version__
from ..errors import BbrlabError
from .results import RunDir, write_atomic

MANIFEST = "MANIFEST.json"
FORMAT = 1
SUFFIX = ".tar.gz"
NAME = re.compile(r"[A-Za-z0-9_.-]+")


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.endswith(SUFFIX)


def _files(run: RunDir) -> list[Path]:
    """The run's files, in a stable order; half-written points (.partial-*) and temporary
    files (.NAME.*) left out: they are not part of the run."""
    out = []
    for path in sorted(run.path.rglob("*")):
        rel = path.relative_to(run.path)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            out.append(path)
    return out


def pack(run: RunDir, out: Path | None = None) -> Path:
    """RUN as one archive (default: beside it, STAMP.tar.gz); returns its path."""
    if not (run.path / "spec.yaml").is_file():
        raise BbrlabError(f"pack: {run.path} has no spec.yaml: not a run bbrlab can judge elsewhere")
    target = out or run.path.with_name(run.path.name + SUFFIX)
    if not target.name.endswith(SUFFIX):
        raise BbrlabError(f"pack --out {target}: an archive's name ends in {SUFFIX}")
    import yaml

    named = yaml.safe_load((run.path / "spec.yaml").read_text()) or {}
    name = named.get("name") if isinstance(named, dict) and NAME.fullmatch(str(named.get("name", ""))) else None
    top = f"{name or run.path.parent.name}/{run.path.name}"  # the experiment it ran, wherever it was copied
    files = _files(run)
    listed = {str(p.relative_to(run.path)): {"bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
              for p in files}
    manifest = {"format": FORMAT, "bbrlab": __version__, "run": top, "files": listed}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        data = json.dumps(manifest, indent=1, sort_keys=True).encode()
        info = tarfile.TarInfo(f"{top}/{MANIFEST}")
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
        for path in files:
            info = tarfile.TarInfo(f"{top}/{path.relative_to(run.path)}")
            info.size, info.mode, info.mtime = path.stat().st_size, 0o644, int(path.stat().st_mtime)
            with open(path, "rb") as f:
                tar.addfile(info, f)
    write_atomic(target, buffer.getvalue())
    return target


def _read(archive: Path) -> tuple[str, dict, dict[str, bytes]]:
    """(EXPERIMENT/STAMP, the manifest, {relative path: bytes}) of ARCHIVE, every member checked."""
    try:
        tar = tarfile.open(archive, mode="r:gz")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BbrlabError(f"{archive}: not a bbrlab archive ({exc})") from None
    contents: dict[str, bytes] = {}
    top = None
    with tar:
        try:
            members = tar.getmembers()
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise BbrlabError(f"{archive}: damaged ({exc})") from None
        for member in members:
            parts = member.name.split("/")
            if (member.name.startswith("/") or ".." in parts or len(parts) < 3
                    or not all(NAME.fullmatch(p) for p in parts[:2])):
                raise BbrlabError(f"{archive}: {member.name!r} is not inside EXPERIMENT/STAMP/: refused")
            if top is None:
                top = "/".join(parts[:2])
            if "/".join(parts[:2]) != top:
                raise BbrlabError(f"{archive}: holds more than one run ({top} and {'/'.join(parts[:2])})")
            if member.isdir():
                continue
            if not member.isfile():
                raise BbrlabError(f"{archive}: {member.name!r} is a link or a device: refused")
            contents["/".join(parts[2:])] = tar.extractfile(member).read()
    if top is None or MANIFEST not in contents:
        raise BbrlabError(f"{archive}: no {MANIFEST}: not made by bbrlab pack")
    try:
        manifest = json.loads(contents.pop(MANIFEST))
        listed = {name: str(entry["sha256"]) for name, entry in manifest["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise BbrlabError(f"{archive}: its {MANIFEST} cannot be read: damaged") from None
    if set(listed) != set(contents):
        odd = sorted(set(listed) ^ set(contents))
        raise BbrlabError(f"{archive}: its files differ from its manifest ({', '.join(odd[:3])})")
    for name, data in contents.items():
        if hashlib.sha256(data).hexdigest() != listed[name]:
            raise BbrlabError(f"{archive}: {name} does not match its manifest's sha256: damaged")
    return top, manifest, contents


def unpack(archive: Path, root: Path) -> RunDir:
    """ARCHIVE's run into ROOT/EXPERIMENT/STAMP; a run already there with the same files is
    taken as it is, one with other files is refused (nothing is overwritten)."""
    top, _, contents = _read(archive)
    target = root / top
    if target.exists():
        # the run unpacked before, perhaps with figures or a re-judged verdict written beside
        # its files since: taken as it is while every file the archive holds is there unchanged
        same = all((target / name).is_file() and (target / name).read_bytes() == data
                   for name, data in contents.items() if not _derived(name))
        if same:
            return RunDir(target)
        raise BbrlabError(f"unpack: {target} exists and holds another run: move it, or unpack with --results "
                          "ANOTHER_ROOT")
    for name, data in sorted(contents.items()):
        write_atomic(target / name, data)
    return RunDir.open(target)


def _derived(name: str) -> bool:
    """Whether NAME is a file plot writes again (a figure, a verdict): not the measurement."""
    return "/" not in name and (name.endswith((".png", ".svg", ".pdf")) or name.startswith("verdict"))


def open_run(path: Path, root: Path) -> RunDir:
    """A run directory, or an archive unpacked into ROOT first: what plot, export and
    compare take."""
    if not path.exists():
        raise BbrlabError(f"{path}: no such run directory or archive")
    if path.is_file() and not is_archive(path):
        raise BbrlabError(f"{path}: neither a run directory nor an archive bbrlab pack wrote (NAME{SUFFIX})")
    return unpack(path, root) if is_archive(path) else RunDir.open(path)
