"""`python3 -m bbrlab ...` (with PYTHONPATH=mininet; ./bbrlab and figure*.sh set it)."""

import sys

from .cli import main

sys.exit(main())
