"""Figures, drawn from a results directory alone (series.json, metrics.json, verdict.json).

Each kind's drawing is declared in plot_kinds.PLOTS; the colours in style.py.
Each figure's title carries its parameters; its footer carries the verdict.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from ...verdicts import claims as claims_mod
from ...verdicts.set_aside import POINT_LISTS
from ..reports import differences
from .legends import clear_legends
from .plot_kinds import PLOTS
from .plots_fct import workload_line  # classes of short flows, when the point has them
from .style import FORMATS  # noqa: F401 - the formats draw() writes
from .style import versions_named
from ...errors import BbrlabError
from ...schema.link import Buffer
from ...store import host_load
from ...store.results import RunDir, write_atomic


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise BbrlabError("matplotlib is missing: apt-get install python3-matplotlib "
                          "(or provision with sudo ./setup.sh)") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "font.size": 10})
    return plt


def _params_line(records: list[dict], axes: dict) -> str:
    """The figure's parameters; a swept one is named with its values, not the first point's."""
    return ", ".join(params_parts(records, axes))


def params_parts(records: list[dict], axes: dict) -> list[str]:
    """The figure's parameters one by one ("bottleneck 10 Mbit/s", "base RTT 40 ms", ...): the
    parameter line of one run's figure, each part of several runs' figures (multirun.py)."""
    s = records[0]["summary"]
    durations = sorted({f["duration"] for f in records[0]["flow_plan"] if f["duration"]})
    counts = sorted({len(r["flow_plan"]) for r in records})  # a count sweep: every count drawn
    flows = counts[-1]
    dur = f", {durations[-1]:g} s flows" if durations else ""
    how_many = (f"{', '.join(map(str, counts))} flows (swept)" if len(counts) > 1
                else f"{flows} flow{'s' if flows > 1 else ''}")
    shorts = workload_line(records[0], axes)

    def shown(key: str, value: str) -> str:
        if key not in axes:
            return value
        values = [str(v) for v in axes[key]]
        if len(values) > 4:  # a title line has room for a range, not for 13 values
            return f"{values[0]} … {values[-1]} ({len(values)} values)"
        return f"{', '.join(values)} (swept)"

    rate = s["rate"].replace("Gbit", " Gbit/s").replace("Mbit", " Mbit/s").replace("kbit", " kbit/s")
    if s.get("trace"):  # a trace replayed at the bottleneck: its file and average
        rate = f"trace {Path(s['trace']['trace']).name} ({s['trace']['average_mbps']:.2f} Mbit/s on average)"
    buffer = s["buffer"]
    if "rate" in axes or "rtt" in axes:  # the packet count differs per point: say what was asked
        spec_buffer = records[0]["link"]["buffer"]
        buffer = Buffer(spec_buffer["value"], spec_buffer["unit"]).label()
    if "buffer" in axes:  # a buffer sweep: its values, not the first point's
        buffer = shown("buffer", buffer)
    parts = [f"bottleneck {shown('rate', rate)}", f"base RTT {shown('rtt', s['base_rtt'].replace('ms', ' ms'))}",
             f"buffer {buffer}", f"loss {shown('loss', s['loss'])}", f"pacing {shown('pacing', s['pacing'])}"]
    if "aqm" in axes:
        parts.append(f"queue {shown('aqm', s.get('aqm', 'fifo'))} (shaper per AQM)")
    else:
        parts += [f"queue {s['aqm']}"] if "aqm" in s else []
        parts += [f"shaper {shown('shaper', s['shaper'])}"] if "shaper" in s else []
    return parts + [shorts if shorts and not flows else how_many + dur]


# The footer's colour by verdict word; another word (a verdict.json written when an
# inconclusive run said "reproduced (inconclusive: ...)") reads as inconclusive.
VERDICT_COLORS = {"reproduced": "#2e7d32", "not reproduced": "#b71c1c", "inconclusive": "#e65100",
                  "not evaluated": "#616161"}


def verdict_color(word: str) -> str:
    return VERDICT_COLORS.get(word, VERDICT_COLORS["inconclusive"])


def _unbroken_units(text: str) -> str:
    """TEXT with a no-break space between a number and its unit, so a wrapped title line
    never starts with the unit ("30 s flows", "2 BDP")."""
    return re.sub(r"(\d) (?=[A-Za-z/%])", "\\1\u00a0", text)


def _shortened(line: str, width: int = 150) -> str:
    """LINE cut to WIDTH characters, its indent kept (a claim or a why under the verdict)."""
    indent = line[:len(line) - len(line.lstrip())]
    return indent + textwrap.shorten(line.strip(), width - len(indent), placeholder=" …")


def _footer(fig, verdict: dict, host: str | None = None) -> None:
    """The verdict's lines under the figure, and HOST (the host's load while the run measured,
    store/host_load: known once vm/vm.sh has handed it over, so in a figure redrawn after that)."""
    lines = claims_mod.verdict_lines(verdict) + ([host] if host else [])
    # as many characters as the figure is wide: 8-point monospace, 0.6 em a character
    width = min(150, int(fig.get_size_inches()[0] * 72 / (8 * 0.6)) - 2)
    text = "\n".join(_shortened(line, width) for line in lines)
    color = verdict_color(verdict["verdict"])
    fig.text(0.01, 0.01, text, fontsize=8, family="monospace", va="bottom", ha="left", color=color)
    # room for the axes' labels and the verdict's lines: a share of a figure up to 6 in tall,
    # the same inches on a taller one (a share would leave a tall grid an empty band)
    height = fig.get_size_inches()[1]
    fig.subplots_adjust(bottom=min(0.1 + 0.028 * len(lines), (0.6 + 0.168 * len(lines)) / height))


def untrusted_points(verdict: dict) -> set[str]:
    """The points (as the verdict names them) the emulator cannot be trusted with."""
    gate = verdict.get("fidelity_gate") or {}
    return {p for key in POINT_LISTS for p in verdict.get(key) or ()} | set(gate.get("points") or ())


def missing_series(kind: str, rundir: RunDir, records: list[dict]) -> list[str]:
    """The series plot kind KIND reads that a point of RECORDS lacks, as 'point: series'."""
    wanted = PLOTS[kind].series
    missing = []
    for rec in records if wanted else ():
        have = rundir.series(rec["id"])
        missing += [f"{rec['id']}: {name}" for name in wanted if not have.get(name)]
    return missing


def figure(exp, rundir: RunDir, records: list[dict], verdict: dict, kind_name: str | None = None,
           params: str | None = None):
    """The experiment's figure (a matplotlib Figure): its kind's panels (KIND_NAME, or the
    experiment's own), title, parameters (PARAMS: a line of the caller's, where the records
    are several runs' and no one run's parameters are all of theirs), verdict."""
    plt = _pyplot()
    kind = PLOTS[kind_name or exp.plot_kind]
    with versions_named(records):
        if kind.marks_untrusted:
            fig = kind.draw(plt, exp, rundir, records, untrusted_points(verdict))
        else:
            fig = kind.draw(plt, exp, rundir, records)
    width = int(fig.get_figwidth() * 11)  # characters: title and parameters wrap rather than run off its edges
    title = textwrap.fill(exp.plot_title or exp.title, width)
    params = "\n".join(textwrap.fill(_unbroken_units(line), width)
                       for line in (params or _params_line(records, exp.axes)).splitlines())
    fig.suptitle(f"{title}\n{params}", fontsize=11)
    _footer(fig, verdict, host_load.line(rundir))
    # the title's inches: suptitle's own margin (2% of the height), about 0.2 per line, and
    # the panels' titles below it
    lines = title.count("\n") + 1 + params.count("\n") + 1
    fig.subplots_adjust(top=0.98 - (0.35 + 0.2 * lines) / fig.get_size_inches()[1])
    clear_legends(fig)
    return fig


def draw(exp, rundir: RunDir, records: list[dict], verdict: dict, name: str | None = None,
         formats: tuple[str, ...] = ("png",), kind: str | None = None) -> Path:
    """Render the experiment's figure (or plot kind KIND) into the run directory
    (atomically) as NAME.png (default: the experiment's name), and as NAME.svg / NAME.pdf
    when FORMATS asks; return the path of the first format."""
    return save(figure(exp, rundir, records, verdict, kind), rundir.path / f"{name or exp.name}.png", formats)


def save(fig, base: Path, formats: tuple[str, ...] = ("png",)) -> Path:
    """FIG written atomically as BASE in each of FORMATS (its suffix replaced), then closed;
    the path of the first."""
    import io

    paths = []
    for fmt in formats:
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt)
        paths.append(base.with_suffix(f".{fmt}"))
        write_atomic(paths[-1], buffer.getvalue())
    _pyplot().close(fig)
    return paths[0]


def overlay(a: RunDir, b: RunDir, pairs: list[tuple[dict, dict]], path: Path) -> Path:
    """Two runs' matched points on the same axes: RTT and goodput over time, A solid and B
    dashed, one colour per point; the legend below the axes, never over the data; the title
    names each run and, where their setups differ, how (differences.py)."""
    import io

    plt = _pyplot()
    fig, (rtt, tput) = plt.subplots(2, 1, figsize=(12, 8), sharex=True)
    cmap = plt.get_cmap("tab10")
    for i, (ra, rb) in enumerate(pairs[:10]):
        name = claims_mod.point_name(ra)
        for run, rec, ls, tag in ((a, ra, "-", "A"), (b, rb, "--", "B")):
            series = run.series(rec["id"])
            for pts in series.get("rtt", {}).values():
                pts = [(t, v) for t, v in pts if t >= 0]
                rtt.plot([t for t, _ in pts], [v for _, v in pts], color=cmap(i % 10), ls=ls, lw=1,
                         label=f"{tag}: {name}")
                break  # the first group's path: one line per point and run
            total: dict[float, float] = {}
            for flow in series.get("flows", {}).values():
                for t, v in flow.get("throughput", []):
                    total[round(t, 1)] = total.get(round(t, 1), 0.0) + v
            times = sorted(total)
            tput.plot(times, [total[t] for t in times], color=cmap(i % 10), ls=ls, lw=1)
    rtt.set_ylabel("RTT (ms)")
    tput.set_ylabel("goodput, all flows (Mbit/s)")
    tput.set_xlabel("time since flow start (s)")
    differ = differences.between([a, b])  # the setups' differences beside each run's name
    notes = [f" ({differ.note(k)})" if differ.keys else "" for k in (0, 1)]
    fig.suptitle(textwrap.fill(f"A (solid): {a.path.parent.name}/{a.path.name}{notes[0]}    "
                               f"B (dashed): {b.path.parent.name}/{b.path.name}{notes[1]}", 150), fontsize=10)
    fig.legend(*rtt.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8)
    fig.subplots_adjust(bottom=0.08 + 0.025 * ((min(len(pairs), 10) * 2 + 1) // 2))
    buffer = io.BytesIO()
    fig.savefig(buffer, format=path.suffix.lower().lstrip(".") or "png")  # the file's own extension
    plt.close(fig)
    write_atomic(path, buffer.getvalue())
    return path
