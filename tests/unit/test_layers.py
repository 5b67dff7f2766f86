"""The package's folders are its layers: no import runs from a lower layer to a higher one,
no imports close a circle, and no module uses another's private names.

The order is written here once. A module may import from its own layer and from any layer
below it; `errors`, `log` and the package's `__init__` (its version) are the ground every layer
stands on; `cli.py`, `cli_files.py`, `arguments.py` and `__main__.py` sit on top and only parse and dispatch.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mininet" / "bbrlab"

LAYERS = ("ground", "schema", "emulation", "traffic", "store", "analysis", "verdicts", "output", "runs", "top")
GROUND = {"bbrlab", "bbrlab.errors", "bbrlab.log"}
TOP = {"bbrlab.cli", "bbrlab.cli_files", "bbrlab.arguments", "bbrlab.__main__"}


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    if module in GROUND:
        return "ground"
    if module in TOP:
        return "top"
    folder = module.split(".")[1]
    if folder not in LAYERS:
        raise AssertionError(f"{module}: not in a layer's folder (the layers: {', '.join(LAYERS[1:-1])})")
    return folder


def imports(path: Path, package: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, module) for every bbrlab module PATH imports, at any depth of the file."""
    name = module_name(path, package)
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "bbrlab"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != "bbrlab":
                continue
            for alias in node.names:  # `from .x import y`: y is a module or a name in x
                candidate = f"{base}.{alias.name}"
                found.append((node.lineno, candidate if _is_module(candidate, package) else base))
    return found


def _is_module(dotted: str, package: Path) -> bool:
    path = package.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def back_imports(package: Path = PACKAGE) -> list[str]:
    """Every import from a lower layer to a higher one, as 'file:line: A (layer) imports B (layer)'."""
    wrong = []
    for path in sorted(package.rglob("*.py")):
        src = module_name(path, package)
        for line, target in imports(path, package):
            if LAYERS.index(layer_of(target)) > LAYERS.index(layer_of(src)):
                wrong.append(f"{path.relative_to(package.parent)}:{line}: {src} ({layer_of(src)}) imports "
                             f"{target} ({layer_of(target)})")
    return wrong


def circles(package: Path = PACKAGE) -> list[list[str]]:
    """The import graph's circles (strongly connected sets of more than one module, or a
    module importing itself), each sorted; imports inside functions count too."""
    graph = {module_name(p, package): {t for _, t in imports(p, package)} for p in package.rglob("*.py")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def private_uses(package: Path = PACKAGE) -> list[str]:
    """'file:line: name' for every private name (one underscore) taken from another module."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        modules = set()  # local names bound to bbrlab modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("bbrlab")):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {alias.name}")
                    modules.add(alias.asname or alias.name)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_every_module_sits_in_a_layer_folder():
    for path in PACKAGE.rglob("*.py"):
        layer_of(module_name(path))


def test_no_import_runs_from_a_lower_layer_to_a_higher_one():
    assert back_imports() == []


def test_no_imports_close_a_circle():
    assert circles() == []


def test_no_module_uses_another_modules_private_names():
    assert private_uses() == []


def test_the_programs_run_by_path_import_the_standard_library_alone():
    """traffic/inhost/ runs by path inside the emulated hosts, the socket sampler by hand in a
    host too, and the kernel probe on hosts and provisioned machines (vm/dispatch.sh, the
    netkernel role), where bbrlab is not importable."""
    programs = sorted((PACKAGE / "traffic" / "inhost").glob("*.py"))
    programs += [PACKAGE / "traffic" / "tcp_diag.py", PACKAGE / "emulation" / "kernel_probe.py"]
    assert {p.name for p in programs} >= {"shortflows.py", "tcp_diag.py", "kernel_probe.py"}
    for path in programs:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0 and (node.module or "").split(".")[0] != "bbrlab", (path.name, node.lineno)
            elif isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] != "bbrlab" for a in node.names), (path.name, node.lineno)


def test_a_planted_circle_and_private_use_are_found(tmp_path):
    package = tmp_path / "bbrlab"
    (package / "output").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "output" / "__init__.py").write_text("")
    (package / "output" / "plots.py").write_text("def f():\n    from . import plots_loss\n")
    (package / "output" / "plots_loss.py").write_text("from .plots import _cc_of\nfrom . import plots\nplots._x\n")
    assert circles(package) == [["bbrlab.output.plots", "bbrlab.output.plots_loss"]]
    assert private_uses(package) == ["bbrlab/output/plots_loss.py:1: _cc_of", "bbrlab/output/plots_loss.py:3: plots._x"]


def test_a_planted_back_import_is_found(tmp_path):
    package = tmp_path / "bbrlab"
    for folder in ("schema", "output"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "errors.py").write_text("")
    (package / "output" / "plots.py").write_text("from ..schema import units\n")
    (package / "schema" / "units.py").write_text("from ..errors import x\n\n\ndef f():\n    from ..output import plots\n")
    assert back_imports(package) == ["bbrlab/schema/units.py:5: bbrlab.schema.units (schema) imports "
                                     "bbrlab.output.plots (output)"]


@pytest.mark.parametrize("source, expected", [
    ("from . import claims", "bbrlab.verdicts.claims"),
    ("from ..store.results import RunDir", "bbrlab.store.results"),
    ("from .. import __version__", "bbrlab"),
    ("import bbrlab.schema.units", "bbrlab.schema.units"),
])
def test_imports_are_resolved_to_modules(tmp_path, source, expected):
    package = tmp_path / "bbrlab"
    for folder in ("verdicts", "store", "schema"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "store" / "results.py").write_text("")
    (package / "schema" / "units.py").write_text("")
    (package / "verdicts" / "claims.py").write_text("")
    (package / "verdicts" / "me.py").write_text(source + "\n")
    assert imports(package / "verdicts" / "me.py", package) == [(1, expected)]
