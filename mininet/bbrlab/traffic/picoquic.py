"""Traffic: QUIC connections through picoquic's demo endpoint (`tool: picoquic` groups).

Each connection is one quicperf download (doc/quicperf.md in picoquic): the client, on
the group's receiver, asks the server, on the connection's sender host, for the flow's
size on one stream, so the data crosses the bottleneck in the same direction as iperf3's.
The congestion control runs in the server's process, in user space, by picoquic's own
name (`-G`, schema/ccs.QUIC_CCS). Per connection the raw folder keeps:

- picoquic-ID-client.txt: the client's report (Download_bytes, Connection_duration_sec),
  then the wrapper's lines: `epoch START END`, and bash's `times`, whose last line is the
  client's user and system CPU time;
- picoquic-ID/: the server's qlog of the connection (-q): every packet sent and received
  with its ACK ranges, and the sender's cwnd, pacing rate, RTT samples and CC state; and
  its performance log (-F, perf.csv): the CC that ran, and how often pacing or the cwnd
  held its packet trains back;
- picoquic-ID-server.txt: the server's output, then `cpu USER SYS` of its process;
- picoquic-ID/cc.csv, for a build whose qlog lacks the CC's state (the 2024 builds): its
  binary log (-b) read by the same build's picolog_t (-f csv), whose cc_state column has it.

The server stays up after its connection ends; it is stopped once it has written the
connection's qlog out (picoquic closes the file's JSON when it deletes the connection,
about half a second after the client ends).
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from ..emulation.procs import process_cpu
from ..emulation.topo import FlowPlan
from ..schema import picoquic_builds
from .iperf import STOP_WAIT, Command, wait_listening

PREFIX = picoquic_builds.PREFIX
DEMO = "picoquicdemo"
CERTS = f"{PREFIX}/share/picoquic/certs"
PERF_LOG, CC_LOG = picoquic_builds.PERF_LOG, picoquic_builds.CC_LOG
STREAM_HEADER = 397  # bytes the client posts on its stream before the server answers (picoquic's own example)
LOG_CLOSE_WAIT = 10.0  # seconds a server gets to close its connection's log after the client ended
# The client, wrapped so that the run keeps when it started and ended (epoch seconds) and
# its CPU time (bash's `times`: the second line is its children's user and system time).
CLIENT_WRAPPER = 's=$(date +%s.%N); "$@"; rc=$?; e=$(date +%s.%N); echo "epoch $s $e"; times; exit $rc'


def scenario(build: str | None, size: int) -> str:
    """quicperf's request of SIZE bytes on one stream, in the syntax BUILD reads."""
    if picoquic_builds.get(build).scenario == "legacy":
        return f"*1:0:-:{STREAM_HEADER}:{size};"  # once, stream 0, at once, post, response
    return f"=b1:*1:{STREAM_HEADER}:{size};"


def log_dir(raw_dir: Path, flow: FlowPlan) -> Path:
    return raw_dir / f"picoquic-{flow.id}"


def server_argv(flow: FlowPlan, logs: Path) -> list[str]:
    """The server, with its connection's qlog (-q) and its performance log (-F: a CSV line
    per connection when it closes, which names the CC that ran)."""
    # (stdout line by line: the server is stopped by a signal, and its first line, the version
    # that runs, must reach its file: the analysis reads it back)
    binlog = [] if picoquic_builds.get(flow.build).logs_states else ["-b", str(logs)]  # read into CC_LOG when it ends
    return ["stdbuf", "-oL", picoquic_builds.program(flow.build), "-p", str(flow.port),
            "-c", f"{CERTS}/cert.pem", "-k", f"{CERTS}/key.pem", "-G", flow.cc, "-q", str(logs), "-F", str(logs / PERF_LOG),
            *binlog]


