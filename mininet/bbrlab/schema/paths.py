"""Where a key lives in an experiment file: the sweepable keys' dotted paths, a short key
('rate') resolved to its path ('link.rate'), a value set at a path, and a `--set key=value`
read. experiment.py applies the quick profile, --set and sweeps through these.
"""

from __future__ import annotations

from typing import Any

import yaml

from . import aqm_format as aqms
from . import yaml_loader
from ..errors import SpecError, did_you_mean

# Where a list means "sweep this": dotted paths, '*' matching a flow group index.
SWEEPABLE = (
    "link.rate", "link.rtt", "link.buffer", "link.loss", "link.loss_direction", "link.jitter",
    "link.forward_share", "link.burst", "link.shaper", "link.trace", "link.trace_interval",
    "link.delay_variation", "link.slot", "link.slot_max", "link.slot_packets", "link.slot_bytes", "link.slot_on",
    "pacing",
    "flows.*.cc", "flows.*.count", "flows.*.start", "flows.*.stagger", "flows.*.duration",
    "flows.*.until", "flows.*.size", "flows.*.rtt", "flows.*.loss", "cc",
    "flows.*.workload.rate", "flows.*.workload.load", "flows.*.workload.sizes", "flows.*.ecn", "flows.*.build",
    "link.aqm", *[f"link.{kind}.{name}" for kind, params in aqms.PARAMS.items() for name in params],
)
TOP_KEYS = {"name", "title", "description", "link", "pacing", "cc", "flows", "sysctls", "sampling",
            "repeat", "seed", "plot", "claims", "quick", "reference", "notes", "points"}


def leaf_paths(raw: dict) -> list[str]:
    """Concrete dotted paths of the sweepable leaves this spec has or could have."""
    paths = [p for p in SWEEPABLE if not p.startswith("flows.")]
    for i, _ in enumerate(raw.get("flows") or []):
        paths += [p.replace("*", str(i)) for p in SWEEPABLE if p.startswith("flows.")]
    return paths


def resolve_key(raw: dict, key: str) -> str:
    """Full dotted path for KEY: itself when it is a path, else a unique leaf name ('rate')."""
    first = key.split(".")[0]
    if first in TOP_KEYS and not (key == "cc" and "cc" not in raw):  # else `cc` is a flow group's
        return key
    matches = [p for p in leaf_paths(raw) if p.endswith("." + key) or p == key]
    if len(matches) > 1:
        # 'rtt' means link.rtt unless a flow group sets its own rtt: prefer the one key present
        present = [p for p in matches if get_path(raw, p) is not None]
        groups = raw.get("flows") if isinstance(raw.get("flows"), list) else []
        if len(present) == 1 and not (present[0].startswith("flows.") and len(groups) > 1):
            return present[0]  # (one group's own key of several would change that group alone)
        # 'loss' means link.loss when neither it nor a group's own loss is written
        shared = [p for p in matches if not p.startswith("flows.")]
        if not present and len(shared) == 1 and shared[0] != "cc":
            return shared[0]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        leaves = sorted({p.rsplit(".", 1)[-1] for p in leaf_paths(raw)})
        raise SpecError(f"--set {key}: unknown key{did_you_mean(key, leaves)} "
                        "(examples: rate, rtt, buffer, loss, cc, link.rate, flows.0.cc)")
    raise SpecError(f"--set {key}: ambiguous, say one of {', '.join(matches)}")


def set_path(raw: dict, path: str, value: Any) -> None:
    node: Any = raw
    parts = path.split(".")
    for depth, part in enumerate(parts[:-1]):
        here = ".".join(parts[: depth + 1])
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise SpecError(f"{here}: no such list entry")
            node = node[int(part)]
        elif isinstance(node, dict):
            if part == "sysctls":
                node = node.setdefault(part, {})
                # sysctl names contain dots: the rest of the path is one key
                node[".".join(parts[depth + 1:])] = value
                return
            node = node.setdefault(part, {})
        else:
            raise SpecError(f"{here}: cannot set inside a {type(node).__name__}")
    last = parts[-1]
    if isinstance(node, list):
        if not last.isdigit() or int(last) >= len(node):
            raise SpecError(f"{path}: no such list entry")
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise SpecError(f"{path}: cannot set inside a {type(node).__name__}")


def parse_override(text: str) -> tuple[str, Any]:
    """'rate=20Mbit' -> ('rate', '20Mbit'); the value is read as YAML ('[bbr, cubic]' is a list)."""
    if "=" not in text:
        raise SpecError(f"--set {text}: expected key=value")
    key, value = text.split("=", 1)
    try:
        parsed = yaml_loader.value(value) if value.strip() else ""
    except yaml.YAMLError:
        parsed = value
    return key.strip(), parsed


def get_path(raw: dict, path: str) -> Any:
    node: Any = raw
    for part in path.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node
