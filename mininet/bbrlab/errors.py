"""Exceptions that the CLI turns into one clear message (never a traceback), and its exit statuses."""

# bbrlab's exit statuses: a lab's runs not accepted (or stale docs), an error the user can
# act on, a claim --strict holds to that the run did not meet, an interrupt
EXIT_REJECTED, EXIT_ERROR, EXIT_CLAIM, EXIT_INTERRUPT = 1, 2, 3, 130


class BbrlabError(Exception):
    """Base class: anything the user can fix or should be told about."""


class SpecError(BbrlabError):
    """An experiment file or --set override is wrong; the message names the key."""


class ParseError(BbrlabError):
    """A tool's output could not be understood."""


class PreflightError(BbrlabError):
    """The machine lacks something a run needs; the message says how to get it."""


class TestbedError(BbrlabError):
    """Building, configuring or tearing down the emulated network failed."""

    __test__ = False  # not a pytest test class despite the name


def did_you_mean(word: object, options) -> str:
    """' (did you mean X?)' when WORD is a near miss of one of OPTIONS, else ''."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""
