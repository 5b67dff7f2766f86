"""Reconfiguring a reused network between points: only what differs is applied again.

Runs offline: Mininet is stood in for when it is not installed (conftest.py), and every
command the testbed would run in a host is recorded instead of executed.
"""

from __future__ import annotations

import pytest

from bbrlab.emulation import links, net, topo
from bbrlab.schema import experiment as spec


class Node:
    def __init__(self, name: str):
        self.name = name
        self.sysctls: dict = {}


def plan(**changes) -> topo.Plan:
    raw = {"link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "175pkt"}, "flows": [{"cc": "bbr", "duration": "30s"}]}
    for path, value in changes.items():
        spec.set_path(raw, path, value)
    return topo.build_plan(spec.build(raw).points[0])


@pytest.fixture
def testbed(monkeypatch):
    calls: list[tuple[str, tuple]] = []

    def fake_run(node, argv, check=True, timeout=20, stdin=None):
        calls.append((node.name, tuple(argv) + ((stdin,) if stdin else ())))
        if argv[:2] == ["sysctl", "-q"]:
            node.sysctls.update(a.split("=", 1) for a in argv[3:])
        if argv[:2] == ["sysctl", "-n"]:
            return "\n".join(node.sysctls[k] for k in argv[2:]) + "\n"
        return ""

    monkeypatch.setattr(net, "run", fake_run)
    monkeypatch.setattr(links, "run", fake_run)
    first = plan()
    tb = net.Testbed(first)
    tb.nodes = {name: Node(name) for name, _ in first.hosts}
    for intf_plan in first.intfs():
        intf = object.__new__(links.EmulatedIntf)
        intf.name, intf.node = intf_plan.name, tb.nodes[intf_plan.host]
        tb.intfs[intf_plan.name] = intf
    tb.configure(first)
    return tb, calls


def commands(calls) -> set[tuple[str, str]]:
    return {(host, " ".join(argv[:3])) for host, argv in calls}


def test_the_first_configure_sets_everything_up(testbed):
    tb, calls = testbed
    done = commands(calls)
    assert ("r1", "ethtool -K r1-eth0") in done and ("r1", "tc -batch -") in done  # htb + buffer in one tc
    assert ("r2", "ip route replace") in done and ("snd1", "sysctl -q -w") in done


def test_the_same_plan_again_only_flushes_the_tcp_metrics_of_the_flows_hosts(testbed):
    tb, calls = testbed
    calls.clear()
    tb.configure(plan())
    assert calls == [("rcv1", ("ip", "tcp_metrics", "flush", "all")), ("snd1", ("ip", "tcp_metrics", "flush", "all"))]


def test_a_new_loss_rate_sets_up_only_the_data_delay_line(testbed):
    tb, calls = testbed
    calls.clear()
    tb.configure(plan(**{"link.loss": "2%"}))
    changed = [(h, argv) for h, argv in calls if argv[0] != "ip"]
    assert [(h, argv[:2]) for h, argv in changed] == [("r2", ("tc", "qdisc")), ("r2", ("tc", "-batch"))]
    assert changed[0][1] == ("tc", "qdisc", "del", "dev", "r2-eth1", "root")
    assert "loss random 2%" in changed[1][1][-1]  # the batch's text


def test_a_host_whose_queueing_changed_mid_flow_is_set_up_again(testbed):
    tb, calls = testbed
    tb.invalidate("r1")  # a rate step ran `tc class change` on r1's bottleneck
    calls.clear()
    tb.configure(plan())
    redone = {argv[4] for h, argv in calls if argv[:3] == ("tc", "qdisc", "del")}
    assert redone == {"r1-eth0", "r1-eth1"}  # r1's interfaces only, the bottleneck among them
    assert ("r1", "tc -batch -") in commands(calls)


def test_a_changed_sysctl_is_set_and_read_back_alone(testbed):
    tb, calls = testbed
    calls.clear()
    p = plan(**{"sysctls": {"net.ipv4.tcp_rmem": "4096 131072 67108864"}})
    tb.configure(p)
    sets = [(h, argv) for h, argv in calls if argv[:2] == ("sysctl", "-q")]
    assert len(sets) == len(p.hosts) and all(argv[3:] == ("net.ipv4.tcp_rmem=4096 131072 67108864",)
                                             for _, argv in sets)


def test_traffic_programs_left_in_another_namespace_are_recognized():
    """cleanup_leftovers kills these when their host shell is gone (a client started as the
    run was interrupted): iperf3 by name, the short-flow programs by their script (the
    socket sampler is a thread of bbrlab itself, gone with it)."""
    assert net._is_traffic(("iperf3", "-c", "10.0.3.2", "-t", "15"))
    assert net._is_traffic(("/usr/bin/iperf3", "-s", "-p", "5201"))
    assert net._is_traffic(("picoquicdemo", "-p", "5201", "-G", "bbr"))  # a QUIC server holds its port
    assert net._is_traffic(("/usr/bin/python3", "/vagrant/mininet/bbrlab/traffic/shortflows.py", "sink"))
    assert not net._is_traffic(("/usr/bin/python3", "-m", "bbrlab", "run", "figure5"))
    assert not net._is_traffic(("sshd:", "vagrant"))
    assert not net._is_traffic(())