def client_argv(flow: FlowPlan) -> list[str]:
    """The quicperf download of FLOW's size from its server (-D: nothing saved to disk)."""
    return ["bash", "-c", CLIENT_WRAPPER, "picoquic-client",
            picoquic_builds.program(flow.build), "-G", flow.cc, "-a", "perf", "-D", flow.src, str(flow.port),
            scenario(flow.build, flow.size)]


class Picoquic:
    """`tool: picoquic`: one server per connection on its sender, the client on the receiver."""

    name = "picoquic"

    def server(self, flow: FlowPlan, raw_dir: Path) -> Command:
        """It runs in its log folder: picoquicdemo keeps a token store in its working folder."""
        logs = log_dir(raw_dir, flow)
        logs.mkdir(parents=True, exist_ok=True)
        return Command(flow.sender, server_argv(flow, logs.resolve()), raw_dir / f"picoquic-{flow.id}-server.txt", logs)

    def client(self, flow: FlowPlan, raw_dir: Path, interval: float, connect_timeout: float) -> Command:
        """In the same folder, for its ticket and token stores."""
        return Command(flow.receiver, client_argv(flow), raw_dir / f"picoquic-{flow.id}-client.txt",
                       log_dir(raw_dir, flow))

    def listening(self, node, flow: FlowPlan, deadline: float) -> None:
        wait_listening(node, flow.port, deadline, proto="u", program=DEMO)

    def finish(self, testbed, fr) -> None:
        """After the client: wait for the server to write the connection's qlog out (in the
        folder it runs in), note the server's CPU time, and stop it."""
        logs = fr.server_command.cwd
        deadline = time.monotonic() + LOG_CLOSE_WAIT
        while time.monotonic() < deadline and fr.server.poll() is None and not _written(logs):
            time.sleep(0.1)
        cpu = process_cpu(fr.server.pid)
        if fr.server.poll() is None:
            fr.server.send_signal(signal.SIGINT)
            try:
                fr.server.wait(timeout=STOP_WAIT)
            except subprocess.TimeoutExpired:
                fr.server.kill()
                fr.server.wait()
        for f in fr.files:
            f.flush()
        with open(fr.server_command.out, "a") as out:
            # the qlog's times are picoquic's monotonic clock: this line places them on the epoch
            out.write(f"clock {time.time():.6f} {time.monotonic():.6f}\n")
            if cpu is not None:
                out.write(f"cpu {cpu[0]:.2f} {cpu[1]:.2f}\n")
            if not picoquic_builds.get(fr.flow.build).logs_states:
                failed = _read_binlog(fr.flow, logs)
                if failed:
                    out.write(f"{picoquic_builds.LOG_READ_FAILED} {failed}\n")


def _read_binlog(flow: FlowPlan, logs: Path) -> str | None:
    """The server's one binary log as picolog_t's CSV (CC_LOG), and the binary log removed:
    what the analysis needs of it is in the CSV. Else why not (the binary log kept)."""
    binlogs = sorted(logs.glob("*.server.log"))
    if len(binlogs) != 1:
        return f"expected the server's one binary log, found {len(binlogs)}: {' '.join(b.name for b in binlogs)}"
    csv = logs / CC_LOG
    with open(csv, "w") as out:
        done = subprocess.run([picoquic_builds.log_reader(flow.build), "-f", "csv", str(binlogs[0])], stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    if done.returncode != 0:
        csv.unlink()
        return f"exit {done.returncode} reading {binlogs[0].name}: {' '.join(done.stderr.split())[:300]}"
    binlogs[0].unlink()
    return None


def _written(logs: Path) -> bool:
    """Whether the server's logs in LOGS are complete: its performance log has its line, and
    its qlog's JSON is closed (picoquic writes both when it deletes the connection)."""
    perf = logs / PERF_LOG
    if not perf.is_file() or len(perf.read_text().splitlines()) < 2:
        return False
    for path in logs.glob("*.server.qlog"):
        with open(path, "rb") as f:
            f.seek(max(0, path.stat().st_size - 16))
            if f.read().rstrip().endswith(b"]}]}"):
                return True
    return False


PICOQUIC = Picoquic()
