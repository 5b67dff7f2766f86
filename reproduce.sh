#!/usr/bin/env bash
# The whole paper suite: every experiment in experiments/ (figures 5, 6 and 8, the CC
# comparison, the bandwidth and RTT sweeps, the bandwidth step, the field experiments:
# coexistence, LTE traces, short flows and their completion times), shortest first, each
# resumable (Ctrl-C, then the same command finishes only what is missing), then one
# page with every figure, its parameters, its verdict and the published numbers beside
# ours: results/report.md.
#
#   sudo ./reproduce.sh all            the paper's parameters (hours: see `bbrlab list`)
#   sudo ./reproduce.sh --quick all    short flows and fewer points (minutes; CI)
#   ./reproduce.sh report              rewrite results/report.md from the latest runs (no VM)
#   ./reproduce.sh --help              all actions and options (--quick, --strict, --fresh,
#                                      --vm, --local, --results)
source "$(dirname "${BASH_SOURCE[0]}")/vm/dispatch.sh"
dispatch suite "all report list calibrate" "$@"
