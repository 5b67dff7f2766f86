"""bbrlab's command line: list, run, plot, suite, merge, report, calibrate, shell, results-doc,
preflight, clean; the commands on stored runs and the project's files (export, compare, pack,
unpack, lab, format-doc, fetch-data) are in cli_files.py.

Every error the user can act on is one line (or one short list) on stderr and a non-zero
exit status, never a traceback.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from . import log
from . import arguments, cli_files
from .schema import experiment as spec
from .errors import EXIT_CLAIM, EXIT_ERROR, EXIT_INTERRUPT, EXIT_REJECTED, BbrlabError, SpecError, did_you_mean
from .store.metadata import REPO
from .schema.root import require
from .schema import claim_points
from .schema.catalog import by_name, refuse_namesakes
from .schema.datasets import MissingData
from .schema.selection import parse_only, select, with_action
from .store.pack import is_archive, open_run
from .output.figures.style import formats

EXPERIMENTS = REPO / "experiments"


def experiment_path(name: str) -> Path:
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml") or "/" in name:
        if not candidate.is_file():
            raise SpecError(f"{name}: no such experiment file")
        return candidate
    path = require(EXPERIMENTS) / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in EXPERIMENTS.glob("*.yaml"))
        raise SpecError(f"unknown experiment {name!r}{did_you_mean(name, known)} (known: {', '.join(known)})")
    return path


def _load(args) -> spec.Experiment:
    path = experiment_path(args.experiment)
    try:
        exp = spec.load(path, args.set or [], quick=args.quick)
    except MissingData as exc:  # a trace fetch-data provides: one line naming it and the command
        raise SpecError(f"{path.stem} {exc.needs}") from None
    refuse_namesakes(path, exp.name, EXPERIMENTS)  # two files of one name: one results folder
    return exp


def _preflight(points: list[spec.Point]) -> None:
    """Check this machine for exactly what POINTS need: their CCs, fq pacing, tcpdump."""
    from .emulation import preflight

    preflight.check({g.cc for p in points for g in p.flows if g.tool == "iperf3"},
                    pacing_fq=any(p.pacing == "fq" for p in points),
                    pcap=any(p.sampling.pcap or p.sampling.link_pcap for p in points), lossy=any(p.link.loss for p in points),
                    aqms={p.link.aqm.kind for p in points} - {"fifo"},
                    quic={g.build for p in points for g in p.flows if g.tool == "picoquic"},
                    owd=any(p.sampling.irtt for p in points),
                    mahimahi=any(p.link.shaper == "mahimahi" for p in points))


def cmd_list(args) -> int:
    from .runs.estimate import listing

    print("\n".join(listing(require(EXPERIMENTS), Path(args.results), args.quick, by_name(EXPERIMENTS))))
    return 0


def _shard(args, points: list[spec.Point]) -> dict | None:
    """--shard K/N: this host's part of POINTS (shard.record); the partition said on stderr."""
    if not args.shard:
        return None
    from .runs import shard

    which = shard.parse(args.shard)
    log.info("\n".join(shard.lines(points, which)))
    return shard.record(which, shard.points_of(points, which))


def cmd_run(args) -> int:
    from .runs.suite import say_missing_references

    exp = _load(args)
    say_missing_references([exp])
    only = with_action(exp, parse_only(args.only), args.action, args.set)
    subset = select(exp, only) if only else list(exp.points)
    part = _shard(args, list(exp.points))
    if part is not None:
        subset = [p for p in subset if p.id in part["points"]]
        if not subset:
            log.info(f"shard {args.shard}: no point of {exp.name} to run here")
            return 0
        from .runs import suite

        done = None if args.dry_run else suite.state(exp, Path(args.results), not args.fresh, part)[1]
        if done is not None:  # a shard, like a suite's experiment, runs once
            log.info(f"shard {args.shard} of {exp.name} is done ({done.path}; --fresh runs it again)")
            print(f"results: {done.path}")
            return 0
    if args.dry_run:
        return _dry_run(args, exp, subset, only, part)
    _preflight(subset)
    from .runs import runner  # imports Mininet: only after preflight said it is there

    root = Path(args.results)
    try:
        calibration = _calibration(args, subset)
        rundir = runner.run_experiment(exp, root, resume=not args.fresh, shuffle=not args.no_shuffle,
                                       cli=sys.argv[1:], subset=subset if only else None,
                                       calibration=calibration, shard=part, figure=not args.no_figure)
    except runner.Interrupted as exc:
        log.error(f"bbrlab: {exc}")
        return EXIT_INTERRUPT
    from .store.results import read_json

    verdict = read_json(rundir.path / "verdict.json")
    print(f"results: {rundir.path}")
    return _strict_status(args, verdict)


