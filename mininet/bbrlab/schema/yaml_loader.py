"""Reading the YAML of experiment files, runs' spec.yaml and lab manifests, strictly.

YAML as PyYAML reads it keeps the last of two equal keys without a word (`link:` twice:
the first link is gone), so a key given twice is refused here, with both its lines. A file
that is not UTF-8 text and a tab where YAML wants spaces are said in one line too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from ..errors import SpecError


# libyaml's parser where PyYAML was built with it (Debian's is): the pure-Python one took
# 0.5 s a file in the testbed's guest, 30 of the 66 s of `bbrlab list` there. Only scanning
# and parsing differ; the resolvers and constructors below are PyYAML's own either way.
_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Loader(_BASE):
    """YAML as the format reads it: booleans are true and false only (any case), as YAML 1.2
    has them; yes, no, on and off, booleans to YAML 1.1, stay words (`ecn: on` is refused as
    not true or false, where PyYAML would read it as true without a word)."""


Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
for _first in "tTfF":
    Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                 [_first])

MERGE_TAG = "tag:yaml.org,2002:merge"  # `<<: *anchor`: its keys are meant to be overridden


def _duplicates(node: yaml.Node, path: str, seen: set[int]) -> None:
    """A SpecError for the first key given twice in one mapping of NODE's tree."""
    if id(node) in seen:  # an alias of a node checked already (or a recursive structure)
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        lines: dict[Any, int] = {}
        merges = [k.start_mark.line + 1 for k, _ in node.value if k.tag == MERGE_TAG]
        if len(merges) > 1:  # PyYAML lets the last win where a list lets the first: ambiguous
            raise SpecError(f"{path or 'the top level'}: `<<:` given twice, at lines {merges[0]} and {merges[1]}: "
                            "give one `<<: [*first, *second]` (where both have a key, the first's is kept)")
        for key_node, value_node in node.value:
            if key_node.tag == MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
                continue
            key = key_node.value
            where = f"{path}.{key}" if path else str(key)
            line = key_node.start_mark.line + 1
            if key in lines:
                raise SpecError(f"{where}: given twice, at lines {lines[key]} and {line} (YAML would keep "
                                "the last one without a word): remove one")
            lines[key] = line
            _duplicates(value_node, where, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _duplicates(item, f"{path}.{i}" if path else str(i), seen)


def _problem(exc: yaml.YAMLError, text: str) -> str:
    """What is wrong, in a few words: a tab where YAML wants spaces, or where it is not valid."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return "not valid YAML"
    line = text.splitlines()[mark.line] if mark.line < len(text.splitlines()) else ""
    if "\\t" in str(getattr(exc, "problem", "")) or "\t" in line[: mark.column + 1]:
        return f"line {mark.line + 1}: a tab; YAML indents with spaces only (replace the tab with spaces)"
    return f"not valid YAML at line {mark.line + 1}"


def value(text: str) -> Any:
    """TEXT read as one YAML value, as the files read it (`--set rate=20Mbit`, `[bbr, cubic]`)."""
    return yaml.load(text, Loader=Loader)


def loads(text: str, name: str) -> Any:
    """TEXT read as YAML (NAME: where it is from, for the messages), every key once."""
    loader = Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _duplicates(node, "", set())
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise SpecError(f"{name}: {_problem(exc, text)}") from None
    except SpecError as exc:
        raise SpecError(f"{name}: {exc}") from None
    finally:
        loader.dispose()


def read(path: Path) -> Any:
    """The YAML document in the file PATH; every problem is one SpecError that names the file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecError(f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}): "
                        "save it as UTF-8") from None
    return loads(text, str(path))
