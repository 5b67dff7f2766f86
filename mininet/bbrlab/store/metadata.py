"""Provenance of a run: machine, kernel, tools, code revision, and the run's own timings."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from .. import __version__
from ..schema import ccs
from ..schema.root import ROOT
from .results import FORMAT_VERSION, MEASUREMENT, RunDir, read_json

REPO = ROOT


def _first_line(argv: list[str]) -> str | None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (proc.stdout or proc.stderr).strip()
    return text.splitlines()[0] if text else None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def git_revision() -> str:
    """The code that ran: git if the tree is a checkout, else what the launcher passed on."""
    if os.environ.get("BBRLAB_GIT_REV"):
        return os.environ["BBRLAB_GIT_REV"]
    rev = _first_line(["git", "-C", str(REPO), "rev-parse", "HEAD"])
    if rev and len(rev) == 40:
        dirty = _first_line(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"])
        return rev + ("+dirty" if dirty else "")
    return "unknown"


def system() -> dict:
    versions = {
        "python": sys.version.split()[0],
        "iperf3": _first_line(["iperf3", "--version"]),
        "iproute2": _first_line(["tc", "-V"]),
        "ping": _first_line(["ping", "-V"]),
        "ethtool": _first_line(["ethtool", "--version"]),
    }
    try:
        import mininet.net

        versions["mininet"] = mininet.net.VERSION
    except ImportError:
        versions["mininet"] = None
    try:  # read from its package metadata: importing it costs a TCG guest 5 s a run
        versions["matplotlib"] = importlib.metadata.version("matplotlib")
    except importlib.metadata.PackageNotFoundError:
        versions["matplotlib"] = None
    return {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "virtualization": _first_line(["systemd-detect-virt"]),
        "congestion_controls_available": (_read("/proc/sys/net/ipv4/tcp_available_congestion_control") or "").split(),
        "root_default_qdisc": _read("/proc/sys/net/core/default_qdisc"),
        "tools": versions,
    }


def _cc_module(cc: str) -> str:
    """What implements congestion control CC in this kernel: its module's srcversion (a hash of
    its source), "built-in" (reno; cubic on Debian), or "absent"."""
    version = _read(f"/sys/module/tcp_{cc}/srcversion")
    if version:
        return version
    found = _modinfo(cc, "srcversion")
    if found is None:
        return "unknown"
    if found.returncode == 0:
        return found.stdout.strip() or "built-in"
    return "built-in" if cc in ((_read("/proc/sys/net/ipv4/tcp_available_congestion_control") or "").split()) \
        else "absent"


def cc_descriptions(ccs: set[str]) -> dict:
    """What each module says it is (modinfo's description: "TCP BBR ... of Linux 4.10.1,
    registered as bbr410"), for the CCs that have one: which BBR a run ran, in words."""
    out = {}
    for cc in sorted(ccs):
        found = _modinfo(cc, "description")
        if found is not None and found.returncode == 0 and found.stdout.strip():
            out[cc] = found.stdout.strip()
    return out


def _modinfo(cc: str, field: str) -> subprocess.CompletedProcess | None:
    """`modinfo -F FIELD tcp_CC`, or None where modinfo cannot run (no kmod, a hang)."""
    try:
        return subprocess.run(["modinfo", "-F", field, f"tcp_{cc}"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None


def testbed_of(exp) -> dict:
    """The testbed EXP's flows run on here: this kernel and the builds of its CCs."""
    return testbed({g.cc for p in exp.points for g in p.flows})


def testbed(ccs: set[str]) -> dict:
    """What the flows of a run ran on beyond its spec: the kernel (release and build) and the
    build of each congestion control it uses. Runs on different testbeds never resume into
    or merge with each other: `bbr` on two kernels, or two builds of one module, may differ."""
    return {"kernel": platform.release(), "kernel_version": platform.version(),
            "congestion_controls": {cc: _cc_module(cc) for cc in sorted(ccs)}}


def new_run(exp, digest: str, cli: list[str], here: dict | None = None) -> dict:
    """A new run's run.json; HERE: its testbed when the caller has it already (testbed_of)."""
    return {
        "format": FORMAT_VERSION,
        "bbrlab": __version__,
        "experiment": exp.name,
        "title": exp.title,
        "spec_hash": digest,
        "measurement": MEASUREMENT,
        "command": cli,
        "git": git_revision(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "points_total": len(exp.points),
        "system": system(),
        "testbed": here if here is not None else testbed_of(exp),
        "congestion_control_modules": cc_descriptions(ccs.kernel_ccs(exp.points)),
        "status": "new",
    }


def read_run(rundir: RunDir) -> dict:
    return read_json(rundir.path / "run.json")


def overhead(meta: dict, records: list[dict]) -> dict:
    """Wall time against configured flow time: how much the testbed itself costs."""
    wall = sum(s.get("wall_seconds", 0.0) for s in meta.get("sessions", []))
    flow = sum(r["timings"].get("configured_seconds", 0.0) for r in records)
    setups = [r["timings"].get("setup_seconds", 0.0) for r in records]
    # where a point's time beyond its flows goes: network setup, the run itself (idle-path
    # probe, end of test), analysis
    beyond = [r["timings"]["run_seconds"] - r["timings"]["configured_seconds"] for r in records
              if "run_seconds" in r["timings"] and "configured_seconds" in r["timings"]]
    analyses = [r["timings"]["analysis_seconds"] for r in records if "analysis_seconds" in r["timings"]]
    return {
        "wall_seconds": round(wall, 2),
        "configured_flow_seconds": round(flow, 2),
        "ratio": round(wall / flow, 3) if flow else None,
        "setup_seconds_mean": round(sum(setups) / len(setups), 3) if setups else None,
        "setup_seconds_max": round(max(setups), 3) if setups else None,
        "run_beyond_flows_seconds_mean": round(sum(beyond) / len(beyond), 3) if beyond else None,
        "analysis_seconds_mean": round(sum(analyses) / len(analyses), 3) if analyses else None,
    }
