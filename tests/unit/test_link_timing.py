"""Delay variation without reordering and netem slots (aggregation): spec, plan, samples."""

from __future__ import annotations

import pytest
from bbrlab.analysis import tool_output
from bbrlab.schema import experiment as spec
from bbrlab.emulation import topo
from bbrlab.errors import SpecError

from test_topo import intf, plan


def link(**keys) -> spec.Link:
    raw = {"link": {"rate": "50Mbit", "rtt": "2ms", "buffer": "200pkt", **keys},
           "flows": [{"cc": "bbr", "duration": "10s"}]}
    return spec.build(raw).points[0].link


def test_delay_variation_is_one_sided_and_keeps_order_with_a_fast_rate():
    p = plan(**{"link.delay_variation": "4ms"})
    (argv,) = intf(p, "r2-eth1").tc
    # 20 ms + uniform 0..4 ms = 22 ms +- 2 ms; rate at 100 x the 10 Mbit/s bottleneck
    assert argv[argv.index("delay"):] == ("delay", "22000us", "2000us", "rate", "1000000000bit")
    assert "rate" not in intf(p, "rcv1-eth0").tc[0]  # the ACK direction is left alone
    assert p.summary["delay_variation"] == "0 to 4ms on the data direction, in order"


def test_delay_variation_may_exceed_the_delay_unlike_jitter():
    assert link(delay_variation="5ms").delay_variation == 0.005  # 1 ms one-way delay
    with pytest.raises(SpecError, match="link.jitter: must be at most"):
        link(jitter="5ms")
    with pytest.raises(SpecError, match="link.delay_variation: give it or link.jitter, not both"):
        link(jitter="0.5ms", delay_variation="1ms")


def test_ack_slots_on_the_receivers_egress_only():
    p = plan(**{"link.slot": "1ms", "link.slot_max": "10ms", "link.slot_packets": 42})
    ack = intf(p, "rcv1-eth0").tc[0]
    assert ack[ack.index("slot"):] == ("slot", "1000us", "10000us", "packets", "42")
    assert "slot" not in intf(p, "r2-eth1").tc[0]
    assert p.summary["slot"] == "ACKs leave in slots every 1ms to 10ms, at most 42 packets per slot"


def test_data_slots_in_both_delay_lines_of_a_lossy_data_direction():
    p = plan(**{"link.slot": "2ms", "link.slot_bytes": "64KB", "link.slot_on": "data", "link.loss": "1%"})
    lines = [argv for argv in intf(p, "r2-eth1").tc if "netem" in argv]
    assert len(lines) == 2  # the lossy and the clean line: each releases in slots
    for argv in lines:
        assert argv[argv.index("slot"):argv.index("slot") + 5] == ("slot", "2000us", "2000us", "bytes", "64000")
    assert "slot" not in intf(p, "rcv1-eth0").tc[0]


@pytest.mark.parametrize(("keys", "message"), [
    ({"slot_max": "5ms"}, "link.slot_max: only with link.slot"),
    ({"slot": "5ms", "slot_max": "1ms"}, "link.slot_max: 1ms is shorter than link.slot"),
    ({"slot": "5ms", "slot_on": "both"}, "link.slot_on"),
    ({"slot": "5"}, "link.slot"),
    ({"slot": "1ms", "slot_packets": 0}, "link.slot_packets"),
])
def test_slot_errors_name_the_key(keys, message):
    with pytest.raises(SpecError, match=message):
        link(**keys)


def test_a_reused_delay_line_is_rebuilt_from_scratch():
    # links.apply deletes the root qdisc first: a slot or rate of the last point cannot
    # linger (netem keeps options a `replace` does not repeat)
    assert topo._delay_line(0.001, 1e7) == ["netem", "limit", "10000", "delay", "1000us"]


SS_REORDER = """0      0      10.0.1.1:24577 10.0.3.2:5201
\t cubic wscale:9,9 rto:204 rtt:3.1/0.5 mss:1448 cwnd:40 bytes_acked:1000 reordering:12 reord_seen:7
"""


def test_ss_reord_seen_counts_and_defaults_to_zero():
    (sample,) = tool_output.parse_ss(f"### 1.0\n{SS_REORDER}")
    assert sample.reord_seen == 7
    (plain,) = tool_output.parse_ss(f"### 1.0\n{SS_REORDER.replace(' reord_seen:7', '')}")
    assert plain.reord_seen == 0


def test_receive_steering_covers_every_cpu_in_a_private_mount_namespace():
    from bbrlab.emulation import links

    assert [links.cpu_mask(n) for n in (1, 2, 8, 12)] == ["1", "3", "ff", "fff"]
    seen = []

    class Node:
        name = "r1"

        def popen(self, argv, **kwargs):
            seen.append(argv)

            class Done:
                returncode = 0

                def communicate(self, input=None, timeout=None):
                    return "", ""
            return Done()

    links.steer_receive(Node(), 2)
    (argv,) = seen
    assert argv[:4] == ["unshare", "--mount", "--propagation", "private"] and argv[-1] == "3"
    assert "rps_cpus" in argv[-3] and "umount -l /sys" in argv[-3]  # never the machine's own /sys
