"""The commands on stored runs and the project's own files: export, compare, pack, unpack,
lab list and lab check, format-doc, fetch-data, trace synth and trace show. cli.py dispatches
to them (HANDLERS).
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import log
from .errors import EXIT_ERROR, EXIT_REJECTED, SpecError
from .store.pack import open_run


def cmd_export(args) -> int:
    from .output.files import export, flent

    writers = {"csv": export.export, "flent": flent.export}
    if args.format not in writers:
        raise SpecError(f"--format {args.format}: only csv is written (tables), or flent (a data file per point)")
    runs = [open_run(Path(d), Path(args.results)) for d in args.runs]
    for path in writers[args.format](runs, Path(args.out)):  # each refuses an --out that is a file
        print(path)
    return 0


def cmd_compare(args) -> int:
    from .output.reports import compare
    from .output.figures import plots

    a, b = open_run(Path(args.a), Path(args.results)), open_run(Path(args.b), Path(args.results))
    figure = compare.figure_path(a, b, args.out)
    metrics = compare.check_metrics(args.metric or list(compare.DEFAULT_METRICS))
    print("\n".join(compare.table(a, b, metrics)))
    pairs = compare.matched(a, b)[0]
    if pairs:
        print(f"figure: {plots.overlay(a, b, pairs, figure)}")
    return 0


def cmd_pack(args) -> int:
    from .store import pack

    print(f"archive: {pack.pack(open_run(Path(args.run), Path(args.results)), Path(args.out) if args.out else None)}")
    return 0


def cmd_unpack(args) -> int:
    print(f"results: {open_run(Path(args.archive), Path(args.results)).path}")
    return 0


def cmd_lab_list(args) -> int:
    from .runs import lab

    for one in lab.labs():
        print(f"{one.number}  {one.name:12s} {one.title}")
        print("\n".join(f"     {c}" for c in one.commands()))
    return 0


def cmd_lab_check(args) -> int:
    from .runs import lab

    chosen = lab.find(args.lab)
    findings = lab.check(chosen, [Path(d) for d in args.runs])
    accepted = all(f.problem is None for f in findings)
    print(f"{chosen.label}: {'accepted' if accepted else 'not accepted'}: the runs "
          + ("can be graded" if accepted else "cannot be graded yet"))
    print("\n".join(f.line() for f in findings))
    return 0 if accepted else EXIT_REJECTED


def cmd_format_doc(args) -> int:
    from .output.docs import format_doc

    sys.stdout.write(format_doc.render())
    return 0


def cmd_fetch_data(args) -> int:
    from .runs import fetch

    done, errors = fetch.lines(fetch.fetch_all(fetch.base_url(args.source)))
    for line in done:
        print(line)
    for line in errors:
        log.error(f"bbrlab: fetch-data: {line}")
    return EXIT_ERROR if errors else 0


def cmd_trace_synth(args) -> int:
    from .schema import traces, units

    try:
        times = traces.synthesize(args.kind, units.duration(args.seconds, "--seconds"), units.rate(args.rate, "--rate"),
                                  units.rate(args.low, "--low") if args.low else None,
                                  units.duration(args.period, "--period"), units.duration(args.step, "--step"),
                                  args.seed)
    except ValueError as exc:  # a length, rate or kind synthesize cannot make
        raise SpecError(f"trace synth: {exc}") from None
    output = Path(args.output)
    try:  # a directory, a missing folder or no permission: said by the OS, in one line
        traces.write(output, times)
    except OSError as exc:
        raise SpecError(f"trace synth: cannot write {output} ({exc.strerror})") from None
    print("\n".join(traces.summary_lines(traces.load(output))))
    return 0


def cmd_trace_show(args) -> int:
    from .schema import traces

    print("\n".join(traces.summary_lines(traces.load(Path(args.trace)))))
    return 0


# the handlers cli.py adds to its own, under the names arguments.py gives them
HANDLERS = (cmd_export, cmd_compare, cmd_pack, cmd_unpack, cmd_lab_list, cmd_lab_check, cmd_format_doc, cmd_fetch_data,
            cmd_trace_synth, cmd_trace_show)
