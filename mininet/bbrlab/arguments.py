"""bbrlab's command line as argparse reads it: the commands, their options and their help
(cli.py runs them)."""

from __future__ import annotations

import argparse
from pathlib import Path

from . import log
from .schema import experiment as spec
from .schema import traces
from .schema.aqm_format import AQMS

SHARD_HELP = ("run only shard K of N: a part of the grid balanced by expected time, the same on "
              "every host; `bbrlab merge` combines the shards' runs")
NO_FIGURE_HELP = ("judge the run and write its verdict, but draw no figure (nor those of a calibration it "
                  "makes): drawing takes half a minute in a slow VM; `bbrlab plot RUN` draws it later, "
                  "e.g. on the host after `vm/vm.sh pull`")


def _most_flows(text: str) -> int:
    """--headroom's N: 0 (none), or the most flows probed, at least 2."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0 or n == 1:
        raise argparse.ArgumentTypeError(f"{text!r}: the most flows to probe, 2 or more (0: none)")
    return n


def parser(results_default: Path) -> argparse.ArgumentParser:
    """bbrlab's arguments; each command names its handler in cli.py (`handler`)."""
    p = argparse.ArgumentParser(prog="bbrlab", description="Reproducible TCP congestion control experiments "
                                "on Mininet (BBR paper figures and follow-ups).")
    p.add_argument("--results", default=str(results_default), help="results root (default: %(default)s)")
    # --results is also taken after the subcommand (bbrlab plot --results DIR); given
    # there, it wins; not given, the one before the subcommand (or the default) stands
    results = argparse.ArgumentParser(add_help=False)
    results.add_argument("--results", default=argparse.SUPPRESS, help="results root (default: results/)")
    # -q and -v, before or after the command, the same way
    for q in (p, results):
        talk = q.add_mutually_exclusive_group()
        default = {} if q is p else {"default": argparse.SUPPRESS}
        talk.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=log.QUIET, **default,
                          help="only warnings and errors on stderr (no progress)")
        talk.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=log.VERBOSE,
                          **default, help="also every command the testbed runs in its hosts (tc, ip, tools)")
    p.set_defaults(verbosity=log.NORMAL)
    sub = p.add_subparsers(dest="command", required=True)

    def command(name: str, **kwargs) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[results], **kwargs)

    _running(command)
    _judging(command)
    _stored(command, results)
    _project(command, results)
    return p


def _running(command) -> None:
    """The commands that run experiments: list, run, suite, merge, calibrate, shell."""
    listing = command("list", help="list the experiments, their sizes and wall time (a range for repeat: auto)")
    listing.add_argument("--quick", action="store_true", help="each experiment's short profile")
    listing.set_defaults(handler="cmd_list")
    run = command("run", help="run an experiment (all its sweep points)")
    run.add_argument("experiment", help="name in experiments/ or path to a YAML file")
    run.add_argument("--set", action="append", metavar="KEY=VALUE",
                     help="override a parameter, e.g. rate=20Mbit, cc=bbr, loss='[1%%,10%%]' (repeatable)")
    run.add_argument("--only", action="append", metavar="AXIS=VALUE",
                     help="run only the points with this sweep value, e.g. cc=bbr (repeatable: values of one "
                     "axis add up, axes narrow); --dry-run shows just those; the run stays resumable "
                     "for the other points")
    run.add_argument("--quick", action="store_true", help="the experiment's short profile (CI, first tries)")
    run.add_argument("--dry-run", action="store_true", help="print topology, tc setup and flow schedule; run nothing")
    run.add_argument("--strict", action="store_true", help="exit 3 unless every evaluated claim holds")
    run.add_argument("--fresh", action="store_true", help="start a new run instead of resuming an unfinished one")
    run.add_argument("--no-shuffle", action="store_true", help="run points in spec order")
    run.add_argument("--no-figure", action="store_true", help=NO_FIGURE_HELP)
    run.add_argument("--shard", metavar="K/N", help=SHARD_HELP)
    run.add_argument("--action", help=argparse.SUPPRESS)  # a figure script's CC action: figure5.sh bbr
    run.set_defaults(handler="cmd_run")
    suite = command("suite", help="run every experiment (resumable), then write the report")
    suite.add_argument("experiments", nargs="*", help="only these experiments (default: all, shortest first)")
    suite.add_argument("--quick", action="store_true", help="every experiment's short profile")
    suite.add_argument("--strict", action="store_true", help="exit 3 unless every experiment reproduced")
    suite.add_argument("--fresh", action="store_true", help="new runs instead of resuming unfinished ones")
    suite.add_argument("--shard", metavar="K/N", help=SHARD_HELP + " (of the whole suite's grid)")
    suite.add_argument("--dry-run", action="store_true", help="print each experiment's points and wall time; run "
                       "nothing (no VM, no root)")
    suite.set_defaults(handler="cmd_suite")
    merging = command("merge", help="combine shards' runs (--shard K/N) into one run: judged, plotted "
                      "and reported like a run of the whole grid")
    merging.add_argument("dirs", nargs="+", metavar="DIR", help="shards' run directories, or results "
                         "roots holding them (each root: the newest shard runs of each experiment)")
    merging.add_argument("--into", help="results root of the merged runs (default: --results)")
    merging.add_argument("--partial", action="store_true", help="exit 0 when a merged run is incomplete "
                         "(a shard missing, or repeat: auto undecided); without it, exit 1")
    merging.set_defaults(handler="cmd_merge")
    _calibrating(command)
    shelling = command("shell", help="one point's network, built as a run builds it, with Mininet's CLI in it "
                       "(ping, iperf3, ss across the bottleneck); exit removes it all")
    shelling.add_argument("experiment", help="name in experiments/ or path to a YAML file")
    shelling.add_argument("--only", action="append", metavar="AXIS=VALUE", help="choose the point (repeatable)")
    shelling.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a parameter (repeatable)")
    shelling.add_argument("--quick", action="store_true", help="the experiment's short profile")
    shelling.set_defaults(handler="cmd_shell")


