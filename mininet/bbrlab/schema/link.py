"""The bottleneck link of an experiment spec: `link:` read and checked into a typed Link.

Rate, base RTT, buffer (packets, bytes or BDP multiples), random loss, the shaper's design
and burst, rate changes, a Mahimahi trace, order-keeping delay variation and netem slots.
Every error names the key that is wrong (spec.py reads the rest of the file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from . import aqm_format as aqms
from . import datasets, traces, units
from .checks import check_keys as _check_keys
from .checks import choice as _choice
from .checks import count as _count
from ..errors import SpecError

MTU_BYTES = 1500
FRAME_BYTES = MTU_BYTES + 14  # what a full-size packet occupies on the wire and in a queue
PAYLOAD_BYTES = 1448  # TCP payload of a full segment (MSS with timestamps): 0.956 of a frame
# the bottleneck's designs (shapers.py; cake: CAKE's own shaper; mahimahi: Mahimahi 0.96's shells
# chained as ReBBR chained them, emulation/mahimahi.py, which also give the delay and the loss)
SHAPERS = ("netem", "htb", "tbf", "cake", "mahimahi")
DEFAULT_SHAPER = "netem"  # chosen by measurement: docs/design.md "The bottleneck"
# A trace's rate changes must reach the packets already queued: htb applies the rate in force
# when a packet leaves; netem fixes a packet's departure when it is queued (measured: it
# delivered 0.56 of an LTE trace behind a 1.25 MB buffer), so it is refused with a trace.
TRACE_SHAPER = "htb"
LOSS_DIRECTIONS = ("data", "both")
MAX_BUFFER_PACKETS = 2**32 - 1  # tc's limit (netem, pfifo, the AQMs): a u32 count of packets
LINK_KEYS = {"rate", "rtt", "buffer", "loss", "loss_direction", "jitter", "forward_share", "burst", "changes",
             "shaper", "trace", "trace_interval", "delay_variation", "slot", "slot_max", "slot_packets",
             "slot_bytes", "slot_on"} | aqms.LINK_KEYS
SLOT_KEYS = ("slot_max", "slot_packets", "slot_bytes", "slot_on")
SLOT_DIRECTIONS = ("ack", "data")


@dataclass(frozen=True)
class Buffer:
    """The bottleneck queue: packets, bytes, or a multiple of the BDP."""

    value: float
    unit: str  # "pkt", "bytes", "bdp" or "time" (seconds of the rate: how head-end buffers are quoted)

    def packets(self, rate_bps: float, rtt_s: float) -> int:
        if self.unit == "pkt":
            return int(self.value)
        # no clamping here: Link validation must see (and refuse) a buffer under 2 packets
        if self.unit == "bdp":
            return round(self.value * rate_bps * rtt_s / 8 / MTU_BYTES)
        if self.unit == "time":
            return round(self.value * rate_bps / 8 / FRAME_BYTES)
        return int(self.value // MTU_BYTES)

    def label(self) -> str:
        if self.unit == "time":
            return units.fmt_time(self.value)
        return {"pkt": f"{self.value:g} pkt", "bdp": f"{self.value:g} BDP", "bytes": f"{self.value:g} B"}[self.unit]


@dataclass(frozen=True)
class RateChange:
    at: float
    rate: float


@dataclass(frozen=True)
class Slot:
    """netem `slot` on one direction's delay line (aggregation as on wifi, cellular or
    DOCSIS links): packets leave only while a slot is open; a slot closes after PACKETS
    packets or BYTES bytes, and the next opens after a draw uniform in [MIN, MAX] s."""

    on: str  # "ack": the receivers' ACKs; "data": the data after the bottleneck
    min: float
    max: float
    packets: int | None = None
    bytes: int | None = None


@dataclass(frozen=True)
class Link:
    rate: float
    rtt: float
    buffer: Buffer
    loss: float = 0.0
    loss_direction: str = "data"
    jitter: float = 0.0
    forward_share: float = 0.5
    burst: int | None = None  # bytes, htb and tbf only; None = sized from the rate
    burst_time: float | None = None  # or seconds at the rate (e.g. the guest's timer lateness)
    changes: tuple[RateChange, ...] = ()
    shaper: str = DEFAULT_SHAPER
    # A Mahimahi trace replayed at the bottleneck (traces.py): its file, and how often the
    # rate is updated. `rate` is then the trace's average (scaled to link.rate if given).
    trace: str | None = None
    trace_interval: float = 0.010
    # Extra one-way delay on the data direction, uniform in [0, delay_variation], with the
    # packets' order kept (topo.py): the base RTT stays the path's smallest RTT.
    delay_variation: float = 0.0
    slot: Slot | None = None
    aqm: aqms.Aqm = aqms.Aqm()  # the buffer's queue discipline (aqm_format.py): fifo unless given

    @property
    def round_trip_loss(self) -> float:
        """The odds that one exchange is lost: a segment, or with loss_direction `both`
        also its answer (a SYN's SYN-ACK, a retransmission's ACK)."""
        return 1 - (1 - self.loss) ** 2 if self.loss_direction == "both" else self.loss

    @property
    def top_rate(self) -> float:
        """The highest rate the link is set to (its rate, or a later change's)."""
        return max([self.rate] + [c.rate for c in self.changes])

    @property
    def lowest_rate(self) -> float:
        """The lowest rate the link is set to (its rate, or a later change's)."""
        return min([self.rate] + [c.rate for c in self.changes])

    @property
    def wire_bytes(self) -> int:
        """What a full-size packet uses of the rate: an Ethernet frame of tc's shapers, an IP
        packet of Mahimahi's link (a trace line per 12000 bits carries one 1500-byte packet)."""
        return MTU_BYTES if self.shaper == "mahimahi" else FRAME_BYTES

    @property
    def buffer_packets(self) -> int:
        return self.buffer.packets(self.rate, self.rtt)

    @property
    def bdp_packets(self) -> float:
        return self.rate * self.rtt / 8 / MTU_BYTES

    def full_buffer_seconds(self, rate_bps: float | None = None) -> float:
        """How long a full bottleneck buffer takes to drain (at RATE_BPS, default the link's)."""
        return self.buffer_packets * FRAME_BYTES * 8 / (rate_bps or self.rate)


BUFFER_UNITS = "pkt, bdp, bytes like 5000B/64KB, or a time at the rate like 800ms"


def _buffer(value: Any, key: str) -> Buffer:
    text = str(value).strip().replace(" ", "")
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?)(pkt|pkts|packets|bdp)", text, flags=re.IGNORECASE)
    if match:
        number, unit = float(match.group(1)), match.group(2).lower()
        unit = "bdp" if unit == "bdp" else "pkt"
        if number <= 0 or (unit == "pkt" and number != int(number)):
            raise SpecError(f"{key}: buffer must be a positive packet count or BDP multiple, got {value!r}")
        return Buffer(number, unit)
    if not isinstance(value, bool) and re.fullmatch(r"[0-9]+(?:\.[0-9]*)?", text):
        raise SpecError(f"{key}: {text} needs a unit ({BUFFER_UNITS})")
    if re.fullmatch(r"[0-9]+(?:\.[0-9]*)?(us|ms|s)", text):  # how long the full buffer takes to drain
        return Buffer(units.duration(text, key, allow_zero=False), "time")
    try:
        return Buffer(float(units.size(value, key)), "bytes")
    except SpecError:
        raise SpecError(f"{key}: cannot read buffer {value!r} ({BUFFER_UNITS}; e.g. '175pkt', '5bdp', "
                        "'256KB')") from None


