"""irtt's probe: its command lines, and its JSON read into one-way delays (a real client's
output over loopback, tests/fixtures/irtt-client.json, trimmed to 6 round trips)."""

from pathlib import Path

import pytest

from bbrlab.analysis import irtt_output
from bbrlab.errors import ParseError
from bbrlab.schema import experiment as spec
from bbrlab.traffic import irtt_probe as probe

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "irtt-client.json"


def test_the_client_sends_sparse_small_packets_until_stopped():
    argv = probe.client_argv("10.0.4.2", 0.1, "/tmp/x.json")
    assert argv[:2] == ["irtt", "client"] and argv[-1] == "10.0.4.2:2112"
    assert argv[argv.index("-i") + 1] == "100000us" and argv[argv.index("-o") + 1] == "/tmp/x.json"
    assert argv[argv.index("-d") + 1] == "24h"  # the samplers end it with SIGINT, on which it writes
    assert probe.server_argv("10.0.4.2") == ["irtt", "server", "-b", "10.0.4.2:2112"]


def test_a_real_clients_json_gives_each_directions_delay():
    trips = irtt_output.parse(FIXTURE.read_text(), FIXTURE.name)
    assert len(trips) == 6 and all(t.lost == "false" for t in trips)
    first = trips[0]
    assert first.data_ms == pytest.approx(0.119713) and first.return_ms == pytest.approx(0.059913)
    assert trips[1].t - first.t == pytest.approx(0.1, abs=0.01)  # sent every 100 ms
    assert irtt_output.parse("", "empty") == []
    with pytest.raises(ParseError, match="x.json: not irtt's JSON output"):
        irtt_output.parse('{"round_trips": [{"lost": "false"}]}', "x.json")


def test_the_summary_leaves_out_startup_and_counts_losses_while_the_flows_ran():
    t0 = 1000.0
    trips = [irtt_output.RoundTrip(t0 + i * 0.5, 20.0 + i, 20.0, "false") for i in range(20)]  # 0 .. 9.5 s
    trips[10] = irtt_output.RoundTrip(t0 + 5.0, None, None, "true_up")
    trips.insert(0, irtt_output.RoundTrip(t0 - 1.0, 20.0, 20.0, "true"))  # before the flows: not counted
    series, out = {}, {}
    irtt_output.summarize({"g1": trips}, t0, startup=2.0, end=8.0, series=series, out=out)
    # after startup: 24 .. 36 ms from 2 to 8 s, the lost one (at 5 s) left out: median 30
    assert out["owd_data_p50_ms"] == pytest.approx(30.0, abs=0.5)
    assert out["owd_return_p50_ms"] == 20.0
    assert out["owd_loss"] == pytest.approx(1 / 17, abs=1e-4)  # 17 sent from 0 to 8 s, one lost
    assert series["owd"]["g1"]["data"][0] == [-1.0, 20.0] and len(series["owd"]["g1"]["return"]) == 20


def test_sampling_irtt_is_a_flag():
    exp = spec.load(Path(__file__).resolve().parents[2] / "experiments" / "figure5-aqm.yaml",
                    ["sampling.irtt=true"], quick=True)
    assert exp.points[0].sampling.irtt is True
    with pytest.raises(spec.SpecError, match="sampling.irtt: expected true or false"):
        spec.load(Path(__file__).resolve().parents[2] / "experiments" / "figure5-aqm.yaml", ["sampling.irtt=1"])
