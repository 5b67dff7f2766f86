"""The repository says how it may be used and how to cite it."""

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_license_is_bsd_3_clause_like_mininet_s():
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License") and "the bbrlab authors" in text


def test_citation_cites_the_bbr_paper_and_the_replications():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "BSD-3-Clause"
    paper = cff["preferred-citation"]
    assert paper["title"] == "BBR: Congestion-Based Congestion Control"
    assert (paper["journal"], paper["volume"], paper["issue"], paper["year"]) == ("Communications of the ACM", 60, 2, 2017)
    assert paper["authors"][0]["family-names"] == "Cardwell"
    assert [r["title"].split(":")[0] for r in cff["references"]] == ["ReBBR", "Mininet replication of the BBR paper's figures"]
