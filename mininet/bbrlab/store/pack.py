"""One file for one run: `bbrlab pack RUN` and its inverse, `bbrlab unpack FILE`.

The archive (gzip'd tar, like flent's one data file) holds everything a run needs to be
replotted, analysed again and judged elsewhere: spec.yaml, run.json, every finished point
with its raw tool output, and the run's verdict and figures, under EXPERIMENT/STAMP/, with a
manifest of each file's size and sha256. A reviewer mails it; `plot`, `report`, `export` and
`compare` take it where they take a run directory (it is unpacked into the results root
first, once). Unpacking reads the headers and the manifest before any file: regular files
and folders only, each name checked component by component inside EXPERIMENT/STAMP/ (no
links, no absolute paths, no empty, "." or ".." component), each size the manifest's and all
under a cap, EXPERIMENT the name its spec.yaml gives; then it writes into a hidden folder,
checks every sha256 and renames the folder into place, so a refusal leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
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
    name = named.get("name") if isinstance(named, dict) else None
    if not isinstance(name, str) or not NAME.fullmatch(name) or name.startswith("."):
        raise BbrlabError(f"pack: {run.path}/spec.yaml names no experiment bbrlab can file (name: {name!r})")
    if not NAME.fullmatch(run.path.name) or run.path.name.startswith("."):
        raise BbrlabError(f"pack: {run.path.name!r} is not a run's folder name (letters, digits, '_', '.', '-')")
    top = f"{name}/{run.path.name}"  # the experiment it ran, wherever it was copied
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


# What an archive may hold, checked before anything is read: EXPERIMENT/STAMP/ then names a
# run directory's files have (a point's id keeps "=", "," and "%"), no component empty, "."
# or hidden (pack never writes one); a size the manifest states, all under the cap.
MEMBER = re.compile(r"[A-Za-z0-9=,%_.+-]+")
MANIFEST_CAP = 16 << 20
SIZE_CAP = 8 << 30  # 8 GiB unpacked: above any run's raw output (a capture included)


def _parts(archive: Path, name: str) -> list[str]:
    """NAME's components, each one a name a run's file can have, or a one-line refusal."""
    parts = name.split("/")
    if (len(parts) < 2 or not all(NAME.fullmatch(p) for p in parts[:2])
            or not all(MEMBER.fullmatch(p) and not p.startswith(".") for p in parts)):
        raise BbrlabError(f"{archive}: {name!r} is not inside EXPERIMENT/STAMP/ as a run's file: refused")
    return parts


def _members(archive: Path, tar: tarfile.TarFile) -> tuple[str, dict[str, tarfile.TarInfo]]:
    """(EXPERIMENT/STAMP, {relative path: member}) from the headers alone: every name, type,
    duplicate and file-or-folder clash checked before any content is read."""
    try:
        members = tar.getmembers()
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise BbrlabError(f"{archive}: damaged ({exc})") from None
    top, files, folders = None, {}, set()
    for member in members:
        parts = _parts(archive, member.name)
        if top is None:
            top = "/".join(parts[:2])
        if "/".join(parts[:2]) != top:
            raise BbrlabError(f"{archive}: holds more than one run ({top} and {'/'.join(parts[:2])})")
        rel = "/".join(parts[2:])
        if member.isdir():
            folders.add(rel)
            continue
        if not member.isfile():
            raise BbrlabError(f"{archive}: {member.name!r} is a link or a device: refused")
        if not rel or rel in files:
            raise BbrlabError(f"{archive}: {member.name!r} {'is the run itself' if not rel else 'twice'}: refused")
        files[rel] = member
        folders.update("/".join(parts[2:i]) for i in range(3, len(parts)))
    clash = sorted(folders & set(files))
    if clash:
        raise BbrlabError(f"{archive}: {top}/{clash[0]} is both a file and a folder: refused")
    if top is None or MANIFEST not in files:
        raise BbrlabError(f"{archive}: no {MANIFEST}: not made by bbrlab pack")
    return top, files


def _manifest(archive: Path, tar: tarfile.TarFile, files: dict[str, tarfile.TarInfo]) -> dict:
    """The archive's manifest, its files' names and sizes checked against the headers and
    the cap before any file is read."""
    member = files[MANIFEST]
    if member.size > MANIFEST_CAP:
        raise BbrlabError(f"{archive}: its {MANIFEST} is {member.size} bytes (at most {MANIFEST_CAP}): refused")
    try:
        manifest = json.loads(tar.extractfile(member).read())
        listed = {str(name): (int(entry["bytes"]), str(entry["sha256"])) for name, entry in manifest["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError, tarfile.TarError, OSError, EOFError):
        raise BbrlabError(f"{archive}: its {MANIFEST} cannot be read: damaged") from None
    held = set(files) - {MANIFEST}
    if set(listed) != held:
        odd = sorted(set(listed) ^ held)
        raise BbrlabError(f"{archive}: its files differ from its manifest ({', '.join(odd[:3])})")
    for name, (size, _) in listed.items():
        if files[name].size != size:
            raise BbrlabError(f"{archive}: {name} holds {files[name].size} bytes, its manifest says {size}: damaged")
    total = sum(size for size, _ in listed.values())
    if total > SIZE_CAP:
        raise BbrlabError(f"{archive}: {total} bytes unpacked, above the cap of {SIZE_CAP}: refused")
    manifest["files"] = listed
    return manifest


def _spec_name(archive: Path, tar: tarfile.TarFile, files: dict[str, tarfile.TarInfo]) -> str:
    """The experiment its spec.yaml names ("" when it names none)."""
    import yaml

    try:
        named = yaml.safe_load(tar.extractfile(files["spec.yaml"]).read())
    except (yaml.YAMLError, tarfile.TarError, OSError, EOFError, UnicodeDecodeError):
        raise BbrlabError(f"{archive}: its spec.yaml cannot be read: damaged") from None
    name = named.get("name") if isinstance(named, dict) else None
    return name if isinstance(name, str) else ""


def _extract(archive: Path, tar: tarfile.TarFile, files: dict[str, tarfile.TarInfo], listed: dict,
             into: Path) -> None:
    """Every listed file into INTO (a new, empty folder), each sha256 checked as it streams,
    each target resolved inside INTO."""
    inside = into.resolve()
    for name in sorted(listed):
        target = (into / name).resolve()
        if not target.is_relative_to(inside) or target == inside:
            raise BbrlabError(f"{archive}: {name!r} resolves outside its run: refused")
        target.parent.mkdir(parents=True, exist_ok=True)
        digest, left = hashlib.sha256(), listed[name][0]
        source = tar.extractfile(files[name])
        with open(target, "xb") as out:
            while chunk := source.read(min(left, 1 << 20)):
                digest.update(chunk)
                out.write(chunk)
                left -= len(chunk)
        if left or digest.hexdigest() != listed[name][1]:
            raise BbrlabError(f"{archive}: {name} does not match its manifest's sha256: damaged")
        os.chmod(target, 0o644)


def unpack(archive: Path, root: Path) -> RunDir:
    """ARCHIVE's run into ROOT/EXPERIMENT/STAMP; a run already there with the same files is
    taken as it is, one with other files is refused (nothing is overwritten). Everything is
    checked before anything is written, then written into a hidden folder beside its place
    and renamed there: a refusal leaves nothing behind."""
    try:
        tar = tarfile.open(archive, mode="r:gz")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BbrlabError(f"{archive}: not a bbrlab archive ({exc})") from None
    with tar:
        top, files = _members(archive, tar)
        manifest = _manifest(archive, tar, files)
        experiment, stamp = top.split("/")
        missing = [name for name in ("spec.yaml", "run.json") if name not in files]
        if missing:
            raise BbrlabError(f"{archive}: no {missing[0]}: not a run bbrlab pack wrote")
        named = _spec_name(archive, tar, files)
        if named != experiment:
            raise BbrlabError(f"{archive}: its run lies under {experiment!r} but its spec.yaml names "
                              f"{named!r}: refused")
        target = root / top
        made = [p for p in (root, root / experiment) if not p.exists()]
        try:
            (root / experiment).mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(prefix=f".unpack-{stamp}-", dir=root / experiment))
        except OSError as exc:
            raise BbrlabError(f"unpack: cannot write into {root / experiment} ({exc.strerror})") from None
        try:
            _extract(archive, tar, files, manifest["files"], scratch)
            return _place(scratch, target, manifest["files"])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()  # only while empty: a refusal leaves no folder behind


def _place(scratch: Path, target: Path, listed: dict) -> RunDir:
    """SCRATCH renamed to TARGET, or TARGET taken as it is when it holds the same run."""
    if target.exists():
        # the run unpacked before, perhaps with figures or a re-judged verdict written beside
        # its files since: taken as it is while every file the archive holds is there unchanged
        same = all((target / name).is_file() and (target / name).read_bytes() == (scratch / name).read_bytes()
                   for name in listed if not _derived(name))
        if same:
            return RunDir(target)
        raise BbrlabError(f"unpack: {target} exists and holds another run: move it, or unpack with --results "
                          "ANOTHER_ROOT")
    for folder in [scratch, *(p for p in scratch.rglob("*") if p.is_dir())]:
        os.chmod(folder, 0o755)
    os.rename(scratch, target)
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
