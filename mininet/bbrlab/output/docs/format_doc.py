"""docs/experiment-format.md, written from the code's own tables: `bbrlab format-doc`.

Every key an experiment file takes (its unit, default, and whether a list sweeps it), the
metric names a claim can use, the plot kinds and the verdict words. Unit tests hold these
tables to the code (keys accepted, defaults applied, metrics written) and fail when the
committed file differs from what this writes.
"""

from __future__ import annotations

from ...schema import aqm_format as aqms
from ...schema import claim_format
from ...schema import ccs, experiment as spec, picoquic_builds, strict, units, workload
from ...schema.metric_names import ALL_METRICS, CLAIMABLE, CLASS_METRICS
from ..figures.plot_kinds import PLOTS

REQUIRED = "required"
FLOORS = {key: shortest for key, shortest, _ in strict.SAMPLING_FLOORS}


def _default(kind: str, name: str) -> str:
    value = aqms.PARAMS[kind][name][1]
    if value is None:
        return "from the buffer" if kind == "red" else "none"
    if isinstance(value, bool):
        return str(value).lower()
    if name == "probability":
        return units.fmt_fraction(value)
    return units.fmt_time(value) if isinstance(value, float) else str(value)


# dotted key ('*': a flow group's or claim's index) -> (what it takes, default, meaning)
KEYS: dict[str, tuple[str, str, str]] = {
    "name": ("letters, digits, `-`, `_`, `.`", "the file's name", "the experiment's name; results go to "
             "`results/NAME/`"),
    "title": ("text", "the name", "the figure's and the report's title"),
    "description": ("text", "none", "what the experiment shows"),
    "link.rate": (f"rate ({units.RATE_SPELLINGS}), at least {units.fmt_rate(units.MIN_RATE)}", REQUIRED,
                  "the bottleneck's rate"),
    "link.rtt": (f"time ({units.TIME_SPELLINGS})", REQUIRED, "the base RTT, split across the two directions "
                 "by `forward_share`"),
    "link.buffer": (spec.BUFFER_UNITS, REQUIRED, "the bottleneck's queue; at least 2 packets"),
    "link.loss": ("percentage (`1%`)", "0%", "random loss"),
    "link.loss_direction": (" or ".join(spec.LOSS_DIRECTIONS), "data", "`data`: only the data direction "
                            "of the flows; `both`: ACKs too"),
    "link.jitter": ("time", "0ms", "netem jitter on the data direction (delay +- jitter), at most its delay; "
                    "packets overtake each other: `delay_variation` keeps their order"),
    "link.delay_variation": ("time", "0ms", "extra one-way delay on the data direction, uniform from 0 to this, "
                             "in order (the base RTT stays the smallest)"),
    "link.slot": ("time", "none", "netem `slot`: packets leave in bursts, a slot opening every `slot` to "
                  "`slot_max` (aggregation)"),
    "link.slot_max": ("time", "link.slot", "the longest time between slots"),
    "link.slot_packets": ("whole number", "no limit", "packets a slot lets through"),
    "link.slot_bytes": (f"size ({units.SIZE_SPELLINGS})", "no limit", "bytes a slot lets through"),
    "link.slot_on": (" or ".join(spec.SLOT_DIRECTIONS), "ack", "`ack`: the receivers' ACKs leave in slots; "
                     "`data`: the data after the bottleneck does"),
    "link.forward_share": ("number between 0 and 1", "0.5", "the share of the RTT on the data direction"),
    "link.burst": (f"size ({units.SIZE_SPELLINGS}), time at the rate (`2ms`), or `auto`", "auto",
                   "the token bucket of `shaper: htb` or `tbf`; netem has none"),
    "link.changes": ("list of `{at: time, rate: rate}`", "none", "rate steps during the run"),
    "link.shaper": (" or ".join(spec.SHAPERS), spec.DEFAULT_SHAPER, "the bottleneck's design (with an AQM: "
                    "htb, or cake with link.aqm: cake, unless given); mahimahi: ReBBR's emulator, Mahimahi 0.96's "
                    "mm-delay, mm-loss and mm-link around the senders, which then give the RTT (even ms), the loss "
                    "and the rate, the buffer a droptail of mm-link ([versions.md](versions.md))"),
    "link.aqm": (" or ".join(aqms.AQMS), aqms.FIFO, "the bottleneck queue's discipline; link.buffer stays its "
                 "hard limit"),
    **{f"link.{kind}.{name}": (aqms.PARAM_DOCS[name][0], _default(kind, name),
                               f"{kind}: {aqms.PARAM_DOCS[name][1]}")
       for kind, params in aqms.PARAMS.items() for name in params},
    "link.trace": ("path of a Mahimahi trace (`$BBRLAB_TRACES/NAME` or relative to the checkout)", "none",
                   "replay the trace at the bottleneck; `rate` then scales it to that average (or is the trace's); "
                   f"shaped by {spec.TRACE_SHAPER} unless `shaper` says tbf (netem is refused with a trace)"),
    "link.trace_interval": ("time, whole ms from 1ms to 1s", "10ms (with link.trace)",
                            "how often the trace's rate is applied"),
    "pacing": (" or ".join(spec.PACING_MODES), "fq", "`fq` on each sender's egress, or TCP's own "
               "(`internal`; `bbr410`, Linux 4.10's BBR, paces only through fq: under `internal` it runs unpaced, "
               "with a warning)"),
    "cc": ("congestion control name", "none", "the congestion control of every flow group that names none "
           "(one axis for all of them)"),
    "flows": ("list of flow groups", REQUIRED, "who sends"),
    "flows.*.cc": ("congestion control name (`bbr`, `cubic`, ...; the list below)", "required (or `cc`)",
                   "the group's congestion control (with `tool: picoquic`, picoquic's own: its `bbr` is BBRv3)"),
    "flows.*.tool": ("`iperf3` or `picoquic`", "iperf3", "what sends the group's flows: kernel TCP through iperf3, "
                     "or QUIC connections through picoquic's quicperf (`size` only, its own CCs: "
                     f"{', '.join(ccs.QUIC_CCS)})"),
    "flows.*.build": ("a picoquic build's name (its commit, and a what-if's suffix): " + ", ".join(
                          f"`{b.name}` ({b.date}, {b.what})" for b in picoquic_builds.BUILDS.values()),
                      f"`{picoquic_builds.DEFAULT}`", "the picoquic that sends the group's connections "
                      "(`tool: picoquic` only); each connection's row says the version that ran. The 2024 builds "
                      "take their own CCs: " + ", ".join(picoquic_builds.CCS_2024)),
    "flows.*.count": ("whole number; at most 256 long flows in a point, all groups together", "1", "flows in the group"),
    "flows.*.start": ("time", "0s", "when the first flow of the group starts"),
    "flows.*.stagger": ("time", "0s", "between the starts of the group's flows"),
    "flows.*.duration": ("time, whole seconds for iperf3", "one of duration, until, size", "how long each flow sends"),
    "flows.*.until": ("time, leaving each iperf3 flow whole seconds", "one of duration, until, size",
                      "when every flow of the group stops"),
    "flows.*.size": (f"size ({units.SIZE_SPELLINGS})", "one of duration, until, size", "bytes each flow "
                     "sends (flow completion time)"),
    "flows.*.rtt": ("time", "link.rtt", "the group's own base RTT"),
    "flows.*.loss": ("percentage (`0.05%`)", "`link.loss`", "random loss on the group's own data direction "
                     "(its delay line), like `link.loss`"),
    "flows.*.ecn": ("true or false", "false", "the group's senders ask for ECN (tcp_ecn=1); refused on a "
                    "FIFO the file does not name (nothing marks)"),
    "flows.*.class": ("letters, digits, `-`, `_`, `.`", "g1, g2, ...", "the class's name in figures and reports"),
    "flows.*.workload": ("mapping", "none", "many short flows instead of `count` long ones: one sending program "
                         "and one sink, every flow a TCP connection of the group's CC (no count, stagger, "
                         "duration, until or size)"),
    "flows.*.workload.arrivals": (" or ".join(f"`{a}`" for a in workload.ARRIVALS), "`poisson`",
                                  "Poisson arrivals, or one flow after another (each alone on the link)"),
    "flows.*.workload.rate": ("flows per second (`20/s`)", "one of rate, load (poisson)",
                              "the mean arrival rate"),
    "flows.*.workload.load": ("percentage (`30%`)", "one of rate, load (poisson)",
                              "the offered load: mean inter-arrival = 8 x mean size / (load x link.rate)"),
    "flows.*.workload.sizes": (workload.SIZES_TEXT, REQUIRED,
                               "object sizes in bytes; a CDF is interpolated linearly between its points"),
    "flows.*.workload.duration": ("time", "required (poisson)", "how long flows arrive; flows still open "
                                  "when the grace after it ends are counted as unfinished"),
    "flows.*.workload.count": ("whole number", "required (sequential)", "how many flows, one after another"),
    "flows.*.workload.gap": ("time", "`1s` (sequential)", "from one flow's end to the next one's start"),
    "flows.*.workload.seed": ("whole number", "`1`", "the seed of arrivals and sizes (a run is reproducible)"),
    "flows.*.workload.reseed": ("true or false", "`false`", "repetition R draws with seed + R - 1, so the "
                                "intervals cover the workload too; the CCs of one repetition share it"),
    "sysctls": ("mapping of `net.*` sysctl to value", "socket buffers for 100 Mbit/s x 500 ms",
                "set in every host's network namespace"),
    "sampling.interval": (f"time, at least {units.fmt_time(FLOORS['interval'])}", "100ms",
                          "ping and the bottleneck's queue"),
    "sampling.ss_interval": (f"time, at least {units.fmt_time(FLOORS['ss_interval'])}", "500ms",
                             "each sender's tcp_info over netlink, what `ss -tin` shows (cwnd, pacing rate, BBR's model)"),
    "sampling.iperf_interval": ("time, at least 100ms", "500ms", "iperf3's reports"),
    "sampling.pcap": ("true or false", "false", "capture TCP headers at each receiver (tcpdump)"),
    "sampling.link_pcap": ("true or false", "false", "capture the frames leaving the bottleneck"),
    "sampling.irtt": ("true or false", "false", "a second sparse probe beside ping (irtt, every sampling.interval): "
                      "one-way delays of each direction, on the testbed's one clock"),
    "sampling.startup": ("time", "2s", "left out of the steady-state metrics"),
    "repeat": ("whole number, `auto`, or `{min: N, max: M}`", "1",
               f"runs of every grid point; `auto` is {spec.AUTO_REPEAT[0]} to {spec.AUTO_REPEAT[1]}, adding "
               "runs only where a claim's interval straddles its bound"),
    "seed": ("whole number", "1", "the seed of the point order"),
    "plot.kind": ("a plot kind (below)", "rtt_timeseries", "the figure"),
    "plot.title": ("text", "the title", "the figure's title"),
    "claims": ("list of claims", "none", "what the paper says, checked on the run"),
    "claims.*.id": ("text", REQUIRED, "the claim's name in verdicts"),
    "claims.*.text": ("text", REQUIRED, "the claim in words"),
    "claims.*.metric": ("a metric name (below)", REQUIRED, "what is bounded"),
    "claims.*.where": ("mapping of sweep axis (or " + ", ".join(f"`{k}`" for k in claim_format.CLAIM_FACTS)
                       + ") to a value, a list, or `{min, max}`", "every point",
                       "the points the claim is about (or, inside a mixed point, one class of flows)"),
    "claims.*.vs": ("mapping like `where`", "none", "bound the ratio to the point that differs in these keys"),
    "claims.*.min": ("number", "none", "the lowest passing value (give min, max or both)"),
    "claims.*.max": ("number", "none", "the highest passing value"),
    "claims.*.source": ("`testbed`, or \"KIND: reference\" with KIND one of "
                        + ", ".join(f"`{k}`" for k in claim_format.SOURCE_KINDS[:-1]), "`testbed`",
                        "who states the claim: its authors (a paper, slides, a post, an RFC, their code's own "
                        "comment, a reproduction), "
                        "or this testbed's own observation; verdicts list the authors' claims first and the "
                        "testbed's own apart"),
    "claims.*.conditions": ("mapping like `where`, also `bdp_pkts` (the path's BDP in packets) and `min_rtt` "
                            "(its min RTT measured idle, `idle_rtt_min_ms`)", "none",
                            "the conditions the source states: a point `where` selects outside them is not "
                            "judged (the claim is then \"outside its stated conditions\", never \"fails\")"),
    "claims.*.relative_to": ("a metric name (below)", "none", "bound metric / this metric of the same point"),
    "quick": ("mapping of key to value, as `--set`", "none", "the short profile `--quick` applies"),
    "points": ("list of mappings of key to value, keys as `--set` names them", "none",
               "chosen points beside the sweep, e.g. `[{rate: 10Mbit, rtt: 20ms}, {rate: 50Mbit, rtt: 100ms}]`: "
               "each entry crossed with the file's sweep axes, its keys labelled as axes (`--only rate=50Mbit`)"),
    "reference": ("mapping", "none", "the published numbers drawn beside ours (`source`; `series`, `csv` or "
                  "`goodput_mbps`; `at`: the link they were measured on, `{rate, rtt, trace}`, drawn only beside a "
                  "run on that link, else the legend and the report say why)"),
    "notes": ("text or list of texts", "none", "where this kernel or emulator differs from the paper"),
}

