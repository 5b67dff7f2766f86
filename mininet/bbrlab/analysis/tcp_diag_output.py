"""The socket sampler's JSON lines (traffic/tcp_diag.py, raw/tcp-<host>.jsonl) as the
samples `ss -tin` gave before it (tool_output.SsSample), so that every series and metric reads
one kind of sample whichever sampler recorded the point; BBR's own state in the same lines is
bbr_state.py's.

What ss prints, and so what a sample holds, follows ss.c (tcp_show_info): ssthresh only below
0xFFFF (the kernel's "infinite" is 0x7FFFFFFF), min RTT and the pacing rate only when set,
`send` as cwnd x MSS / smoothed RTT. Unlike ss's three-digit rates, the values are exact.

Like tool_output.py it does no I/O: callers read the file and pass its text in.
"""

from __future__ import annotations

import json

from ..errors import ParseError
from .tool_output import SsSample

SSTHRESH_SHOWN_BELOW = 0xFFFF  # ss.c: `if (info->tcpi_snd_ssthresh < 0xFFFF)`
U32_UNSET, U64_UNSET = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF
NEEDED = {"t": (int, float), "local": str, "peer": str, "cc": str, "cwnd": int, "srtt_us": int}


def json_lines(text: str, name: str) -> list[tuple[str, dict]]:
    """(where, record) of each line of a sampler's file NAME. A last line without its newline
    (the sampler killed while writing it) is left out; any other line that is not a JSON
    object raises ParseError naming NAME and its line."""
    records = []
    for number, line in enumerate(text.split("\n")[:-1], start=1):  # after the last "\n": unfinished
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            raise ParseError(f"{where}: not a JSON line: {line[:60]!r}") from None
        if not isinstance(doc, dict):
            raise ParseError(f"{where}: expected a socket record, got {line[:60]!r}")
        records.append((where, doc))
    return records


def check_fields(doc: dict, fields: dict, where: str) -> None:
    """ParseError naming WHERE unless DOC has each of FIELDS (key: type), a bool no number."""
    for key, kind in fields.items():
        value = doc.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ParseError(f"{where}: field {key!r} missing or not a {getattr(kind, '__name__', 'number')}")


def _set(value, unset: int = 0):
    """VALUE unless the kernel's "not set" (0, or all ones) or absent."""
    return None if value in (None, 0, unset) else value


def sample(doc: dict, where: str) -> SsSample:
    """One socket record as the sample ss would have printed of it."""
    check_fields(doc, NEEDED, where)
    cwnd, srtt, mss = doc["cwnd"], doc["srtt_us"], doc.get("mss") or 0
    ssthresh = doc.get("ssthresh")
    pacing = _set(doc.get("pacing_rate"), U64_UNSET)
    delivery = _set(doc.get("delivery_rate"))
    min_rtt = _set(doc.get("min_rtt_us"), U32_UNSET)
    bbr = doc.get("bbr")
    if bbr is not None and not isinstance(bbr, dict):
        raise ParseError(f"{where}: 'bbr' is neither null nor the decoded tcp_bbr_info")
    bbr = bbr or {}
    return SsSample(
        t=float(doc["t"]), local=doc["local"], peer=doc["peer"], cc=doc["cc"], cwnd=cwnd,
        ssthresh=ssthresh if ssthresh is not None and ssthresh < SSTHRESH_SHOWN_BELOW else None,
        srtt_ms=srtt / 1e3, rttvar_ms=(doc.get("rttvar_us") or 0) / 1e3,
        min_rtt_ms=None if min_rtt is None else min_rtt / 1e3,
        pacing_rate_bps=None if pacing is None else pacing * 8.0,
        delivery_rate_bps=None if delivery is None else delivery * 8.0,
        send_rate_bps=cwnd * mss * 8e6 / srtt if cwnd and mss and srtt else None,
        bytes_acked=doc.get("bytes_acked"), bytes_retrans=doc.get("bytes_retrans"),
        retrans_total=doc.get("total_retrans"), unacked=doc.get("unacked"),
        bbr_bw_bps=bbr.get("bw_bps"),
        bbr_mrtt_ms=None if bbr.get("min_rtt_us") is None else bbr["min_rtt_us"] / 1e3,
        bbr_pacing_gain=bbr.get("pacing_gain"), bbr_cwnd_gain=bbr.get("cwnd_gain"),
        reord_seen=doc.get("reord_seen") or 0,
    )


def samples(records: list[tuple[str, dict]]) -> list[SsSample]:
    """Every socket sample of a sampler's RECORDS (json_lines), in file order."""
    return [sample(doc, where) for where, doc in records]


def parse_tcp_diag(text: str, name: str) -> list[SsSample]:
    """Every socket sample of the sampler's file NAME (text TEXT), in file order."""
    return samples(json_lines(text, name))
