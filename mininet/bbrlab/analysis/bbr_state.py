"""BBR's own state over a flow's life, from the JSON lines of tcp_diag.py (raw/tcp-<host>.jsonl;
recorded before it, by its predecessor bbr_diag.py: raw/bbr-<host>.jsonl, the same lines for BBR's sockets).

The sampler decoded tcp_bbr_info where it ran (traffic/tcp_diag.py); this module checks its
lines and turns one flow's into series for series.json (analyze.py's _flow):

- bbr_phase: [t, phase name]. v3 reports its phase (STARTUP, DRAIN, PROBE_RTT,
  PROBE_BW_UP/DOWN/CRUISE/REFILL); v1 reports none, so its phase is read from its pacing
  gain, which differs per state (v1_phase);
- bbr_inflight_hi_pkts, bbr_bw_hi_mbps, bbr_bw_lo_mbps: v3's bounds (an unset bound gives
  no point);
- bbr_version: what the kernel's struct said (1 or 3).

Like tool_output.py it does no I/O: callers read the file and pass its text in.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParseError
from .tcp_diag_output import check_fields, json_lines
from .tool_output import data_socket


@dataclass(frozen=True)
class BbrState:
    """One BBR socket at one sampling instant."""

    t: float  # epoch seconds
    local: str  # "ip:port"
    peer: str
    cc: str | None
    cwnd: int | None  # packets, from tcp_info
    srtt_us: int | None
    bytes_acked: int | None
    version: int
    bw_bps: float  # the model's bandwidth
    min_rtt_us: int
    pacing_gain: float
    cwnd_gain: float
    # v3 only (None on v1, or while v3 has the bound unset)
    bw_hi_bps: float | None = None
    bw_lo_bps: float | None = None
    inflight_hi_pkts: int | None = None
    inflight_lo_pkts: int | None = None
    extra_acked_pkts: int | None = None
    mode: str | None = None
    phase: str | None = None


NUMBER = (int, float)
SOCKET_FIELDS = {"t": NUMBER, "local": str, "peer": str}
BBR_FIELDS = {"version": int, "bw_bps": NUMBER, "min_rtt_us": int, "pacing_gain": NUMBER, "cwnd_gain": NUMBER}
V3_FIELDS = ("bw_hi_bps", "bw_lo_bps", "inflight_hi_pkts", "inflight_lo_pkts", "extra_acked_pkts", "mode", "phase")
V1_PROBE_RTT_CWND = 4  # bbr_cwnd_min_target: v1 holds cwnd at most here in PROBE_RTT


def parse_bbr(text: str, name: str) -> list[BbrState]:
    """The BBR sockets of the sampler's lines, in file order (another CC's socket, "bbr":
    null, is left out). A last line without its newline (the sampler killed while writing
    it) is left out too; any other bad line raises ParseError naming NAME and its line."""
    return states(json_lines(text, name))


def states(records: list[tuple[str, dict]]) -> list[BbrState]:
    """parse_bbr of a sampler's RECORDS (tcp_diag_output.json_lines)."""
    found = []
    for where, doc in records:
        check_fields(doc, SOCKET_FIELDS, where)
        bbr = doc.get("bbr")
        if bbr is None:
            continue
        if not isinstance(bbr, dict):
            raise ParseError(f"{where}: 'bbr' is neither null nor the decoded tcp_bbr_info")
        check_fields(bbr, BBR_FIELDS, where)
        found.append(BbrState(
            t=float(doc["t"]), local=doc["local"], peer=doc["peer"], cc=doc.get("cc"), cwnd=doc.get("cwnd"),
            srtt_us=doc.get("srtt_us"), bytes_acked=doc.get("bytes_acked"),
            **{key: bbr[key] for key in BBR_FIELDS}, **{key: bbr.get(key) for key in V3_FIELDS}))
    return found


def v1_phase(pacing_gain: float, cwnd: int | None) -> str:
    """v1's phase from its pacing gain: STARTUP paces at 2.885, DRAIN at 1/2.885, PROBE_BW
    cycles 1.25 (up), 0.75 (down) and 1 (cruise). PROBE_RTT paces at 1 too, but holds cwnd at
    4 packets: a flow at 1 with cwnd at most 4 reads as PROBE_RTT (so does a cruising one
    whose BDP is that small)."""
    if pacing_gain >= 2.0:
        return "STARTUP"
    if pacing_gain < 0.5:
        return "DRAIN"
    if pacing_gain > 1.001:
        return "PROBE_BW_UP"
    if pacing_gain < 0.999:
        return "PROBE_BW_DOWN"
    return "PROBE_RTT" if cwnd is not None and cwnd <= V1_PROBE_RTT_CWND else "PROBE_BW_CRUISE"


def flow_series(states: list[BbrState], peer: str, t0: float) -> dict:
    """The series of the flow to PEER ("ip:port"), times in seconds after T0; {} when the
    sampler saw no BBR socket to it."""
    mine = data_socket([s for s in states if s.peer == peer])
    if not mine:
        return {}

    def at(s: BbrState) -> float:
        return round(s.t - t0, 3)

    out: dict = {"bbr_version": mine[-1].version,
                 "bbr_phase": [[at(s), s.phase or v1_phase(s.pacing_gain, s.cwnd)] for s in mine]}
    v3 = [s for s in mine if s.phase is not None]  # decoded from v3's longer struct
    if v3:
        out["bbr_inflight_hi_pkts"] = [[at(s), s.inflight_hi_pkts] for s in v3 if s.inflight_hi_pkts is not None]
        out["bbr_bw_hi_mbps"] = [[at(s), round(s.bw_hi_bps / 1e6, 4)] for s in v3 if s.bw_hi_bps is not None]
        out["bbr_bw_lo_mbps"] = [[at(s), round(s.bw_lo_bps / 1e6, 4)] for s in v3 if s.bw_lo_bps is not None]
    return out
