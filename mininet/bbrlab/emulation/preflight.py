"""Preflight: everything a run needs, checked before anything starts.

Kernel features are tested by doing (attaching each qdisc in a throw-away namespace),
not by reading config files: a module can be missing, blacklisted or built out.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import subprocess

from ..errors import PreflightError
from .topo import DATA_PORTS

TOOLS = {
    "iperf3": "iperf3", "ping": "iputils-ping", "ss": "iproute2", "tc": "iproute2", "ip": "iproute2",
    "ethtool": "ethtool", "mnexec": "mininet", "sysctl": "procps",
}
MODULES = {"mininet": "mininet", "yaml": "python3-yaml", "matplotlib": "python3-matplotlib"}
QDISC_TESTS = {
    "sch_netem": ["netem", "delay", "1ms"],
    "sch_fq": ["fq"],
    "sch_htb": ["htb", "default", "1"],
    "sch_tbf": ["tbf", "rate", "1mbit", "burst", "3000", "latency", "10ms"],
    "sch_prio": ["prio"],
    # the AQMs link.aqm can put at the bottleneck
    "sch_fq_codel": ["fq_codel"],
    "sch_codel": ["codel"],
    "sch_pie": ["pie"],
    "sch_fq_pie": ["fq_pie"],
    "sch_cake": ["cake"],
    "sch_red": ["red", "limit", "400000", "min", "30000", "max", "90000", "avpkt", "1000", "burst", "55",
                "probability", "0.02", "bandwidth", "10Mbit"],
}
# Random loss for the data connections only: a u32 filter under a prio root (topo._netem_tc).
FILTER_TEST = ["protocol", "ip", "prio", "1", "u32", "match", "ip", "sport", str(DATA_PORTS[0]), hex(DATA_PORTS[1]),
               "flowid", "1:1"]
VM_HINT = ("This kernel cannot emulate the testbed. Use a kernel that has these modules (Debian 12's "
           "linux-image-amd64 and linux-image-arm64 do), or run inside the testbed VM: `sudo ./figure5.sh --vm all` "
           "(or `vagrant up`, then `vagrant ssh -c 'cd /vagrant && sudo ./figure5.sh all'`).")


BBR3_HINT = ("bbr3 (BBRv3) needs the testbed's 6.12 kernel with Google's BBRv3 patch: boot it with "
             "`BBRLAB_BBR3_KERNEL=1 BBRLAB_KERNEL=bbr3 vm/vm.sh up` (the box vm/build-box.sh then builds carries it; "
             "vm/build-kernel.sh builds its packages, which install on any Debian 12 host)")


BBR410_HINT = ("bbr410 (Linux 4.10.1's BBR) is built by provisioning for Debian's 6.1 kernel (ansible role "
               "bbr410: sudo ./setup.sh, or vagrant provision; the testbed box has it built in): it needs "
               "linux-headers of that kernel and 4.10.1's tcp_bbr.c (fetched from kernel.org; its output says why "
               "it skipped); on the BBRv3 kernel boot Debian's again: `BBRLAB_KERNEL=debian vm/vm.sh kernel debian`")


QUIC_HINT = ("picoquicdemo is missing (a `tool: picoquic` flow group runs it): provisioning builds picoquic "
             "and picotls at pinned commits (ansible role picoquic: sudo ./setup.sh, or vagrant provision; the "
             "testbed box has it built in)")


def kernel_line() -> str:
    """The kernel and the BBRs it offers, by name and module (`bbrlab preflight`)."""
    bbrs = {"bbr": "Linux's BBR v1", "bbr3": "BBRv3", "bbr_noagg": "BBR v1 without the ACK-aggregation allowance",
            "bbr410": "Linux 4.10.1's BBR, of 2017"}
    lacking = missing_ccs(set(bbrs))  # loads the modules on demand, as a run does
    offered = sorted(offered_ccs())
    have = [f"{cc} ({what})" for cc, what in bbrs.items() if cc not in lacking]
    return (f"kernel {platform.release()}: " + ", ".join(have or ["no BBR"])
            + (f"; not offered here: {', '.join(lacking)}" if lacking else "")
            + f" (all offered: {' '.join(offered)})")


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    """Run ARGV; a program that is not installed (modprobe without kmod) is a failed run."""
    try:
        return subprocess.run(argv, capture_output=True, text=True)
    except OSError as exc:
        return subprocess.CompletedProcess(argv, 127, "", str(exc))


def missing_qdiscs(needed: list[str]) -> list[str]:
    """Module names of the qdiscs (and cls_u32) in NEEDED that cannot be attached here."""
    ns = f"bbrlab-preflight-{os.getpid()}"
    if _run(["ip", "netns", "add", ns]).returncode != 0:
        raise PreflightError("cannot create a network namespace (`ip netns add`): run as root on Linux")
    missing = []
    try:
        _run(["ip", "-n", ns, "link", "add", "d0", "type", "dummy"])
        for module in needed:
            _run(["modprobe", module])
            if module == "cls_u32":  # a filter: under a prio root
                _run(["tc", "-n", ns, "qdisc", "replace", "dev", "d0", "root", "handle", "1:"] + QDISC_TESTS["sch_prio"])
                add = _run(["tc", "-n", ns, "filter", "replace", "dev", "d0", "parent", "1:"] + FILTER_TEST)
            else:
                add = _run(["tc", "-n", ns, "qdisc", "replace", "dev", "d0", "root"] + QDISC_TESTS[module])
            if add.returncode != 0:
                missing.append(module)
    finally:
        _run(["ip", "netns", "del", ns])
    return missing


def offered_ccs() -> set[str]:
    """The congestion controls the kernel offers now (none where it cannot be read)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
            return set(f.read().split())
    except OSError:
        return set()


