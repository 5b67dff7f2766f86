"""How many short flows per second the workload's programs sustain on this machine before
the generator itself becomes the bottleneck, and what each flow costs them in CPU.

    PYTHONPATH=mininet python3 benchmarks/shortflows.py                 # over loopback
    sudo PYTHONPATH=mininet python3 benchmarks/shortflows.py --netns    # a veth pair, two namespaces

One sink (bbrlab/traffic/inhost/shortflows.py sink) serves the whole run; for each arrival rate of a
doubling ramp, one sender runs a Poisson schedule of --seconds of SIZE-byte flows. A rate is
sustained when every flow completed and the sender opened 99% of them within --late of
their scheduled time; the ramp stops at the first rate that is not. Prints per rate the
flows, the lateness (p50 / p99 / max), and CPU seconds per flow of the sender and of the
sink (from their own rusage and /proc), then the highest rate sustained. The whole run
stays within --budget seconds (default 30), so it may run on a machine that measures.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mininet"))

from bbrlab.analysis import tool_output  # noqa: E402
from bbrlab.traffic.inhost import shortflows  # noqa: E402
from bbrlab.schema import workload  # noqa: E402

PROGRAM = str(Path(shortflows.__file__).resolve())
NAMESPACES = ("sfbench-snd", "sfbench-rcv")
ADDRESSES = ("10.254.0.1", "10.254.0.2")
TICKS = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) process PID has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def ip(*argv: str) -> None:
    subprocess.run(["ip", *argv], check=True, capture_output=True)


def netns_up() -> None:
    snd, rcv = NAMESPACES
    for ns in NAMESPACES:
        ip("netns", "add", ns)
    ip("link", "add", "sfb-snd0", "type", "veth", "peer", "name", "sfb-rcv0")
    for ns, dev, addr in ((snd, "sfb-snd0", ADDRESSES[0]), (rcv, "sfb-rcv0", ADDRESSES[1])):
        ip("link", "set", dev, "netns", ns)
        ip("-n", ns, "addr", "add", f"{addr}/30", "dev", dev)
        ip("-n", ns, "link", "set", dev, "up")
        ip("-n", ns, "link", "set", "lo", "up")


def netns_down() -> None:
    for ns in NAMESPACES:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def inside(ns: str | None, argv: list[str]) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv] if ns else argv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def step(rate: float, args, port: int, dst: str, sink_pid: int, folder: Path, ns: str | None) -> dict:
    w = workload.Workload("poisson", workload.parse_sizes(f"fixed {args.size}", "--size"), rate=rate,
                          duration=args.seconds, seed=int(rate))
    doc = workload.schedule_doc(w, 0, "bench", args.cc, dst, 1e9, 0.0, 0.0, 5.0, None)
    doc["port"] = port
    (folder / "schedule.json").write_text(json.dumps(doc))
    sink_before = proc_cpu(sink_pid)
    subprocess.run(inside(ns, [sys.executable, PROGRAM, "send", "--schedule", str(folder / "schedule.json"),
                               "--out", str(folder / "send.jsonl")]), check=True, timeout=args.seconds + 30)
    time.sleep(0.2)  # the sink's last confirmations
    records, summary = tool_output.parse_shortflows((folder / "send.jsonl").read_text(), "send.jsonl")
    n = max(len(records), 1)
    return {"rate": rate, "flows": len(records), "completed": summary["completed"],
            "late_p50_ms": summary["late_p50_ms"], "late_p99_ms": summary["late_p99_ms"],
            "late_max_ms": summary["late_max_ms"], "sender_cpu_ms_per_flow": 1e3 * summary["cpu_s"] / n,
            "sink_cpu_ms_per_flow": 1e3 * (proc_cpu(sink_pid) - sink_before) / n}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--netns", action="store_true", help="a veth pair between two namespaces (root)")
    parser.add_argument("--cc", default="cubic")
    parser.add_argument("--size", default="10KB", help="every flow's size (default 10KB)")
    parser.add_argument("--seconds", type=float, default=3.0, help="of arrivals per rate (default 3)")
    parser.add_argument("--start", type=float, default=25.0, help="the first rate, flows/s (default 25)")
    parser.add_argument("--late", type=float, default=10.0, help="p99 lateness allowed, ms (default 10)")
    parser.add_argument("--budget", type=float, default=30.0, help="seconds for the whole ramp (default 30)")
    args = parser.parse_args()
    snd_ns, rcv_ns = NAMESPACES if args.netns else (None, None)
    dst = ADDRESSES[1] if args.netns else "127.0.0.1"
    port = 5001 if args.netns else free_port()
    if args.netns:
        netns_down()
        netns_up()
    sink = subprocess.Popen(inside(rcv_ns, [sys.executable, PROGRAM, "sink", "--port", str(port)]),
                            stdout=subprocess.DEVNULL)
    best, began = None, time.monotonic()
    try:
        time.sleep(1.0)
        print(f"{'flows/s':>8} {'flows':>6} {'done':>6} {'late p50':>9} {'p99':>7} {'max':>7} "
              f"{'sender CPU':>11} {'sink CPU':>9}   (ms; CPU ms per flow)")
        rate = args.start
        with tempfile.TemporaryDirectory() as tmp:
            while time.monotonic() - began + args.seconds + 2 <= args.budget:
                r = step(rate, args, port, dst, sink.pid, Path(tmp), snd_ns)
                ok = r["completed"] == r["flows"] and (r["late_p99_ms"] or 0) <= args.late
                print(f"{rate:8.0f} {r['flows']:6d} {r['completed']:6d} {r['late_p50_ms'] or 0:9.2f} "
                      f"{r['late_p99_ms'] or 0:7.2f} {r['late_max_ms'] or 0:7.2f} {r['sender_cpu_ms_per_flow']:11.3f} "
                      f"{r['sink_cpu_ms_per_flow']:9.3f}" + ("" if ok else "   <- the generator falls behind"))
                if not ok:
                    break
                best, rate = r, rate * 2
    finally:
        sink.terminate()
        sink.wait(timeout=10)
        if args.netns:
            netns_down()
    if best is None:
        print("not even the first rate was sustained")
        return 1
    where = "a veth pair between two namespaces" if args.netns else "loopback"
    print(f"highest rate sustained here ({where}, {args.size} flows, {args.cc}): {best['rate']:.0f} flows/s; "
          f"CPU per flow: sender {best['sender_cpu_ms_per_flow']:.3f} ms, sink {best['sink_cpu_ms_per_flow']:.3f} ms"
          + ("" if rate == best["rate"] else " (the budget ended the ramp before the generator fell behind)"
             if time.monotonic() - began + args.seconds + 2 > args.budget else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
