"""One page over the whole suite: every experiment's latest run, its figure, parameters,
verdict with numbers, cost, and our numbers next to the published ones.

Reads results directories only (like `plot`), so a report can be written on any machine
from copied results. Markdown: readable as text, rendered by any forge or viewer.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ...verdicts import claims, reference_numbers
from ...store import host_load, metadata
from . import report_field, report_links, report_quic, summary
from .cells import cell
from ...errors import BbrlabError
from ...schema.datasets import MissingData
from ...store.results import RunDir, read_json, write_atomic
from ...schema.experiment import Experiment, build, load_raw


# What BBR's model believed, from ss, beside its goodput:
# (metric, column, cell format, what the column means, printed under a table that has it).
MODEL_COLUMNS = (
    ("bbr_bw_p50_mbps", "{}'s own bandwidth estimate", cell,
     "The own bandwidth estimate is BBR's max-filtered delivery rate as `ss` reports it "
     "(median after startup): far above the goodput, the emulator carried less than BBR "
     "measured; near it, BBR's model itself was low."),
    ("bbr_bw_held_share", "{}'s estimate held (long-term mode)", lambda v: f"{v:.0%}",
     "Held: the share of `ss` samples after startup in a run of three or more with the "
     "same estimate to the bit. That is Linux BBR's long-term (\"policer\") mode: having lost "
     "20% or more in two intervals of 4+ round trips that delivered at about the same rate, "
     "it pins its bandwidth to their average for 48 round trips."),
)


def _reference_table(exp: Experiment, records: list[dict]) -> list[str]:
    """Ours next to the reference series (figure 8: goodput by loss, per CC)."""
    apart = reference_numbers.mismatch(exp.reference, records)
    if apart:
        return ["", f"Not compared with {exp.reference.get('source', 'the reference')}: {apart}."]
    series = reference_numbers.series(exp.reference)  # inline, or read from its CSV by path
    if not series:
        lacking = reference_numbers.missing(exp.reference)
        source = exp.reference.get("source", "the reference")
        return ["", f"Without the numbers of {source}: this report {lacking.needs}."] if lacking else []
    merged = claims.average_repetitions(records)
    ours: dict = {}
    model: dict = {column[0]: {} for column in MODEL_COLUMNS}
    for rec in merged:
        ccs = sorted({g["cc"] for g in rec["flows"]})
        key = (ccs[0], round(rec["metrics"]["loss"] * 100, 6))
        ours[key] = rec["metrics"]["steady_goodput_mbps"]
        for metric in model:
            if rec["metrics"].get(metric) is not None:
                model[metric][key] = rec["metrics"][metric]
    names = sorted(series)
    source = exp.reference.get("source", "reference")
    # per CC: the model's columns it has values for
    shown = {n: [c for c in MODEL_COLUMNS if any(k[0] == n for k in model[c[0]])] for n in names}
    head = "| loss % | " + " | ".join(
        " | ".join([f"{n} ours"] + [title.format(n) for _, title, _, _ in shown[n]] + [f"{n} {source}"])
        for n in names) + " |"
    columns = 1 + sum(2 + len(shown[n]) for n in names)
    lines = ["", f"Goodput (Mbit/s) next to {source}:", "", head, "|---" * columns + "|"]
    refs = {n: {float(k): v for k, v in series[n].items()} for n in names}
    for loss in sorted({loss for ref in refs.values() for loss in ref}):
        cells = []
        for n in names:
            key = (n, round(loss, 6))
            cells.append(cell(ours.get(key)))
            cells += [cell(None) if model[metric].get(key) is None else fmt(model[metric][key])
                      for metric, _, fmt, _ in shown[n]]
            cells.append(cell(refs[n].get(loss)))
        lines.append(f"| {loss:g} | " + " | ".join(cells) + " |")
    for metric, _, _, meaning in MODEL_COLUMNS:
        if model[metric]:
            lines += ["", meaning]
    return lines


def section(exp: Experiment, rundir: RunDir, out_dir: Path, notes: tuple[str, ...] = ()) -> tuple[list[str], dict]:
    """The report's section for one run, and its row of the summary table (NOTES: the
    experiment file's words on where this testbed differs from the paper)."""
    verdict = read_json(rundir.path / "verdict.json")
    meta = metadata.read_run(rundir)
    records = rundir.point_records()
    # the verdict's total counts the repetitions `repeat: auto` added beyond the planned ones
    total = (verdict.get("points") or {}).get("total") or meta.get("points_total") or len(exp.points)
    figure = rundir.path / f"{exp.name}.png"
    rel = os.path.relpath(figure, out_dir)
    over = verdict.get("overhead") or {}
    system = meta.get("system", {})
    host = host_load.line(rundir)  # the host's own load meanwhile, where vm/vm.sh sampled it
    lines = [f"## {exp.title}", "", exp.description, "",
             f"![{exp.name}]({rel})", "",
             f"- run: `{rundir.path}` ({meta.get('status')}, {len(records)} of {total} points, "
             f"git {meta.get('git', '?')[:12]})",
             f"- kernel {system.get('kernel')}, {system.get('cpus')} CPUs, virtualization "
             f"{system.get('virtualization')}",
             f"- {_calibration_line(meta.get('calibration'))}",
             *([f"- {host}"] if host else []),
             f"- wall time {cell(over.get('wall_seconds'), 0)} s for {cell(over.get('configured_flow_seconds'), 0)}"
             f" s of flows (overhead ratio {cell(over.get('ratio'))}); per point, mean: setup "
             f"{cell(over.get('setup_seconds_mean'))} s, run beyond its flows "
             f"{cell(over.get('run_beyond_flows_seconds_mean'))} s, analysis {cell(over.get('analysis_seconds_mean'))} s",
             "", "```", *claims.verdict_lines(verdict, why=False), "```"]
    if verdict.get("why"):
        lines += ["", f"Why {verdict['verdict']}: " + "; ".join(verdict["why"]) + "."]
    today, rejudged = summary.current_verdict(rundir, exp.name)
    if rejudged:  # the run's own word above, as it wrote it; today's claims' word here
        lines += ["", f"Re-judged since ({today['rejudged']['why']}; verdict-rejudged.json):", "",
                  "```", *claims.verdict_lines(today, why=False), "```"]
    lines += _reference_table(exp, records)
    lines += report_field.coexist_table(exp, records)  # the field experiments' anchors
    lines += report_field.class_table(exp, records)  # each class against its fair share
    lines += report_links.aggregation_table(exp, records) + report_links.jitter_table(exp, records)
    lines += report_quic.quic_table(exp, records)
    lines += report_field.fct_table(records)  # short flows: FCT and slowdown per class
    if notes:
        lines += ["", "Where this testbed differs from the paper:", ""] + [f"- {n}" for n in notes]
    row = {"name": exp.name, "verdict": today["verdict"] + (" (re-judged)" if rejudged else ""),
           "points": len(records) if len(records) >= total else f"{len(records)} of {total}",
           "ratio": over.get("ratio"), "wall": over.get("wall_seconds")}
    return lines + [""], row


