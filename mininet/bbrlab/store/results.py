"""Results on disk: one self-describing directory per run, never overwritten, never torn.

    results/<experiment>/<YYYYmmdd-HHMMSS>/
        spec.yaml          the experiment after --quick/--set: what ran, and the claims
                           that judge it (while it runs, an edited file's; see adopt_spec)
        run.json           provenance, status, timings, overhead; versioned
        points/<point-id>/ one finished point: point.json, metrics.json, series.json, raw/
        metrics.json       every point's metrics, repetitions averaged
        verdict.json       claims with their numbers
        <experiment>.png   the figure
        *-rejudged.*       judged again later (today's claims, or points analyzed again):
                           verdict, metrics, spec and figure beside the run's own (summary.py)

Every file is written to a temporary name and renamed; a point is built in a hidden
directory and renamed into place only when complete, so a crash or Ctrl-C can lose the
point in progress but never damage a finished one. Resuming a run skips finished points.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from ..schema import experiment as spec
from ..errors import BbrlabError

FORMAT_VERSION = 1
# What a point measures, beyond its spec: raise it when the testbed measures differently
# (a run of another measurement is never resumed into, nor taken as a suite's finished
# part). 2: random loss on the data connections only. Runs written before run.json carried
# the field count as 2: it came with that change, and no lossy run measured before is kept.
# 3: every host steers a flow's packets to one CPU (RPS, links.steer_receive); before it the
# emulator itself reordered packets (500-700 of 41000 segments at 50 Mbit/s).
# 4: no new socket hash after a retransmission timeout (net.core.txrehash=0 in every host,
# spec.DEFAULT_SYSCTLS): before it a timeout could move a flow to another receiving CPU,
# and BBR collapsed at 15% loss in half the runs.
MEASUREMENT = 4
RUN_NAME = re.compile(r"(\d{8}-\d{6})(?:-(\d+))?")  # what RunDir.create names a run: stamp[-N]


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


def point_fields(point: spec.Point) -> dict:
    """What a point's record says was asked of it (id, params, repetition, link, pacing,
    flows): a finished point's point.json and a failed point's stand-in for the verdicts."""
    return {"id": point.id, "params": point.params, "repetition": point.repetition,
            "link": dataclasses.asdict(point.link), "pacing": point.pacing,
            "flows": [dataclasses.asdict(g) for g in point.flows]}


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
    def find_resumable(cls, root: Path, experiment: str, digest: str, shard: dict | None = None,
                       testbed: dict | None = None) -> "RunDir | None":
        """The newest unfinished run of EXPERIMENT with the same spec, if any (SHARD: of the
        same part of the grid, shard.record; None: a run of the whole grid), measured on
        TESTBED (metadata.testbed; None: on any)."""
        for path, meta in cls._same_spec(root, experiment, digest, shard, testbed):
            if meta.get("status") != "complete":
                return cls(path)
        return None

    @classmethod
    def find_same_spec(cls, root: Path, experiment: str, digest: str, shard: dict | None = None,
                       testbed: dict | None = None) -> "tuple[RunDir, bool] | None":
        """The newest run of EXPERIMENT with the same spec (and SHARD, and TESTBED), and
        whether it is complete."""
        for path, meta in cls._same_spec(root, experiment, digest, shard, testbed):
            return cls(path), meta.get("status") == "complete"
        return None

    @classmethod
    def _same_spec(cls, root: Path, experiment: str, digest: str, shard: dict | None = None,
                   testbed: dict | None = None):
        """(path, run.json) of EXPERIMENT's runs that measure what identity DIGEST does,
        newest first, and run the part of the grid SHARD names (None: the whole grid; a
        shard is never resumed into another, nor the whole grid into a shard). A run whose
        run.json holds another hash (one written before the identity left out claims, plot
        and titles) is identified by its spec.yaml."""
        for path in reversed(cls._runs(root, experiment, "run.json")):
            try:
                meta = json.loads((path / "run.json").read_text())
            except ValueError:
                continue
            if meta.get("measurement", 2) != MEASUREMENT or meta.get("shard") != shard:
                continue
            if not _same_testbed(meta, testbed):
                continue
            if meta.get("spec_hash") == digest or cls(path).identity() == digest:
                yield path, meta

    def identity(self) -> str | None:
        """The identity of what this run measures, from its spec.yaml (None: unreadable)."""
        try:
            raw = spec.load_raw(self.path / "spec.yaml")
            return spec.identity(raw, raw.get("name", self.path.parent.name))
        except BbrlabError:
            return None

    def adopt_spec(self, source: str, digest: str) -> bool:
        """Make SOURCE this run's spec.yaml, when it measures what the run measured (identity
        DIGEST) but judges or describes it otherwise: today's claims, plot and title. The text
        it replaces is kept in run.json. True when spec.yaml changed."""
        spec_path, run_path = self.path / "spec.yaml", self.path / "run.json"
        if self.identity() != digest:
            raise BbrlabError(f"{self.path}: its spec.yaml measures something else; not adopting another")
        old = spec_path.read_text()
        meta = read_json(run_path)
        if old == source and meta.get("spec_hash") == digest:
            return False
        if old != source:
            meta.setdefault("replaced_specs", []).append(
                {"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "spec_hash": meta.get("spec_hash"), "spec": old})
        meta["spec_hash"] = digest
        write_json(run_path, meta)  # first: the old text is safe before spec.yaml changes
        write_atomic(spec_path, source)
        return old != source

    @staticmethod
    def _runs(root: Path, experiment: str, marker: str) -> list[Path]:
        """EXPERIMENT's run directories holding MARKER, oldest first: by the stamp in the
        name, then its -N suffix as a number (a run started in the same second as another)."""
        base = root / experiment
        if not base.is_dir():
            return []

        def order(path: Path) -> tuple[str, int]:
            match = RUN_NAME.fullmatch(path.name)
            return (match.group(1), int(match.group(2) or 0)) if match else (path.name, 0)

        return sorted((p for p in base.iterdir() if (p / marker).is_file()), key=order)

    @classmethod
    def runs(cls, root: Path, experiment: str) -> "list[RunDir]":
        """EXPERIMENT's runs under ROOT, oldest first."""
        return [cls(p) for p in cls._runs(root, experiment, "run.json")]

    @classmethod
    def newest(cls, root: Path, experiment: str, marker: str = "run.json") -> "RunDir | None":
        """The newest run of EXPERIMENT holding MARKER (verdict.json: a summarized one)."""
        runs = cls._runs(root, experiment, marker)
        return cls(runs[-1]) if runs else None

    @classmethod
    def latest(cls, root: Path, experiment: str) -> "RunDir":
        rundir = cls.newest(root, experiment)
        if rundir is None:
            raise BbrlabError(f"no results for {experiment} under {root} (run it first)")
        return rundir

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


def _same_testbed(meta: dict, current: dict | None) -> bool:
    """Whether run.json META was measured on testbed CURRENT (metadata.testbed; None: on any).
    A run written before runs recorded their testbed is matched by its kernel release."""
    if current is None:
        return True
    if "testbed" in meta:
        return meta["testbed"] == current
    return (meta.get("system") or {}).get("kernel") == current["kernel"]
