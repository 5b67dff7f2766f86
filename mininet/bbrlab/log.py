"""What bbrlab tells on standard error, and how much: `-q`, the default, `-v`.

- `-q`: warnings and errors only (each one line, as always).
- default: also progress (one line per point) and what a command is doing (calibrating,
  resuming, merging, repetitions added).
- `-v`: also every command the testbed runs in its hosts (tc, ip, the traffic tools), with
  the host's name, so a run can be followed or replayed by hand.

What a command produces (results: DIR, tables, verdicts, paths) goes to standard output
and is never filtered. Used as a library (tests, notebooks), the default level holds.
"""

from __future__ import annotations

import logging
import sys

QUIET, NORMAL, VERBOSE = -1, 0, 1
_LEVELS = {QUIET: logging.WARNING, NORMAL: logging.INFO, VERBOSE: logging.DEBUG}


class _Stderr(logging.Handler):
    """Writes to whatever sys.stderr is when a record comes (pytest swaps it per test)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - logging must never end a run
            self.handleError(record)


_logger = logging.getLogger("bbrlab")
_logger.propagate = False
_logger.setLevel(logging.INFO)
_logger.addHandler(_Stderr())


def set_verbosity(verbosity: int) -> None:
    """QUIET, NORMAL or VERBOSE (what -q and -v set)."""
    if verbosity not in _LEVELS:
        raise ValueError(f"verbosity {verbosity}: not one of {sorted(_LEVELS)}")
    _logger.setLevel(_LEVELS[verbosity])


def verbose() -> bool:
    return _logger.isEnabledFor(logging.DEBUG)


def info(message: str) -> None:
    """Progress and what a command is doing: hidden by -q."""
    _logger.info(message)


def detail(message: str) -> None:
    """What only -v shows: each command run in a host, and similar detail."""
    _logger.debug(message)


def warning(message: str) -> None:
    """Something the user should know that did not stop the command: always shown."""
    _logger.warning(message)


def error(message: str) -> None:
    """The one line a failed command ends with: always shown."""
    _logger.error(message)


def command(host: str, argv: list[str] | tuple[str, ...], stdin: str | None = None) -> None:
    """-v: a command started in HOST's namespace, as a shell would take it (and its input)."""
    if verbose():
        import shlex

        _logger.debug(f"[{host}] {shlex.join(argv)}" + (f" <<'EOF'\n{stdin.rstrip()}\nEOF" if stdin else ""))
