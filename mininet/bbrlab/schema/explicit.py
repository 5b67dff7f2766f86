"""`points:`, chosen points beside the cartesian sweep: each entry sets some keys together
(rate and RTT pairs, say), and the grid is every entry crossed with the file's sweep axes.

    link: {rate: 10Mbit, rtt: 40ms, buffer: 2bdp}
    flows: [{cc: [bbr, cubic], duration: 30s}]
    points:
      - {rate: 10Mbit, rtt: 20ms}
      - {rate: 50Mbit, rtt: 100ms}

gives four points (two pairs x two CCs). A key is named as `--set` names it (rate, or
link.rate); every entry sets the same keys, one value each, none of them swept as well,
and no two entries are the same. `--set` and `quick:` cannot change a key the points set.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import SpecError
from .claim_format import same_value

EXAMPLE = "[{rate: 10Mbit, rtt: 20ms}, {rate: 50Mbit, rtt: 100ms}]"


def _resolved(raw: dict, key: object, where: str, resolve: Callable[[dict, str], str]) -> str:
    try:
        return resolve(raw, str(key))
    except SpecError as exc:  # said as the entry's key, not as a --set the user never typed
        raise SpecError(str(exc).replace(f"--set {key}:", f"{where}:", 1)) from None


def keys(raw: dict, resolve: Callable[[dict, str], str]) -> dict[str, str]:
    """{the full path each key of the points names: the key as written} (empty without
    points), for refusing a --set or a quick key on the same path."""
    entries = raw.get("points")
    if not isinstance(entries, list):
        return {}
    out = {}
    for i, entry in enumerate(entries):
        for key in entry if isinstance(entry, dict) else ():
            out.setdefault(_resolved(raw, key, f"points.{i}.{key}", resolve), str(key))
    return out


def parse(raw: dict, axes: dict[str, list], resolve: Callable[[dict, str], str]) -> list[dict[str, Any]]:
    """The points' entries as {full path: value}, in file order; [{}] without `points:`."""
    entries = raw.get("points")
    if entries is None:
        return [{}]
    if not isinstance(entries, list) or not entries:
        raise SpecError(f"points: expected a list of mappings, e.g. {EXAMPLE}")
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not entry:
            raise SpecError(f"points.{i}: expected a mapping of keys to values, e.g. {{rate: 10Mbit, rtt: 20ms}}")
        chosen: dict[str, Any] = {}
        for key, value in entry.items():
            where = f"points.{i}.{key}"
            path = _resolved(raw, key, where, resolve)
            if path in axes:
                raise SpecError(f"{where}: {path} is swept too ({axes[path]}): give its values in one place")
            if isinstance(value, (list, dict)):
                raise SpecError(f"{where}: one value per point, got {value!r} (a list sweeps: write it at {path})")
            if path in chosen:
                raise SpecError(f"{where}: {path} given twice in one point")
            chosen[path] = value
        if out and set(chosen) != set(out[0]):
            raise SpecError(f"points.{i}: sets {', '.join(sorted(chosen))}, points.0 sets "
                            f"{', '.join(sorted(out[0]))}: give every point the same keys")
        compared = [{p: same_value(p, v) for p, v in e.items()} for e in out]
        this = {p: same_value(p, v) for p, v in chosen.items()}
        if this in compared:  # also 10Mbit and 10000kbit
            raise SpecError(f"points.{i}: the same as points.{compared.index(this)}")
        out.append(chosen)
    return out
