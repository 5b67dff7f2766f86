"""The congestion controls the testbed offers: a name in an experiment file is checked
against them when the file is loaded, so a typo (`cubci`) fails before anything runs.

The testbed kernel (Debian's) ships these as modules tcp_NAME; reno is built in; bbr_noagg
(BBR without the ACK-aggregation allowance) is built by the provisioning from the
kernel's own tcp_bbr.c; bbr3 is BBRv3, in the testbed's 6.12 kernel. Whether the machine a
run starts on really has one is the preflight's question (emulation/preflight.py).
"""

from __future__ import annotations

from ..errors import SpecError, did_you_mean

KERNEL_MODULES = ("bic", "cdg", "cubic", "dctcp", "highspeed", "htcp", "hybla", "illinois", "lp", "nv",
                  "scalable", "vegas", "veno", "westwood", "yeah")
BUILT_IN = ("reno",)
PROVISIONED = ("bbr", "bbr_noagg", "bbr3")
CCS = tuple(sorted(BUILT_IN + KERNEL_MODULES + PROVISIONED))
# picoquic's own congestion controls (a `tool: picoquic` group), by ITS names, as
# `picoquicdemo -h` lists them at the pinned commit (ansible/roles/picoquic): its bbr is
# BBRv3 and bbr1 its BBRv1, in user space; a label says picoquic's (output/style.py)
QUIC_CCS = ("bbr", "bbr1", "c4", "cubic", "dcubic", "fast", "newreno", "prague")


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
