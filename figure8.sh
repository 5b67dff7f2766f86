#!/usr/bin/env bash
# Figure 8 of the BBR paper: goodput vs random loss, BBR vs CUBIC, with the ideal line
# and ReBBR's published numbers (100 Mbit/s, 100 ms, 13 loss rates; experiments/figure8.yaml).
#
#   sudo ./figure8.sh all      every point (resumable: Ctrl-C and run again), figure, verdict
#   sudo ./figure8.sh bbr      only BBR's points (then cubic: the same run)
#   sudo ./figure8.sh cubic
#   sudo ./figure8.sh plot     redraw the latest run's figure and verdict
#   sudo ./figure8.sh --help   all options (--quick, --strict, --set, --vm, --local)
source "$(dirname "${BASH_SOURCE[0]}")/vm/dispatch.sh"
dispatch figure8 "all bbr cubic plot" "$@"
