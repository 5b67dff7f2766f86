"""What `bbrlab export --format flent` writes, opened by Debian's flent (2.1.1): it draws
the plots of its tcp_nup test from the file and prints the statistics of our series."""

import re
import shutil
import subprocess

import pytest

from bbrlab import cli

FLENT = shutil.which("flent")
pytestmark = pytest.mark.skipif(FLENT is None, reason="the flent command is absent (apt-get install flent; "
                                "vm/vm.sh deps --test-tools installs it)")
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def flent_file(results, tmp_path, capsys):
    (run,) = (results / "figure5").iterdir()
    assert cli.main(["export", str(run), "--format", "flent", "--out", str(tmp_path / "flent")]) == 0
    (path,) = capsys.readouterr().out.split()
    return path


def flent(*args, cwd):
    return subprocess.run([FLENT, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize("plot", ["totals", "ping_cdf", "tcp_cwnd"])
def test_flent_draws_its_tcp_nup_plots_from_the_file(flent_file, tmp_path, plot):
    png = tmp_path / f"{plot}.png"
    proc = flent("-i", flent_file, "-p", plot, "-o", str(png), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert png.read_bytes()[:8] == PNG and png.stat().st_size > 10_000


def test_flent_prints_the_statistics_of_our_series(flent_file, tmp_path):
    proc = flent("-i", flent_file, "-f", "stats", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    blocks = dict(re.findall(r"^ (\S.*):\n((?:  .*\n?)*)", proc.stdout, re.MULTILINE))  # " NAME:" and its lines
    for name in ("TCP upload::1", "TCP upload sum", "Ping (ms) ICMP", "qdisc_stats_r1::backlog_pkts"):
        assert name in blocks and "Mean:" in blocks[name] and "No data" not in blocks[name], proc.stdout
    assert " ms" in blocks["Ping (ms) ICMP"] and "Mbits/s" in blocks["TCP upload::1"]