PLOT_KINDS = {name: kind.doc for name, kind in PLOTS.items()}

VERDICTS = {
    "reproduced": "every evaluated claim holds",
    "not reproduced": "a claim fails on points the emulator can be trusted with",
    "inconclusive": "none fails, but a check straddles its bound, rests on untrusted points (CPU-bound, gated) "
                    "or on a point that failed to run: that claim is undecided (??), never n/a",
    "not evaluated": "no claim selected a point of the run, or every point it selected lies outside the "
                     "conditions its source states (that claim: \"outside its stated conditions\", `out`)",
}


def _refused() -> list[str]:
    """The section on what is refused: the checks no one key's table row says."""
    rows = [
        ("a key given twice in one mapping (`link:` twice, `rate:` twice)",
         "YAML would keep the last one without a word; the message names the key and both lines"),
        ("`<<:` twice in one mapping", "PyYAML keeps the last one's keys where a list `<<: [*a, *b]` keeps the "
         "first's: give the list"),
        ("a file that is not UTF-8 text; a tab in the indentation", "said with its line"),
        ("`yes`, `no`, `on`, `off` where true or false is asked (also in `--set`)",
         "YAML 1.1 reads them as booleans without a word; the format's booleans are true and false"),
        ("a top-level `cc` when every flow group names its own",
         "its points would run the groups' CCs under the top-level cc's labels"),
        ("a top-level `cc` taken by groups of different tools (picoquic and iperf3)",
         "picoquic's bbr is BBRv3, Linux's is v1: one label would name two algorithms"),
        ("`--set flows.N.tool=` another tool on a file with claims",
         "its claims speak of the file's tool's implementation (picoquic's BBRv3 is not Linux's bbr)"),
        ("`ecn: true` where nothing marks: a FIFO the file does not name, codel, pie, fq_pie or red without "
         "their own `ecn`", "those drop by default; naming `link.aqm: fifo` or the AQM's `ecn: false` "
         "negotiates ECN on purpose (a warning)"),
        ("a congestion control the testbed does not offer (`cubci`, `bbr2`)", "with the name it probably meant"),
        (f"a rate below {units.fmt_rate(units.MIN_RATE)}",
         "tc takes whole bit/s: `0.5bit` would be written as `0bit`, which is no limit at all"),
        ("`kbps`, `Mbps` (tc reads them as bytes per second); hours (`10h`)", "the units are the ones listed above"),
        ("an iperf3 flow of a fraction of a second or of more than a day; more than 256 long flows in a point; "
         "a buffer of more than 2^32-1 packets", "iperf3's -t takes whole seconds up to 86400; each flow has an "
         "address of its own; tc's queue limits are 32-bit"),
        ("`--set loss` (or `rtt`) when one flow group of several has its own",
         "it would change that group alone: say `link.loss` or `flows.N.loss`"),
        (f"`shaper: netem` with `link.trace` (a trace is shaped by {spec.TRACE_SHAPER} by default)",
         "netem fixes a packet's departure when it is queued: a rate that rises later cannot speed up what waits "
         "(measured: 0.56 of an LTE trace delivered)"),
        (", ".join(f"`sampling.{key}` under {units.fmt_time(shortest)}" for key, shortest, _ in strict.SAMPLING_FLOORS),
         "a sampler must not load the path or the CPU it measures (a ping per sample; a netlink dump per "
         "sender and sample)"),
        ("a value listed twice in a sweep (also `10Mbit` and `10000kbit`)", "every point would run twice"),
        ("a `sampling.startup` (as written) not shorter than the flows; a `link.changes` step at or after their end",
         "the steady state would have nothing left; nothing would be sent at the new rate"),
        ("a claim that selects no point of the file's grid (`where` outside it, a `vs` with nothing to pair), "
         "`min` above `max`, two claims with one `id`", "it could never be evaluated, or never pass"),
        ("a wrong key or value under `quick:`", "checked when the file is loaded, not only with `--quick`"),
        ("two files in `experiments/` with one `name`",
         "their runs would share `results/NAME/`: `run` and `suite` refuse, `list` marks them"),
        ("a figure script's CC action (`figure5.sh bbr`) with `--only cc=` another CC, or with a `--set cc=` "
         "that leaves no cc sweep", "the action runs that CC's points; the message says which action to use"),
        ("`tool: picoquic` with `duration` or `until`, with `ecn`, or with a CC picoquic lacks",
         "quicperf downloads a size; tcp_ecn is TCP's; the message lists picoquic's CCs"),
        ("`points:` entries with different keys, a list as a value, a key that is also swept, two equal "
         "entries; `--set` or `quick:` on a key the points set", "each point sets the same keys once; a --set "
         "would be overwritten by every point"),
    ]
    return ["", "## What is refused", "",
            "Bad input gets one line naming the problem and exit status 2, before anything runs: never a",
            "traceback, never a silently different experiment. Besides a wrong key or value in the table above:",
            "", "| refused | why |", "|---|---|"] + [f"| {what} | {why} |" for what, why in rows] + [
            "", f"A workload of short flows arriving faster than {strict.GENERATOR_CEILING:.0f} flows/s (what the "
            "generator sustains in the testbed VM) is a warning on stderr, not an error. `--only` compares values",
            "in their units (`--only loss=1.0%` is `1%`, `--only ecn=true` is `True`). Of the other commands:",
            "`export --out` naming a file, and `compare --out` with another extension than .png, .svg or .pdf,",
            "are refused in one line; `merge` exits 1 when a merged run is incomplete, unless `--partial`."]


