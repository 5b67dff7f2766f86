"""irtt: a sparse UDP probe through the bottleneck whose one-way delays are real here.

Every host of the testbed is a network namespace of one machine, so the probe's client and
server read one clock: irtt's send and receive delays are the data direction's and the
return direction's own delays, with no clock offset to remove. One server per flow group
on its receiver, one client on its first sender (the path ping measures), started with the
other samplers and stopped with SIGINT, on which irtt writes its JSON (analysis/irtt_output.py
reads it).
"""

from __future__ import annotations

PORT = 2112  # irtt's own default port
LENGTH = 64  # bytes per packet (irtt's headers with timestamps fit): a sparse flow to flow queuing
UNBOUNDED = "24h"  # the client runs until the samplers stop it (SIGINT), not for a set time


def server_argv(address: str) -> list[str]:
    """The server on the group's receiver, bound to its address only."""
    return ["irtt", "server", "-b", f"{address}:{PORT}"]


def client_argv(address: str, interval: float, out: str) -> list[str]:
    """The client on the group's first sender: one packet every INTERVAL seconds to ADDRESS,
    its round trips written to OUT as JSON when it is stopped."""
    return ["irtt", "client", "-Q", "-i", f"{round(interval * 1e6)}us", "-d", UNBOUNDED, "-l", str(LENGTH),
            "-o", out, f"{address}:{PORT}"]


def file_name(group: int) -> str:
    return f"irtt-g{group + 1}.json"
