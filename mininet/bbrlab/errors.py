"""Exceptions that the CLI turns into one clear message (never a traceback)."""


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