def _calibrating(command) -> None:
    """`calibrate`: the bottleneck's fidelity at each rate, then the flows it carries."""
    cal = command("calibrate", help="measure what this machine's emulator delivers (timer lateness, "
                  "the bottleneck at 10-100 Mbit/s) and store it; runs by itself on first use")
    cal.add_argument("--quick", action="store_true", help="shorter flows (12 s)")
    cal.add_argument("--set", action="append", metavar="KEY=VALUE",
                     help="a what-if, e.g. shaper=htb, burst=64KB: stored beside, never used to judge runs")
    cal.add_argument("--aqm", choices=[a for a in AQMS if a != "fifo"],
                     help="calibrate the bottleneck with this AQM, as its runs build it (its own calibration, "
                     "which runs under that AQM are judged against; measured by itself on first use)")
    cal.add_argument("--mahimahi", action="store_true",
                     help="calibrate Mahimahi's chain (link.shaper: mahimahi), its own calibration, which its "
                     "runs are judged against (measured by itself on first use)")
    cal.add_argument("--headroom", type=_most_flows, default=16, metavar="N",
                     help="then, at each faithful rate, how many BBR flows (2, 4, 8, ... up to N) run before a "
                     "point is set aside (CPU-bound, senders held back, link below its rate; default 16; "
                     "0: not measured)")
    cal.add_argument("--no-figure", action="store_true", help=NO_FIGURE_HELP)
    cal.set_defaults(handler="cmd_calibrate")


def _judging(command) -> None:
    """The commands that judge and draw finished runs: plot, report."""
    plot = command("plot", help="redraw figure and verdict from a results directory; with several and --kind, "
                   "draw them together")
    plot.add_argument("dir", nargs="*", help="results directory (default: latest of EXPERIMENT); several with "
                      "--kind: their points on one figure, each run labelled by how its parameters differ")
    plot.add_argument("--experiment", default="figure5",
                      help="the latest run of this experiment (a name, or its YAML file; default: %(default)s)")
    plot.add_argument("--strict", action="store_true", help="exit 3 unless every evaluated claim holds")
    plot.add_argument("--format", default="png", help="the figure's formats, comma-separated: png, svg, pdf "
                      "(default: %(default)s; the first is printed)")
    plot.add_argument("--kind", choices=spec.PLOT_KINDS, metavar="KIND",
                      help="also draw the run as this plot kind, into NAME-KIND.png (one of: "
                      + ", ".join(spec.PLOT_KINDS) + ")")
    plot.add_argument("--out", metavar="FILE", help="several runs: the figure's file (default: runs-KIND.png in "
                      "the first run's directory)")
    plot.add_argument("--reanalyze", action="store_true",
                      help="first derive every point's series and metrics again from its raw files "
                      "(an analysis fixed after the run reaches its numbers without measuring again)")
    plot.set_defaults(handler="cmd_plot")
    rep = command("report", help="write the one-page report from the latest run of each experiment")
    rep.add_argument("experiments", nargs="*", metavar="EXPERIMENT", help="only these experiments: names in "
                     "experiments/ or YAML files (default: every experiment in experiments/)")
    rep.add_argument("--out", help="report file (default: RESULTS/report.md)")
    rep.set_defaults(handler="cmd_report")


