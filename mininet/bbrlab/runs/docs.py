"""What `bbrlab results-doc` writes the docs from: docs/measurements.yaml, held to the
experiments it accounts for, and the suite's plan as `suite --dry-run` sizes it (the writing
itself is output/docs/results_doc.py's). Nothing is run or measured."""

from __future__ import annotations

from pathlib import Path

from ..errors import SpecError
from ..output.docs import measurements, results_doc
from . import estimate, suite


def rendered(folder: Path, root: Path) -> dict[str, dict[str, str]]:
    """{file: {region: text}} for the docs under ROOT, from FOLDER's experiments (all of them:
    one whose data is not here is refused) and ROOT's measurements, which must agree with them."""
    exps = {e.name: e for e in suite.experiments(folder)}
    book = measurements.load(root)
    problems = measurements.disagreements(book, exps, root)
    if problems:
        raise SpecError(f"{measurements.PATH} does not hold: " + "; ".join(problems))
    sizes = [estimate.size(list(exps.values())), estimate.size(suite.experiments(folder, quick=True))]
    return results_doc.render(book, exps, *(s.text() for s in sizes))
