"""The dumbbell plan: hosts, addresses, the exact tc argv on every egress, flows and events."""

from __future__ import annotations

from pathlib import Path

import pytest
from bbrlab.emulation import plan_text, shapers, topo
from bbrlab.schema import experiment as spec

FIGURE5 = Path(__file__).resolve().parents[2] / "experiments" / "figure5.yaml"


def point(flows=None, **changes) -> spec.Point:
    raw = {"link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "175pkt"},
           "flows": flows or [{"cc": "bbr", "duration": "30s"}]}
    for path, value in changes.items():
        spec.set_path(raw, path, value)
    return spec.build(raw).points[0]


def plan(flows=None, **changes) -> topo.Plan:
    return topo.build_plan(point(flows, **changes))


def intf(p: topo.Plan, name: str) -> topo.IntfPlan:
    (found,) = [i for i in p.intfs() if i.name == name]
    return found


def limit_of(argv: tuple) -> int:
    return int(argv[argv.index("limit") + 1])


def netem(dev: str, limit: int, *tail: str) -> tuple:
    return ("tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "netem", "limit", str(limit)) + tail


# ---------------------------------------------------------------- topology


def test_hosts_links_addresses_and_routes():
    p = topo.build_plan(spec.load(FIGURE5).points[0])
    assert p.hosts == (("snd1", "sender"), ("r1", "router"), ("r2", "router"), ("rcv1", "receiver"))
    assert [(lk.end1.name, lk.end1.ip, lk.end2.name, lk.end2.ip) for lk in p.links] == [
        ("snd1-eth0", "10.0.1.1/24", "r1-eth1", "10.0.1.2/24"),
        ("r1-eth0", "10.0.2.1/24", "r2-eth0", "10.0.2.2/24"),
        ("r2-eth1", "10.0.3.1/24", "rcv1-eth0", "10.0.3.2/24"),
    ]
    via = {h: routes[0][-1] for h, routes in p.routes.items()}
    assert via == {"snd1": "10.0.1.2", "r1": "10.0.2.2", "r2": "10.0.2.1", "rcv1": "10.0.3.1"}
    assert p.routes["snd1"] == (("ip", "route", "replace", "default", "via", "10.0.1.2"),)
    assert p.bottleneck is intf(p, "r1-eth0") and p.bottleneck.role == "bottleneck"


def test_many_senders_get_unique_subnets():
    """The most long flows a point may have (spec's MAX_FLOWS, 256) still get addresses that exist."""
    p = plan([{"cc": "bbr", "count": 256, "duration": "1s"}])
    ips = [i.ip for i in p.intfs()]
    assert len(ips) == len(set(ips)) == 2 * 258
    assert intf(p, "snd256-eth0").ip == "10.1.0.1/24" and intf(p, "r1-eth0").ip == "10.1.1.1/24"
    assert all(int(octet) < 256 for ip in ips for octet in ip.split("/")[0].split("."))


def test_shape_ignores_settings_but_not_wiring():
    points = spec.load(FIGURE5, overrides=["rate=[10Mbit,50Mbit]"]).points
    a, b = (topo.build_plan(pt) for pt in points if pt.params["cc"] == "bbr" and pt.repetition == 1)
    assert a.shape == b.shape and a.bottleneck.tc != b.bottleneck.tc
    assert plan([{"cc": "bbr", "count": 2, "duration": "1s"}]).shape != a.shape


# ---------------------------------------------------------------- the bottleneck


def test_default_bottleneck_is_netem_rate_whose_queue_is_the_buffer():
    assert plan().bottleneck.tc == (
        ("tc", "qdisc", "replace", "dev", "r1-eth0", "root", "handle", "10:", "netem",
         "limit", "175", "rate", "10000000bit"),
    )
    assert "delay" not in plan().bottleneck.tc[0]  # the delay lines are elsewhere


def test_htb_bottleneck_has_a_pfifo_leaf_holding_the_buffer():
    assert plan(**{"link.shaper": "htb"}).bottleneck.tc == (
        ("tc", "qdisc", "replace", "dev", "r1-eth0", "root", "handle", "1:", "htb", "default", "1"),
        ("tc", "class", "replace", "dev", "r1-eth0", "parent", "1:", "classid", "1:1", "htb",
         "rate", "10000000bit", "ceil", "10000000bit", "burst", "3028", "cburst", "3028", "quantum", "1514"),
        ("tc", "qdisc", "replace", "dev", "r1-eth0", "parent", "1:1", "handle", "10:", "pfifo", "limit", "175"),
    )


def test_tbf_bottleneck_passes_the_leafs_own_limit_so_a_rate_change_keeps_the_buffer():
    p = plan(**{"link.shaper": "tbf", "link.changes": [{"at": "5s", "rate": "20Mbit"}]})
    assert p.bottleneck.tc == (
        ("tc", "qdisc", "replace", "dev", "r1-eth0", "root", "handle", "1:", "tbf",
         "rate", "10000000bit", "burst", "3028", "limit", "175"),
        ("tc", "qdisc", "replace", "dev", "r1-eth0", "parent", "1:1", "handle", "10:", "pfifo", "limit", "175"),
    )
    assert p.events[0].argv == ("tc", "qdisc", "change", "dev", "r1-eth0", "root", "handle", "1:", "tbf",
                                "rate", "20000000bit", "burst", "3028", "limit", "175")


@pytest.mark.parametrize(("buffer", "leaf", "netem_limit"), [
    ("175pkt", ("pfifo", "limit", "175"), "175"),
    ("5bdp", ("pfifo", "limit", "167"), "167"),
    ("2bdp", ("pfifo", "limit", "67"), "67"),
    ("256KB", ("bfifo", "limit", "256000"), "170"),  # netem counts packets: the full frames it holds
    ("15000B", ("bfifo", "limit", "15000"), "10"),
])
def test_bottleneck_buffer(buffer, leaf, netem_limit):
    last = plan(**{"link.buffer": buffer, "link.shaper": "htb"}).bottleneck.tc[-1]
    assert last[-3:] == leaf and last[last.index("handle") + 1] == topo.BOTTLENECK_HANDLE
    (netem,) = plan(**{"link.buffer": buffer}).bottleneck.tc
    assert limit_of(netem) == int(netem_limit) and netem[netem.index("handle") + 1] == topo.BOTTLENECK_HANDLE


@pytest.mark.parametrize(("rate", "burst", "expected"), [
    ("10Mbit", "auto", 3028),  # 1 ms is 1250 B: two frames win
    ("1Gbit", "auto", 125000),  # 1 ms at the rate
    ("100Mbit", "auto", 12500),
    ("10Mbit", "30KB", 30000),  # given explicitly
])
def test_htb_burst(rate, burst, expected):
    cls = plan(**{"link.rate": rate, "link.burst": burst, "link.shaper": "htb"}).bottleneck.tc[1]
    assert cls[cls.index("burst") + 1] == cls[cls.index("cburst") + 1] == str(expected)
    assert cls[cls.index("rate") + 1] == cls[cls.index("ceil") + 1] == f"{int(spec.units.rate(rate, 'r'))}bit"


def test_token_burst_function():
    assert shapers.token_burst(10e6, None) == 2 * spec.FRAME_BYTES == 3028
    assert shapers.token_burst(1e9, None) == 125_000 and shapers.token_burst(1e9, 5000) == 5000


# ---------------------------------------------------------------- delay lines


def test_figure5_delay_lines_split_40ms_evenly():
    p = topo.build_plan(spec.load(FIGURE5).points[1])
    assert intf(p, "r2-eth1").role == "delay-data" and intf(p, "rcv1-eth0").role == "delay-ack"
    assert intf(p, "r2-eth1").tc == (netem("r2-eth1", 10000, "delay", "20000us"),)
    assert intf(p, "rcv1-eth0").tc == (netem("rcv1-eth0", 10000, "delay", "20000us"),)


@pytest.mark.parametrize(("share", "data_us", "ack_us"), [(0.5, 20000, 20000), (0.25, 10000, 30000),
                                                          (0.8, 32000, 8000)])
def test_forward_share_splits_the_rtt(share, data_us, ack_us):
    p = plan(**{"link.forward_share": share})
    assert intf(p, "r2-eth1").tc[0][-2:] == ("delay", f"{data_us}us")
    assert intf(p, "rcv1-eth0").tc[0][-2:] == ("delay", f"{ack_us}us")


def test_jitter_only_on_the_data_direction():
    p = plan(**{"link.jitter": "5ms"})
    assert intf(p, "r2-eth1").tc[0][-3:] == ("delay", "20000us", "5000us")
    assert intf(p, "rcv1-eth0").tc[0][-2:] == ("delay", "20000us")


@pytest.mark.parametrize(("rate", "rtt"), [("10Mbit", "40ms"), ("1Gbit", "200ms"), ("100Mbit", "500ms"),
                                           ("10Gbit", "100ms")])
def test_delay_lines_never_drop(rate, rtt):
    p = plan(**{"link.rate": rate, "link.rtt": rtt, "link.buffer": "10bdp"})
    bps, one_way = spec.units.rate(rate, "r"), spec.units.duration(rtt, "r") / 2
    for dev in ("r2-eth1", "rcv1-eth0"):
        limit = limit_of(intf(p, dev).tc[0])
        assert limit >= 10_000
        assert limit >= 4 * bps * one_way / 8 / 64 - 1  # 4x even if every packet were a bare ACK
    data_limit = limit_of(intf(p, "r2-eth1").tc[0])
    assert data_limit > 4 * (bps * one_way / 8 / 1514)


def test_netem_limit():
    assert topo.netem_limit(10e6, 0.02) == 10_000
    assert topo.netem_limit(1e9, 0.1) == 781_250  # 4 x 1e9 x 0.1 / 8 / 64


def test_data_delay_line_is_sized_for_the_fastest_rate_step():
    p = plan(**{"link.rate": "100Mbit", "link.rtt": "200ms",
                "link.changes": [{"at": "10s", "rate": "1Gbit"}]})
    assert limit_of(intf(p, "r2-eth1").tc[0]) == topo.netem_limit(1e9, 0.1) == 781_250
    assert limit_of(intf(p, "rcv1-eth0").tc[0]) == topo.netem_limit(100e6, 0.1)


@pytest.mark.parametrize(("loss", "text"), [("1%", "1%"), ("0.5%", "0.5%"), ("10%", "10%")])
def test_loss_only_on_the_data_direction_and_only_for_the_data_connections(loss, text):
    p = plan(**{"link.loss": loss})
    root, lossy, clean, flt = intf(p, "r2-eth1").tc
    assert root == ("tc", "qdisc", "replace", "dev", "r2-eth1", "root", "handle", "1:", "prio", "bands", "2",
                    "priomap") + ("1",) * 16  # everything to the clean line by default ...
    limit = str(topo.netem_limit(10e6, 0.02))
    line = ("netem", "limit", limit, "delay", "20000us")
    assert lossy == ("tc", "qdisc", "replace", "dev", "r2-eth1", "parent", "1:1", "handle", "10:") + line + (
        "loss", "random", text)
    assert clean == ("tc", "qdisc", "replace", "dev", "r2-eth1", "parent", "1:2", "handle", "20:") + line
    # ... but TCP from the data connections' client ports, which only --cport hands out
    assert flt == ("tc", "filter", "replace", "dev", "r2-eth1", "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                   "match", "ip", "protocol", "6", "0xff", "match", "ip", "sport", "24576", "0xf000", "flowid", "1:1")
    assert all("loss" not in argv for argv in intf(p, "rcv1-eth0").tc)
    both = plan(**{"link.loss": loss, "link.loss_direction": "both"})
    ack_root, ack_lossy, ack_clean, ack_flt = intf(both, "rcv1-eth0").tc
    assert ack_lossy[-3:] == ("loss", "random", text) and "loss" not in ack_clean
    assert ack_flt[ack_flt.index("match", 15):] == ("match", "ip", "dport", "24576", "0xf000", "flowid", "1:1")


def test_data_ports_stay_in_the_filtered_block_below_the_ephemeral_range():
    ports = [topo.data_port(n) for n in range(10_000)]
    value, mask = topo.DATA_PORTS
    assert all(p & mask == value for p in ports) and max(ports) < 32768
    assert len(set(ports[:4096])) == 4096  # a new port for each of 4096 connections in a row


def test_no_loss_no_loss_argument():
    assert all("loss" not in argv for i in plan().intfs() for argv in i.tc)


def test_flow_groups_with_their_own_rtt_get_their_own_receiver():
    p = plan([{"cc": "bbr", "duration": "10s"}, {"cc": "cubic", "duration": "10s", "rtt": "100ms"}])
    assert intf(p, "r2-eth1").tc[0][-2:] == ("delay", "20000us")
    assert intf(p, "r2-eth2").tc[0][-2:] == ("delay", "50000us")
    assert intf(p, "rcv2-eth0").tc[0][-2:] == ("delay", "50000us")


# ---------------------------------------------------------------- senders


def test_fq_on_sender_egress_only_when_pacing_is_fq():
    fq = plan([{"cc": "bbr", "count": 2, "duration": "1s"}])
    for n in (1, 2):
        assert intf(fq, f"snd{n}-eth0").tc == (("tc", "qdisc", "replace", "dev", f"snd{n}-eth0", "root", "fq"),)
        assert intf(fq, f"snd{n}-eth0").role == "pacing"
    internal = plan([{"cc": "bbr", "count": 2, "duration": "1s"}], pacing="internal")
    assert [(i.tc, i.role) for i in internal.intfs() if i.host.startswith("snd")] == [((), "plain")] * 2


@pytest.mark.parametrize("pacing", ["fq", "internal"])
def test_no_shaping_outside_the_bottleneck_and_delay_lines(pacing):
    p = plan(pacing=pacing, **{"link.loss": "1%", "link.jitter": "2ms"})
    for i in p.intfs():
        words = {w for argv in i.tc for w in argv}
        if i.host.startswith("snd"):
            assert not words & {"htb", "tbf", "netem", "pfifo", "bfifo", "rate", "delay", "loss"}
        assert ("rate" in words) == (i.role == "bottleneck")
        assert ("delay" in words) == i.role.startswith("delay")
    assert intf(p, "r1-eth1").tc == () and intf(p, "r2-eth0").tc == ()


# ---------------------------------------------------------------- sysctls, flows, events


def test_sysctls_in_every_host_and_forwarding_on_routers():
    p = plan(sysctls={"net.core.default_qdisc": "fq"})
    assert set(p.sysctls) == {h for h, _ in p.hosts}
    for host, role in p.hosts:
        values = p.sysctls[host]
        assert values["net.ipv4.tcp_rmem"] == "4096 131072 134217728"
        assert values["net.ipv4.tcp_wmem"] == "4096 16384 134217728"
        assert values["net.ipv4.tcp_no_metrics_save"] == "1" and values["net.core.default_qdisc"] == "fq"
        assert values.get("net.ipv4.ip_forward") == ("1" if role == "router" else None)


def test_flow_schedule_ports_and_receivers():
    p = plan([{"cc": "bbr", "count": 3, "start": "1s", "stagger": "2s", "duration": "10s"},
              {"cc": "cubic", "until": "20s"}])
    got = [(f.id, f.group, f.cc, f.sender, f.receiver, f.dst, f.port, f.start, f.duration, f.size) for f in p.flows]
    assert got == [
        ("f1", 0, "bbr", "snd1", "rcv1", "10.0.6.2", 5201, 1.0, 10.0, None),
        ("f2", 0, "bbr", "snd2", "rcv1", "10.0.6.2", 5202, 3.0, 10.0, None),
        ("f3", 0, "bbr", "snd3", "rcv1", "10.0.6.2", 5203, 5.0, 10.0, None),
        ("f4", 1, "cubic", "snd4", "rcv2", "10.0.7.2", 5204, 0.0, 20.0, None),
    ]
    assert intf(p, "rcv1-eth0").ip == "10.0.6.2/24" and intf(p, "rcv2-eth0").ip == "10.0.7.2/24"


def test_until_flows_end_together_and_size_flows_have_no_duration():
    p = plan([{"cc": "bbr", "count": 2, "stagger": "5s", "until": "30s"}, {"cc": "reno", "size": "1MB"}])
    assert [(f.start, f.duration, f.size) for f in p.flows] == [(0, 30, None), (5, 25, None), (0, None, 1_000_000)]


def test_rate_changes_become_timed_events_on_r1():
    p = plan(**{"link.changes": [{"at": "20s", "rate": "1Gbit"}, {"at": "10s", "rate": "20Mbit"}]})
    assert [(e.at, e.host, e.what) for e in p.events] == [
        (10.0, "r1", "bottleneck rate -> 20Mbit"), (20.0, "r1", "bottleneck rate -> 1Gbit")]
    assert p.events[0].argv == ("tc", "qdisc", "change", "dev", "r1-eth0", "root", "handle", "10:", "netem",
                                "limit", "175", "rate", "20000000bit")
    assert p.events[1].argv[-2:] == ("rate", "1000000000bit")
    assert plan().events == ()
    htb = plan(**{"link.shaper": "htb", "link.changes": [{"at": "20s", "rate": "1Gbit"}, {"at": "10s", "rate": "20Mbit"}]})
    assert htb.events[0].argv == (
        "tc", "class", "change", "dev", "r1-eth0", "parent", "1:", "classid", "1:1", "htb",
        "rate", "20000000bit", "ceil", "20000000bit", "burst", "3028", "cburst", "3028", "quantum", "1514")
    assert htb.events[1].argv[-6:] == ("burst", "125000", "cburst", "125000", "quantum", "1514")


def test_summary():
    assert plan(**{"link.loss": "1%"}).summary == {
        "rate": "10Mbit", "base_rtt": "40ms", "buffer": "175 pkt (5.2 BDP)", "loss": "1%", "pacing": "fq",
        "shaper": "netem"}
    assert plan(**{"link.buffer": "256KB"}).summary["buffer"] == "170 pkt (5.1 BDP)"
    deep = plan(**{"link.rate": "128kbit", "link.buffer": "100bdp"}).summary["buffer"]
    assert deep == "43 pkt (101 BDP)"  # 100 BDP rounded up to whole packets; not 1e+02


def test_describe_lists_every_command_and_the_schedule():
    p = plan([{"cc": "bbr", "duration": "30s"}, {"cc": "cubic", "size": "1MB"}],
             **{"link.changes": [{"at": "10s", "rate": "20Mbit"}]})
    text = plan_text.describe(p)
    assert text.splitlines()[0] == "hosts: snd1 (sender), snd2 (sender), r1 (router), r2 (router), " \
                                   "rcv1 (receiver), rcv2 (receiver)"
    for i in p.intfs():
        for argv in i.tc:
            assert f"    [{i.host}] {' '.join(argv)}" in text
    assert "[r1] tc qdisc replace dev r1-eth0 root handle 10: netem limit 175 rate 10000000bit" in text
    assert "[r2] tc qdisc replace dev r2-eth1 root handle 1: netem limit 10000 delay 20000us" in text
    assert "[r1] r1-eth1: no qdisc" in text
    assert "net.ipv4.tcp_no_metrics_save=1" in text and "ip_forward" not in text
    assert "  f1: bbr      snd1 -> rcv1 10.0.4.2:5201  start 0s, for 30s" in text
    assert "  f2: cubic    snd2 -> rcv2 10.0.5.2:5202  start 0s, 1000000 bytes" in text
    assert "  at 10s [r1] bottleneck rate -> 20Mbit: tc qdisc change dev r1-eth0 root handle 10: netem" in text


# ---------------------------------------------------------------- tc -batch

def test_every_planned_tc_command_fits_one_batch_line_per_command():
    p = plan(**{"link.loss": "1%", "link.jitter": "2ms", "pacing": "fq"})
    for i in p.intfs():
        text = topo.tc_batch(i.tc)
        assert text is not None, i.name
        assert text.splitlines() == [" ".join(argv[1:]) for argv in i.tc]


@pytest.mark.parametrize("argv", [
    ("tc", "qdisc", "add", "dev", "a b", "root"),        # a blank would split the argument
    ("tc", "qdisc", "add", "dev", "eth0", ""),           # an empty argument would vanish
    ("tc", "qdisc", "add", "dev", "eth0", "#x"),         # a comment
    ("tc", "qdisc", "add", "dev", "eth0", 'say"hi"'),    # quotes are parsed by tc
    ("ip", "link", "set", "eth0", "up"),                 # not a tc command
])
def test_tc_batch_refuses_what_a_batch_line_cannot_carry(argv):
    assert topo.tc_batch([("tc", "qdisc", "del", "dev", "eth0", "root"), argv]) is None


@pytest.mark.parametrize(("shaper", "rate", "burst", "expected"), [
    ("htb", "100Mbit", "2ms", 25_000), ("tbf", "100Mbit", "2ms", 25_000), ("htb", "10Mbit", "100us", 3028)])
def test_a_burst_given_as_time_at_the_rate(shaper, rate, burst, expected):
    tc = plan(**{"link.rate": rate, "link.burst": burst, "link.shaper": shaper}).bottleneck.tc
    argv = tc[1] if shaper == "htb" else tc[0]
    assert argv[argv.index("burst") + 1] == str(expected)
