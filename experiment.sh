#!/usr/bin/env bash
# An experiment of one's own: a YAML file (the format: docs/experiment-format.md), run like
# the figures: on this machine when its kernel can emulate the testbed, else in the testbed
# VM with the results copied back into results/ (the file must then be in this checkout).
#
#   ./experiment.sh experiments/mylab.yaml --dry-run all   the plan (no VM, no root)
#   sudo ./experiment.sh experiments/mylab.yaml all        every point, figure, verdict
#   ./experiment.sh experiments/mylab.yaml plot            redraw the latest run (no VM, no root)
#   ./experiment.sh --help                                 all actions and options
source "$(dirname "${BASH_SOURCE[0]}")/vm/dispatch.sh"
if (($# == 0)) || [[ $1 == -* ]]; then
    [[ ${1:-} == -h || ${1:-} == --help ]] || { dispatch_usage FILE.yaml/ "all plot list report" >&2; exit 2; }
    dispatch_usage FILE.yaml/ "all plot list report"
    exit 0
fi
[[ -f $1 ]] || dispatch_die "$1: no such file"
file=$(realpath "$1")
shift
dispatch "$file" "all plot list report calibrate" "$@"
