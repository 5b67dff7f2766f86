"""The dumbbell as plain data: which hosts, which links, which qdisc on which egress.

    snd1 ─┐                                   ┌─ rcv1   (one receiver per flow group,
    snd2 ─┼─ r1 ══ bottleneck (rate+buffer) ══ r2 ─┤    so groups can have their own RTT)
    sndN ─┘                                   └─ rcvM

Every egress queue has one job, so no two emulation features are entangled:
- sender egress: fq (pacing) or nothing (the kernel's TCP-internal pacing);
- r1 -> r2: the shaper at the bottleneck rate (shapers.py) and its queue: THE buffer;
- r2 -> receiver: netem with the data direction's delay, jitter and random loss;
- receiver -> r2: netem with the ACK direction's delay (and loss when asked).
The netem delay lines get a limit far above the packets in flight, so the only place a
packet can be dropped for lack of room is the bottleneck buffer (Mininet's TCLink puts
delay and queue limit in one netem, which silently turns the delay line into the buffer).

Nothing here touches the system: a Plan is built from a Point and can be printed
(--dry-run), tested offline, and handed to the testbed to execute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from . import mahimahi_plan, shapers
from ..schema import traces
from ..schema import workload as workloads
from .shapers import BOTTLENECK_HANDLE  # noqa: F401 - part of the plan's vocabulary
from ..schema.experiment import Point
from ..schema.units import fmt_fraction, fmt_rate, fmt_time

BASE_PORT = 5201


@dataclass(frozen=True)
class IntfPlan:
    """One interface: its address and the commands that set up its egress queueing."""

    host: str
    name: str
    ip: str  # with prefix length
    role: str  # "pacing", "bottleneck", "delay-data", "delay-ack", "plain"
    tc: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class LinkPlan:
    end1: IntfPlan
    end2: IntfPlan


@dataclass(frozen=True)
class FlowPlan:
    id: str
    group: int
    cc: str
    sender: str
    receiver: str
    dst: str
    port: int
    start: float
    duration: float | None  # seconds of sending, for time-bounded flows
    size: int | None  # bytes, for size-bounded flows
    tool: str = "iperf3"  # what sends it (spec.flows.TOOLS): its server and client (traffic/)
    src: str = ""  # the sender's address (a picoquic client, on the receiver, connects to it)
    build: str | None = None  # picoquic's build (schema/picoquic_builds.py; None: today's)


@dataclass(frozen=True)
class WorkloadPlan:
    """A group of many short flows (workload.py): ONE sending program on its sender host
    (shortflows.py send) and ONE sink on its receiver host, whatever the number of flows."""

    group: int
    cls: str  # the class's name
    cc: str
    sender: str
    receiver: str
    dst: str
    port: int  # the sink's
    start: float
    rtt: float  # the class's base RTT
    loss: float  # random loss on its data direction
    workload: workloads.Workload

    def describe(self, link_bps: float) -> str:
        wl = self.workload
        if wl.arrivals == "sequential":
            when = f"{wl.count} flows one after another, each {wl.gap:g}s after the previous one ended"
        else:
            given = f"load {fmt_fraction(wl.load)} -> " if wl.load is not None else ""
            when = f"Poisson arrivals, {given}{wl.arrival_rate(link_bps):.3g} flows/s for {wl.duration:g}s"
        return (f"  {self.cls} (group {self.group + 1}): {self.cc:8s} {self.sender} -> {self.receiver} "
                f"{self.dst}:{self.port}, from {self.start:g}s, {when}; sizes {wl.sizes.text} "
                f"(mean {wl.sizes.mean:.0f} B), seed {wl.seed}; RTT {fmt_time(self.rtt)}, loss {fmt_fraction(self.loss)}")


@dataclass(frozen=True)
class Event:
    """A command to run at time `at` after the first flow starts (e.g. a bandwidth step)."""

    at: float
    host: str
    argv: tuple[str, ...]
    what: str


@dataclass(frozen=True)
class RateSchedule:
    """The bottleneck's rate moved on time by ONE long-lived `tc -batch -` in HOST
    (schedule.py): LINES[i] (a batch line: a tc argv without "tc") applies rate i of
    SCHEDULE at SCHEDULE.times[i] into each pass, from the first flow's start, repeating."""

    host: str
    lines: tuple[str, ...]
    schedule: traces.Schedule

    def describe(self) -> str:
        s = self.schedule.summary()
        return (f"link schedule: trace {s['trace']}, {s['trace_mbps']:g} Mbit/s on average"
                + (f" (scaled to {s['average_mbps']:g})" if abs(self.schedule.scale - 1) > 1e-9 else "")
                + f", {s['length_s']:g} s then repeats; rate updated every {s['interval']}: "
                f"{s['updates_per_pass']} updates per pass ({s['min_mbps']:g} to {s['max_mbps']:g} Mbit/s) "
                f"fed to one `tc -batch -` in {self.host}, e.g. {self.lines[0]}")


