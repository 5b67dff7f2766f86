"""What this kernel can do for the testbed, tested by doing: the one probe every caller asks.

vm/dispatch.sh (can this machine run the testbed, or does the run go to the VM?), the
preflight (can this run start?) and the netkernel role (did provisioning give the kernel
what the testbed needs?) ask the same question, and ask it here. A module can be missing,
blacklisted, built in or built out, so nothing is read from config files: each feature's
module is loaded, then each qdisc is attached in a throw-away network namespace (the u32
filter under a prio root) and each congestion control is looked for in
tcp_available_congestion_control.

Standard library only: it runs by path on a host without bbrlab's dependencies, and
Ansible copies it to the machines it provisions.

    python3 kernel_probe.py FEATURE...

FEATURE is network-namespaces, a qdisc's module (sch_netem, sch_fq, ...), cls_u32 or a
congestion control's module (tcp_bbr, tcp_bbr3, ...). One line per feature: its name and
"ok" (it works and nothing had to be loaded), "loaded" (it works since this probe loaded
its module), "missing" (it does not work), or "untested" (a qdisc or filter, when no
namespace can be made to try it in). Exit status 0 when every feature works, 1 when one
does not, 2 on a feature it does not know.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Callable

NETNS = "network-namespaces"
QDISC_TESTS = {
    "sch_netem": ["netem", "delay", "1ms"],
    "sch_fq": ["fq"],
    "sch_htb": ["htb", "default", "1"],
    "sch_tbf": ["tbf", "rate", "1mbit", "burst", "3000", "latency", "10ms"],
    "sch_prio": ["prio"],
    "sch_fq_codel": ["fq_codel"],
    "sch_codel": ["codel"],
    "sch_pie": ["pie"],
    "sch_fq_pie": ["fq_pie"],
    "sch_cake": ["cake"],
    "sch_red": ["red", "limit", "400000", "min", "30000", "max", "90000", "avpkt", "1000", "burst", "55",
                "probability", "0.02", "bandwidth", "10Mbit"],
}
# A u32 match of the kind the testbed's loss filter uses (a port of the data connections).
FILTER_TESTS = {"cls_u32": ["protocol", "ip", "prio", "1", "u32", "match", "ip", "sport", "5201", "0xffff",
                            "flowid", "1:1"]}
AVAILABLE_CCS = "/proc/sys/net/ipv4/tcp_available_congestion_control"

Runner = Callable[[list[str]], int]


def run(argv: list[str]) -> int:
    """ARGV's exit status, quietly; a program that is not installed is a failure (127)."""
    try:
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    except OSError:
        return 127


def known(feature: str) -> bool:
    return feature == NETNS or feature in QDISC_TESTS or feature in FILTER_TESTS or (
        feature.startswith("tcp_") and len(feature) > 4 and feature[4:].replace("_", "").isalnum())


def offered_ccs() -> set[str]:
    """The congestion controls the kernel offers now (none where it cannot be read)."""
    try:
        with open(AVAILABLE_CCS) as f:
            return set(f.read().split())
    except OSError:
        return set()


def _loaded(module: str) -> bool:
    return os.path.isdir(f"/sys/module/{module}")


def _attach(feature: str, ns: str, runner: Runner) -> bool:
    if feature in FILTER_TESTS:
        return (runner(["tc", "-n", ns, "qdisc", "replace", "dev", "d0", "root", "handle", "1:"]
                       + QDISC_TESTS["sch_prio"]) == 0
                and runner(["tc", "-n", ns, "filter", "replace", "dev", "d0", "parent", "1:"]
                           + FILTER_TESTS[feature]) == 0)
    return runner(["tc", "-n", ns, "qdisc", "replace", "dev", "d0", "root"] + QDISC_TESTS[feature]) == 0


def _works(feature: str, ns: str | None, runner: Runner) -> str:
    before = _loaded(feature)
    if feature.startswith("tcp_"):
        name = feature[4:]
        if name not in offered_ccs():
            runner(["modprobe", "-q", feature])
        works = name in offered_ccs()
    elif ns is None:
        return "untested"
    else:
        runner(["modprobe", "-q", feature])
        works = _attach(feature, ns, runner)
    if not works:
        return "missing"
    return "loaded" if not before and _loaded(feature) else "ok"


def probe(features: list[str], runner: Runner = run) -> dict[str, str]:
    """Each of FEATURES (known() ones) and what it does here: ok, loaded, missing or untested."""
    ns: str | None = None
    needs_ns = any(f in QDISC_TESTS or f in FILTER_TESTS for f in features)
    result = {}
    if needs_ns or NETNS in features:
        name = f"bbrlab-probe-{os.getpid()}"
        if runner(["ip", "netns", "add", name]) == 0:
            ns = name
            runner(["ip", "-n", ns, "link", "add", "d0", "type", "dummy"])
        if NETNS in features:
            result[NETNS] = "ok" if ns else "missing"
    try:
        for feature in features:
            if feature != NETNS:
                result[feature] = _works(feature, ns, runner)
    finally:
        if ns:
            runner(["ip", "netns", "del", ns])
    return result


def lacking(features: list[str], runner: Runner = run) -> list[str]:
    """The FEATURES that do not work here (missing or untested), in their order."""
    return [f for f, state in probe(features, runner).items() if state in ("missing", "untested")]


def main(argv: list[str]) -> int:
    unknown = [f for f in argv if not known(f)]
    if unknown or not argv:
        print(f"kernel_probe: {'unknown feature ' + unknown[0] if unknown else 'no feature given'} (known: "
              f"{NETNS}, {', '.join(QDISC_TESTS)}, {', '.join(FILTER_TESTS)}, tcp_<name>)", file=sys.stderr)
        return 2
    states = probe(argv)
    for feature, state in states.items():
        print(feature, state)
    return 1 if any(s in ("missing", "untested") for s in states.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