def _dry_run(args, exp: spec.Experiment, subset: list[spec.Point], only, part: dict | None) -> int:
    """`run --dry-run`: the points chosen, their cost, the claims they feed, what this machine's
    headroom says of them, and each point's plan; nothing is run."""
    from .emulation.plan_text import describe
    from .emulation.topo import build_plan
    from .runs import calibrate, headroom
    from .runs.estimate import lines, repetitions

    by = " and ".join(([f"the action {args.action}"] if args.action else []) + (["--only"] if args.only else []))
    chosen = f" ({len(subset)} chosen by {by})" if only else ""
    print(f"{exp.name}: {len(exp.points)} point(s){repetitions(exp)}{chosen}; sweep axes: "
          + (", ".join(f"{k}={v}" for k, v in exp.axes.items()) or "none"))
    print("\n".join(lines(exp, subset, Path(args.results), part) + claim_points.lines(exp.claims, subset)
                    + headroom.told(calibrate.load(), subset)))
    seen = set()
    for point in subset:
        key = describe(build_plan(point))
        print(f"\n== point {point.id} ({point.duration:g} s of flows)")
        print(key if key not in seen else "   (same plan as above but for the values of the axes)")
        seen.add(key)
    return 0


def suite_experiments(quick: bool = False) -> tuple[list[spec.Experiment], dict[str, MissingData]]:
    """The experiments this checkout has the data for, and {name: what it lacks} for the rest."""
    from .runs import suite

    return suite.loadable(require(EXPERIMENTS), quick)


def cmd_suite(args) -> int:
    from .runs import shard, suite

    exps, lacking = suite.chosen(*suite_experiments(args.quick), args.experiments)
    if lacking and args.shard:  # every host must deal the same grid
        name, exc = next(iter(lacking.items()))
        raise SpecError(f"--shard: every host runs its part of the whole suite, but here {name} {exc.needs}")
    suite.say_lacking(suite.needs(lacking), "suite: skipping")  # refused; the others run
    if not exps:
        return EXIT_ERROR
    suite.say_missing_references(exps)
    parts = suite.shards(exps, shard.parse(args.shard)) if args.shard else None
    if parts is not None:  # this host's part of the whole suite's grid
        exps = [e for e in exps if e.name in parts]
    points = [p for e in exps for p in e.points if parts is None or p.id in parts[e.name]["points"]]
    not_here: dict[str, str] = {}
    if args.dry_run:  # the cost, on any machine: nothing is measured
        from .runs import estimate

        print("\n".join(estimate.suite_lines(exps, Path(args.results), parts)))
        return 0
    if not args.experiments and parts is None:  # the whole suite: what this kernel cannot run is named, not run
        exps, not_here = suite.runnable_here(exps)
        points = [p for e in exps for p in e.points]
        if not exps:
            return EXIT_ERROR
    _preflight(points)
    from .runs import runner

    root = Path(args.results)
    total = sum(p.duration for p in points)
    state = {e.name: suite.state(e, root, not args.fresh, parts and parts[e.name]) for e in exps}
    points_left, remaining = suite.left_to_run(state)
    log.info(f"suite: {len(exps)} experiments, {len(points)} points, {total / 60:.1f} min of flows; "
             f"{points_left} points ({remaining / 60:.1f} min of flows) left to run")
    try:  # measured first on a machine without one, unless nothing is left to run
        calibration = _calibration(args, [p for todo, _ in state.values() for p in todo]) if points_left else None
    except runner.Interrupted as exc:
        log.error(f"bbrlab: {exc}")
        return EXIT_INTERRUPT
    try:
        verdicts, failed = suite.run_each(exps, root, state, calibration, EXPERIMENTS, resume=not args.fresh,
                                          cli=sys.argv[1:], parts=parts)
    except runner.Interrupted as exc:
        log.error(f"bbrlab: {exc}")
        return EXIT_INTERRUPT
    # the whole suite: what has not run is named (nothing at all ran: no report)
    out = (suite.write_report(root, *suite_experiments(), not_here=not_here)  # shards: merged
           if verdicts and parts is None else None)
    problems = suite.summarise(verdicts, out, failed, list(lacking))
    if problems:
        return EXIT_ERROR
    if args.strict and any(v["verdict"] != "reproduced" for v in verdicts.values()):
        log.error("bbrlab: --strict: not every experiment reproduced")
        return EXIT_CLAIM
    return 0