def rate_schedule(host: str, dev: str, link) -> RateSchedule | None:
    """LINK's trace as a RateSchedule on DEV (None without a trace)."""
    if not link.trace:
        return None
    sched = traces.schedule(traces.load(link.trace), link.trace_interval, link.rate)
    # one line per distinct rate, shared: a pass may hold tens of thousands of updates
    text = {r: " ".join(shapers.rate_change(dev, link, r)[1:]) for r in set(sched.rates)}
    return RateSchedule(host, tuple(text[r] for r in sched.rates), sched)


@dataclass(frozen=True)
class Plan:
    hosts: tuple[tuple[str, str], ...]  # (name, role)
    links: tuple[LinkPlan, ...]
    routes: dict  # host -> tuple of argv
    sysctls: dict  # host -> {name: value}
    flows: tuple[FlowPlan, ...]
    events: tuple[Event, ...]
    bottleneck: IntfPlan
    summary: dict = field(default_factory=dict)
    schedule: RateSchedule | None = None  # a trace replayed at the bottleneck
    workloads: tuple[WorkloadPlan, ...] = ()  # groups of many short flows
    mahimahi: mahimahi_plan.ChainPlan | None = None  # the bottleneck is Mahimahi's chain around the senders

    @property
    def groups(self) -> list[tuple[int, str, str]]:
        """(group, its first sender, its receiver's address) of every flow group, in order."""
        seen = {f.group: (f.group, f.sender, f.dst) for f in reversed(self.flows)}
        seen.update({w.group: (w.group, w.sender, w.dst) for w in self.workloads})
        return [seen[g] for g in sorted(seen)]

    def tcp_flows(self) -> tuple[FlowPlan, ...]:
        """The long flows kernel TCP carries (iperf3's), which ss and netlink can watch."""
        return tuple(f for f in self.flows if f.tool == "iperf3")

    def traffic_hosts(self) -> set[str]:
        """Every host that sends or receives."""
        return ({f.sender for f in self.flows} | {f.receiver for f in self.flows}
                | {w.sender for w in self.workloads} | {w.receiver for w in self.workloads})

    @property
    def shape(self) -> tuple:
        """What must match for a built network to be reused: hosts and wiring, not settings."""
        return (self.hosts, tuple((lk.end1.name, lk.end2.name) for lk in self.links))

    def intfs(self) -> list[IntfPlan]:
        return [end for link in self.links for end in (link.end1, link.end2)]


def netem_limit(rate_bps: float, delay_s: float) -> int:
    """A delay-line limit that never drops: 4x the packets the line can hold, at least 10000."""
    in_flight = rate_bps * delay_s / 8 / 64  # even if every packet were a 64-byte ACK
    return max(10_000, int(4 * in_flight))


# iperf3's data connections bind a client port in this block (--cport): below Linux's
# ephemeral ports (32768 and up), so iperf3's control connections and ping never use it.
DATA_PORTS = (0x6000, 0xF000)  # value, mask: ports 24576-28671
LOSSY_HANDLE, CLEAN_HANDLE = "10:", "20:"


def data_port(serial: int) -> int:
    """The client port of the SERIAL-th data connection: a port of topo.DATA_PORTS (where
    random loss applies), a new one each time, so no connection meets a TIME_WAIT of an
    earlier point's on its 4-tuple."""
    value, mask = DATA_PORTS
    return value + serial % ((~mask & 0xFFFF) + 1)


# The delay line that spreads delays keeps order by serialising packets at this multiple
# of the bottleneck's rate (1.2 us per frame behind a 100 Mbit/s bottleneck: no queue).
ORDERED_LINE_SPEEDUP = 100


