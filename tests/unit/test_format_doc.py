"""docs/experiment-format.md is written from the code's tables, and those tables are true:
every key the spec accepts is listed with the default it really gets."""

import re
from pathlib import Path

import pytest

from bbrlab import cli
from bbrlab.output.docs import format_doc
from bbrlab.output.figures import plot_kinds
from bbrlab.schema import aqm_format, experiment as spec, workload

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "experiment-format.md"
BASE = {"link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "100pkt"}, "flows": [{"cc": "bbr", "duration": "10s"}]}


def test_the_committed_reference_is_what_format_doc_writes(capsys):
    assert cli.main(["format-doc"]) == 0
    out, _ = capsys.readouterr()
    assert out == format_doc.render()
    assert DOC.read_text() == out, "docs/experiment-format.md is stale: bbrlab format-doc > docs/experiment-format.md"


def test_every_accepted_key_is_listed_and_nothing_else():
    accepted = {k for k in spec.TOP_KEYS if k not in ("link", "sampling", "plot")}
    blocks = aqm_format.LINK_KEYS - {"aqm"}  # one block of parameters per AQM, listed by parameter
    accepted |= {f"link.{k}" for k in spec.LINK_KEYS - blocks} | {f"flows.*.{k}" for k in spec.FLOW_KEYS}
    accepted |= {f"link.{kind}.{name}" for kind in blocks for name in aqm_format.PARAMS[kind]}
    accepted |= {f"sampling.{k}" for k in spec.SAMPLING_KEYS} | {f"plot.{k}" for k in spec.PLOT_KEYS}
    accepted |= {f"claims.*.{k}" for k in spec.CLAIM_KEYS}
    accepted |= {f"flows.*.workload.{k}" for k in workload.KEYS}
    assert set(format_doc.KEYS) == accepted


def test_every_sweepable_key_is_marked():
    assert {k for k in format_doc.KEYS if format_doc._sweeps(k)} == set(spec.SWEEPABLE)


CONCRETE = [k for k, (_, default, _) in format_doc.KEYS.items()
            if k.split(".")[0] in ("link", "flows", "sampling", "pacing", "repeat", "seed")
            and re.fullmatch(r"[a-z0-9.%]+", default) and default not in (format_doc.REQUIRED, "none", "link.rtt", "link.slot")]


def test_the_concrete_defaults_are_checked():
    assert {"link.loss", "link.jitter", "link.burst", "link.shaper", "pacing", "flows.*.count", "sampling.startup",
            "repeat", "seed"} <= set(CONCRETE)


@pytest.mark.parametrize("key", CONCRETE)
def test_the_listed_default_is_the_one_applied(key):
    default = format_doc.KEYS[key][1]
    base = dict(BASE, link=dict(BASE["link"], shaper="htb")) if key == "link.burst" else BASE
    if key.startswith("link.slot_"):  # the slot's companions mean something only with a slot
        base = dict(BASE, link=dict(BASE["link"], slot="2ms"))
    if key.count(".") == 2 and key.split(".")[1] in aqm_format.PARAMS:  # an AQM's parameter, with that AQM
        base = dict(BASE, link=dict(BASE["link"], aqm=key.split(".")[1]))
    explicit = spec.build(base, [f"{key.replace('*', '0')}={default}"])
    implicit = spec.build(base)
    assert (explicit.points, explicit.repeat, explicit.seed) == (implicit.points, implicit.repeat, implicit.seed)


def test_plot_kinds_and_verdict_words_are_the_code_s():
    assert tuple(format_doc.PLOT_KINDS) == spec.PLOT_KINDS == tuple(plot_kinds.PLOTS)
    source = (REPO / "mininet" / "bbrlab" / "verdicts" / "claims.py").read_text()
    assert set(re.findall(r'overall = "([a-z ]+)"', source)) == set(format_doc.VERDICTS)


def test_every_claimable_metric_is_in_the_reference():
    text = DOC.read_text()
    assert all(f"`{name}`" in text for name in {**format_doc.ALL_METRICS, **format_doc.CLASS_METRICS})
