"""The congestion controls the testbed offers: a name in an experiment file is checked
against them when the file is loaded, so a typo (`cubci`) fails before anything runs.

The testbed kernel (Debian's) ships these as modules tcp_NAME; reno is built in; bbr_noagg
(BBR without the ACK-aggregation allowance) is built by the provisioning from the
kernel's own tcp_bbr.c; bbr410 is Linux 4.10.1's BBR (as Linux shipped it in 2017), built
for Debian's 6.1 kernel by provisioning, pacing only through fq as it did then; bbr3 is
BBRv3, in the testbed's 6.12 kernel. Whether the machine a
run starts on really has one is the preflight's question (emulation/preflight.py).
"""

from __future__ import annotations

from ..errors import SpecError, did_you_mean

KERNEL_MODULES = ("bic", "cdg", "cubic", "dctcp", "highspeed", "htcp", "hybla", "illinois", "lp", "nv",
                  "scalable", "vegas", "veno", "westwood", "yeah")
BUILT_IN = ("reno",)
PROVISIONED = ("bbr", "bbr_noagg", "bbr410", "bbr3")
# the CCs that pace only through the fq qdisc on their sender (Linux before 4.13 did)
FQ_ONLY = ("bbr410",)
CCS = tuple(sorted(BUILT_IN + KERNEL_MODULES + PROVISIONED))
# picoquic's own congestion controls (a `tool: picoquic` group), by ITS names, as
# `picoquicdemo -h` lists them at the pinned commit (ansible/roles/picoquic): its bbr is
# BBRv3 and bbr1 its BBRv1, in user space; a label says picoquic's (output/figures/style.py)
QUIC_CCS = ("bbr", "bbr1", "c4", "cubic", "dcubic", "fast", "newreno", "prague")


# The CCs that one of the testbed's kernels offers and the other does not: the kernel, and
# the one command that boots it in the testbed VM (both kernels are in its box).
ONE_KERNEL = {
    "bbr3": ("the BBRv3 kernel (6.12 with Google's BBRv3 patch)", "BBRLAB_BBR3_KERNEL=1 vm/vm.sh kernel bbr3"),
    "bbr410": ("Debian's 6.1 kernel (Linux 4.10's BBR is built for it alone)", "vm/vm.sh kernel debian"),
}


def kernel_ccs(points) -> set[str]:
    """The kernel's congestion controls POINTS' flows use (iperf3's; picoquic's are its own)."""
    return {g.cc for p in points for g in p.flows if g.tool == "iperf3"}


def kernel_needs(ccs: set[str]) -> str | None:
    """Which kernel a run of CCS needs, and how to boot it ("kernel: ..."), as one line; None
    when either of the testbed's kernels offers them all."""
    needed = sorted(cc for cc in ccs if cc in ONE_KERNEL)
    kernels = {ONE_KERNEL[cc] for cc in needed}
    if not kernels:
        return None
    if len(kernels) > 1:
        return (f"kernel: no one kernel offers {' and '.join(needed)} "
                f"({'; '.join(f'{cc}: {ONE_KERNEL[cc][0]}' for cc in needed)}): run them apart")
    (kernel, command), = kernels
    return f"kernel: {', '.join(needed)} needs {kernel}; in the testbed VM: {command}"


def check(name: str, key: str) -> str:
    """NAME when the testbed offers it, else a SpecError naming KEY and the near miss."""
    if name not in CCS:
        raise SpecError(f"{key}: {name!r} is not a congestion control the testbed offers"
                        f"{did_you_mean(name, CCS)} (offered: {', '.join(CCS)})")
    return name


def check_quic(name: str, key: str) -> str:
    """NAME when picoquic offers it, else a SpecError naming KEY and the near miss."""
    if name not in QUIC_CCS:
        raise SpecError(f"{key}: {name!r} is not a congestion control picoquic offers"
                        f"{did_you_mean(name, QUIC_CCS)} (offered: {', '.join(QUIC_CCS)})")
    return name
