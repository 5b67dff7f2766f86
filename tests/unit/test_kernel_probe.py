"""The kernel probe's decisions, on a kernel of the test's making (a runner that answers
for ip, tc and modprobe). The probe against the real kernel is in tests/host/test_preflight.py."""

import pytest

from bbrlab.emulation import kernel_probe


class Kernel:
    """A kernel with QDISCS attachable and CCS offered once their module is loaded."""

    def __init__(self, qdiscs=(), ccs=(), netns=True):
        self.qdiscs, self.ccs, self.netns, self.calls = set(qdiscs), set(ccs), netns, []

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[:3] == ["ip", "netns", "add"]:
            return 0 if self.netns else 1
        if argv[0] == "tc":
            kind = "u32" if "u32" in argv else argv[argv.index("root") + 1:][-1 if "handle" in argv else 0]
            return 0 if kind in self.qdiscs else 2
        return 0


@pytest.fixture
def offered(monkeypatch):
    ccs = {"cubic", "reno"}
    monkeypatch.setattr(kernel_probe, "offered_ccs", lambda: set(ccs))
    monkeypatch.setattr(kernel_probe, "_loaded", lambda module: True)
    return ccs


def test_each_feature_is_tried_and_reported(offered):
    kernel = Kernel(qdiscs={"netem", "htb", "prio", "u32"})
    states = kernel_probe.probe(["network-namespaces", "sch_netem", "sch_fq", "sch_htb", "cls_u32", "tcp_cubic",
                                 "tcp_bbr3"], kernel)
    assert states == {"network-namespaces": "ok", "sch_netem": "ok", "sch_fq": "missing", "sch_htb": "ok",
                      "cls_u32": "ok", "tcp_cubic": "ok", "tcp_bbr3": "missing"}
    assert ["modprobe", "-q", "tcp_bbr3"] in kernel.calls and ["modprobe", "-q", "tcp_cubic"] not in kernel.calls
    assert kernel.calls[-1][:3] == ["ip", "netns", "del"]  # nothing outlives the probe


def test_a_filter_needs_its_prio_root(offered):
    assert kernel_probe.probe(["cls_u32"], Kernel(qdiscs={"u32"}))["cls_u32"] == "missing"


def test_without_a_namespace_no_qdisc_is_said_to_work(offered):
    states = kernel_probe.probe(["sch_netem", "tcp_cubic", "network-namespaces"], Kernel(qdiscs={"netem"}, netns=False))
    assert states == {"network-namespaces": "missing", "sch_netem": "untested", "tcp_cubic": "ok"}
    assert kernel_probe.lacking(["sch_netem", "tcp_cubic"], Kernel(netns=False)) == ["sch_netem"]


def test_a_module_this_probe_loaded_is_told_apart(monkeypatch):
    loaded = set()
    monkeypatch.setattr(kernel_probe, "_loaded", lambda module: module in loaded)

    def runner(argv):
        if argv[0] == "modprobe":
            loaded.add(argv[-1])
        return 0
    assert kernel_probe.probe(["sch_fq"], runner) == {"sch_fq": "loaded"}
    assert kernel_probe.probe(["sch_fq"], runner) == {"sch_fq": "ok"}


def test_the_command_line_refuses_what_it_does_not_know(capsys):
    assert kernel_probe.main(["sch_bogus"]) == 2
    assert kernel_probe.main([]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("kernel_probe: unknown feature sch_bogus (known: network-namespaces, sch_netem")
    assert err[1].startswith("kernel_probe: no feature given")
    assert kernel_probe.known("tcp_bbr_noagg") and not kernel_probe.known("tcp_;rm") and not kernel_probe.known("tcp_")
