"""bbrlab export --format flent: one gzipped JSON data file per point, with the series under
the names flent's tcp_nup test gives them, aligned on one grid, and the run in metadata."""

import gzip
import json

import pytest

from bbrlab import cli
from bbrlab.errors import BbrlabError
from bbrlab.output.files import flent
from bbrlab.store.results import write_json

TOP_KEYS = {"version", "x_values", "results", "raw_values", "metadata"}


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def test_a_point_becomes_a_flent_tcp_nup_file(capsys, tmp_path, step_run):
    run = step_run(tmp_path / "results")
    out = tmp_path / "flent"
    assert cli.main(["export", str(run.path), "--format", "flent", "--out", str(out)]) == 0
    (path,) = [out / line for line in capsys.readouterr().out.split()]
    assert path.name == f"step-{run.path.name}-cc_bbr_rep1.flent.gz" and path.is_file()
    data = load(path)
    assert set(data) == TOP_KEYS and data["version"] == 4

    x = data["x_values"]
    assert x[0] == 0 and all(b > a for a, b in zip(x, x[1:]))
    assert all(len(values) == len(x) for values in data["results"].values())
    assert {"TCP upload::1", "TCP upload sum", "TCP upload avg", "Ping (ms) ICMP",
            "qdisc_stats_r1::backlog_pkts", "qdisc_stats_r1::delay", "cpu_stats_localhost::load"} <= set(data["results"])
    assert set(data["raw_values"]) == {"TCP upload::1", "Ping (ms) ICMP", "qdisc_stats_r1", "cpu_stats_localhost"}

    meta = data["metadata"]
    assert meta["NAME"] == "tcp_nup" and meta["TITLE"] == "step cc=bbr,rep1"
    assert meta["STEP_SIZE"] == pytest.approx(0.1) and x[1] == pytest.approx(0.1)
    assert meta["TEST_PARAMETERS"] == {"upload_streams": "1", "cc_algos": "bbr", "qdisc_stats_hosts": "r1",
                                       "qdisc_stats_interfaces": "r1-eth0", "cpu_stats_hosts": "localhost"}
    assert meta["HOSTS"] == ["10.0.3.2"] and meta["LOCAL_HOST"] == "snd1"
    assert meta["SERIES_META"]["TCP upload::1"]["CONG_CONTROL"] == "bbr"
    assert meta["SERIES_META"]["TCP upload::1"]["UNITS"] == "Mbits/s"
    assert meta["BBRLAB"]["point"] == "cc=bbr,rep1" and meta["BBRLAB"]["link"]["rate"] == 10e6
    assert meta["T0"].endswith("Z") and meta["TIME"] == meta["T0"]

    # time: x is seconds from the first sample; bbrlab's time zero is DELAY seconds later
    series = run.series("cc=bbr,rep1")
    assert meta["DELAY"] == pytest.approx(-min(t for t, _ in series["queue"]), abs=1e-3)
    raw_ping = data["raw_values"]["Ping (ms) ICMP"]
    assert [e["val"] for e in raw_ping] == [v for _, v in series["rtt"]["g1"]]
    assert raw_ping[0]["t"] == pytest.approx(series["t0"] + series["rtt"]["g1"][0][0])

    # the flow's raw values: its goodput samples and its ss samples under flent's ss names
    flow = data["raw_values"]["TCP upload::1"]
    assert [e["val"] for e in flow if "val" in e] == [v for _, v in series["flows"]["f1"]["throughput"]]
    assert [e["tcp_cwnd"] for e in flow if "tcp_cwnd" in e] == [v for _, v in series["flows"]["f1"]["cwnd"]]
    assert {"tcp_rtt", "tcp_pacing_rate", "tcp_delivery_rate", "tcp_bbr_bw"} <= set().union(*flow)

    # on the grid: null before the flow's first sample, its samples where they fall
    tput = data["results"]["TCP upload::1"]
    assert tput[0] is None and data["results"]["TCP upload sum"] == tput
    first_t, first_v = series["flows"]["f1"]["throughput"][0]
    i = round((first_t + meta["DELAY"]) / meta["STEP_SIZE"])
    assert tput[i - 2] is None and tput[i + 1] is not None and 0.5 * first_v < tput[i + 1] < 2 * first_v


def test_flows_groups_and_ccs_map_onto_streams_and_extra_pings(tmp_path, step_run):
    run = step_run(tmp_path / "results")
    folder = run.points_dir / "cc=bbr,rep1"
    series = json.loads((folder / "series.json").read_text())
    f2 = dict(series["flows"]["f1"], cc="cubic", group=1,
              throughput=[[t, v / 2] for t, v in series["flows"]["f1"]["throughput"][5:]])
    series["flows"]["f2"] = f2
    series["rtt"]["g2"] = [[t, v + 10] for t, v in series["rtt"]["g1"]]
    write_json(folder / "series.json", series)

    (path,) = flent.export([run], tmp_path / "flent")
    data = load(path)
    meta, results = data["metadata"], data["results"]
    assert meta["TEST_PARAMETERS"]["upload_streams"] == "2" and meta["TEST_PARAMETERS"]["cc_algos"] == "bbr,cubic"
    assert meta["TEST_PARAMETERS"]["ping_hosts"] == "g2"
    assert meta["SERIES_META"]["TCP upload::2"]["CONG_CONTROL"] == "cubic"
    assert {"TCP upload::2", "Ping (ms) ICMP g2 (extra)"} <= set(results)
    assert all(len(v) == len(data["x_values"]) for v in results.values())
    for k, (a, b) in enumerate(zip(results["TCP upload::1"], results["TCP upload::2"])):
        total = results["TCP upload sum"][k]
        if a is None and b is None:
            assert total is None and results["TCP upload avg"][k] is None
        else:
            present = [v for v in (a, b) if v is not None]
            assert total == pytest.approx(sum(present))
            assert results["TCP upload avg"][k] == pytest.approx(sum(present) / len(present))


def test_a_point_without_series_is_refused_by_name(tmp_path, step_run):
    run = step_run(tmp_path / "results")
    (run.points_dir / "cc=bbr,rep1" / "series.json").unlink()
    with pytest.raises(BbrlabError, match="series.json.*a flent file is made of the point's time series"):
        flent.export([run], tmp_path / "flent")


def test_grid_interpolates_between_samples_and_leaves_holes_empty():
    points = [(0.0, 0.0), (1.0, 10.0), (2.0, 20.0), (10.0, 0.0)]  # sampled every second, then a hole
    assert flent._on_grid(points, [-0.5, 0.0, 0.5, 1.5, 2.0, 5.0, 10.0, 10.5], 0.5) == [
        None, 0.0, 5.0, 15.0, 20.0, None, 0.0, None]


def test_without_ping_samples_the_first_flow_sets_the_grid(capsys, tmp_path, step_run):
    run = step_run(tmp_path / "results")
    series = run.series("cc=bbr,rep1")
    series["rtt"] = {name: [] for name in series["rtt"]}  # no probe sample: the flow's 1 s iperf3 reports
    write_json(run.points_dir / "cc=bbr,rep1" / "series.json", series)
    out = tmp_path / "flent"
    assert cli.main(["export", str(run.path), "--format", "flent", "--out", str(out)]) == 0
    (path,) = [out / line for line in capsys.readouterr().out.split()]
    assert load(path)["metadata"]["STEP_SIZE"] == pytest.approx(1.0)
