"""The host's load, sampled by vm/vm.sh while a command ran in the VM, kept with what it made.

`vm/vm.sh run` samples the host's /proc every few seconds (vm/hostload.sh) and, when the command
has ended, hands the samples to this module in the guest (`python3 -m bbrlab.runs.hostload
RESULTS < samples`). For each run session that started meanwhile it writes the host's load over
that session's own time into the run's host-load.json (store/host_load), and into each stored
calibration made of those runs ("host_load"): a calibration that failed while the host was busy
is measured again before it gates the next run (calibrate.ensure, store/host_load), since a starved flow, not the
machine, may have failed it.

The samples, one per line: "cpus N" (the host's CPUs), "now EPOCH" (the host's clock when it
handed them over: the guest's clock may differ from it), then "EPOCH TOTAL BUSY QEMU" (clock
ticks of all CPUs so far; QEMU "-" when the VM's process was not found).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..errors import BbrlabError
from ..store import host_load
from ..store.results import read_json, write_json
from .calibrate import store

EXIT_USAGE = 2


def parse(text: str) -> tuple[int, float, list[host_load.Sample]]:
    """The host's CPUs, its clock when it handed the samples over, and the samples of TEXT."""
    cpus, now, samples = None, None, []
    for number, raw in enumerate(text.splitlines(), 1):
        fields = raw.split()
        try:
            if fields[:1] == ["cpus"] and len(fields) == 2:
                cpus = int(fields[1])
            elif fields[:1] == ["now"] and len(fields) == 2:
                now = float(fields[1])
            elif len(fields) == 4:
                samples.append(host_load.Sample(float(fields[0]), int(fields[1]), int(fields[2]),
                                                None if fields[3] == "-" else int(fields[3])))
            elif fields:
                raise ValueError("expected EPOCH TOTAL BUSY QEMU")
        except ValueError as exc:
            raise BbrlabError(f"hostload: line {number} of the samples is not understood ({raw.strip()!r}: {exc})") from None
    if cpus is None or cpus < 1 or now is None:
        raise BbrlabError("hostload: the samples lack their 'cpus N' and 'now EPOCH' lines")
    return cpus, now, samples


def stamp_runs(root: Path, cpus: int, samples: list[host_load.Sample]) -> dict[str, dict]:
    """Each run session under ROOT that started within SAMPLES (epochs of this machine's clock)
    with its host load written beside it; returns the run directories' stamps by resolved path."""
    if len(samples) < 2:
        return {}
    first, last = min(s.epoch for s in samples), max(s.epoch for s in samples)
    stamped = {}
    for rundir, start, end in host_load.runs_within(root, first, last):
        load = host_load.load_between(samples, cpus, start, end)
        if load is not None:
            stamped[str(rundir.path.resolve())] = host_load.record(rundir, start, load)
    return stamped


def _calibration_runs(cal: dict) -> list[str]:
    """The runs a calibration was made of: its fidelity runs and its headroom's probes."""
    probes = [p["run"] for row in ((cal.get("headroom") or {}).get("rates") or {}).values()
              for p in row.get("probes", [])]
    return [str(Path(r).resolve()) for r in list(cal.get("runs", [])) + probes]


def stamp_calibrations(store: Path, stamped: dict[str, dict]) -> list[Path]:
    """The calibrations in STORE made of a run in STAMPED, with the host's load while they
    were measured recorded in them ("host_load"); returns their files."""
    changed = []
    for file in sorted(store.glob("*.json")) if stamped else []:
        try:
            cal = read_json(file)
        except BbrlabError:
            continue
        mine = {r: stamped[r] for r in _calibration_runs(cal) if r in stamped} if isinstance(cal, dict) else {}
        if not mine:
            continue
        runs = {**(cal.get("host_load") or {}).get("runs", {}),
                **{r: s["other_cpus_max"] for r, s in mine.items()}}
        cal["host_load"] = {**host_load.summary(list(runs.values())), "runs": runs}
        write_json(file, cal)
        changed.append(file)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m bbrlab.runs.hostload",
                                     description="Keep the host's load (samples on standard input) with the runs "
                                                 "and calibrations made meanwhile.")
    parser.add_argument("results", nargs="?", default="results", help="the results directory (default: results)")
    args = parser.parse_args(argv)
    try:
        cpus, host_now, samples = parse(sys.stdin.read())
        offset = time.time() - host_now  # this machine's clock against the host's
        mine = [host_load.Sample(s.epoch + offset, s.total, s.busy, s.qemu) for s in samples]
        stamped = stamp_runs(Path(args.results), cpus, mine)
        cals = stamp_calibrations(store(), stamped)
    except BbrlabError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    busy = sum(1 for s in stamped.values() if s["busy"])
    print(f"host load: kept with {len(stamped)} run(s)" + (f" and {len(cals)} calibration(s)" if cals else "")
          + (f"; {busy} measured while other programs were busy" if busy else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
