"""Which bottleneck design delivers what it is told on this machine: `bbrlab calibrate --quick`
once per design and repetition (each a what-if, stored beside the machine's calibration),
then one table of the worst value per rate, as mean and range over the repetitions.

    sudo PYTHONPATH=mininet python3 benchmarks/shapers.py [--repeat 2] [--out FILE.md] [--aqm] [--set K=V]

Designs: netem rate (its queue the buffer); htb with a burst of 1 ms (bbrlab's earlier
default), 2 ms and 256 KB; tbf with 2 ms. With --aqm: each AQM as htb's leaf or tbf's child, and
CAKE with its own shaper; its column "CUBIC's queue" says whether the AQM held its target.
Targets: the backlogged link sends >= 0.98 of its rate, no 100 ms window above 1.03 x the rate
beyond what a pause held back, BBR's median estimate <= 1.05 x the rate.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DESIGNS = {  # the droptail buffer's designs
    "netem rate": ["shaper=netem"],
    "htb, burst 1 ms": ["shaper=htb", "burst=1ms"],
    "htb, burst 2 ms": ["shaper=htb", "burst=2ms"],
    "htb, burst 256 KB": ["shaper=htb", "burst=256KB"],
    "tbf, burst 2 ms": ["shaper=tbf", "burst=2ms"],
}
AQM_DESIGNS = {  # how each AQM meets the rate (an AQM under netem never sees a queue: refused)
    "fq_codel, htb leaf, burst 1 ms": ["aqm=fq_codel", "shaper=htb"],
    "fq_codel, htb leaf, burst 2 ms": ["aqm=fq_codel", "shaper=htb", "burst=2ms"],
    "fq_codel, tbf child, burst 2 ms": ["aqm=fq_codel", "shaper=tbf", "burst=2ms"],
    "cake, its own shaper": ["aqm=cake", "shaper=cake"],
    "cake, htb leaf, burst 2 ms": ["aqm=cake", "shaper=htb", "burst=2ms"],
    "codel, htb leaf, burst 2 ms": ["aqm=codel", "shaper=htb", "burst=2ms"],
    "pie, htb leaf, burst 2 ms": ["aqm=pie", "shaper=htb", "burst=2ms"],
    "fq_pie, htb leaf, burst 2 ms": ["aqm=fq_pie", "shaper=htb", "burst=2ms"],
    "red, htb leaf, burst 2 ms": ["aqm=red", "shaper=htb", "burst=2ms"],
}
COLUMNS = (("link_delivery", "backlogged delivery"), ("link_peak_beyond_pause", "peak beyond pause / rate"),
           ("bbr_bw_ratio", "BBR bw / rate"), ("steady_link_efficiency", "CUBIC efficiency"),
           ("queue_delay_p50_ms", "CUBIC's queue (ms)"), ("link_gap_max_ms", "longest pause (ms)"))


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
    parser.add_argument("--aqm", action="store_true", help="the AQM designs instead of the droptail ones")
    parser.add_argument("--set", action="append", default=[], help="more --set for every run (e.g. rate=[10Mbit,50Mbit])")
    args = parser.parse_args()
    designs = AQM_DESIGNS if args.aqm else DESIGNS
    runs: dict[str, list[dict]] = {name: [] for name in designs}
    for rep in range(args.repeat):  # designs interleaved: a slow drift of the host hits them alike
        for name, sets in designs.items():
            print(f"shapers: {name}, repetition {rep + 1} of {args.repeat} ...", file=sys.stderr, flush=True)
            runs[name].append(calibrate(sets + args.set, args.results))
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
