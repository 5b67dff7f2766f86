"""`bbrlab shell`: which point it builds, and what it says before the prompt (the network
itself is built in the VM: tests/integration/test_shell.py)."""

from pathlib import Path

import pytest

from bbrlab import cli
from bbrlab.emulation.topo import build_plan
from bbrlab.errors import SpecError
from bbrlab.runs import shell
from bbrlab.schema import experiment as spec
from bbrlab.schema.selection import parse_only, select

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def test_one_grid_point_is_chosen_and_its_repetitions_share_it():
    exp = spec.load(EXPERIMENTS / "figure5.yaml")  # 2 CCs x 3 repetitions
    with pytest.raises(SpecError, match=r"^shell: 2 points of figure5 are chosen; narrow them to one with --only "
                                        r"\(its axes: cc=\['bbr', 'cubic'\]\)"):
        shell.the_point(exp, list(exp.points))
    point = shell.the_point(exp, select(exp, parse_only(["cc=cubic"])))
    assert point.params == {"cc": "cubic"} and point.repetition == 1


def test_the_banner_names_the_link_the_paths_and_each_senders_cc():
    exp = spec.load(EXPERIMENTS / "figure5.yaml")
    point = shell.the_point(exp, select(exp, parse_only(["cc=bbr"])))
    lines = shell.banner(point, build_plan(point))
    assert lines[0] == ("bbrlab shell: figure5, point cc=bbr: bottleneck 10 Mbit/s, base RTT 40 ms, "
                        "buffer 175 packets, fifo")
    assert lines[1] == "  snd1 -> 10.0.3.2 (its default congestion control: bbr)"
    assert lines[2].startswith("  e.g. snd1 ping -c 3 10.0.3.2; hosts: ")


def test_shell_needs_root_and_says_so(capsys, monkeypatch):
    from bbrlab.emulation import preflight

    monkeypatch.setattr(preflight.os, "geteuid", lambda: 1000)
    code = cli.main(["shell", "figure5", "--only", "cc=bbr"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("bbrlab: ") and "root" in err and len(err.strip().splitlines()) == 1


def test_a_file_without_a_sweep_has_its_one_point():
    exp = spec.build({"name": "one", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "2bdp"},
                      "flows": [{"cc": "bbr", "duration": "10s"}]})
    point = shell.the_point(exp, list(exp.points))
    assert shell.banner(point, build_plan(point))[0].startswith("bbrlab shell: one, point (the only one): ")


def test_a_point_of_mahimahis_chain_is_refused_in_one_line():
    """Mininet's CLI runs commands in the hosts, outside the chain: the shell would show a
    link without the chain's delay, loss and rate under the chain's banner."""
    exp = spec.load(EXPERIMENTS / "figure8-emulators.yaml")
    only = ["loss=10%", "cc=bbr410"]
    with pytest.raises(SpecError, match=r"^shell: link.shaper: mahimahi is not offered.*--only shaper=netem$"):
        shell.the_point(exp, select(exp, parse_only(only + ["shaper=mahimahi"])))
    assert shell.the_point(exp, select(exp, parse_only(only + ["shaper=netem"]))).link.shaper == "netem"
