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


def check(name: str, key: str) -> str:
    """NAME when the testbed offers it, else a SpecError naming KEY and the near miss."""
    if name not in CCS:
        raise SpecError(f"{key}: {name!r} is not a congestion control the testbed offers"
                        f"{did_you_mean(name, CCS)} (offered: {', '.join(CCS)})")
    return name
