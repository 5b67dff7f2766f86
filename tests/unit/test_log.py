"""-q and -v on every command: -q leaves warnings and errors (and everything on stdout), the
default adds progress, -v adds each command the testbed runs in a host, ready to paste."""

import argparse
import subprocess

import pytest

from bbrlab import arguments, cli, log
from bbrlab.emulation import links
from bbrlab.runs import runner
from bbrlab.schema import experiment as spec


@pytest.fixture(autouse=True)
def normal_again():
    yield
    log.set_verbosity(log.NORMAL)


def two_points() -> spec.Experiment:
    return spec.build({"name": "talk", "link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "50pkt"},
                       "flows": [{"cc": ["bbr", "cubic"], "duration": "8s"}]})


def subparsers(p) -> dict:
    """Every command's parser, nested ones (lab list) included, by its prog."""
    out = {}
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out[sub.prog] = sub
                out.update(subparsers(sub))
    return out


def test_every_command_takes_q_and_v():
    p = arguments.parser(cli.REPO / "results")
    every = subparsers(p)
    assert len(every) > 15 and "bbrlab lab check" in every
    missing = [prog for prog, sub in every.items() if "[-q | -v]" not in sub.format_usage()]
    assert not missing
    for argv, level in ((["-q", "list"], log.QUIET), (["list", "-v"], log.VERBOSE), (["list"], log.NORMAL),
                        (["lab", "list", "--quiet"], log.QUIET), (["-v", "lab", "list"], log.VERBOSE)):
        assert p.parse_args(argv).verbosity == level, argv


def test_q_and_v_together_are_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["-q", "-v", "list"])
    assert exc.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_quiet_keeps_warnings_and_results_and_drops_progress(tmp_path, measured, capsys):
    table, _ = measured
    table.update({("bbr", 1): 60.0, ("cubic", 1): 200.0})
    exp = two_points()
    first = {"index": 1, "count": 2, "points": [exp.points[0].id]}
    one = runner.run_experiment(exp, tmp_path / "host1", shard=first)
    loud = capsys.readouterr().err
    assert f"] 1/1 {exp.points[0].id}: " in loud  # the default: a progress line per point
    assert cli.main(["merge", str(one.path), "--into", str(tmp_path / "a"), "--partial", "-q"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1].startswith("results: ")
    assert "merge: missing 1 point(s)" in err  # a warning stays
    assert "shard(s) of talk into" not in err  # what it is doing goes
    assert cli.main(["merge", str(one.path), "--into", str(tmp_path / "b"), "--partial"]) == 0
    assert "merge: 1 shard(s) of talk into" in capsys.readouterr().err


def test_errors_keep_their_one_line_under_q(capsys):
    assert cli.main(["-q", "run", "no-such-experiment", "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("bbrlab: ")


class FakeNode:
    name = "sw0"

    def popen(self, argv, **kwargs):
        return subprocess.Popen(["cat"], stdin=kwargs["stdin"], stdout=kwargs["stdout"], stderr=kwargs["stderr"],
                                text=True)


def test_verbose_shows_each_host_command_ready_to_paste(capsys):
    links.run(FakeNode(), ["tc", "qdisc", "show", "dev", "sw0-eth2"])
    assert capsys.readouterr().err == ""  # not by default
    log.set_verbosity(log.VERBOSE)
    links.run(FakeNode(), ["tc", "qdisc", "show", "dev", "sw0-eth2"])
    links.run(FakeNode(), ["tc", "-batch", "-"], stdin="qdisc del dev sw0-eth2 root\n")
    links.run(FakeNode(), ["ping", "-c", "1", "10.0.0.1 ; rm"])
    assert capsys.readouterr().err.splitlines() == [
        "[sw0] tc qdisc show dev sw0-eth2",
        "[sw0] tc -batch - <<'EOF'", "qdisc del dev sw0-eth2 root", "EOF",
        "[sw0] ping -c 1 '10.0.0.1 ; rm'",
    ]


def test_an_unknown_verbosity_is_a_programming_error():
    with pytest.raises(ValueError, match="verbosity 2"):
        log.set_verbosity(2)
