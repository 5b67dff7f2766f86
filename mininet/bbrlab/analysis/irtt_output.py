"""irtt's JSON (traffic/irtt_probe.py): the probe's one-way delays per direction, its losses.

irtt writes one record per round trip: the client's send time (wall clock, ns), whether the
packet was lost and in which direction, and the send ("data direction": client to server,
the sender's side to the receiver's) and receive ("return direction") delays in ns. The
testbed's hosts share one clock, so those delays need no offset removed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import ParseError
from . import metrics as m

# the metrics.json keys summarize() writes (units and meanings: schema/metric_names.py)
METRICS = ("owd_data_p50_ms", "owd_data_p95_ms", "owd_return_p50_ms", "owd_return_p95_ms", "owd_loss")


@dataclass(frozen=True)
class RoundTrip:
    t: float  # the client's send time (epoch seconds)
    data_ms: float | None  # one-way delay sender's side -> receiver's side; None if lost there
    return_ms: float | None  # one-way delay back; None if lost on either way
    lost: str  # irtt's word: "false", "true" (unknown direction), "true_up", "true_down"


def parse(text: str, name: str) -> list[RoundTrip]:
    """The round trips of an irtt client's JSON output; [] for an empty file (a point that
    stopped before the client wrote). Anything else not understood raises ParseError."""
    if not text.strip():
        return []
    try:
        doc = json.loads(text)
        out = []
        for rt in doc.get("round_trips") or []:
            delay = rt.get("delay") or {}
            sent = rt["timestamps"]["client"]["send"]["wall"]
            out.append(RoundTrip(sent / 1e9, _ms(delay.get("send")), _ms(delay.get("receive")), str(rt["lost"])))
        return out
    except (ValueError, KeyError, TypeError) as exc:
        raise ParseError(f"{name}: not irtt's JSON output ({exc})") from None


def _ms(ns) -> float | None:
    return ns / 1e6 if isinstance(ns, (int, float)) and not isinstance(ns, bool) else None


def summarize(round_trips: dict[str, list[RoundTrip]], t0: float, startup: float, end: float, series: dict,
              out: dict) -> None:
    """Per group into SERIES["owd"] ({"data": [[t, ms]], "return": [...]}, t since t0), and over
    all groups after STARTUP: owd_data_p50/p95_ms, owd_return_p50/p95_ms; owd_loss, the share
    of the probe's packets lost while the flows ran (either way)."""
    data, back, sent, lost = [], [], 0, 0
    for group, trips in round_trips.items():
        series.setdefault("owd", {})[group] = {
            "data": [[round(r.t - t0, 3), round(r.data_ms, 3)] for r in trips if r.data_ms is not None],
            "return": [[round(r.t - t0, 3), round(r.return_ms, 3)] for r in trips if r.return_ms is not None]}
        during = [r for r in trips if 0 <= r.t - t0 <= end]
        sent += len(during)
        lost += sum(r.lost != "false" for r in during)
        steady = [r for r in during if r.t - t0 >= startup]
        data += [r.data_ms for r in steady if r.data_ms is not None]
        back += [r.return_ms for r in steady if r.return_ms is not None]
    if data:
        out["owd_data_p50_ms"] = round(m.percentile(data, 50), 3)
        out["owd_data_p95_ms"] = round(m.percentile(data, 95), 3)
    if back:
        out["owd_return_p50_ms"] = round(m.percentile(back, 50), 3)
        out["owd_return_p95_ms"] = round(m.percentile(back, 95), 3)
    if sent:
        out["owd_loss"] = round(lost / sent, 5)