def _calibration_line(cal: dict | None) -> str:
    """What a run was judged against: the machine's calibration it recorded (calibrate.py)."""
    if not cal:
        return "judged without a calibration of its machine (measured before `bbrlab calibrate` existed)"
    up_to = cal.get("faithful_up_to_bps")
    reach = f"faithful up to {up_to / 1e6:g} Mbit/s" if up_to else "faithful at no measured rate"
    gate = cal.get("gate") or {}
    beyond = f"; beyond: {gate['failed']}" if gate.get("failed") else ""
    timer = cal.get("timer") or {}
    paths = "".join(f"; under {path}: " + _reach(c) for path, c in (cal.get("paths") or {}).items())
    return (f"calibration {cal.get('key')} ({cal.get('created')}): shaper {cal.get('shaper')}, {reach}{beyond}"
            f"{paths}; timer lateness p99 {cell(timer.get('p99_us'), 0)} us; idle-path RTT error "
            f"{cell(cal.get('idle_rtt_error_ms'))} ms")


def _reach(cal: dict) -> str:
    """How far one path's calibration vouches for the bottleneck, and why not beyond."""
    up_to = cal.get("faithful_up_to_bps")
    failed = (cal.get("gate") or {}).get("failed")
    return ((f"faithful up to {up_to / 1e6:g} Mbit/s" if up_to else "faithful at no measured rate")
            + (f" (beyond: {failed})" if failed else ""))


def write(root: Path, experiments: list[Experiment], out: Path | None = None,
          skipped: dict[str, str] | None = None, runs: dict[str, RunDir] | None = None,
          not_here: dict[str, str] | None = None) -> Path:
    """Write the suite's report under ROOT (default ROOT/report.md) and return its path;
    an error, and no file, when ROOT holds no finished run. SKIPPED: {experiment: what it
    needs that is not here} for those left out for want of data, named at the top. RUNS:
    {experiment: the run to report on} (an archive's), instead of its newest under ROOT.
    NOT_HERE: {experiment: what it needs} for those the kernel that ran the suite cannot run;
    one without a run is named with that, not as not run yet."""
    out = out or root / "report.md"
    sections, rows, missing, off, skipped = [], [], [], [], dict(skipped or {})
    not_here = not_here or {}
    for exp in experiments:
        rundir = (runs or {}).get(exp.name) or RunDir.newest(root, exp.name, marker="verdict.json")
        if rundir is None:
            (off if exp.name in not_here else missing).append(exp.name)
            continue
        # The spec that ran (after --quick/--set), not today's file.
        try:
            ran = build(load_raw(rundir.path / "spec.yaml"), default_name=exp.name)
        except MissingData as exc:
            skipped[exp.name] = exc.needs
            continue
        lines, row = section(ran, rundir, out.parent, exp.notes)  # today's notes on any run
        sections += lines
        rows.append(row)
    if not rows:  # an empty "reproduced" page would say what nobody measured
        raise BbrlabError(f"{root}: no finished run of any experiment to report on "
                          "(run one first, e.g. bbrlab run figure5, or give --results DIR)")
    head = ["# bbrlab: the BBR paper's figures, reproduced", "",
            f"Written {time.strftime('%Y-%m-%d %H:%M:%S %z')} from the latest run of each experiment under "
            f"`{root}`.", "",
            "| experiment | verdict | points | wall time (s) | overhead ratio |", "|---|---|---|---|---|"]
    head += [f"| {r['name']} | {r['verdict']} | {r['points']} | {cell(r['wall'], 0)} | {cell(r['ratio'])} |"
             for r in rows]
    if missing:
        head += ["", "Not run yet: " + ", ".join(missing) + "."]
    if skipped:
        head += ["", "Left out for want of data: " + "; ".join(f"{n} {why}" for n, why in sorted(skipped.items()))
                 + "."]
    if off:
        head += ["", "Not run on this kernel: " + "; ".join(f"{n} {not_here[n]}" for n in sorted(off)) + "."]
    walls = [r["wall"] for r in rows if r["wall"]]
    if walls:
        head += ["", f"Suite wall time: {sum(walls):.0f} s."]
    write_atomic(out, "\n".join(head + [""] + sections) + "\n")
    return out