def _sweeps(key: str) -> str:
    return "yes" if key in spec.SWEEPABLE else ""


def render() -> str:
    """The whole reference, in Markdown."""
    lines = [
        "# The experiment format",
        "",
        "<!-- written by `bbrlab format-doc > docs/experiment-format.md`; edit the tables in the code -->",
        "",
        "One YAML file per experiment in `experiments/` (or anywhere: `bbrlab run path/to/mine.yaml`).",
        "A list where one value is expected sweeps that key: the grid is the product of every list.",
        "`--set KEY=VALUE` overrides a key (`rate`, or a full path like `flows.0.cc`); `--only AXIS=VALUE`",
        "runs part of the grid. Every rate, time, size, buffer and loss carries its unit: a bare",
        "number is refused with the unit it probably meant.",
        "",
        "## Keys",
        "",
        "| key | takes | default | sweeps | meaning |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| `{key}` | {takes} | {default} | {_sweeps(key)} | {meaning} |"
              for key, (takes, default, meaning) in KEYS.items()]
    lines += ["", "The congestion controls the testbed offers (a `cc` is checked against them when the file is loaded): "
              + ", ".join(f"`{cc}`" for cc in ccs.CCS) + "."]
    lines += _refused()
    lines += ["", "## Metrics a claim can use", "",
              "Per point, in its `metrics.json`. A claim's `metric` and `relative_to` are checked against",
              "this list when the file is loaded.", "",
              "| metric | unit | meaning |", "|---|---|---|"]
    lines += [f"| `{name}` | {unit} | {meaning} |" for name, (unit, meaning) in ALL_METRICS.items()
              if name in CLAIMABLE]
    others = [name for name in ALL_METRICS if name not in CLAIMABLE]
    lines += ["", "Also written, not for claims: " + ", ".join(f"`{n}` ({ALL_METRICS[n][0]})" for n in others) + "."]
    lines += ["", "Of one class of flows (`where: {group: N}`, `{class: NAME}`, or `{cc: NAME}` inside a point that "
              "mixes classes):",
              "", "| metric | unit | meaning |", "|---|---|---|"]
    lines += [f"| `{name}` | {unit} | {meaning} |" for name, (unit, meaning) in CLASS_METRICS.items()]
    lines += ["", "A class of short flows (`flows.*.workload`) has the flow-completion metrics instead (from",
              "`flows_planned` to `tput_over3m_mean_mbps` above), of its own flows: `where: {class: NAME}`; at the",
              "point's level they are of every short flow of the point."]
    lines += ["", "## Plot kinds", "", "| kind | figure |", "|---|---|"]
    lines += [f"| `{kind}` | {meaning} |" for kind, meaning in PLOT_KINDS.items()]
    lines += ["", "## Verdicts", "",
              "Each check of a claim is judged on the 95% interval of its repetitions.", "",
              "| verdict | when |", "|---|---|"]
    lines += [f"| {word} | {meaning} |" for word, meaning in VERDICTS.items()]
    return "\n".join(lines) + "\n"
