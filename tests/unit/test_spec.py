"""Experiment specs: loading, sweeps, overrides, the quick profile and validation messages."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from bbrlab.schema import experiment as spec
from bbrlab.errors import SpecError

FIGURE5 = Path(__file__).resolve().parents[2] / "experiments" / "figure5.yaml"
CLAIM = {"id": "a", "text": "t", "metric": "goodput_mbps"}


def base() -> dict:
    return {"link": {"rate": "10Mbit", "rtt": "40ms", "buffer": "175pkt"},
            "flows": [{"cc": "bbr", "duration": "10s"}]}


def with_(**changes) -> dict:
    """base() with dotted-path changes: with_(**{"link.loss": "1%"})."""
    raw = base()
    for path, value in changes.items():
        spec.set_path(raw, path, value)
    return raw


def error(raw: dict, **kwargs) -> str:
    with pytest.raises(SpecError) as info:
        spec.build(raw, **kwargs)
    return str(info.value)


# ---------------------------------------------------------------- figure 5


def test_figure5_loads_as_a_two_point_cc_sweep_repeated():
    exp = spec.load(FIGURE5)
    assert exp.name == "figure5" and exp.title.startswith("Figure 5")
    assert exp.axes == {"cc": ["bbr", "cubic"]}
    assert [p.id for p in exp.points] == [f"cc={cc},rep{r}" for cc in ("bbr", "cubic") for r in (1, 2, 3)]
    assert (exp.repeat, exp.repeat_max, exp.adaptive) == (3, 8, True)
    assert [p.id for p in spec.load(FIGURE5, quick=True).points] == ["cc=bbr,rep1", "cc=cubic,rep1"]
    point = exp.points[0]
    assert (point.link.rate, point.link.rtt) == (10e6, pytest.approx(0.04))
    assert point.link.buffer == spec.Buffer(175, "pkt") and point.link.buffer_packets == 175
    assert point.link.loss == 0 and point.link.forward_share == 0.5 and point.link.burst is None
    assert point.pacing == "internal" and point.flows[0].duration == 30 and point.duration == 30
    assert point.sampling == spec.Sampling(interval=pytest.approx(0.1), ss_interval=0.5, iperf_interval=0.5, pcap=False,
                                           startup=2.0)
    assert exp.plot_kind == "rtt_timeseries" and exp.seed == 1
    assert "175-packet buffer" in exp.description and not exp.description.endswith("\n")


def test_figure5_claims():
    claims = {c.id: c for c in spec.load(FIGURE5).claims}
    assert list(claims) == ["cubic-fills-buffer", "bbr-below-cubic", "link-busy"]
    fills = claims["cubic-fills-buffer"]
    assert (fills.metric, fills.min, fills.relative_to) == ("rtt_p95_ms", 0.8, "full_buffer_rtt_ms")
    assert claims["bbr-below-cubic"].vs == {"cc": "cubic"} and claims["bbr-below-cubic"].max == 0.5
    assert claims["link-busy"].where == {} and claims["link-busy"].min == 0.85


def test_figure5_quick_profile_shortens_the_flows_and_source_records_it():
    exp = spec.load(FIGURE5, quick=True)
    assert [p.flows[0].duration for p in exp.points] == [20, 20]
    assert yaml.safe_load(exp.source) == {k: v for k, v in exp.raw.items() if k != "notes"}  # notes: commentary
    assert exp.raw["flows"][0]["duration"] == "20s"
    assert spec.load(FIGURE5, overrides=["duration=5s"], quick=True).points[0].duration == 5  # --set wins


def test_name_defaults_to_the_file_stem(tmp_path):
    path = tmp_path / "my-exp.yaml"
    path.write_text(yaml.safe_dump(base()))
    exp = spec.load(path)
    assert exp.name == exp.title == "my-exp" and exp.points[0].experiment == "my-exp"


@pytest.mark.parametrize(("text", "match"), [
    (None, "cannot read"),
    ("link: [unclosed\n", "not valid YAML at line"),
    ("- a\n- b\n", "expected a mapping at the top level"),
])
def test_load_raw_errors_name_the_file(tmp_path, text, match):
    path = tmp_path / "bad.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(SpecError, match=match) as info:
        spec.load_raw(path)
    assert str(info.value).startswith(str(path))


# ---------------------------------------------------------------- sweeps


def test_sweep_is_the_cartesian_product_times_repeat():
    raw = with_(**{"link.rate": ["10Mbit", "20Mbit"], "flows.0.cc": ["bbr", "cubic"]})
    raw["repeat"] = 2
    exp = spec.build(raw)
    assert exp.axes == {"rate": ["10Mbit", "20Mbit"], "cc": ["bbr", "cubic"]}
    assert [p.id for p in exp.points] == [
        f"rate={r},cc={c},rep{n}" for r in ("10Mbit", "20Mbit") for c in ("bbr", "cubic") for n in (1, 2)]
    for p in exp.points:
        assert p.link.rate == {"10Mbit": 10e6, "20Mbit": 20e6}[p.params["rate"]]
        assert p.flows[0].cc == p.params["cc"]
    assert exp.raw["link"]["rate"] == ["10Mbit", "20Mbit"]  # the raw keeps the sweep


def test_no_list_means_one_point_with_no_params():
    exp = spec.build(base())
    assert exp.axes == {} and len(exp.points) == 1
    assert exp.points[0].params == {} and exp.points[0].id == "rep1"


def test_axis_labels_stay_unique():
    raw = with_(**{"flows.0.cc": ["bbr", "cubic"], "link.rtt": ["20ms", "40ms"], "flows.0.rtt": ["80ms"]})
    raw["flows"].append({"cc": ["reno", "bbr"], "duration": "5s"})
    exp = spec.build(raw)
    assert list(exp.axes) == ["link.rtt", "flows.0.cc", "flows.0.rtt", "flows.1.cc"]
    assert len(exp.points) == 8
    assert exp.points[0].id == "link.rtt=20ms,flows.0.cc=bbr,flows.0.rtt=80ms,flows.1.cc=reno,rep1"


def test_sweep_on_pacing_and_buffer():
    exp = spec.build(with_(pacing=["fq", "internal"], **{"link.buffer": ["5bdp", "50pkt"]}))
    assert [(p.params["buffer"], p.pacing) for p in exp.points] == [
        ("5bdp", "fq"), ("5bdp", "internal"), ("50pkt", "fq"), ("50pkt", "internal")]


@pytest.mark.parametrize(("path", "start"), [
    ("link.loss", "link.loss: an empty list sweeps nothing"),
    ("sampling.interval", "sampling.interval: expected a time"),  # not sweepable: a list is an error
])
def test_bad_sweeps(path, start):
    assert error(with_(**{path: [] if path == "link.loss" else ["1s", "2s"]})).startswith(start)


def test_point_id_is_filesystem_safe_and_duration_counts_stagger_until_and_size():
    exp = spec.build(with_(**{"link.buffer": ["5 bdp"], "link.loss": ["1%"]}))
    assert exp.points[0].id == "buffer=5_bdp,loss=1%,rep1"
    raw = base()
    raw["flows"] = [{"cc": "bbr", "count": 3, "start": "1s", "stagger": "2s", "duration": "10s"},
                    {"cc": "cubic", "until": "12s"}]
    assert spec.build(raw).points[0].duration == 15  # 1 + 2*2 + 10
    raw["flows"] = [{"cc": "bbr", "size": "1MB"}]
    assert spec.build(raw).points[0].duration == pytest.approx(0.8)  # its bytes at the link's rate (1 MB at 10 Mbit/s)


# ---------------------------------------------------------------- overrides


@pytest.mark.parametrize(("override", "check"), [
    ("rate=20Mbit", lambda p: p.link.rate == 20e6),
    ("link.rate=20Mbit", lambda p: p.link.rate == 20e6),
    ("rtt=80ms", lambda p: p.link.rtt == pytest.approx(0.08) and p.flows[0].rtt is None),
    ("loss=1%", lambda p: p.link.loss == pytest.approx(0.01)),
    ("buffer=5bdp", lambda p: p.link.buffer == spec.Buffer(5, "bdp")),
    ("cc=cubic", lambda p: p.flows[0].cc == "cubic"),
    ("flows.0.count=3", lambda p: p.flows[0].count == 3),
    ("pacing=internal", lambda p: p.pacing == "internal"),
    ("sampling.pcap=true", lambda p: p.sampling.pcap is True),
    ("sysctls.net.core.rmem_max=123", lambda p: p.sysctls["net.core.rmem_max"] == "123"
     and p.sysctls["net.ipv4.tcp_no_metrics_save"] == "1"),
])
def test_override_sets_the_value(override, check):
    assert check(spec.build(base(), overrides=[override]).points[0])


def test_override_with_a_yaml_list_adds_an_axis_without_touching_the_callers_raw():
    raw = base()
    before = copy.deepcopy(raw)
    exp = spec.build(raw, overrides=["loss=[1%, 10%]", "cc=[bbr,cubic]"])
    assert exp.axes == {"loss": ["1%", "10%"], "cc": ["bbr", "cubic"]} and len(exp.points) == 4
    assert raw == before


def test_parse_override():
    assert spec.parse_override(" rate = 20Mbit") == ("rate", "20Mbit")
    assert spec.parse_override("count=3") == ("count", 3)
    assert spec.parse_override("cc=") == ("cc", "")
    assert spec.parse_override("x=a=b") == ("x", "a=b")
    assert spec.parse_override("x=[unclosed") == ("x", "[unclosed")  # not YAML: taken as text


def test_rtt_is_ambiguous_only_when_a_flow_sets_its_own():
    raw = with_(**{"flows.0.rtt": "60ms"})
    assert spec.resolve_key(base(), "rtt") == "link.rtt"
    msg = error(raw, overrides=["rtt=80ms"])
    assert msg == "--set rtt: ambiguous, say one of link.rtt, flows.0.rtt"
    assert spec.build(raw, overrides=["flows.0.rtt=80ms"]).points[0].flows[0].rtt == pytest.approx(0.08)


def test_cc_is_ambiguous_with_two_flow_groups():
    raw = base()
    raw["flows"].append({"cc": "cubic", "duration": "10s"})
    msg = error(raw, overrides=["cc=reno"])
    assert msg.startswith("--set cc: ambiguous") and "flows.0.cc, flows.1.cc" in msg
    assert spec.build(raw, overrides=["flows.1.cc=reno"]).points[0].flows[1].cc == "reno"


@pytest.mark.parametrize(("override", "start"), [
    ("speed=1", "--set speed: unknown key"),
    ("rate", "--set rate: expected key=value"),
    ("link.speed=1Mbit", "link.speed: unknown key"),
    ("flows.3.cc=bbr", "flows.3: no such list entry"),
    ("link.rate.x=1", "link.rate.x: cannot set inside a str"),
    ("rate=fast", "link.rate: cannot read"),
    ("cc=BBR", "flows.0.cc:"),
])
def test_bad_overrides_name_the_key(override, start):
    assert error(base(), overrides=[override]).startswith(start)


def test_quick_profile_errors():
    assert error(with_(quick=["rate"]), quick=True).startswith("quick: expected a mapping")
    assert error(with_(quick={"bogus": 1}), quick=True).startswith("quick.bogus: unknown key")
    assert spec.build(with_(quick={"bogus": 1})).points  # ignored without --quick


# ---------------------------------------------------------------- buffers


@pytest.mark.parametrize(("text", "buffer", "packets"), [
    ("175pkt", spec.Buffer(175, "pkt"), 175),
    ("175 packets", spec.Buffer(175, "pkt"), 175),
    ("5bdp", spec.Buffer(5, "bdp"), 167),  # 10 Mbit/s x 40 ms = 33.3 packets
    ("0.5 BDP", spec.Buffer(0.5, "bdp"), 17),
    ("256KB", spec.Buffer(256_000, "bytes"), 170),
    ("15000B", spec.Buffer(15_000, "bytes"), 10),
])
def test_buffer_units(text, buffer, packets):
    link = spec.build(with_(**{"link.buffer": text})).points[0].link
    assert link.buffer == buffer
    assert link.buffer_packets == packets and isinstance(link.buffer_packets, int)


def test_buffer_packets_scale_with_bdp():
    assert spec.Buffer(1, "bdp").packets(100e6, 0.1) == 833
    assert spec.Buffer(3000, "bytes").packets(1e6, 1) == 2
    assert spec.Buffer(2999, "bytes").packets(1e6, 1) == 1
    assert [spec.Buffer(v, u).label() for v, u in ((175, "pkt"), (2.5, "bdp"), (3000, "bytes"))] == [
        "175 pkt", "2.5 BDP", "3000 B"]
    fat = with_(**{"link.buffer": "0.01bdp", "link.rate": "1Gbit"})  # too small only on a thin link
    assert spec.build(fat).points[0].link.buffer_packets == 33


@pytest.mark.parametrize(("value", "fragment"), [
    ("1pkt", "1 pkt is under 2 packets"),
    ("0.01bdp", "0.01 BDP is under 2 packets"),
    ("2KB", "2000 B is under 2 packets"),
    ("100B", "100 B is under 2 packets"),
    (5000, "link.buffer: 5000 needs a unit (pkt, bdp, bytes like 5000B/64KB, or a time at the rate like 800ms)"),
    ("5000", "5000 needs a unit (pkt, bdp"),
    ("1.5pkt", "positive packet count"),
    ("0pkt", "positive packet count"),
    ("lots", "cannot read buffer 'lots'"),
    ("5 bdps", "cannot read buffer"),
])
def test_bad_buffers(value, fragment):
    msg = error(with_(**{"link.buffer": value}))
    assert msg.startswith("link.buffer:") and fragment in msg


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(("changes", "key"), [
    ({"bogus": 1}, "bogus: unknown key"),
    ({"link.speed": "1Mbit"}, "link.speed: unknown key"),
    ({"link.rate": "10"}, "link.rate: 10 needs a unit: did you mean 10Mbit?"),
    ({"link.rtt": "0ms"}, "link.rtt: must be positive"),
    ({"link.jitter": "21ms"}, "link.jitter: must be at most"),
    ({"link.jitter": "11ms", "link.forward_share": 0.25}, "link.jitter: must be at most"),
    ({"link.forward_share": 1}, "link.forward_share:"),
    ({"link.forward_share": "half"}, "link.forward_share:"),
    ({"link.loss": 1}, "link.loss:"),
    ({"link.loss_direction": "ack"}, "link.loss_direction: 'ack' is not one of data, both"),
    ({"link.burst": "big"}, "link.burst:"),
    ({"link.changes": {"at": "1s"}}, "link.changes: expected a list"),
    ({"link.changes": [{"when": "1s", "rate": "1Mbit"}]}, "link.changes.0.when: unknown key"),
    ({"link.changes": [{"at": "1s", "rate": "1Mbit"}, {"at": "2s", "rate": "1M"}]}, "link.changes.1.rate:"),
    ({"link": "10Mbit"}, "link: expected a mapping"),
    ({"flows": []}, "flows: expected a non-empty list"),
    ({"flows.0.speed": 1}, "flows.0.speed: unknown key"),
    ({"flows.0.cc": "BBR"}, "flows.0.cc: expected a congestion control name"),
    ({"flows.0.until": "20s"}, "flows.0: give exactly one of duration, until, size (got duration, until)"),
    ({"flows.0.size": "1MB"}, "flows.0: give exactly one of duration, until, size (got duration, size)"),
    ({"flows.0.duration": None}, "flows.0: give exactly one of duration, until, size (got none)"),
    ({"flows.0.duration": "0s"}, "flows.0.duration: must be positive"),
    ({"flows.0.count": 0}, "flows.0.count: expected a whole number >= 1"),
    ({"flows.0.count": "2"}, "flows.0.count:"),
    ({"flows.0.start": "soon"}, "flows.0.start:"),
    ({"flows.0.rtt": "0ms"}, "flows.0.rtt: must be positive"),
    ({"pacing": "none"}, "pacing: 'none' is not one of fq, internal"),
    ({"name": "my exp"}, "name: expected letters"),
    ({"plot": {"kind": "pie"}}, "plot.kind: 'pie' is not one of"),
    ({"plot": {"color": "red"}}, "plot.color: unknown key"),
    ({"repeat": 0}, "repeat: expected a whole number >= 1"),
    ({"seed": "abc"}, "seed: expected a whole number"),
    ({"sysctls": {"kernel.pid_max": 1}}, "sysctls.kernel.pid_max: only per-namespace net.*"),
    ({"sysctls": ["net.x"]}, "sysctls: expected a mapping"),
    ({"sampling": {"rate": "1s"}}, "sampling.rate: unknown key"),
    ({"sampling": {"pcap": "yes"}}, "sampling.pcap: expected true or false"),
    ({"sampling": {"interval": "0ms"}}, "sampling.interval: must be positive"),
    ({"sampling": {"iperf_interval": "50ms"}}, "sampling.iperf_interval: iperf3 reports at most every 100ms"),
    ({"claims": {"id": "x"}}, "claims: expected a list"),
    ({"claims": [CLAIM]}, "claims.0: give min or max"),
    ({"claims": [{"text": "t", "metric": "m", "min": 1}]}, "claims.0.id: required text"),
    ({"claims": [dict(CLAIM, min="1")]}, "claims.0.min: expected a number"),
    ({"claims": [dict(CLAIM, max=True)]}, "claims.0.max: expected a number"),
    ({"claims": [dict(CLAIM, max=1, where=["cc"])]}, "claims.0.where: expected a mapping"),
    ({"claims": [dict(CLAIM, max=1, vs="cubic")]}, "claims.0.vs: expected"),
    ({"claims": [dict(CLAIM, max=1), dict(CLAIM, max=1, bound=2)]}, "claims.1.bound: unknown key"),
])
def test_validation_errors_name_the_key(changes, key):
    assert error(with_(**changes)).startswith(key)


def test_errors_in_a_later_flow_group_name_its_index():
    raw = base()
    raw["flows"].append({"cc": "cubic", "count": 2, "start": "1s", "stagger": "4s", "until": "5s"})
    assert error(raw).startswith("flows.1.until: 5s is not after the last flow's start 5s")
    raw["flows"][1]["until"] = "6s"
    assert spec.build(raw).points[0].flows[1].until == 6


@pytest.mark.parametrize("missing", ["link", "flows", "link.rate", "link.rtt", "link.buffer"])
def test_required_keys(missing):
    raw = base()
    *parents, leaf = missing.split(".")
    del (raw[parents[0]] if parents else raw)[leaf]
    assert error(raw) == f"{missing}: required"


@pytest.mark.parametrize(("jitter", "share"), [("20ms", 0.5), ("10ms", 0.25), ("30ms", 0.75)])
def test_jitter_may_reach_the_data_direction_delay(jitter, share):
    link = spec.build(with_(**{"link.jitter": jitter, "link.forward_share": share})).points[0].link
    assert link.jitter == pytest.approx(0.04 * share) and link.forward_share == share


def test_link_options_and_defaults():
    changes = [{"at": "20s", "rate": "5Mbit"}, {"at": "10s", "rate": "20Mbit"}]
    raw = with_(**{"flows.0.duration": "30s", "link.burst": "30KB", "link.changes": changes, "link.loss": "2%",
                   "link.loss_direction": "both", "link.shaper": "htb"})
    link = spec.build(raw).points[0].link
    assert link.burst == 30_000 and link.loss == 0.02 and link.loss_direction == "both" and link.shaper == "htb"
    assert link.changes == (spec.RateChange(10.0, 20e6), spec.RateChange(20.0, 5e6))  # sorted by time
    assert link.bdp_packets == pytest.approx(10e6 * 0.04 / 8 / 1500)
    # lost on the way out or on the way back: 1 - 0.98^2
    assert link.round_trip_loss == pytest.approx(0.0396)
    assert spec.build(with_(**{"link.loss": "2%"})).points[0].link.round_trip_loss == 0.02


def test_shaper_defaults_to_netem_and_a_burst_needs_a_token_shaper():
    assert spec.build(with_()).points[0].link.shaper == spec.DEFAULT_SHAPER == "netem"
    with pytest.raises(SpecError, match="^link.burst: netem's rate has no burst"):
        spec.build(with_(**{"link.burst": "64KB"}))
    with pytest.raises(SpecError, match="^link.shaper: 'fq' is not one of netem, htb, tbf, cake"):
        spec.build(with_(**{"link.shaper": "fq"}))
    with pytest.raises(SpecError, match="^link.shaper: cake is CAKE's own shaper, but link.aqm is fifo"):
        spec.build(with_(**{"link.shaper": "cake"}))
    assert spec.build(with_(**{"link.burst": "64KB", "link.shaper": "tbf"})).points[0].link.burst == 64_000


def test_identity_counts_the_default_shaper():
    """Runs made before link.shaper existed used htb: a spec without the key must not resume them."""
    plain, explicit = with_(), with_(**{"link.shaper": "netem"})
    assert spec.identity(plain, "x") == spec.identity(explicit, "x")
    assert spec.identity(plain, "x") != spec.identity(with_(**{"link.shaper": "htb"}), "x")
    # an AQM's default shaper is counted as the one it runs with (htb; CAKE its own)
    fq = with_(**{"link.aqm": "fq_codel"})
    assert spec.identity(fq, "x") == spec.identity(with_(**{"link.aqm": "fq_codel", "link.shaper": "htb"}), "x")
    assert spec.identity(fq, "x") != spec.identity(with_(**{"link.aqm": "fq_codel", "link.shaper": "tbf"}), "x")


def test_sysctls_merge_with_defaults_and_normalise_whitespace():
    sysctls = spec.build(with_(sysctls={"net.ipv4.tcp_rmem": "4096  87380\t6291456",
                                        "net.core.default_qdisc": "fq"})).points[0].sysctls
    assert sysctls["net.ipv4.tcp_rmem"] == "4096 87380 6291456"
    assert sysctls["net.core.default_qdisc"] == "fq"
    assert sysctls["net.ipv4.tcp_wmem"] == spec.DEFAULT_SYSCTLS["net.ipv4.tcp_wmem"]
    assert spec.DEFAULT_SYSCTLS["net.ipv4.tcp_rmem"] == "4096 131072 134217728"  # not mutated


def test_inline_yaml_spec_with_everything():
    exp = spec.build(yaml.safe_load("""
        name: step
        link: {rate: 10Mbit, rtt: 40ms, buffer: 2bdp, changes: [{at: 10s, rate: 20Mbit}]}
        pacing: internal
        flows:
          - {cc: bbr, count: 2, stagger: 5s, until: 30s}
        sampling: {interval: 50ms, pcap: true}
        plot: {kind: rate_step, title: Steps}
        repeat: 3
        seed: 7
        reference: {source: BBR}
    """))
    assert (exp.name, exp.plot_kind, exp.plot_title, exp.repeat, exp.seed) == ("step", "rate_step", "Steps", 3, 7)
    assert [p.repetition for p in exp.points] == [1, 2, 3] and exp.reference == {"source": "BBR"}
    point = exp.points[0]
    assert point.pacing == "internal" and point.sampling.pcap and point.sampling.interval == pytest.approx(0.05)
    assert point.flows[0] == spec.FlowGroup("bbr", count=2, stagger=5.0, until=30.0)
    assert point.duration == 30 and exp.claims == ()


def test_full_buffer_drains_in_buffer_frames_over_the_rate():
    link = spec.load(FIGURE5).points[0].link  # 175 packets at 10 Mbit/s
    assert link.full_buffer_seconds() == pytest.approx(175 * 1514 * 8 / 10e6)
    assert link.full_buffer_seconds(5e6) == pytest.approx(2 * link.full_buffer_seconds())


def test_notes_are_commentary_outside_the_archived_source_so_editing_them_keeps_resume():
    plain = spec.build(base())
    noted = spec.build({**base(), "notes": "Linux 6.1's BBR\n  keeps a larger queue."})
    assert noted.notes == ("Linux 6.1's BBR keeps a larger queue.",)
    assert noted.source == plain.source and len(noted.points) == len(plain.points)
    assert spec.build({**base(), "notes": ["a", "b"]}).notes == ("a", "b")


@pytest.mark.parametrize("notes", [3, ["a", ""], {"a": 1}])
def test_bad_notes(notes):
    assert error({**base(), "notes": notes}) == "notes: expected a text or a list of texts"


def test_identity_is_what_the_points_measure_blind_to_how_they_are_judged_or_described():
    plain = spec.build(base())
    judged = {**base(), "title": "T", "description": "D", "plot": {"kind": "loss_goodput", "title": "P"},
              "reference": {"source": "R"}, "notes": "N", "quick": {"duration": "2s"},
              "claims": [{"id": "c", "text": "t", "metric": "goodput_mbps", "min": 1}]}
    reordered = {"flows": base()["flows"], "link": dict(reversed(list(base()["link"].items())))}
    assert spec.build(judged).identity == spec.build(reordered).identity == plain.identity
    measured = [with_(**{"link.rate": "20Mbit"}), with_(**{"flows.0.cc": "cubic"}),
                with_(**{"flows.0.duration": "11s"}), {**base(), "seed": 2}, {**base(), "repeat": 2},
                {**base(), "pacing": "internal"}, {**base(), "sampling": {"interval": "1s"}},
                {**base(), "sysctls": {"net.ipv4.tcp_ecn": 1}}, {**base(), "name": "other"}]
    assert len({spec.build(raw).identity for raw in measured} | {plain.identity}) == len(measured) + 1
    assert spec.build(judged, quick=True).identity != plain.identity  # the profile changed the flows


# ---------------------------------------------------------------- repeat: auto


@pytest.mark.parametrize(("repeat", "planned", "most"), [
    (None, 1, 1), (2, 2, 2), ("auto", 3, 8), ({"min": 2, "max": 5}, 2, 5), ({"min": 4, "max": 4}, 4, 4),
])
def test_repeat_is_a_number_auto_or_a_range(repeat, planned, most):
    raw = with_(**{"flows.0.cc": ["bbr", "cubic"]})
    if repeat is not None:
        raw["repeat"] = repeat
    exp = spec.build(raw)
    assert (exp.repeat, exp.repeat_max, exp.adaptive) == (planned, most, most > planned)
    assert [p.id for p in exp.points] == [f"cc={c},rep{n}" for c in ("bbr", "cubic") for n in range(1, planned + 1)]
    assert sorted(p.id for p in exp.every_point) == sorted(
        f"cc={c},rep{n}" for c in ("bbr", "cubic") for n in range(1, most + 1))
    assert {p.id: p for p in exp.every_point}[f"cc=cubic,rep{most}"].flows[0].cc == "cubic"


def test_repeat_auto_can_be_set_from_the_command_line_and_is_part_of_the_identity():
    exp = spec.build(base(), ["repeat=auto"])
    assert (exp.repeat, exp.repeat_max) == spec.AUTO_REPEAT
    assert exp.identity != spec.build(base()).identity != spec.build(base(), ["repeat=3"]).identity


@pytest.mark.parametrize(("repeat", "message"), [
    ("often", "repeat: expected a whole number >= 1, auto, or {min: N, max: M}; got 'often'"),
    (True, "repeat: expected a whole number >= 1"),
    ({"min": 1, "max": 5}, "repeat.min: expected a whole number >= 2, got 1"),
    ({"min": 4, "max": 3}, "repeat.max: expected a whole number >= 4, got 3"),
    ({"min": 3, "max": "8"}, "repeat.max: expected a whole number >= 3, got '8'"),
    ({"min": 3}, "repeat.max: required"),
    ({"max": 3}, "repeat.min: required"),
    ({"min": 3, "max": 8, "step": 1}, "repeat.step: unknown key"),
])
def test_bad_repeat_names_the_key(repeat, message):
    assert error({**base(), "repeat": repeat}).startswith(message)


def test_where_bounds_read_the_delay_variation_in_its_unit_and_refuse_a_word_axis():
    raw = with_(**{"link.delay_variation": ["0ms", "2ms", "4ms"], "link.shaper": ["netem", "htb"]})
    raw["claims"] = [{"id": "a", "text": "t", "metric": "goodput_mbps", "where": {"delay_variation": {"min": "2ms"}},
                      "min": 1}]
    from bbrlab.schema import claim_points

    exp = spec.build(raw)  # 2ms and 4ms are selected: read as durations, not compared as text
    assert {p.params["delay_variation"] for (p,) in claim_points.selected(exp.claims[0], exp.points)} == {"2ms", "4ms"}
    raw["claims"][0]["where"] = {"shaper": {"min": 1}}
    exp = spec.build(raw)
    with pytest.raises(SpecError, match="where.shaper: min and max compare numbers, and shaper takes values like "
                                        "'netem': list the values instead"):
        claim_points.check(exp.claims, exp.points)


def test_a_claim_selects_on_pacing_and_shaper_fixed_by_the_file_or_set():
    """pacing and the shaper, fixed rather than swept (`--set pacing=fq`), are still the
    points' facts: the listing selects what the verdict will judge."""
    from bbrlab.schema import claim_points

    raw = with_(**{"pacing": ["fq", "internal"], "link.shaper": ["netem", "htb"]})
    raw["claims"] = [{"id": "a", "text": "t", "metric": "goodput_mbps", "where": {"pacing": "fq", "shaper": "htb"},
                      "min": 1}]
    exp = spec.build(raw, overrides=["pacing=fq", "shaper=htb"])
    assert "pacing" not in exp.points[0].params and "shaper" not in exp.points[0].params
    assert len(claim_points.selected(exp.claims[0], exp.points)) == len({p.id for p in exp.points}) > 0
    exp = spec.build(raw, overrides=["pacing=internal", "shaper=htb"])
    assert claim_points.selected(exp.claims[0], exp.points) == []


@pytest.mark.parametrize("path", sorted(p for p in FIGURE5.parent.glob("*.yaml") if "quick" in spec.load_raw(p)),
                         ids=lambda p: p.stem)
def test_a_quick_runs_archived_spec_reads_back_with_its_claims(path):
    """A run keeps its file as the quick profile left it (spec.yaml): read back to judge or
    draw it, the axes the profile fixed still name its claims' points (figure8-versions'
    claims select pacing, which its quick profile fixes at fq)."""
    ran = spec.load(path, quick=True)
    again = spec.build(yaml.safe_load(ran.source), default_name=ran.name)
    assert again.identity == ran.identity and again.source == ran.source
    assert [c.id for c in again.claims] == [c.id for c in ran.claims]