def _is_time(value: Any) -> bool:
    """A burst given as time at the rate ('2ms') rather than bytes ('64KB')."""
    return isinstance(value, str) and re.fullmatch(r"\s*[0-9.]+\s*(s|ms|us)\s*", value) is not None


def _trace(raw: dict):
    """(the trace link.trace names, read and checked, or None; link.trace_interval)."""
    if "trace" not in raw:
        if "trace_interval" in raw:
            raise SpecError("link.trace_interval: only with link.trace")
        return None, traces.DEFAULT_INTERVAL
    if raw.get("changes"):
        raise SpecError("link.changes: cannot be combined with link.trace (the trace sets the rate)")
    interval = units.duration(raw.get("trace_interval", "10ms"), "link.trace_interval", allow_zero=False)
    if not 0.001 <= interval <= 1.0 or abs(interval * 1000 - round(interval * 1000)) > 1e-6:
        raise SpecError(f"link.trace_interval: expected a whole number of ms from 1ms to 1s, "
                        f"got {raw['trace_interval']!r}")
    path = datasets.check(traces.resolve(raw["trace"], "link.trace"), "traces", "link.trace")
    try:
        return traces.load(path), interval
    except SpecError as exc:
        raise SpecError(f"link.trace: {exc}") from None


def _burst(value: Any) -> tuple[int | None, float | None]:
    """link.burst: 'auto', a size ('64KB') or a time at the rate ('2ms') -> (bytes, seconds)."""
    if value == "auto":
        return None, None
    if _is_time(value):
        return None, units.duration(value, "link.burst", allow_zero=False)
    if not isinstance(value, bool) and re.fullmatch(r"[0-9]+(?:\.[0-9]*)?", str(value).strip()):
        raise SpecError(f"link.burst: {value} needs a unit (bytes like {value}B/64KB, or a time at the rate "
                        "like 2ms, or auto)")
    return units.size(value, "link.burst"), None


