"""Inputs that used to run a different experiment than the one written, each now refused in
one line with exit status 2, or warned where the input is legitimate: ECN where nothing
marks, a top-level cc over groups of different tools, `<<:` twice, another tool under a
file's claims; and --only's booleans, spelled as YAML spells them."""

import pytest

from test_refusals import LINK, dry_run, refused, write

from bbrlab import cli


def aqm_file(tmp_path, aqm: str, block: dict | None = None) -> str:
    link = {**LINK, "aqm": aqm, **({aqm: block} if block is not None else {})}
    return write(tmp_path, {"name": "mine", "link": link, "flows": [{"cc": "cubic", "duration": "10s", "ecn": True}]})


@pytest.mark.parametrize("aqm", ["codel", "pie", "fq_pie", "red"])
def test_ecn_under_an_aqm_that_drops_by_default_is_refused(tmp_path, capsys, aqm):
    assert refused(capsys, "run", aqm_file(tmp_path, aqm), "--dry-run") == (
        f"flows.0.ecn: {aqm} drops instead of marking unless told (its ecn is false by default): give "
        f"link.{aqm}.ecn: true, or link.{aqm}.ecn: false to negotiate ECN without marks")
    assert "ecn" in dry_run(capsys, aqm_file(tmp_path, aqm, {"ecn": True}))  # marks: no warning
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("aqm, block", [("codel", {"ecn": False}), ("fq_codel", {"ecn": False}), ("fifo", None)])
def test_ecn_negotiated_where_the_file_says_nothing_marks_is_a_warning(tmp_path, capsys, aqm, block):
    code = cli.main(["run", aqm_file(tmp_path, aqm, block), "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 0 and "net.ipv4.tcp_ecn=1" in out, err
    assert f"warning: ecn: the flows ask for ECN, but {aqm} drops instead of marking" in err


def test_a_top_level_cc_over_picoquic_and_tcp_groups_is_refused(tmp_path, capsys):
    flows = [{"tool": "picoquic", "size": "2MB"}, {"size": "2MB"}]
    mine = write(tmp_path, {"name": "mine", "link": LINK, "cc": ["bbr", "cubic"], "flows": flows})
    assert refused(capsys, "run", mine, "--dry-run") == (
        "cc: the top-level cc is taken by flows.0 (picoquic) and flows.1 (iperf3): each tool has its own bbr "
        "(picoquic's bbr is BBRv3, Linux's is v1), so the points' cc label would name two; give each group its own cc")
    flows[1]["cc"] = "cubic"  # one tool takes it: what a top-level cc is for
    assert "2 point(s)" in dry_run(capsys, write(tmp_path, {"name": "mine", "link": LINK, "cc": ["bbr", "cubic"],
                                                            "flows": flows}))


def test_two_merge_keys_in_one_mapping_are_refused(tmp_path, capsys):
    text = ("name: mine\nbase: &base {rate: 10Mbit, rtt: 40ms}\nbuf: &buf {buffer: 2bdp, rtt: 80ms}\n"
            "link:\n  <<: *base\n  <<: *buf\nflows:\n  - {cc: bbr, duration: 10s}\n")
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    assert refused(capsys, "run", str(path), "--dry-run") == (
        f"{path}: link: `<<:` given twice, at lines 5 and 6: give one `<<: [*first, *second]` (where both have "
        "a key, the first's is kept)")


def test_another_tool_under_a_files_claims_is_refused(capsys):
    assert refused(capsys, "run", "quic-jitter", "--quick", "--dry-run", "--set", "flows.0.tool=iperf3").startswith(
        "--set flows.0.tool=iperf3: quic-jitter's claims are about picoquic's flows")
    assert "2 point(s)" in dry_run(capsys, "quic-jitter", "--quick", "--set", "flows.0.tool=picoquic")


@pytest.mark.parametrize("spelled", ["true", "True", "TRUE"])
def test_only_takes_booleans_as_yaml_spells_them(tmp_path, capsys, spelled):
    link = {**LINK, "aqm": "fq_codel"}
    mine = write(tmp_path, {"name": "mine", "link": link, "flows": [{"cc": "cubic", "duration": "10s", "ecn": [False, True]}]})
    out = dry_run(capsys, mine, "--only", f"ecn={spelled}")
    assert "1 point(s)" in out and "net.ipv4.tcp_ecn=1" in out, out


@pytest.mark.parametrize("word", ["yes", "on", "no", "off"])
def test_yaml_1_1s_other_booleans_stay_words(tmp_path, capsys, word):
    """PyYAML reads yes/no/on/off as booleans (YAML 1.1); the format takes true and false only."""
    text = ("name: mine\nlink: {rate: 10Mbit, rtt: 40ms, buffer: 2bdp, aqm: fq_codel}\n"
            f"flows: [{{cc: bbr, duration: 10s, ecn: {word}}}]\n")
    (tmp_path / "mine.yaml").write_text(text)
    expected = f"flows.0.ecn: expected true or false, got '{word}'"
    assert refused(capsys, "run", str(tmp_path / "mine.yaml"), "--dry-run") == expected
    assert refused(capsys, "run", "figure5-aqm", "--quick", "--dry-run", "--set", f"flows.0.ecn={word}") == expected


@pytest.mark.parametrize("setting, said", [
    ("rate=10Tbit", "link.rate: 10Tbit needs a rate unit: write bit, kbit, Mbit, Gbit (Tbit is not one)"),
    ("duration=100000s", "flows.0.duration: flow 1 would run 100000 s, but iperf3 runs at most 86400 s (a day)"),
    ("buffer=5000000000pkt", "link.buffer: 5000000000 packets: tc's queue limits are 32-bit packet counts "
                             "(at most 4294967295)"),
])
def test_what_a_tool_cannot_honour_is_refused(capsys, setting, said):
    """A unit the format lacks gets no guess at its magnitude (10Tbit is not 10Mbit); iperf3's
    -t stops at a day; tc's queue limits are 32-bit."""
    assert refused(capsys, "run", "figure5", "--quick", "--dry-run", "--set", setting) == said
