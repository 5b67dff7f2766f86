"""The experiment files of a folder by the name they give: two files of one name would
write their runs into one results/NAME/ folder, where `plot`, `report` and resuming take
the other's runs for their own. `list` marks them; `run` and `suite` refuse them.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SpecError
from .yaml_loader import read

ARCHIVED = "spec.yaml"  # a run's own spec (results/NAME/STAMP/spec.yaml): run again, it resumes that run


def name_of(path: Path) -> str:
    """The name the experiment file PATH gives (`name:`, else its file name); a file that does
    not parse goes by its file name (loading it says what is wrong)."""
    try:
        raw = read(path)
    except SpecError:
        return path.stem
    name = raw.get("name") if isinstance(raw, dict) else None
    return name if isinstance(name, str) else path.stem


def by_name(folder: Path) -> dict[str, list[Path]]:
    """Name -> the experiment files in FOLDER that give it, in file order."""
    names: dict[str, list[Path]] = {}
    for path in sorted(folder.glob("*.yaml")):
        names.setdefault(name_of(path), []).append(path)
    return names


def namesakes(path: Path, name: str, folder: Path) -> list[Path]:
    """The files in FOLDER other than PATH that give NAME too (none for a run's own spec.yaml)."""
    if path.name == ARCHIVED or not folder.is_dir():
        return []
    mine = path.resolve()
    return [p for p in by_name(folder).get(name, []) if p.resolve() != mine]


def _refused(path: Path, other: Path, name: str) -> SpecError:
    return SpecError(f"{path} and {other} are both named {name}: their runs would share results/{name}/; "
                     "give each file its own name")


def refuse_namesakes(path: Path, name: str, folder: Path) -> None:
    """A SpecError naming PATH and a file of FOLDER that gives its NAME too."""
    others = namesakes(path, name, folder)
    if others:
        raise _refused(path, others[0], name)


def refuse_any(folder: Path) -> None:
    """A SpecError naming the first two files of FOLDER that give one name (the suite runs them all)."""
    for name, paths in by_name(folder).items():
        if len(paths) > 1:
            raise _refused(paths[1], paths[0], name)