def release() -> str:
    """The running kernel's release (uname -r)."""
    return platform.release()


def missing_ccs(needed: set[str]) -> list[str]:
    """Of NEEDED, the congestion controls the kernel lacks even after loading their modules."""
    for cc in needed - offered_ccs():
        _run(["modprobe", "-q", f"tcp_{cc}"])
    return sorted(needed - offered_ccs())


def kernel_problems(ccs: set[str], pacing_fq: bool, lossy: bool = False, aqms: set[str] = frozenset()) -> list[str]:
    needed = (["sch_netem", "sch_htb"] + (["sch_fq"] if pacing_fq else []) + (["sch_prio", "cls_u32"] if lossy else [])
              + [f"sch_{aqm}" for aqm in sorted(aqms)])
    problems = []
    qdiscs = missing_qdiscs(needed)
    if qdiscs:
        problems.append(f"kernel {platform.release()} lacks traffic-control module(s): {', '.join(qdiscs)}")
    cc_missing = missing_ccs(ccs)
    if cc_missing:
        problems.append(f"kernel {platform.release()} lacks congestion control(s): "
                        f"{', '.join(cc_missing)} (modprobe tcp_<name> failed)")
    return problems + cc_hints(cc_missing)


def cc_hints(missing: list[str]) -> list[str]:
    """How provisioning provides each of the testbed's own congestion controls in MISSING."""
    hints = [BBR3_HINT] if "bbr3" in missing else []
    if "bbr_noagg" in missing:
        hints.append("bbr_noagg is built by provisioning (ansible role bbrnoagg: sudo ./setup.sh, or "
                     "vagrant provision) from this kernel's own tcp_bbr.c; it needs the packages "
                     f"linux-headers-{platform.release()} and linux-source-"
                     f"{'.'.join(platform.release().split('.')[:2])} (its output says why it skipped)")
    if "bbr410" in missing:
        hints.append(BBR410_HINT)
    return hints


def check(ccs: set[str], pacing_fq: bool = True, pcap: bool = False, lossy: bool = False,
          aqms: set[str] = frozenset(), quic: bool = False, owd: bool = False) -> None:
    """Raise PreflightError listing everything missing, with how to get it."""
    if os.geteuid() != 0:
        raise PreflightError("bbrlab must run as root (Mininet creates namespaces and qdiscs): use sudo")
    problems = []
    tools = dict(TOOLS, **({"tcpdump": "tcpdump"} if pcap else {}), **({"irtt": "irtt"} if owd else {}))
    absent = sorted({pkg for tool, pkg in tools.items() if shutil.which(tool) is None})
    if absent:
        problems.append(f"missing programs; install with: apt-get install {' '.join(absent)}")
    if quic and shutil.which("picoquicdemo") is None:
        problems.append(QUIC_HINT)
    mods = sorted({pkg for mod, pkg in MODULES.items() if importlib.util.find_spec(mod) is None})
    if mods:
        problems.append(f"missing Python modules; install with: apt-get install {' '.join(mods)}")
    if shutil.which("tc") and shutil.which("ip"):
        kernel = kernel_problems(ccs, pacing_fq, lossy, aqms)
        if kernel:
            problems += kernel + [VM_HINT]
    if problems:
        raise PreflightError("preflight failed:\n  - " + "\n  - ".join(problems)
                             + "\n(or provision this host with `sudo ./setup.sh`)")
