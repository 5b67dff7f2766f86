"""What a point costs the guest's CPU per second of flows, and how much of it is the testbed's
own sampling: a fixed set of points run for real, their CPU read from their own records.

    sudo python3 benchmarks/sampling_cost.py [--repeat 2] [--case NAME ...] [--out FILE]

For each point: the guest's CPU-seconds per second of the flows' time (all CPUs, from the
point's /proc/stat samples, `raw/cpu.txt`), split into user, system and softirq (where
packets are forwarded through the veths and qdiscs: the kernel's own share), then per flow;
and the CPU-seconds each sampler process spent (`raw/samplers-cpu.json`, read as the
samplers stop: ping, the senders' tcp_info, tc's queue, tcpdump), per second of flows. The
link's `link_busy` and the point's `cpu_bound` say whether the point was still faithful.
Run it inside the testbed VM: under qemu's TCG a process costs what this measures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES = {  # name: experiment and what narrows it to one point
    "1 flow, 50 Mbit/s": ("fidelity", ["cc=bbr", "rate=50Mbit"]),
    "4 BBR flows, 20 Mbit/s, 0.5 BDP": ("v3-shallow", ["cc=bbr", "count=4", "buffer=0.5bdp"]),
    "4 BBRv3 flows, 20 Mbit/s, 0.5 BDP": ("v3-shallow", ["cc=bbr3", "count=4", "buffer=0.5bdp"]),
    "4 CUBIC flows, 10 Mbit/s": ("fidelity", ["cc=cubic", "count=4", "rate=10Mbit"]),
    "cdn-mix, quick": ("cdn-mix", ["--quick"]),
    "picoquic BBR, quick": ("quic-jitter", ["--quick", "cc=bbr"]),
}
# the kernel's congestion controls each case needs beyond Debian's (run by default only where offered)
NEEDS = {"4 BBRv3 flows, 20 Mbit/s, 0.5 BDP": "bbr3"}
MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def cpu_shares(text: str) -> tuple[dict[str, float], float]:
    """CPU-seconds of the guest per second over a point's `cpu` lines of /proc/stat, by mode:
    (last - first) / elapsed, every CPU counted (2 on a 2-CPU guest when all are busy); and
    the seconds they span (the samplers' life: the idle path's probe, then the flows)."""
    blocks = []
    for block in text.split("### ")[1:]:
        head, *lines = block.splitlines()
        total = next((line.split()[1:] for line in lines if line.startswith("cpu ")), None)
        if total:
            blocks.append((float(head), [int(v) for v in total]))
    if len(blocks) < 2:
        return {}, 0.0
    (t0, first), (t1, last) = blocks[0], blocks[-1]
    ticks = [b - a for a, b in zip(first, last)]
    cpus = sum(ticks[:len(MODES)]) / 100 / (t1 - t0)  # USER_HZ 100: ticks of all CPUs
    per_tick = cpus / max(1, sum(ticks[:len(MODES)]))
    return {mode: ticks[i] * per_tick for i, mode in enumerate(MODES)}, t1 - t0


def run_case(name: str, experiment: str, args: list[str], results: Path) -> list[dict]:
    argv = [str(REPO / "bbrlab"), "--results", str(results), "-q", "run", experiment, "--fresh", "--no-figure"]
    for arg in args:
        argv += [arg] if arg.startswith("--") else ["--set", arg]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode not in (0, 3):
        raise SystemExit(f"sampling_cost: {name}: bbrlab run failed: {proc.stderr.strip()[-400:]}")
    rows = []
    for point in sorted(results.glob(f"{experiment}/*/points/*/metrics.json")):
        metrics = json.loads(point.read_text())
        raw = point.parent / "raw"
        shares, span = cpu_shares((raw / "cpu.txt").read_text())
        samplers = json.loads((raw / "samplers-cpu.json").read_text()) if (raw / "samplers-cpu.json").is_file() else {}
        flows = json.loads((point.parent / "point.json").read_text()).get("flow_plan") or []
        rows.append({"case": name, "point": point.parent.name, "flows": len(flows), "span_s": span,
                     "shares": shares, "samplers": samplers, "link_busy": metrics.get("link_busy"),
                     "cpu_bound": metrics.get("cpu_bound")})
    return rows


def table(rows: list[dict]) -> list[str]:
    lines = ["| point | long flows | seconds | guest CPU-s per s | user | system | softirq | per long flow "
             "| samplers per s | largest sampler | link busy | CPU-bound |", "|---" * 12 + "|"]
    for r in rows:
        s, span = r["shares"], r["span_s"]
        busy = sum(v for k, v in s.items() if k not in ("idle", "iowait"))
        spent = sum(r["samplers"].values())
        top = max(r["samplers"].items(), key=lambda kv: kv[1], default=("–", 0))
        per_flow = f"{busy / r['flows']:.2f}" if r["flows"] else "–"
        samplers = f"{spent / span:.3f}" if r["samplers"] and span else "–"
        lines.append(f"| {r['case']} | {r['flows']} | {span:.0f} | {busy:.2f} | {s.get('user', 0):.2f} "
                     f"| {s.get('system', 0):.2f} | {s.get('softirq', 0):.2f} | {per_flow} | {samplers} "
                     f"| {top[0]} {top[1]:.1f} s | {r['link_busy']} | {r['cpu_bound']} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--case", action="append", choices=list(CASES), help="only these cases (repeatable)")
    parser.add_argument("--out", help="also write the rows as JSON to this file")
    args = parser.parse_args()
    offered = set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())
    cases = args.case or [c for c in CASES if NEEDS.get(c, "cubic") in offered]
    skipped = [c for c in CASES if c not in cases and not args.case]
    if skipped:
        print(f"sampling_cost: not run (their CC is not in this kernel): {', '.join(skipped)}", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory(prefix="sampling-cost-") as tmp:
        for rep in range(args.repeat):
            for name in cases:
                experiment, sets = CASES[name]
                print(f"sampling_cost: {name}, repetition {rep + 1} of {args.repeat} ...", file=sys.stderr, flush=True)
                rows += run_case(name, experiment, sets, Path(tmp) / f"{rep}-{len(rows)}")
    print("\n".join(table(rows)))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
