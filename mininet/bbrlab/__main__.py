"""`python3 -m bbrlab ...` (with PYTHONPATH=mininet; ./bbrlab and figure*.sh set it)."""

from .cli import console

console()
