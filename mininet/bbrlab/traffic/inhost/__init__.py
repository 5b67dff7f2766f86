"""The programs the testbed runs inside the emulated hosts, by path with the host's Python:
the short flows' sender and sink (shortflows.py). Standard library only: a host has no other
package, and no module here imports from bbrlab (tests/unit/test_layers.py holds this)."""
