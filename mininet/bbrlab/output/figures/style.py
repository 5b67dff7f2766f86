"""One style table: every congestion control has the same colour, marker and label in every
figure; and the small helpers every plot kind shares (a point's CC, its legend label, the
configured rate drawn as a step)."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

FORMATS = ("png", "svg", "pdf")  # what a figure can be written as (matplotlib's own backends)

STYLE = {
    "bbr": {"color": "#1f77b4", "marker": "o", "label": "BBR"},
    "bbr_noagg": {"color": "#17becf", "marker": "d", "label": "BBR without ACK-aggregation allowance"},
    "bbr3": {"color": "#6a3d9a", "marker": "p", "label": "BBRv3"},
    "bbr410": {"color": "#08306b", "marker": "h", "label": "BBR (Linux 4.10)"},
    "cubic": {"color": "#d62728", "marker": "s", "label": "CUBIC"},
    "reno": {"color": "#2ca02c", "marker": "^", "label": "Reno"},
    "bic": {"color": "#9467bd", "marker": "v", "label": "BIC"},
    "vegas": {"color": "#8c564b", "marker": "D", "label": "Vegas"},
    "westwood": {"color": "#e377c2", "marker": "P", "label": "Westwood"},
    "htcp": {"color": "#7f7f7f", "marker": "X", "label": "H-TCP"},
    "illinois": {"color": "#bcbd22", "marker": "*", "label": "Illinois"},
    "hybla": {"color": "#bcbd22", "marker": "h", "label": "Hybla"},
}
EXTRA_COLORS = ["#ff7f0e", "#aec7e8", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94"]
# labels that differ from STYLE's within the figure being drawn (versions_named); the table
# itself never changes
_RENAMED: ContextVar[dict] = ContextVar("bbrlab_renamed_ccs", default={})
# within a figure of several runs (runs_named): the run each CC name was drawn for
_RUN_OF: ContextVar[dict] = ContextVar("bbrlab_run_of_cc", default={})
RUN_AXIS = "run"  # the sweep parameter that tells several runs' points apart (multirun.py)
RUN_SEPARATOR = " | "  # between a run's label and its point's id, in a point's id where several runs are drawn
VARIANT_MARK = "@"  # bbr@1: run 2's bbr (variant)


def base_cc(cc: str) -> str:
    """The congestion control a name drawn for one of several runs stands for: bbr@1 -> bbr."""
    return cc.split(VARIANT_MARK)[0]


def own_id(record: dict) -> str:
    """RECORD's point id in its own run (where several runs are drawn, its id names the run
    first: the CC's label names it in the figure)."""
    return record["id"].split(RUN_SEPARATOR)[-1]


def in_turn(items: list, run) -> list:
    """ITEMS with several runs' taken in turn (run 1's first, run 2's first, run 1's second,
    ...; RUN(item) says whose), so a kind that draws only the first few draws each run's; the
    items of one run keep their order."""
    runs: dict = {}
    ranked = []
    for i, item in enumerate(items):
        count = runs.setdefault(run(item), [len(runs), 0])
        ranked.append((count[1], count[0], i, item))
        count[1] += 1
    return [item for *_, item in sorted(ranked, key=lambda r: r[:3])]


@contextmanager
def versions_named(records: list[dict]):
    """Within a figure that shows another BBR too, Linux's bbr is named by its version: "BBR v1"
    beside BBRv3, "BBR (Linux 6.1)" beside Linux 4.10's (bbr410 is built for 6.1 only); alone
    it keeps the paper's name."""
    shown = {base_cc(g["cc"]) for r in records for g in r.get("flows") or ()}
    renamed = {"bbr": "BBR v1"} if "bbr3" in shown else {}
    if "bbr410" in shown:
        renamed = {"bbr": "BBR (Linux 6.1)"}
    token = _RENAMED.set(renamed)
    try:
        yield
    finally:
        _RENAMED.reset(token)


@contextmanager
def runs_named(runs: dict[str, str]):
    """Within a figure of several runs, each CC's label ends with the run it was drawn for
    (RUNS: CC name -> run label, "bbr@1" -> "run 2 (rtt 30ms)"): every kind that names a
    curve, a bar or a panel by its CC names the run with it."""
    token = _RUN_OF.set(dict(runs))
    try:
        yield
    finally:
        _RUN_OF.reset(token)


def run_of(cc: str) -> str | None:
    """The run CC was drawn for, within a figure of several runs; else None."""
    return _RUN_OF.get().get(cc)


