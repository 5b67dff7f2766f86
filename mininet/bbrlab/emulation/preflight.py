"""Preflight: everything a run needs, checked before anything starts.

Kernel features are tested by doing, by kernel_probe (the probe vm/dispatch.sh and the
netkernel role run too), not by reading config files.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil

from ..errors import PreflightError
from . import kernel_probe
from ..schema import picoquic_builds

TOOLS = {
    "iperf3": "iperf3", "ping": "iputils-ping", "ss": "iproute2", "tc": "iproute2", "ip": "iproute2",
    "ethtool": "ethtool", "mnexec": "mininet", "sysctl": "procps",
}
MODULES = {"mininet": "mininet", "yaml": "python3-yaml", "matplotlib": "python3-matplotlib"}
VM_HINT = ("This kernel cannot emulate the testbed. Use a kernel that has these modules (Debian 12's "
           "linux-image-amd64 and linux-image-arm64 do), or run inside the testbed VM: `sudo ./figure5.sh --vm all` "
           "(or `vagrant up`, then `vagrant ssh -c 'cd /vagrant && sudo ./figure5.sh all'`).")


BBR3_HINT = ("bbr3 (BBRv3) needs the testbed's 6.12 kernel with Google's BBRv3 patch: boot it with "
             "`BBRLAB_BBR3_KERNEL=1 BBRLAB_KERNEL=bbr3 vm/vm.sh up` (the box vm/build-box.sh then builds carries it; "
             "vm/build-kernel.sh builds its packages, which install on any Debian 12 host)")


OFFLINE = ("; the testbed box has it built in unless its sources were out of reach when the box was built "
           "(vm/build-box.sh said so): docs/troubleshooting.md, \"Offline\", says how to supply them")


BBR410_HINT = ("bbr410 (Linux 4.10.1's BBR) is built by provisioning for Debian's 6.1 kernel (ansible role "
               "bbr410: sudo ./setup.sh, or vagrant provision): it needs linux-headers of that kernel and 4.10.1's "
               "tcp_bbr.c (fetched from kernel.org; its output says why it skipped); on the BBRv3 kernel boot "
               "Debian's again: `BBRLAB_KERNEL=debian vm/vm.sh kernel debian`" + OFFLINE)


QUIC_HINT = ("picoquicdemo is missing (a `tool: picoquic` flow group runs it): provisioning builds picoquic "
             "and picotls at pinned commits (ansible role picoquic: sudo ./setup.sh, or vagrant provision)" + OFFLINE)


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


def missing_qdiscs(needed: list[str]) -> list[str]:
    """Module names of the qdiscs (and cls_u32) in NEEDED that cannot be attached here."""
    states = kernel_probe.probe([kernel_probe.NETNS] + needed)
    if states[kernel_probe.NETNS] != "ok":
        raise PreflightError("cannot create a network namespace (`ip netns add`): run as root on Linux")
    return [module for module in needed if states[module] == "missing"]


def offered_ccs() -> set[str]:
    """The congestion controls the kernel offers now (none where it cannot be read)."""
    return kernel_probe.offered_ccs()


def release() -> str:
    """The running kernel's release (uname -r)."""
    return platform.release()


def missing_ccs(needed: set[str]) -> list[str]:
    """Of NEEDED, the congestion controls the kernel lacks even after loading their modules."""
    return sorted(cc for cc in needed if cc not in offered_ccs()
                  and kernel_probe.probe([f"tcp_{cc}"])[f"tcp_{cc}"] == "missing")


def kernel_problems(ccs: set[str], pacing_fq: bool, lossy: bool = False, aqms: set[str] = frozenset()) -> list[str]:
    return kernel_findings(ccs, pacing_fq, lossy, aqms)[0]


def kernel_findings(ccs: set[str], pacing_fq: bool, lossy: bool = False,
                    aqms: set[str] = frozenset()) -> tuple[list[str], bool]:
    """What this kernel lacks for a run, with how to get each, and whether another kernel is
    needed: not where only the testbed's own modules (TESTBED_CCS, each with its hint) are missing."""
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
    return problems + cc_hints(cc_missing), bool(qdiscs) or not set(cc_missing) <= TESTBED_CCS.keys()


def _noagg_hint() -> str:
    return ("bbr_noagg is built by provisioning (ansible role bbrnoagg: sudo ./setup.sh, or vagrant provision) "
            "from this kernel's own tcp_bbr.c; it needs the packages "
            f"linux-headers-{platform.release()} and linux-source-"
            f"{'.'.join(platform.release().split('.')[:2])} (its output says why it skipped)")


# the congestion controls the testbed's provisioning builds or boots, each with how it does
TESTBED_CCS = {"bbr3": lambda: BBR3_HINT, "bbr_noagg": _noagg_hint, "bbr410": lambda: BBR410_HINT}