def _stored(command, results: argparse.ArgumentParser) -> None:
    """The commands on stored runs: export, compare, pack, unpack, lab (its own subcommands take
    RESULTS, the --results parent)."""
    exporting = command("export", help="tidy CSV tables of runs: one row per point and per flow, time "
                        "series in long format (numbers in SI units); or flent data files")
    exporting.add_argument("runs", nargs="+", metavar="RUN", help="results directories (results/NAME/STAMP)")
    exporting.add_argument("--format", default="csv", help="csv (default), or flent: one .flent.gz per point "
                           "that flent plots as its tcp_nup test (flent -i FILE -p totals)")
    exporting.add_argument("--out", default="export", help="directory for points.csv, flows.csv, series.csv "
                           "or the .flent.gz files (default: %(default)s)")
    exporting.set_defaults(handler="cmd_export")
    comparing = command("compare", help="two runs side by side: metric deltas per matching point, and "
                        "an overlay figure of their RTT and goodput")
    comparing.add_argument("a", metavar="A", help="results directory of the first run")
    comparing.add_argument("b", metavar="B", help="results directory of the second run")
    comparing.add_argument("--metric", action="append", help="a metric to compare (repeatable; default: "
                           "goodput, utilization, RTT p50/p95, queue, retransmits, fairness, link busy)")
    comparing.add_argument("--out", help="the overlay figure: .png, .svg or .pdf (default: beside run A, "
                           "results/NAME/compare-A-vs-B.png)")
    comparing.set_defaults(handler="cmd_compare")
    packing = command("pack", help="a run as one file (spec, points with raw output, verdict, figures): "
                      "plot, report, export, compare and unpack take it elsewhere")
    packing.add_argument("run", help="the run directory (results/NAME/STAMP)")
    packing.add_argument("--out", metavar="FILE", help="the archive (default: beside the run, STAMP.tar.gz)")
    packing.set_defaults(handler="cmd_pack")
    unpacking = command("unpack", help="a packed run into the results root, its files checked")
    unpacking.add_argument("archive", help="a file bbrlab pack wrote (NAME.tar.gz)")
    unpacking.set_defaults(handler="cmd_unpack")
    labs = command("lab", help="the course lab kit (labs/): list the labs, check a student's runs")
    lab_sub = labs.add_subparsers(dest="lab_command", required=True)
    lab_sub.add_parser("list", parents=[results], help="the labs and their commands").set_defaults(handler="cmd_lab_list")
    checking = lab_sub.add_parser("check", parents=[results], help="whether a student's runs of a lab can be "
                                  "graded: all there, the lab's parameters, complete, the emulator kept up "
                                  "(exit 1 when not; answers are not graded)")
    checking.add_argument("lab", help="the lab: its number, name or folder")
    checking.add_argument("runs", nargs="+", metavar="RUN", help="run directories (results/NAME/STAMP) or "
                          "results roots (the newest run of each of the lab's experiments)")
    checking.set_defaults(handler="cmd_lab_check")


def _project(command, results: argparse.ArgumentParser) -> None:
    """The commands on the project and the machine: format-doc, results-doc, trace, preflight,
    clean, fetch-data."""
    command("format-doc", help="print the experiment format's reference (docs/experiment-format.md) "
            "from the code's own tables").set_defaults(handler="cmd_format_doc")
    results_doc = command("results-doc", help="write the measured numbers and the suite's sizes into README.md, "
                          "docs/results.md and docs/experiments.md, from docs/measurements.yaml and the suite's "
                          "plan (only between their marker lines)")
    results_doc.add_argument("--check", action="store_true", help="write nothing: exit 1 when a file differs "
                             "from what would be written")
    results_doc.set_defaults(handler="cmd_results_doc")
    tracing = command("trace", help="Mahimahi traces for link.trace: write a synthetic one, or show what "
                      "one holds and the schedules its replay makes")
    trace_sub = tracing.add_subparsers(dest="trace_command", required=True)
    synth = trace_sub.add_parser("synth", parents=[results], help="write a synthetic Mahimahi trace")
    synth.add_argument("kind", choices=traces.KINDS)
    synth.add_argument("output", help="the trace file to write")
    synth.add_argument("--seconds", default="10s", help="its length (default: %(default)s)")
    synth.add_argument("--rate", default="10Mbit", help="its rate; square: the high rate (default: %(default)s)")
    synth.add_argument("--low", default=None, help="square: the low rate; walk: the lowest rate")
    synth.add_argument("--period", default="2s", help="square: one cycle (default: %(default)s)")
    synth.add_argument("--step", default="100ms", help="walk: how often the rate moves (default: %(default)s)")
    synth.add_argument("--seed", type=int, default=1, help="walk: the random walk's seed (default: %(default)s)")
    synth.set_defaults(handler="cmd_trace_synth")
    showing = trace_sub.add_parser("show", parents=[results], help="a trace's length, average rate and replay "
                                   "schedules")
    showing.add_argument("trace", help="a Mahimahi trace file")
    showing.set_defaults(handler="cmd_trace_show")
    command("preflight", help="check root, tools and kernel features").set_defaults(handler="cmd_preflight")
    command("clean", help="remove namespaces, veths and processes a killed run left").set_defaults(handler="cmd_clean")
    fetching = command("fetch-data", help="fetch Mahimahi's LTE traces and ReBBR's numbers (pinned commits, "
                       "sha256 checked) into data/ in the checkout, where bbrlab reads them (or into "
                       "$BBRLAB_TRACES and $BBRLAB_REFERENCE when they are set)")
    fetching.add_argument("--from", dest="source", metavar="URL",
                          help="base URL laid out as BASE/OWNER/REPO/COMMIT/PATH, e.g. a mirror or file:///DIR "
                          "(default: $BBRLAB_DATA_URL, else https://raw.githubusercontent.com)")
    fetching.set_defaults(handler="cmd_fetch_data")
