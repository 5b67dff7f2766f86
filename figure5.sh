#!/usr/bin/env bash
# Figure 5 of the BBR paper: RTT in a bloated buffer, BBR vs CUBIC
# (10 Mbit/s bottleneck, 40 ms base RTT, 175-packet buffer; experiments/figure5.yaml).
#
#   sudo ./figure5.sh all      both congestion controls, figure, verdict
#   sudo ./figure5.sh bbr      only BBR's run (then cubic, then plot: same figure)
#   sudo ./figure5.sh cubic
#   sudo ./figure5.sh calibrate  measure this machine's emulator again (the fidelity gate)
#   ./figure5.sh plot          redraw the latest run's figure and verdict (no VM, no root)
#   ./figure5.sh --dry-run all the plan: points, every tc command, flow schedule (no VM)
#   sudo ./figure5.sh --paper all   the paper's own variant: 8 flows of each CC at
#                              128 kbit/s in a 100-BDP buffer (experiments/figure5-paper.yaml)
#   ./figure5.sh --help        all actions and options (--paper, --quick, --strict, --set,
#                              --only, --dry-run, --vm, --local)
source "$(dirname "${BASH_SOURCE[0]}")/vm/dispatch.sh"
# shellcheck disable=SC2034 # read by dispatch_usage
dispatch_extra_options="  --paper          the paper's own variant: 8 flows of each CC at 128 kbit/s in a
                   100-BDP buffer (experiments/figure5-paper.yaml)"
experiment=figure5 args=()
BBRLAB_RERUN="sudo ./${0##*/}$(printf ' %q' "$@")" # --paper included
for arg in "$@"; do
    if [[ $arg == --paper ]]; then experiment=figure5-paper; else args+=("$arg"); fi
done
dispatch "$experiment" "all bbr cubic plot list report calibrate" "${args[@]}"