def style(cc: str, with_run: bool = True) -> dict:
    """CC's colour, marker and label; where several runs are drawn, the label ends with CC's
    run unless told not to (WITH_RUN: a panel whose title names the run already)."""
    if cc in STYLE:
        found = STYLE[cc]
        renamed = _RENAMED.get().get(base_cc(cc))
        found = {**found, "label": renamed} if renamed else found
    else:
        color = EXTRA_COLORS[sum(map(ord, cc)) % len(EXTRA_COLORS)]
        found = {"color": color, "marker": "o", "label": cc}
    run = run_of(cc) if with_run else None
    return {**found, "label": f"{found['label']}, {run}"} if run else found


def cc_of(record: dict) -> str:
    ccs = sorted({g["cc"] for g in record["flows"]})
    return ccs[0] if len(ccs) == 1 else "+".join(ccs)


# a queue discipline's colour and name in every figure that draws several (link.aqm)
AQM_STYLE = {
    "fifo": ("#444444", "droptail FIFO"), "fq_codel": ("#2ca02c", "fq_codel"), "cake": ("#9467bd", "CAKE"),
    "codel": ("#ff7f0e", "CoDel"), "pie": ("#8c564b", "PIE"), "fq_pie": ("#e377c2", "FQ-PIE"),
    "red": ("#d62728", "RED"),
}
AQM_LINES = {"fifo": "-", "fq_codel": "-.", "cake": ":"}  # where colour already means the CC


def aqm_of(record: dict) -> str:
    return ((record.get("link") or {}).get("aqm") or {}).get("kind", "fifo")


def buffer_bdp(record: dict) -> float:
    """The point's buffer in BDPs, as the spec wrote it when it was given in BDPs."""
    buffer = record["link"]["buffer"]
    if buffer["unit"] == "bdp":
        return float(buffer["value"])
    return record["metrics"]["buffer_pkts"] / record["metrics"]["bdp_pkts"]


def point_label(record: dict, axes_shown: set) -> str:
    """The point's CC and its sweep values beyond AXES_SHOWN (its run is in its CC's label)."""
    extra = ", ".join(f"{k}={v}" for k, v in record["params"].items() if k not in axes_shown and k != RUN_AXIS)
    name = style(cc_of(record))["label"]
    return f"{name} ({extra})" if extra else name


def rate_line(ax, series: dict, end: float, label: str | None, lw: float = 1.2, color: str = "black",
              ls="--") -> None:
    """The configured bottleneck rate over time, held until END, as a step (dashed black
    unless COLOR and LS say otherwise: another run's, guides.lines)."""
    steps = series["link_rate"]
    ax.step([t for t, _ in steps] + [end], [v for _, v in steps] + [steps[-1][1]], where="post",
            color=color, ls=ls, lw=lw, label=label)


def not_drawn(ax, why: str, width: int = 48) -> None:
    """A legend entry saying what is not drawn and why (wrapped: a legend beside the axes
    has room for about WIDTH characters a line)."""
    import textwrap

    ax.plot([], [], ls="none", label="\n".join(textwrap.wrap(f"not drawn: {why}", width)))


def variant(cc: str, k: int) -> str:
    """The name under which run K of several drawn together shows CC: CC itself for the
    first run, else a registered style with CC's marker and label in a darker (odd K) or
    lighter (even K) shade of its colour (the legend names the run: runs_named)."""
    if k == 0:
        return cc
    from matplotlib.colors import to_hex, to_rgb

    base = STYLE.get(cc) or style(cc)
    depth = (0.45, 0.65, 0.3, 0.55)[((k - 1) // 2) % 4]  # darker or lighter, by steps that stay in range
    rgb = to_rgb(base["color"])
    shade = [c * (1 - depth) for c in rgb] if k % 2 else [c + (1 - c) * depth for c in rgb]
    name = f"{cc}{VARIANT_MARK}{k}"
    STYLE[name] = {"color": to_hex(shade), "marker": base["marker"], "label": base["label"]}
    return name


def formats(text: str) -> tuple[str, ...]:
    """--format png,svg,pdf -> ('png', 'svg', 'pdf'), each one matplotlib writes."""
    from ...errors import SpecError

    chosen = tuple(dict.fromkeys(f.strip().lower() for f in text.split(",") if f.strip()))
    wrong = [f for f in chosen if f not in FORMATS]
    if wrong or not chosen:
        raise SpecError(f"--format {text}: give one or more of {', '.join(FORMATS)}, e.g. png,svg,pdf")
    return chosen