def cc_hints(missing: list[str]) -> list[str]:
    """How provisioning provides each of the testbed's own congestion controls in MISSING."""
    return [hint() for cc, hint in TESTBED_CCS.items() if cc in missing]


MAHIMAHI_HINT = ("provisioning builds Mahimahi 0.96's shells (ansible role mahimahi: sudo ./setup.sh, or vagrant "
                 "provision)" + OFFLINE)


def mahimahi_problems() -> list[str]:
    """What a `link.shaper: mahimahi` point lacks here: the setuid shells, the programs that
    start and enter the chain, the dnsmasq every shell starts, a TUN device, and forwarding
    (each shell checks it)."""
    from . import mahimahi_plan as mahimahi

    problems = []
    shells = [s for s in mahimahi.SHELLS if not os.access(mahimahi.BIN / s, os.X_OK)]
    unset = [s for s in mahimahi.SHELLS if s not in shells and not os.stat(mahimahi.BIN / s).st_mode & 0o4000]
    if shells:
        problems.append(f"Mahimahi's {', '.join(shells)} missing from {mahimahi.BIN}: {MAHIMAHI_HINT}")
    elif unset:
        problems.append(f"Mahimahi's {', '.join(unset)} in {mahimahi.BIN} not setuid root (Mahimahi runs its "
                        f"shells so): {MAHIMAHI_HINT}")
    absent = sorted({pkg for tool, pkg in (("setpriv", "util-linux"), ("nsenter", "util-linux"),
                                           ("iptables", "iptables")) if shutil.which(tool) is None}
                    | ({"dnsmasq-base"} if not os.access(mahimahi.DNSMASQ, os.X_OK) else set()))
    if absent:
        problems.append(f"Mahimahi's chain needs: apt-get install {' '.join(absent)}")
    if not os.path.exists("/dev/net/tun"):
        problems.append("no /dev/net/tun: Mahimahi's shells need TUN devices (modprobe tun)")
    try:
        with open("/proc/sys/net/ipv4/ip_forward") as f:
            forwarding = f.read().strip() == "1"
    except OSError:
        forwarding = False
    if not forwarding:
        problems.append("net.ipv4.ip_forward is off: Mahimahi's shells refuse to start without it "
                        "(the netkernel role sets it: sudo ./setup.sh, or sysctl -w net.ipv4.ip_forward=1)")
    return problems


def quic_problems(builds: set[str | None]) -> list[str]:
    """What is missing for the picoquic BUILDS (None: today's) a run's groups ask for."""
    if builds and shutil.which("picoquicdemo") is None:
        return [QUIC_HINT]
    absent = sorted(b for b in builds if b is not None and shutil.which(picoquic_builds.program(b)) is None)
    if not absent:
        return []
    try:
        with open(f"{picoquic_builds.PREFIX}/share/picoquic/build.txt") as f:
            said = {line.split()[0]: line.strip() for line in f.readlines()[1:] if line.strip()}
    except OSError:
        said = {}
    return [f"picoquic build {b} ({picoquic_builds.label(b)}) is not installed"
            + (f" (its build said: {said[b]})" if b in said else "")
            + ": provisioning builds it beside today's (ansible role picoquic: sudo ./setup.sh, or vagrant "
            "provision)" + OFFLINE for b in absent]


def check(ccs: set[str], pacing_fq: bool = True, pcap: bool = False, lossy: bool = False,
          aqms: set[str] = frozenset(), quic: set[str | None] = frozenset(), owd: bool = False,
          mahimahi: bool = False) -> None:
    """Raise PreflightError listing everything missing, with how to get it."""
    if os.geteuid() != 0:
        raise PreflightError("bbrlab must run as root (Mininet creates namespaces and qdiscs): use sudo")
    problems = []
    tools = dict(TOOLS, **({"tcpdump": "tcpdump"} if pcap else {}), **({"irtt": "irtt"} if owd else {}))
    absent = sorted({pkg for tool, pkg in tools.items() if shutil.which(tool) is None})
    if absent:
        problems.append(f"missing programs; install with: apt-get install {' '.join(absent)}")
    problems += quic_problems(quic)
    problems += mahimahi_problems() if mahimahi else []
    mods = sorted({pkg for mod, pkg in MODULES.items() if importlib.util.find_spec(mod) is None})
    if mods:
        problems.append(f"missing Python modules; install with: apt-get install {' '.join(mods)}")
    if shutil.which("tc") and shutil.which("ip"):
        kernel, other_kernel = kernel_findings(ccs, pacing_fq, lossy, aqms)
        problems += kernel + ([VM_HINT] if other_kernel else [])
    if problems:
        raise PreflightError("preflight failed:\n  - " + "\n  - ".join(problems)
                             + "\n(or provision this host with `sudo ./setup.sh`)")