def cmd_merge(args) -> int:
    from .runs import merge
    from .store.results import read_json

    runs, errors = merge.merge_all([Path(d) for d in args.dirs], Path(args.into or args.results), sys.argv[1:])
    for rundir in runs:
        print(f"results: {rundir.path}")
    for error in errors:
        log.error(f"bbrlab: merge: {error}")
    if errors:
        return EXIT_ERROR
    incomplete = [r for r in runs if read_json(r.path / "run.json").get("status") != "complete"]
    if incomplete and not args.partial:  # what is missing was said above
        log.error(f"bbrlab: merge: incomplete: {', '.join(str(r.path) for r in incomplete)} (--partial accepts that)")
        return EXIT_REJECTED
    return 0


def cmd_report(args) -> int:
    from .runs import suite

    named = [e for e in args.experiments if not is_archive(Path(e))]
    # an archive: its own run (unpacked here), judged by the spec it ran with
    packed = [open_run(Path(e), Path(args.results)) for e in args.experiments if e not in named]
    runs = {r.path.parent.name: r for r in packed}
    exps, lacking = suite.load_each(list(map(experiment_path, named))) if named or not packed else ([], {})
    if not args.experiments:
        exps, lacking = suite_experiments()
    exps += [spec.build(spec.load_raw(r.path / "spec.yaml"), default_name=name) for name, r in runs.items()]
    suite.say_lacking(suite.needs(lacking), "report: leaving out")
    out = Path(args.out) if args.out else None
    print(f"report: {suite.write_report(Path(args.results), exps, lacking, out, runs)}")
    return 0


def cmd_plot(args) -> int:
    from .output.reports import summary
    from .verdicts import judge
    from .store.results import RunDir

    if len(args.dir) > 1 or args.out:
        return _plot_runs(args)
    if args.dir:
        rundir = open_run(Path(args.dir[0]), Path(args.results))
    else:
        name = args.experiment
        if name.endswith((".yaml", ".yml")) or "/" in name:  # a file of one's own: its runs go by its name
            name = spec.load(experiment_path(name)).name
        rundir = RunDir.latest(Path(args.results), name)
    chosen = formats(args.format)
    ran, today = _judging_specs(rundir)
    reasons = []
    if args.reanalyze:
        from .analysis.reanalysis import reanalyze
        from .store import metadata
        from .store.results import write_json

        count = reanalyze(rundir, ran)
        meta = metadata.read_run(rundir)
        meta.setdefault("reanalyzed", []).append({"at": time.time(), "git": metadata.git_revision(),
                                                  "points": count})
        write_json(rundir.path / "run.json", meta)
        log.info(f"analyzed {count} points again from their raw files")
        reasons.append("points analyzed again from their raw files")
    first = not (rundir.path / "verdict.json").is_file()  # stopped before its end: its own first verdict
    if first:
        verdict = summary.finish(rundir, ran, chosen)
        reasons = []  # that verdict already rests on the points as they are now
    judged_by = ran
    if not first and judge.stale(rundir, ran):
        reasons.append("with the run's spec.yaml as edited since its verdict")
    if today is not None and today.source != ran.source:
        judged_by = today
        reasons.append(f"with today's {today.name}.yaml")
    if reasons:
        verdict = summary.rejudge(rundir, judged_by, "; ".join(reasons), chosen)
    elif not first:
        verdict = summary.redraw(rundir, ran, chosen)
    if args.kind:
        summary.draw_kind(rundir, judged_by, args.kind, chosen)
    return _strict_status(args, verdict)


def _plot_runs(args) -> int:
    """plot --kind KIND RUN1 RUN2 ...: the runs on one figure (output/figures/multirun.py)."""
    from .output.figures import multirun

    if args.reanalyze or args.strict:
        raise SpecError(f"plot {'--reanalyze' if args.reanalyze else '--strict'}: for one run at a time")
    multirun.check(args.dir, args.kind, args.out, args.format)
    runs = [open_run(Path(d), Path(args.results)) for d in args.dir]
    figure, differ = multirun.draw(runs, args.kind, Path(args.out) if args.out else None, formats(args.format))
    if differ:
        print(differ)
    print(f"figure: {figure}")
    return 0


def _judging_specs(rundir) -> tuple[spec.Experiment, spec.Experiment | None]:
    from .verdicts import judge

    return judge.judging_specs(rundir, EXPERIMENTS)


def _strict_status(args, verdict: dict) -> int:
    """Exit status: EXIT_CLAIM under --strict unless every evaluated claim held."""
    if args.strict and verdict["verdict"] != "reproduced":
        log.error(f"bbrlab: --strict: claim check says {verdict['verdict']!r}")
        return EXIT_CLAIM
    return 0