def _slot(raw: dict) -> Slot | None:
    """link.slot (and its companions) -> Slot, or None without link.slot."""
    if "slot" not in raw:
        given = [k for k in SLOT_KEYS if k in raw]
        if given:
            raise SpecError(f"link.{given[0]}: only with link.slot (the shortest time between slots)")
        return None
    low = units.duration(raw["slot"], "link.slot", allow_zero=False)
    high = units.duration(raw.get("slot_max", raw["slot"]), "link.slot_max", allow_zero=False)
    if high < low:
        raise SpecError(f"link.slot_max: {units.fmt_time(high)} is shorter than link.slot ({units.fmt_time(low)})")
    packets = _count(raw["slot_packets"], "link.slot_packets") if "slot_packets" in raw else None
    size = units.size(raw["slot_bytes"], "link.slot_bytes") if "slot_bytes" in raw else None
    return Slot(_choice(raw.get("slot_on", "ack"), SLOT_DIRECTIONS, "link.slot_on"), low, high, packets, size)


def default_shaper(raw: dict) -> str:
    """The shaper a link gets when it names none: netem for a droptail buffer, else the one
    measured best for its AQM (aqm_format.py)."""
    if "trace" in raw:
        return TRACE_SHAPER
    kind = raw.get("aqm", aqms.FIFO)
    if kind == aqms.FIFO or not isinstance(kind, str):
        return DEFAULT_SHAPER
    return aqms.DEFAULT_SHAPER.get(kind, aqms.DEFAULT_AQM_SHAPER)


def _changes(raw: dict) -> tuple[RateChange, ...]:
    """link.changes: the rate's steps, in time order."""
    changes = raw.get("changes") or []
    if not isinstance(changes, list):
        raise SpecError("link.changes: expected a list of {at, rate}")
    steps = []
    for i, change in enumerate(changes):
        change = _check_keys(change, {"at", "rate"}, f"link.changes.{i}")
        steps.append(RateChange(units.duration(change.get("at"), f"link.changes.{i}.at"),
                                units.rate(change.get("rate"), f"link.changes.{i}.rate")))
    return tuple(sorted(steps, key=lambda c: c.at))


def _refuse_combinations(link: Link, raw: dict, burst: Any) -> None:
    """One line naming the first of LINK's settings that cannot go together (RAW: as written)."""
    if link.shaper == "netem" and link.aqm.kind != aqms.FIFO:
        raise SpecError(f"link.shaper: netem holds the packets its rate delays in its own queue, so {link.aqm.kind} "
                        "under it would never see a queue (measured): give link.shaper: htb or tbf"
                        + (", or cake" if link.aqm.kind == "cake" else "") + " (or leave it out)")
    if link.shaper == "cake" and link.aqm.kind != "cake":
        raise SpecError(f"link.shaper: cake is CAKE's own shaper, but link.aqm is {link.aqm.kind} "
                        "(give link.aqm: cake, or another shaper)")
    if link.trace and link.shaper == "netem":
        raise SpecError("link.shaper: netem cannot replay a trace: it fixes each packet's departure when the "
                        "packet is queued, so a rate that rises later cannot speed up what waits (measured: "
                        f"0.56 of the trace delivered); leave shaper out ({TRACE_SHAPER}) or give htb or tbf")
    if link.jitter and link.delay_variation:
        raise SpecError("link.delay_variation: give it or link.jitter, not both (jitter reorders packets, "
                        "delay_variation keeps their order)")
    if link.shaper in ("netem", "cake") and "burst" in raw and burst != "auto":
        raise SpecError(f"link.burst: {link.shaper}'s rate has no burst (it schedules each packet's departure "
                        "and catches up after a late timer by itself); give link.shaper: htb or tbf to set one")
    if link.buffer_packets < 2:
        raise SpecError(f"link.buffer: {link.buffer.label()} is under 2 packets at this rate and RTT")
    if link.shaper == "mahimahi":
        _refuse_for_mahimahi(link, raw)
    if link.jitter > link.rtt * link.forward_share + 1e-12:
        # jitter is applied on the data direction, whose delay is rtt x forward_share
        raise SpecError("link.jitter: must be at most the data direction's delay, link.rtt x "
                        "link.forward_share (half of link.rtt by default; netem delay cannot go negative)")


