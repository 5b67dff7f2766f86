"""Stopping the flows that still run: iperf3 gets SIGINT first, so a hung flow leaves the
JSON it measured and the reason it stopped; whatever ignores it is killed."""

import subprocess
import sys
import time

import pytest

from bbrlab.schema import experiment as spec
from bbrlab.traffic import iperf as traffic

# iperf3 on SIGINT: writes its JSON ("error": "interrupt - ...") and exits.
WRITES_ON_SIGINT = """
import signal, sys, time
def stop(*_):
    print('{"error": "interrupt - the client has terminated"}', flush=True)
    sys.exit(1)
signal.signal(signal.SIGINT, stop)
print("ready", flush=True)
time.sleep(60)
"""
# A process stuck where a signal does not reach it.
IGNORES_SIGINT = """
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)
"""


def start(script: str, out_path) -> tuple[subprocess.Popen, object]:
    out = open(out_path, "w")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while "ready" not in out_path.read_text() and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc, out


def test_stop_interrupts_first_and_kills_only_what_ignores_it(tmp_path, monkeypatch):
    monkeypatch.setattr(traffic, "STOP_WAIT", 1.0)
    client, client_out = start(WRITES_ON_SIGINT, tmp_path / "client.json")
    server, server_out = start(IGNORES_SIGINT, tmp_path / "server.json")
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    t = traffic.Traffic(None, (), (), tmp_path, 1.0)
    t.runs = [traffic.FlowRun(flow=None, client=client, server=server, files=[client_out, server_out]),
              traffic.FlowRun(flow=None, client=done)]
    began = time.monotonic()
    t.stop()
    assert time.monotonic() - began < 5
    assert client.returncode == 1 and "interrupt - the client has terminated" in (tmp_path / "client.json").read_text()
    assert server.returncode == -9  # SIGINT ignored: killed after STOP_WAIT
    assert client_out.closed and server_out.closed and done.returncode == 0


def test_grace_waits_out_the_backoff_that_random_loss_makes_likely():
    assert traffic.grace_seconds(0.4) == traffic.GRACE + traffic.DRAIN_FACTOR * 0.4  # no loss: no backoff
    assert traffic.backoff_seconds(0.0, 0.1) == 0.0
    # 50% loss: 10 losses in a row happen once in 1024; the timeouts 0.3, 0.6, ... 76.8 s,
    # then Linux's TCP_RTO_MAX (120 s) instead of 153.6 s
    assert traffic.backoff_seconds(0.5, 0.1) == pytest.approx(sum(0.3 * 2 ** i for i in range(9)) + 120.0)
    assert traffic.backoff_seconds(0.5, 1.0) == pytest.approx(sum(min(1.2 * 2 ** i, 120.0) for i in range(10)))
    # light loss adds little: 0.1% loss, one loss at most
    assert traffic.backoff_seconds(0.001, 0.1) == pytest.approx(0.3)
    grace = [traffic.grace_seconds(0.4, p, 0.1) for p in (0.01, 0.1, 0.2, 0.3, 0.4, 0.5)]
    assert grace == sorted(grace) and grace[-1] - grace[0] > 250


def test_grace_waits_for_a_connection_whose_syns_the_loss_takes():
    assert traffic.connect_seconds(0.0, 9) == 0.0
    # 50% loss: 10 SYNs lost in a row come once in 1024, but the host gives up after 9
    # retransmissions (1 + 2 + ... + 64 s, then Linux's TCP_RTO_MAX twice)
    assert traffic.connect_seconds(0.5, 9) == pytest.approx(127.0 + 2 * 120.0)
    assert traffic.connect_seconds(0.5, 6) == pytest.approx(63.0)  # the kernel's default retries
    assert traffic.connect_seconds(0.01, 9) == pytest.approx(3.0)  # 1% loss: 2 lost SYNs (1 in 10^4) cost 3 s
    assert traffic.grace_seconds(0.4, 0.5, 0.1, 9) == pytest.approx(traffic.grace_seconds(0.4, 0.5, 0.1, 0) + 367.0)
    # a caller that does not say how often its hosts retry gets the kernel's default
    assert traffic.grace_seconds(0.4, 0.5, 0.1) == pytest.approx(traffic.grace_seconds(0.4, 0.5, 0.1, 0) + 63.0)


def test_hosts_retry_a_lost_syn_long_enough_for_the_heaviest_loss_swept():
    # at 50% loss the kernel's 6 retries fail a connection once in 128 (seen in bw-sweep)
    retries = int(spec.DEFAULT_SYSCTLS["net.ipv4.tcp_syn_retries"])
    assert 0.5 ** (retries + 1) <= traffic.HANG_ODDS


def test_a_server_that_never_listens_fails_the_point_with_its_own_last_words(tmp_path):
    """As picoquicdemo does when its port is taken: it prints why and exits; the point's
    error carries that line and its exit status (the output stays in raw/)."""
    from types import SimpleNamespace

    from bbrlab.emulation.topo import FlowPlan
    from bbrlab.errors import TestbedError

    class Dies:
        name = "picoquic"

        def server(self, flow, raw_dir):
            argv = [sys.executable, "-c", "print('Starting server on port 5201'); print('Server exit, ret = 0x41b');"
                    "raise SystemExit(27)"]
            return traffic.Command("snd1", argv, raw_dir / "server.txt")

        def listening(self, node, flow, deadline):
            time.sleep(0.5)
            raise TestbedError("[snd1] picoquicdemo server on port 5201 is not listening after 10s")

    node = SimpleNamespace(name="snd1", popen=lambda argv, **kw: subprocess.Popen(argv, **kw))
    flow = FlowPlan("f1", 0, "bbr", "snd1", "rcv1", "10.0.3.2", 5201, 0.0, None, 1000, tool="picoquic")
    run = traffic.Traffic(SimpleNamespace(node=lambda name: node), (flow,), (), tmp_path, 1.0, tools={"picoquic": Dies()})
    with pytest.raises(TestbedError) as caught:
        run.start_servers()
    assert str(caught.value) == ("[snd1] picoquicdemo server on port 5201 is not listening after 10s; it exited with "
                                 "status 27, its last words: 'Server exit, ret = 0x41b'")
    run.stop()
