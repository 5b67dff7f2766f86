"""The package's rooms stay small enough to read: no module over 450 lines, no function of
60 lines or more (docs/contributing.md). A new capability is a module on its floor, not a
branch in a long function; this fails on the first one that grows past either bound."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mininet" / "bbrlab"
MODULE_LINES = 450
FUNCTION_LINES = 60


def sizes(package: Path = PACKAGE) -> tuple[list[str], list[str]]:
    """The modules over MODULE_LINES and the functions of FUNCTION_LINES or more under PACKAGE."""
    modules, functions = [], []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text()
        where = path.relative_to(package.parent)
        if len(text.splitlines()) > MODULE_LINES:
            modules.append(f"{where}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length >= FUNCTION_LINES:
                    functions.append(f"{where}:{node.lineno} {node.name}: {length} lines")
    return modules, functions


def test_no_module_over_450_lines_and_no_function_of_60():
    modules, functions = sizes()
    assert not modules, modules
    assert not functions, functions


def test_the_bounds_catch_a_long_module_and_a_long_function(tmp_path):
    package = tmp_path / "bbrlab"
    package.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES))
    (package / "long.py").write_text(f"def grown():\n{body}\n" + "\n" * MODULE_LINES)
    (package / "short.py").write_text("def fine():\n    return 1\n")
    modules, functions = sizes(package)
    assert modules == [f"bbrlab/long.py: {MODULE_LINES + FUNCTION_LINES + 1} lines"]
    assert functions == [f"bbrlab/long.py:1 grown: {FUNCTION_LINES + 1} lines"]