def parse(raw: Any) -> Link:
    """`link:` of a concrete grid point (no sweep lists left) -> Link."""
    raw = _check_keys(raw, LINK_KEYS, "link")
    for required in ("rate", "rtt", "buffer"):
        if required not in raw and not (required == "rate" and "trace" in raw):
            raise SpecError(f"link.{required}: required")
    trace, trace_interval = _trace(raw)
    share = raw.get("forward_share", 0.5)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise SpecError(f"link.forward_share: expected a number between 0 and 1, got {share!r}")
    burst = raw.get("burst", "auto")
    burst_bytes, burst_time = _burst(burst)
    link = Link(
        rate=units.rate(raw["rate"], "link.rate") if "rate" in raw else trace.average_bps,
        rtt=units.duration(raw["rtt"], "link.rtt", allow_zero=False),
        buffer=_buffer(raw["buffer"], "link.buffer"),
        loss=units.fraction(raw.get("loss", "0%"), "link.loss"),
        loss_direction=_choice(raw.get("loss_direction", "data"), LOSS_DIRECTIONS, "link.loss_direction"),
        jitter=units.duration(raw.get("jitter", "0ms"), "link.jitter"),
        forward_share=float(share),
        burst=burst_bytes,
        burst_time=burst_time,
        changes=_changes(raw),
        shaper=_choice(raw.get("shaper", default_shaper(raw)), SHAPERS, "link.shaper"),
        trace=trace.path if trace else None,
        trace_interval=trace_interval,
        delay_variation=units.duration(raw.get("delay_variation", "0ms"), "link.delay_variation"),
        slot=_slot(raw),
    )
    if link.buffer_packets > MAX_BUFFER_PACKETS:
        raise SpecError(f"link.buffer: {link.buffer_packets} packets: tc's queue limits are 32-bit packet counts "
                        f"(at most {MAX_BUFFER_PACKETS})")
    link = replace(link, aqm=aqms.parse(raw, link.buffer_packets * FRAME_BYTES))
    _refuse_combinations(link, raw, burst)
    return link


# What Mahimahi's chain (mm-delay, mm-loss, mm-link: emulation/mahimahi.py) cannot express.
_NOT_UNDER_MAHIMAHI = (
    ("aqm", lambda link: link.aqm.kind != aqms.FIFO, "its link queue is a droptail of the buffer's size here"),
    ("jitter", lambda link: link.jitter > 0, "mm-delay gives every packet the same delay"),
    ("delay_variation", lambda link: link.delay_variation > 0, "mm-delay gives every packet the same delay"),
    ("slot", lambda link: link.slot is not None, "netem's slots are not in the chain"),
    ("changes", lambda link: bool(link.changes), "mm-link's rate comes from its trace file, fixed for a run"),
    ("trace", lambda link: link.trace is not None, "bbrlab's trace schedule drives tc, not mm-link"),
    ("burst", lambda link: link.burst is not None or link.burst_time is not None,
     "mm-link sends on its trace's delivery opportunities, with no token bucket"),
)


def _refuse_for_mahimahi(link: Link, raw: dict) -> None:
    for key, given, why in _NOT_UNDER_MAHIMAHI:
        if key in raw and given(link):
            raise SpecError(f"link.{key}: not with link.shaper: mahimahi ({why})")
    if abs(link.forward_share - 0.5) > 1e-9:
        raise SpecError("link.forward_share: mm-delay delays both directions alike: leave it at 0.5 "
                        "with link.shaper: mahimahi")
    half_ms = link.rtt / 2 * 1000
    if abs(half_ms - round(half_ms)) > 1e-6:
        raise SpecError(f"link.rtt: {units.fmt_time(link.rtt)}: mm-delay takes whole milliseconds each way, "
                        "so link.shaper: mahimahi needs an even number of milliseconds")
