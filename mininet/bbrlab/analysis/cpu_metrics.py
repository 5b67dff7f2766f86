"""The emulator's own CPU during a point: a saturated emulator silently produces wrong
numbers, so a point whose CPUs were busy past these bounds is flagged CPU-bound (and its
verdicts set it aside). Reads the sampler's /proc/stat snapshots (raw/cpu.txt: "### EPOCH"
then the cpu lines)."""

from __future__ import annotations

from . import system_output

CPU_BOUND_BUSY = 0.90  # mean busy share of all CPUs above which a run is flagged CPU-bound
CORE_BOUND_BUSY = 0.95  # ... or of any one CPU (forwarding through veths can saturate one)
# the metrics.json keys this module writes (schema/metric_names.py)
METRICS = ("cpu_busy_mean", "cpu_busy_max", "cpu_core_busy_max", "cpu_bound")


def cpu_series(text: str, t0: float) -> dict[str, list[tuple[float, float]]]:
    """Busy fraction over time of every cpu line of /proc/stat ("cpu": all CPUs; "cpu0", ...)."""
    snaps: dict[str, list] = {}
    t = None
    for line in text.splitlines():
        if line.startswith("### "):
            t = float(line[4:])
        elif line.startswith("cpu") and t is not None:
            name = line.split(maxsplit=1)[0]
            snaps.setdefault(name, []).append((t, system_output.parse_proc_stat(line, name)))
    series: dict[str, list[tuple[float, float]]] = {}
    for name, points in snaps.items():
        series[name] = []
        for (ta, a), (tb, b) in zip(points, points[1:]):
            try:
                series[name].append(((ta + tb) / 2 - t0, system_output.cpu_busy_fraction(a, b)))
            except ValueError:
                continue
    return series


def during(series: list[tuple[float, float]], end: float) -> list[float]:
    """The values sampled while the flows ran (all of them if none was)."""
    return [v for t, v in series if 0 <= t <= end] or [v for _, v in series]


def summarize(text: str, t0: float, end: float, series: dict, out: dict) -> None:
    """Into SERIES its "cpu" (all CPUs' busy share over time), into OUT the busy shares
    while the flows ran and whether the point was CPU-bound. TEXT: raw/cpu.txt."""
    cpus = cpu_series(text, t0)
    cpu = cpus.pop("cpu", [])
    series["cpu"] = [[round(t, 3), round(v, 3)] for t, v in cpu]
    busy = during(cpu, end)
    if busy:
        out["cpu_busy_mean"] = round(sum(busy) / len(busy), 4)
        out["cpu_busy_max"] = round(max(busy), 4)
        per_core = [sum(v) / len(v) for v in (during(c, end) for c in cpus.values()) if v]
        out["cpu_core_busy_max"] = round(max(per_core), 4) if per_core else None
        out["cpu_bound"] = (out["cpu_busy_mean"] > CPU_BOUND_BUSY
                            or (out["cpu_core_busy_max"] or 0) > CORE_BOUND_BUSY)
