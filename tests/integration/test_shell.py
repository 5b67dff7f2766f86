"""`bbrlab shell` for real: figure 5's BBR point built in the VM, driven through a pipe as a
student would type it: the sender's default CC is the point's, a ping crosses the
bottleneck with at least the base RTT, and after `exit` no namespace, veth, qdisc or process
of the testbed is left."""

import os
import re

import pytest
from conftest import RESULTS, bbrlab, leftovers

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def test_a_shell_pings_across_the_bottleneck_and_leaves_nothing():
    typed = "snd1 sysctl -n net.ipv4.tcp_congestion_control\nsnd1 ping -c 2 -i 0.5 10.0.3.2\nexit\n"
    proc = bbrlab("shell", "figure5", "--only", "cc=bbr", results=RESULTS / "shell", input=typed, timeout=180)
    print(proc.stdout[-3000:], proc.stderr[-2000:])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "bbrlab shell: figure5, point cc=bbr: bottleneck 10 Mbit/s, base RTT 40 ms" in proc.stdout
    said = proc.stdout + proc.stderr  # the CLI's commands print through Mininet's log
    assert re.search(r"^(mininet> )*bbr\s*$", said, re.M)  # what a program without -C gets on the sender
    assert "2 packets transmitted, 2 received" in said
    rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", said)]
    assert len(rtts) == 2 and all(r >= 40.0 for r in rtts), rtts  # through the 40 ms path
    assert "bbrlab shell: the network is removed" in proc.stdout
    assert leftovers() == []
