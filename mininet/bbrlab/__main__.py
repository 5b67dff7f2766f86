"""`python3 -m bbrlab ...` (with PYTHONPATH=mininet; ./bbrlab and figure*.sh set it)."""

import signal
import sys

from .cli import main

# `bbrlab list | head`: end quietly when the reader goes away, like any Unix tool.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
sys.exit(main())
