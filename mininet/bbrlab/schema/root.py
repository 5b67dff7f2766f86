"""The project's root: the checkout whose experiments/, labs/ and results/ bbrlab works on.

Run from a checkout (./bbrlab), it is the checkout the package sits in (mininet/bbrlab), as
it always was. An installed package (pip install .) has no checkout around it: then the
folder $BBRLAB_HOME names, else the current directory or the nearest one above it that
holds experiments/fidelity.yaml, else the current directory, where `require` says in one
line that there is no project.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import SpecError

VARIABLE = "BBRLAB_HOME"
PACKAGE = Path(__file__).resolve().parents[1]
MARKER = Path("experiments") / "fidelity.yaml"  # every checkout has it: what calibration runs


def find(package: Path = PACKAGE, env=os.environ, cwd: Path | None = None) -> Path | None:
    """The project's root (see above), or None when there is none to be found."""
    if package.parent.name == "mininet":
        return package.parent.parent
    if env.get(VARIABLE):
        return Path(env[VARIABLE]).expanduser().resolve()
    try:
        here = (cwd or Path.cwd()).resolve()
    except OSError:  # the current directory was removed
        return None
    return next((d for d in (here, *here.parents) if (d / MARKER).is_file()), None)


def require(folder: Path) -> Path:
    """FOLDER (the project's experiments/ or labs/), or a one-line SpecError when it is not there."""
    if not folder.is_dir():
        raise SpecError(f"no {folder.name}/ in {folder.parent}: run bbrlab in a checkout of the project "
                        f"(or a folder below it), or set {VARIABLE} to one")
    return folder


ROOT = find() or Path.cwd()
