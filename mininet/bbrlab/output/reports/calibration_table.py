"""A machine's calibration (runs/calibrate) as a few lines for the terminal: the timer, each
measured rate's fidelity numbers and whether every target held, and how far it vouches."""

from __future__ import annotations

from ...schema import aqm_format as aqms

COLUMNS = (  # (heading, the row's key, format), in the order printed
    ("delivery", "link_delivery", "{:.3f}"),
    ("peak/100ms", "link_peak_ratio", "{:.3f}"),
    ("longest pause", "link_gap_max_ms", "{:.1f} ms"),
    ("peak beyond", "link_peak_beyond_pause", "{:.3f}"),
    ("CUBIC eff.", "steady_link_efficiency", "{:.3f}"),
    ("BBR bw/rate", "bbr_bw_ratio", "{:.3f}"),
    ("idle RTT err", "idle_rtt_error_ms", "{:+.2f} ms"),
    ("CUBIC queue", "queue_delay_p50_ms", "{:.1f} ms"),
)
# under an AQM: how busy the backlog of several CUBIC flows kept the link
BACKLOG_COLUMN = ("busy, backlog", "link_busy", "{:.3f}")


def table(cal: dict) -> list[str]:
    """The calibration CAL as a few lines for the terminal."""
    t = cal["timer"]
    columns = COLUMNS + ((BACKLOG_COLUMN,) if any(r.get("link_busy") is not None for r in cal["rates"]) else ())
    lines = [f"calibration {cal['key']} ({cal['machine']['virtualization']}, {cal['machine']['cpus']} CPUs, "
             f"kernel {cal['machine']['kernel']}), shaper {cal['shaper']}, queue {cal.get('queue', aqms.FIFO)}",
             f"  timer lateness (cyclictest, 1 ms): median {t['p50_us']:.0f} us, p99 {t['p99_us']:.0f} us, "
             f"max {t['max_us']:.0f} us",
             "  rate       " + "".join(f"{head:>14s}" for head, _, _ in columns) + "  faithful"]
    for row in cal["rates"]:
        cells = "".join(f"{fmt.format(row[key]) if row.get(key) is not None else '–':>14s}" for _, key, fmt in columns)
        verdict = "yes" if row["faithful"] else "NO: " + "; ".join(row["missed"])
        lines.append(f"  {row['rate_mbps']:>5g} Mbit/s{cells}  {verdict}{_attempts(row)}")
    up_to = cal["faithful_up_to_bps"]
    lines.append(f"  faithful up to {up_to / 1e6:g} Mbit/s" if up_to else "  faithful at no measured rate")
    return lines + _headroom(cal.get("headroom"))


def _headroom(head: dict | None) -> list[str]:
    """How many flows each faithful rate carries before a point is set aside (runs/headroom)."""
    if not head:
        return []
    cells = []
    for rate, row in head["rates"].items():
        probes = [p for p in row["probes"] if p.get("cpu_busy_mean") is not None]
        counts = ", ".join(str(p["flows"]) for p in probes)
        shares = ", ".join(format(p["cpu_busy_mean"], ".2f") for p in probes)
        tried = f"; CPUs' busy share with {counts} flows: {shares}" if probes else ""
        carries = (f"{row['carries']} ({row['bound_at']}: {', '.join(row['why'])})" if row["bound_at"] is not None
                   else f"{row['carries']} or more (none set aside)")
        cells.append(f"  {float(rate):>5g} Mbit/s: {carries}{tried}")
    return [f"  headroom: {head['cc']} flows at once before a point is set aside ({head['profile']} probes)"] + cells


def _attempts(row: dict) -> str:
    """What a rate's earlier attempts missed, said after its verdict."""
    earlier = row.get("attempts") or []
    if not earlier:
        return ""
    times = "once" if len(earlier) == 1 else f"{len(earlier)} times"
    if row["faithful"]:
        return f" (failed {times}, passed on repeat: {'; '.join(earlier[-1])})"
    return f" (on each of {len(earlier) + 1} attempts)"