def cmd_calibrate(args) -> int:
    from .schema import aqm_format, link

    path = aqm_format.calibration_path(args.aqm, link.default_shaper({"aqm": args.aqm})) if args.aqm else None
    if args.mahimahi:
        if args.aqm:
            raise SpecError("calibrate: --mahimahi takes no --aqm (Mahimahi's link queue is a droptail here)")
        path = aqm_format.calibration_path(aqm_format.FIFO, "mahimahi")
    sets = (aqm_format.path_sets(path) if path else []) + (args.set or [])
    points = spec.load(require(EXPERIMENTS) / "fidelity.yaml", sets, quick=args.quick).points
    _preflight(list(points))
    from .output.reports import calibration_table
    from .runs import calibrate

    cal = calibrate.measure(Path(args.results), quick=args.quick, overrides=args.set or [], path=path,
                            figure=not args.no_figure)
    if args.headroom > 0 and not args.set:  # a what-if measures the bottleneck only
        from .runs import headroom

        cal = headroom.add(Path(args.results), cal, args.headroom, path)
    print("\n".join(calibration_table.table(cal)))
    whatif = "  (a what-if: runs keep using this machine's calibration)" if args.set else ""
    print(f"calibration: {cal['file']}{whatif}")
    return 0


def _calibration(args, points: list[spec.Point]) -> dict | None:
    """The machine's calibration the run is judged against (measured first on first use, up
    to the highest rate of POINTS), with, under "paths", that of each AQM the points put at
    the bottleneck (each measured the same way, up to the rate of that AQM's points);
    none for the fidelity experiment itself, which is what calibration runs."""
    if all(p.experiment == "fidelity" for p in points):  # also: no points at all
        return None
    from .runs import calibrate, headroom
    from .schema import aqm_format

    def top(pts: list[spec.Point]) -> float:
        return max(p.link.top_rate for p in pts)

    by_path: dict[str, list[spec.Point]] = {}
    for p in points:
        path = aqm_format.calibration_path(p.link.aqm.kind, p.link.shaper)
        if path:
            by_path.setdefault(path, []).append(p)
    figure = not getattr(args, "no_figure", False)
    cal = calibrate.ensure(Path(args.results), top(points), figure=figure)
    for line in headroom.warnings(cal, points):
        log.warning(line)
    summary = calibrate.summary_for_run(cal)
    if by_path:
        summary["paths"] = {path: calibrate.summary_for_run(calibrate.ensure(Path(args.results), top(pts), path,
                                                                             figure=figure))
                            for path, pts in sorted(by_path.items())}
    return summary


def cmd_shell(args) -> int:
    from .runs import shell

    exp = _load(args)
    point = shell.the_point(exp, select(exp, parse_only(args.only)) if args.only else list(exp.points))
    _preflight([point])
    shell.run(point)
    return 0


def cmd_results_doc(args) -> int:
    from .output.docs import results_doc
    from .runs import docs

    rendered = docs.rendered(require(EXPERIMENTS), REPO)
    if args.check:
        stale = results_doc.stale(REPO, rendered)
        print("\n".join(f"results-doc: {file} differs from what {results_doc.COMMAND} writes" for file in stale)
              or "results-doc: every file is current")
        return EXIT_REJECTED if stale else 0
    changed = results_doc.write(REPO, rendered)
    print("\n".join(f"results-doc: wrote {file}" for file in changed) or "results-doc: every file is current")
    return 0


def cmd_preflight(args) -> int:
    from .emulation import preflight

    preflight.check({"bbr", "cubic"}, pacing_fq=True, lossy=True)
    print("preflight: ok (root, tools, Python modules, netem/htb/fq/prio qdiscs, u32 filters, bbr and cubic)")
    print(preflight.kernel_line())
    return 0


def cmd_clean(args) -> int:
    from .emulation.net import Lock, cleanup_leftovers

    with Lock():
        removed = cleanup_leftovers()
    print("\n".join(removed) if removed else "nothing to clean")
    return 0


# Each command's handler, under the name arguments.py gives it (`handler`).
HANDLERS = {f.__name__: f for f in (cmd_list, cmd_run, cmd_suite, cmd_merge, cmd_report, cmd_plot, cmd_calibrate,
                                    cmd_shell, cmd_results_doc, cmd_preflight, cmd_clean, *cli_files.HANDLERS)}


def main(argv: list[str] | None = None) -> int:
    args = arguments.parser(REPO / "results").parse_args(argv)
    log.set_verbosity(args.verbosity)
    try:
        return HANDLERS[args.handler](args)
    except BbrlabError as exc:  # PreflightError and SpecError included: one message
        log.error(f"bbrlab: {exc}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        log.error("bbrlab: interrupted")
        return EXIT_INTERRUPT


def console() -> None:
    """The `bbrlab` command (`python3 -m bbrlab`, and the console script `pip install .` makes)."""
    import faulthandler
    import signal

    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `bbrlab list | head` ends quietly, like any Unix tool
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # `kill -USR1 PID`: a stuck run's stacks
    sys.exit(main())
