#!/usr/bin/env bash
# Figure 6 of the BBR paper: five BBR flows started 2 s apart converge to a fair share
# (100 Mbit/s, 10 ms, 1024-packet buffer; experiments/figure6.yaml).
#
#   sudo ./figure6.sh all      run, figure (per-flow throughput + Jain index), verdict
#   ./figure6.sh plot          redraw the latest run's figure and verdict (no VM, no root)
#   ./figure6.sh --help        all actions and options (--quick, --strict, --set, --only,
#                              --dry-run, --vm, --local)
source "$(dirname "${BASH_SOURCE[0]}")/vm/dispatch.sh"
dispatch figure6 "all plot list report calibrate" "$@"
