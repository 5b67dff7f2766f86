"""Which bottleneck design delivers what it is told on this machine: `bbrlab calibrate --quick`
once per design and repetition (each a what-if, stored beside the machine's calibration),
then one table of the worst value per rate, as mean and range over the repetitions.

    sudo PYTHONPATH=mininet python3 benchmarks/shapers.py [--repeat 2] [--out FILE.md]

Designs: netem rate (its queue the buffer); htb with a burst of 1 ms (bbrlab's earlier
default), 2 ms and 256 KB; tbf with 2 ms. Targets: the backlogged link sends >= 0.98 of its
rate, no 100 ms window above 1.03 x the rate, BBR's median estimate <= 1.05 x the rate.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DESIGNS = {
    "netem rate": ["shaper=netem"],
    "htb, burst 1 ms": ["shaper=htb", "burst=1ms"],
    "htb, burst 2 ms": ["shaper=htb", "burst=2ms"],
    "htb, burst 256 KB": ["shaper=htb", "burst=256KB"],
    "tbf, burst 2 ms": ["shaper=tbf", "burst=2ms"],
}
COLUMNS = (("link_delivery", "backlogged delivery"), ("link_peak_ratio", "peak 100 ms / rate"),
           ("bbr_bw_ratio", "BBR bw / rate"), ("steady_link_efficiency", "CUBIC efficiency"),
           ("link_gap_max_ms", "longest pause (ms)"))


def calibrate(sets: list[str], results: str) -> dict:
    argv = [str(REPO / "bbrlab"), "--results", results, "calibrate", "--quick"]
    for s in sets:
        argv += ["--set", s]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"shapers: {' '.join(sets)}: bbrlab calibrate failed: {proc.stderr.strip()[-300:]}")
    path = proc.stdout.strip().splitlines()[-1].split("calibration: ", 1)[1].split()[0]
    return json.loads(Path(path).read_text())


def cell(values: list[float]) -> str:
    if not values:
        return "–"
    mean = sum(values) / len(values)
    return f"{mean:.3f}" if len(values) == 1 else f"{mean:.3f} ({min(values):.3f}–{max(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--results", default=str(REPO / "results"))
    parser.add_argument("--out", help="also write the table to this Markdown file")
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {name: [] for name in DESIGNS}
    for rep in range(args.repeat):  # designs interleaved: a slow drift of the host hits them alike
        for name, sets in DESIGNS.items():
            print(f"shapers: {name}, repetition {rep + 1} of {args.repeat} ...", file=sys.stderr, flush=True)
            runs[name].append(calibrate(sets, args.results))
    lines = ["| design | rate | " + " | ".join(title for _, title in COLUMNS) + " | all targets met |",
             "|---" * (len(COLUMNS) + 3) + "|"]
    for name, cals in runs.items():
        for i, row in enumerate(cals[0]["rates"]):
            rows = [c["rates"][i] for c in cals]
            values = [cell([r[k] for r in rows if r.get(k) is not None]) for k, _ in COLUMNS]
            met = sum(r["faithful"] for r in rows)
            lines.append(f"| {name} | {row['rate_mbps']:g} Mbit/s | " + " | ".join(values) + f" | {met} of {len(rows)} |")
    timers = [c["timer"] for cals in runs.values() for c in cals]
    lines += ["", f"Timer lateness during these runs (cyclictest, 1 ms): median {cell([t['p50_us'] for t in timers])} us, "
              f"p99 {cell([t['p99_us'] for t in timers])} us, max {cell([t['max_us'] for t in timers])} us."]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