def _delay_line(delay: float, rate_bps: float, jitter: float = 0.0, variation: float = 0.0,
                slot=None) -> list[str]:
    """The netem options of one direction's delay line (loss is added by the caller).

    JITTER is netem's own: delay +- jitter, drawn per packet, so packets overtake each
    other. VARIATION adds a delay uniform in [0, VARIATION] without reordering: with
    `rate` set, netem schedules each packet after the last one queued (netem_enqueue),
    so a long draw holds the packets behind it back, as a queue does. SLOT (spec.Slot)
    releases packets in bursts, in order.
    """
    line = ["netem", "limit", str(netem_limit(rate_bps, delay + jitter + variation)), "delay"]
    if variation:
        line += [f"{(delay + variation / 2) * 1e6:.0f}us", f"{variation / 2 * 1e6:.0f}us",
                 "rate", f"{ORDERED_LINE_SPEEDUP * rate_bps:.0f}bit"]
    else:
        line += [f"{delay * 1e6:.0f}us"] + ([f"{jitter * 1e6:.0f}us"] if jitter else [])
    if slot is not None:
        line += ["slot", f"{slot.min * 1e6:.0f}us", f"{slot.max * 1e6:.0f}us"]
        line += ["packets", str(slot.packets)] if slot.packets else []
        line += ["bytes", str(slot.bytes)] if slot.bytes else []
    return line


