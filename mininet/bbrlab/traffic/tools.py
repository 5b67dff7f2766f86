"""The programs that send a point's long flows, by a flow group's `tool:` (spec.flows.TOOLS):
each gives its server's and client's host, command and output file, how to know the
server listens, and what to do once the flows ended (iperf.py's Traffic runs them)."""

from __future__ import annotations

from .iperf import IPERF3
from .picoquic import PICOQUIC

TOOLS = {tool.name: tool for tool in (IPERF3, PICOQUIC)}
