#!/usr/bin/env bash
# Figure 8 of the BBR paper: goodput vs random loss, BBR vs CUBIC, with the ideal line
# and ReBBR's published numbers (100 Mbit/s, 100 ms, 13 loss rates; experiments/figure8.yaml).
#
#   sudo ./figure8.sh all      every point (resumable: Ctrl-C and run again), figure, verdict
#   sudo ./figure8.sh bbr      only BBR's points (then cubic: the same run)
#   sudo ./figure8.sh cubic
#   ./figure8.sh plot          redraw the latest run's figure and verdict (no VM, no root)
#   ./figure8.sh --help        all actions and options (--quick, --strict, --set, --only,
#                              --dry-run, --vm, --local)
source "$(dirname "${BASH_SOURCE[0]}")/vm/dispatch.sh"
dispatch figure8 "all bbr cubic plot list report calibrate" "$@"