def _netem_tc(dev: str, line: list[str], loss: float, port_field: str = "sport") -> tuple[tuple[str, ...], ...]:
    """The delay line LINE (_delay_line) on DEV; with LOSS, random loss for the data
    connections only.

    A lossy line is a prio qdisc over two identical netem delay lines, one of them lossy,
    and a u32 filter that sends the data connections' packets (PORT_FIELD in DATA_PORTS)
    to it. iperf3's control connection and ping then cross without loss: a test starts
    and ends in one or two RTTs instead of retransmission timeouts (measured: 18 s more
    per point at 40% loss, 100 ms), and every RTT probe comes back.
    """
    if not loss:
        return (("tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", *line),)
    value, mask = DATA_PORTS
    return (
        ("tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "prio", "bands", "2", "priomap", *["1"] * 16),
        ("tc", "qdisc", "replace", "dev", dev, "parent", "1:1", "handle", LOSSY_HANDLE, *line,
         "loss", "random", f"{loss * 100:.6g}%"),
        ("tc", "qdisc", "replace", "dev", dev, "parent", "1:2", "handle", CLEAN_HANDLE, *line),
        ("tc", "filter", "replace", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
         "match", "ip", "protocol", "6", "0xff", "match", "ip", port_field, str(value), hex(mask), "flowid", "1:1"),
    )


def _subnet(index: int) -> tuple[str, str, str]:
    """Link INDEX gets 10.<hi>.<lo>.0/24: addresses of its two ends and the prefix."""
    hi, lo = divmod(index, 256)
    prefix = f"10.{hi}.{lo}"
    return f"{prefix}.1/24", f"{prefix}.2/24", f"{prefix}.0/24"


def _flows_per_group(point: Point) -> list[list[tuple[float, float | None, int | None]]]:
    groups = []
    for group in point.flows:
        flows = []
        for i in range(group.count):
            start = group.start + i * group.stagger
            if group.until is not None:
                length: float | None = group.until - start
            else:
                length = group.duration
            flows.append((start, length, group.size))
        groups.append(flows)
    return groups


def build_plan(point: Point) -> Plan:
    link = point.link
    per_group = _flows_per_group(point)
    # a workload group's flows all leave from one host (one sending program); under Mahimahi
    # every flow leaves from inside the one chain, started in the one sender host
    chained = link.shaper == "mahimahi"
    n_senders = 1 if chained else sum(1 if g.workload else len(flows) for g, flows in zip(point.flows, per_group))
    senders = [f"snd{i}" for i in range(1, n_senders + 1)]
    receivers = [f"rcv{j}" for j in range(1, len(point.flows) + 1)]
    hosts = tuple([(s, "sender") for s in senders] + [("r1", "router"), ("r2", "router")]
                  + [(r, "receiver") for r in receivers])

    links: list[LinkPlan] = []
    routes: dict[str, list[tuple[str, ...]]] = {h: [] for h, _ in hosts}
    sender_ip = {}
    index = 1
    for i, snd in enumerate(senders):
        a, b, _ = _subnet(index)
        sender_ip[snd] = a.split("/")[0]
        r1_port = f"r1-eth{i + 1}"
        # (under Mahimahi the sender's fq is on the chain's innermost device: mahimahi.py)
        paced = point.pacing == "fq" and not chained
        pacing_tc = (("tc", "qdisc", "replace", "dev", f"{snd}-eth0", "root", "fq"),) if paced else ()
        links.append(LinkPlan(IntfPlan(snd, f"{snd}-eth0", a, "pacing" if pacing_tc else "plain", pacing_tc),
                              IntfPlan("r1", r1_port, b, "plain")))
        routes[snd].append(("ip", "route", "replace", "default", "via", b.split("/")[0]))
        index += 1

    a, b, _ = _subnet(index)
    bottleneck = IntfPlan("r1", "r1-eth0", a, "bottleneck", shapers.setup("r1-eth0", link))
    links.append(LinkPlan(bottleneck, IntfPlan("r2", "r2-eth0", b, "plain")))
    routes["r1"].append(("ip", "route", "replace", "default", "via", b.split("/")[0]))
    routes["r2"].append(("ip", "route", "replace", "default", "via", a.split("/")[0]))
    index += 1

    schedule = rate_schedule("r1", "r1-eth0", link)
    peak = max([link.top_rate] + list(schedule.schedule.rates if schedule else ()))
    receiver_ip = _delay_lines(point, receivers, index, peak, links, routes)

    sysctls = {h: dict(point.sysctls) for h, _ in hosts}
    for router in ("r1", "r2"):
        sysctls[router]["net.ipv4.ip_forward"] = "1"
    flows, shorts = _flow_plans(point, per_group, senders, receivers, receiver_ip, sender_ip)
    for plan in (*flows, *shorts):  # ECN asked per group: its senders request it (receivers accept by default)
        if point.flows[plan.group].ecn:
            sysctls[plan.sender]["net.ipv4.tcp_ecn"] = "1"
    events = tuple(
        Event(c.at, "r1", shapers.rate_change("r1-eth0", link, c.rate), f"bottleneck rate -> {fmt_rate(c.rate)}")
        for c in link.changes)
    chain = mahimahi_plan.chain_plan(point, senders[0]) if chained else None
    return Plan(hosts, tuple(links), {h: tuple(r) for h, r in routes.items()}, sysctls,
                flows, events, bottleneck, _summary(point, shorts, schedule, chain), schedule, shorts, chain)


def _delay_lines(point: Point, receivers: list[str], index: int, peak: float,
                 links: list[LinkPlan], routes: dict[str, list]) -> dict[int, str]:
    """One link from r2 to each group's receiver, netem's delay (and the group's loss) on
    both directions; appended to links and routes. Returns each group's receiver address."""
    link = point.link
    receiver_ip = {}
    for j, (rcv, group) in enumerate(zip(receivers, point.flows)):
        rtt = group.rtt or link.rtt
        forward = rtt * link.forward_share
        backward = rtt - forward
        loss = link.loss if group.loss is None else group.loss  # a class's own loss, on its own line
        ack_loss = loss if link.loss_direction == "both" else 0.0
        a, b, _ = _subnet(index + j)
        data_dev, ack_dev = f"r2-eth{j + 1}", f"{rcv}-eth0"
        if link.shaper == "mahimahi":  # the chain delays and drops: these links only carry
            links.append(LinkPlan(IntfPlan("r2", data_dev, a, "plain"), IntfPlan(rcv, ack_dev, b, "plain")))
            routes[rcv].append(("ip", "route", "replace", "default", "via", a.split("/")[0]))
            receiver_ip[j] = b.split("/")[0]
            continue
        slot = link.slot
        data_line = _delay_line(forward, peak, link.jitter, link.delay_variation,
                                slot if slot and slot.on == "data" else None)
        ack_line = _delay_line(backward, link.rate, slot=slot if slot and slot.on == "ack" else None)
        links.append(LinkPlan(
            IntfPlan("r2", data_dev, a, "delay-data", _netem_tc(data_dev, data_line, loss)),
            IntfPlan(rcv, ack_dev, b, "delay-ack", _netem_tc(ack_dev, ack_line, ack_loss, "dport")),
        ))
        routes[rcv].append(("ip", "route", "replace", "default", "via", a.split("/")[0]))
        receiver_ip[j] = b.split("/")[0]
    return receiver_ip


def _flow_plans(point: Point, per_group: list, senders: list[str], receivers: list[str],
                receiver_ip: dict[int, str], sender_ip: dict[str, str]
                ) -> tuple[tuple[FlowPlan, ...], tuple[WorkloadPlan, ...]]:
    """Each group's long flows (one sender host each) or its short-flow workload (one
    sender host for the group)."""
    link = point.link
    flows, shorts = [], []
    k = 0
    for j, group_flows in enumerate(per_group):
        group = point.flows[j]
        if group.workload is not None:
            shorts.append(WorkloadPlan(
                group=j, cls=group.name or f"g{j + 1}", cc=group.cc, sender=senders[k], receiver=receivers[j],
                dst=receiver_ip[j], port=workloads.SINK_PORT, start=group.start, rtt=group.rtt or link.rtt,
                loss=link.loss if group.loss is None else group.loss,
                workload=group.workload.for_repetition(point.repetition)))
            k += 1
            continue
        for i, (start, length, size) in enumerate(group_flows):
            sender = senders[min(k, len(senders) - 1)]  # Mahimahi: one sender host holds them all
            flows.append(FlowPlan(
                id=f"f{k + 1}", group=j, cc=point.flows[j].cc, sender=sender, receiver=receivers[j],
                dst=receiver_ip[j], port=BASE_PORT + k, start=start, duration=length, size=size,
                tool=group.tool, src=sender_ip[sender], build=group.build))
            k += 1
    return tuple(flows), tuple(shorts)


def _summary(point: Point, shorts: tuple, schedule, chain=None) -> dict:
    """The network in words and numbers, for the run's log and its point.json."""
    link = point.link
    summary = {
        "rate": fmt_rate(link.rate),
        "base_rtt": fmt_time(link.rtt),
        "buffer": f"{link.buffer_packets} pkt ({_bdps(link.buffer_packets / max(link.bdp_packets, 1e-9))} BDP)",
        "loss": fmt_fraction(link.loss),
        "pacing": point.pacing,
        "shaper": link.shaper,
    }
    if link.aqm.kind != "fifo":
        summary["aqm"] = link.aqm.label()
    if shorts:
        summary["rate_bps"] = link.rate
        summary["workloads"] = {w.cls: w.describe(link.rate).strip() for w in shorts}
    if link.delay_variation:
        summary["delay_variation"] = f"0 to {fmt_time(link.delay_variation)} on the data direction, in order"
    if link.slot:
        summary["slot"] = _describe_slot(link.slot)
    if schedule:
        summary["trace"] = dict(schedule.schedule.summary(), sha256=traces.load(link.trace).digest)
    if chain:
        summary["mahimahi"] = chain.describe()
    return summary


def _describe_slot(slot) -> str:
    gap = fmt_time(slot.min) + (f" to {fmt_time(slot.max)}" if slot.max > slot.min else "")
    limits = [f"{slot.packets} packets" if slot.packets else "", f"{slot.bytes} bytes" if slot.bytes else ""]
    per_slot = " or ".join(x for x in limits if x)
    return (f"{'ACKs' if slot.on == 'ack' else 'data'} leave in slots every {gap}"
            + (f", at most {per_slot} per slot" if per_slot else ""))


def _bdps(x: float) -> str:
    """5.2, 12, 100: two significant digits below 10, whole numbers above (never 1e+02)."""
    return f"{x:.2g}" if x < 10 else f"{x:.0f}"


def tc_batch(commands: Sequence[Sequence[str]]) -> str | None:
    """COMMANDS (tc argvs) as the text of one `tc -batch -`, or None when an argument
    cannot be written there (batch lines are split at blanks)."""
    lines = []
    for argv in commands:
        if not argv or argv[0] != "tc" or any(not a or any(c.isspace() or c in "\\\"'#" for c in a) for a in argv):
            return None
        lines.append(" ".join(argv[1:]))
    return "".join(line + "\n" for line in lines)
