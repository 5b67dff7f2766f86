"""Why a verdict sets a point aside: its own metrics said the emulation could not be trusted
there (or this machine's calibration gates its rate). One table: each reason, the verdict's
list of the points it set aside, and how the verdict, its warnings and `lab check` say it."""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.analyze import LINK_DELIVERY_MIN

CPU_BOUND, LINK_SHORT, GATED = "CPU-bound", "link below its rate", "at or above the fidelity gate"
OFF_SCHEDULE, SENDER_SHORT = "link off its schedule", "senders held back"
EMULATOR_DROPS = "dropped inside the emulator"


@dataclass(frozen=True)
class SetAside:
    """Why a point is set aside, and how each report says it."""
    reason: str  # the point's reason, in checks' notes
    points: str  # the verdict's list of the points it set aside
    title: str  # in the verdict's "why"
    warning: str  # verdict_lines's warning before the points
    lab: str  # lab check's line: "the emulator did not keep up: LAB points"


# The point's own metrics that set it aside, in the order reports list them (the gate, the
# calibration's, comes after them)
SET_ASIDE = {
    "cpu_bound": SetAside(CPU_BOUND, "cpu_bound_points", "CPU-bound points",
                          "CPU-bound points (emulation not trustworthy)", "CPU-bound at"),
    "link_short": SetAside(LINK_SHORT, "link_short_points", LINK_SHORT,
                           f"the backlogged bottleneck sent below {LINK_DELIVERY_MIN:.0%} of its rate (the "
                           "emulator's limit)", "the bottleneck sent below its rate at"),
    "off_schedule": SetAside(OFF_SCHEDULE, "off_schedule_points", OFF_SCHEDULE,
                             "the link did not keep its schedule (a rate change in force late, or a trace's "
                             "updates skipped)", "the link did not keep its schedule at"),
    "emulator_drops": SetAside(EMULATOR_DROPS, "emulator_drop_points", EMULATOR_DROPS,
                               "Mahimahi's chain dropped packets outside its link (a shell late to read its TUN "
                               "device: the emulator's limit)", "Mahimahi's chain dropped packets outside its link at"),
    "sender_short": SetAside(SENDER_SHORT, "sender_short_points", SENDER_SHORT,
                             "the flows left a plain link idle, held back by their sending hosts (late pacing "
                             "timers, CPU)", "the sending hosts held the flows back at"),
}
POINT_LISTS = tuple(a.points for a in SET_ASIDE.values())
