"""Offline unit tests: where Mininet is not installed, the two names links.py takes from
it are stood in for by empty classes, so the testbed's modules import on any host."""

import importlib.machinery
import sys
import types

try:  # the real Mininet, when this host has it
    import mininet.link  # noqa: F401
except ImportError:  # else the two names links.py takes from it (the repository's own
    fake = types.ModuleType("mininet.link")  # mininet/ directory may stand as the package)
    fake.__spec__ = importlib.machinery.ModuleSpec("mininet.link", None)
    fake.Intf = type("Intf", (), {})
    fake.Link = type("Link", (), {})
    sys.modules["mininet.link"] = fake
    try:
        import mininet  # noqa: F401
    except ImportError:
        package = types.ModuleType("mininet")
        package.__spec__ = importlib.machinery.ModuleSpec("mininet", None, is_package=True)
        package.__path__ = []
        sys.modules["mininet"] = package
