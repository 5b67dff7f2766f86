"""Results on disk: one self-describing directory per run, never overwritten, never torn.

    results/<experiment>/<YYYYmmdd-HHMMSS>/
        spec.yaml          the exact experiment after --quick/--set (what ran)
        run.json           provenance, status, timings, overhead; versioned
        points/<point-id>/ one finished point: point.json, metrics.json, series.json, raw/
        metrics.json       every point's metrics, repetitions averaged
        verdict.json       claims with their numbers
        <experiment>.png   the figure

Every file is written to a temporary name and renamed; a point is built in a hidden
directory and renamed into place only when complete, so a crash or Ctrl-C can lose the
point in progress but never damage a finished one. Resuming a run skips finished points.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from .errors import BbrlabError

FORMAT_VERSION = 1


def write_atomic(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes 0600: results are for everyone to read
        with os.fdopen(fd, "wb") as out:
            out.write(data.encode() if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json(path: Path, obj: Any) -> None:
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise BbrlabError(f"{path}: cannot read results file ({exc})") from None


def spec_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


class RunDir:
    """A run's directory and the operations that keep it consistent."""

    def __init__(self, path: Path):
        self.path = path

    @classmethod
    def create(cls, root: Path, experiment: str) -> "RunDir":
        base = root / experiment
        base.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for n in range(1000):
            path = base / (stamp if n == 0 else f"{stamp}-{n}")
            try:
                path.mkdir()  # exclusive: never reuses another run's directory
                return cls(path)
            except FileExistsError:
                continue
        raise BbrlabError(f"{base}: cannot create a new run directory")

    @classmethod
    def open(cls, path: Path) -> "RunDir":
        if not (path / "run.json").is_file():
            raise BbrlabError(f"{path}: not a bbrlab results directory (no run.json)")
        return cls(path)

    @classmethod
    def find_resumable(cls, root: Path, experiment: str, digest: str) -> "RunDir | None":
        """The newest unfinished run of EXPERIMENT with the same spec, if any."""
        base = root / experiment
        if not base.is_dir():
            return None
        for path in sorted(base.iterdir(), reverse=True):
            run_json = path / "run.json"
            if not run_json.is_file():
                continue
            try:
                meta = json.loads(run_json.read_text())
            except ValueError:
                continue
            if meta.get("spec_hash") == digest and meta.get("status") != "complete":
                return cls(path)
        return None

    @classmethod
    def latest(cls, root: Path, experiment: str) -> "RunDir":
        base = root / experiment
        runs = sorted(p for p in base.iterdir() if (p / "run.json").is_file()) if base.is_dir() else []
        if not runs:
            raise BbrlabError(f"no results for {experiment} under {root} (run it first)")
        return cls(runs[-1])

    # ---------------------------------------------------------------- points

    @property
    def points_dir(self) -> Path:
        return self.path / "points"

    def finished_points(self) -> set[str]:
        if not self.points_dir.is_dir():
            return set()
        return {p.name for p in self.points_dir.iterdir()
                if not p.name.startswith(".") and (p / "metrics.json").is_file()}

    def staging(self, point_id: str) -> Path:
        """A fresh hidden directory to build a point in."""
        path = self.points_dir / f".partial-{point_id}"
        if path.exists():
            shutil.rmtree(path)
        (path / "raw").mkdir(parents=True)
        return path

    def commit_point(self, staging: Path, point_id: str) -> Path:
        final = self.points_dir / point_id
        if final.exists():
            raise BbrlabError(f"{final}: already exists; refusing to overwrite a finished point")
        os.replace(staging, final)
        return final

    def discard(self, staging: Path, keep_as: str | None = None) -> None:
        """Drop a point that did not finish; failed ones are kept hidden for inspection."""
        if not staging.exists():
            return
        if keep_as:
            target = self.points_dir / f".failed-{keep_as}-{time.strftime('%H%M%S')}"
            os.replace(staging, target)
        else:
            shutil.rmtree(staging, ignore_errors=True)

    def point_records(self) -> list[dict]:
        records = []
        for name in sorted(self.finished_points()):
            folder = self.points_dir / name
            record = read_json(folder / "point.json")
            record["metrics"] = read_json(folder / "metrics.json")
            record["dir"] = str(folder)
            records.append(record)
        return records

    def series(self, point_id: str) -> dict:
        return read_json(self.points_dir / point_id / "series.json")
