# Sourced by figure5.sh, its siblings, experiment.sh and reproduce.sh: run an action on this
# machine when its kernel can emulate the testbed, otherwise inside the testbed VM.
#
#   dispatch EXPERIMENT "ACTIONS" "$@"      (EXPERIMENT "suite": every experiment)
#
# Options the figure scripts share (before or after the action):
#   --local          run here; fail with the preflight's message if the kernel cannot
#   --vm             run in the testbed VM (vm/vm.sh: Vagrant + libvirt; results are
#                    copied back into results/)
#   --quick          the experiment's short profile
#   --strict         exit 3 when a claim of the paper does not hold
#   --fresh          start a new run instead of resuming an unfinished one
#   --set KEY=VALUE  override a parameter (repeatable; not for the suite)
#   --only AXIS=VALUE  run only these points of a sweep (repeatable; not for the suite)
#   --dry-run        print the plan, run nothing (on this machine, not for the suite)
#   --results DIR    results root (default: results/ in this checkout)
#   -q | -v          bbrlab's -q (warnings and errors only) or -v (also each command run
#                    in the testbed's hosts)
# Without --local or --vm the kernel is probed: a kernel without sch_netem, sch_fq,
# sch_htb or tcp_bbr (such as a CI machine's) sends the run to the VM, with a note.
# plot, list, report and --dry-run measure nothing: they always run here, without root.
# A script may set dispatch_extra_options (usage lines of its own options) before dispatch.

# shellcheck shell=bash
set -euo pipefail

bbrlab_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

dispatch_die() { echo "${0##*/}: error: $*" >&2; exit 2; }
dispatch_note() { echo "${0##*/}: $*" >&2; }

# Kernel features the testbed needs that this kernel lacks, one name per line: the probe
# the preflight and the netkernel role run too (it tests by doing). Without python3 here
# bbrlab cannot run here either.
kernel_lacks() {
    command -v python3 >/dev/null || { echo python3; return 0; }
    local out status=0
    out=$(python3 "$bbrlab_repo/mininet/bbrlab/emulation/kernel_probe.py" \
        network-namespaces sch_netem sch_fq sch_htb tcp_bbr) || status=$?
    ((status <= 1)) || { echo kernel-probe; return 0; } # it failed: the VM is the safe side
    awk '$2 == "missing" { print $1 }' <<<"$out"
}

# Actions that read or describe results and specs: they need no kernel feature, no root
# and no VM, so they always run on this machine (so does any action with --dry-run).
dispatch_host_actions="plot list report"

# dispatch EXPERIMENT "ACTION ..." ARGS...: see the header.
dispatch() {
    local experiment=$1 actions=$2; shift 2
    # what the user typed, named again when the host was too busy to judge (vm/hostload.sh)
    [[ -n ${BBRLAB_RERUN:-} ]] || BBRLAB_RERUN="sudo ./${0##*/}$(printf ' %q' "$@")"
    export BBRLAB_RERUN
    local where=auto action="" opts=() run_opts=() plot_opts=() results=() talk=() dry_run=0 arg
    while (($# > 0)); do
        arg=$1; shift
        case $arg in
            --local) where=local ;;
            --vm) where=vm ;;
            --quick | --strict | --fresh) opts+=("$arg") ;;
            --dry-run) dry_run=1 ;;
            --set | --only)
                (($# > 0)) || dispatch_die "$arg needs ${arg#--}: KEY=VALUE"
                run_opts+=("$arg" "$1"); shift ;;
            --set=* | --only=*) run_opts+=("$arg") ;;
            --format)
                (($# > 0)) || dispatch_die "--format needs png, svg and/or pdf"
                plot_opts=(--format "$1"); shift ;;
            --format=*) plot_opts=("$arg") ;;
            --results)
                (($# > 0)) || dispatch_die "--results needs a directory"
                results=(--results "$1"); shift ;;
            --results=*) results=("$arg") ;;
            -q | --quiet | -v | --verbose) talk=("$arg") ;;
            -h | --help) dispatch_usage "$experiment" "$actions"; exit 0 ;;
            -*) dispatch_die "unknown option $arg (see --help)" ;;
            *)
                [[ -z $action ]] || dispatch_die "one action at a time (got $action and $arg)"
                [[ " $actions " == *" $arg "* ]] || dispatch_die "unknown action '$arg' (one of: $actions)"
                action=$arg ;;
        esac
    done
    [[ -n $action ]] || { dispatch_usage "$experiment" "$actions" >&2; exit 2; }
    local host_side=0
    [[ " $dispatch_host_actions " == *" $action "* ]] && host_side=1
    if [[ $experiment == suite ]]; then
        ((${#run_opts[@]} == 0)) || dispatch_die "${run_opts[0]%%=*}: the suite runs every experiment as its file says (bbrlab suite takes no --set or --only); use a figure script or bbrlab run"
        ((dry_run == 0)) || dispatch_die "--dry-run: see each experiment's plan with ./bbrlab run NAME --dry-run"
    fi
    [[ $action == plot ]] || ((${#plot_opts[@]} == 0)) || dispatch_die "--format is for the plot action"
    if { ((host_side)) || [[ $action == calibrate ]]; } && ((${#run_opts[@]} + ${#opts[@]} + dry_run > 0)); then
        dispatch_die "'$action' takes no run options (--quick, --strict, --fresh, --set, --only, --dry-run)"
    fi

    local args=() # the bbrlab command line for this action
    case $experiment:$action in
        *:list) args=("${results[@]}" list) ;;
        *:report) args=("${results[@]}" report) ;;
        *:calibrate) args=("${results[@]}" calibrate) ;;
        *:plot) args=("${results[@]}" plot --experiment "$experiment" "${plot_opts[@]}") ;;
        suite:all) args=("${results[@]}" suite "${opts[@]}") ;;
        *:all) args=("${results[@]}" run "$experiment" "${opts[@]}" "${run_opts[@]}") ;;
        # a CC's action: bbrlab run checks it against --only cc=... and --set cc=... (--action)
        *) args=("${results[@]}" run "$experiment" --action "$action" "${opts[@]}" "${run_opts[@]}") ;;
    esac
    args=("${talk[@]}" "${args[@]}")
    if ((dry_run)); then
        args+=(--dry-run)
        host_side=1
    fi
    if ((host_side)); then # nothing is measured: here, as any user
        exec "$bbrlab_repo/bbrlab" "${args[@]}"
    fi
    [[ $(id -u) -eq 0 ]] || dispatch_die "run as root: sudo ./${0##*/} $action (Mininet needs namespaces and qdiscs)"

    if [[ $where == auto ]]; then
        local lacks
        lacks=$(kernel_lacks | paste -sd, -)
        if [[ -z $lacks ]]; then
            where=local
        else
            dispatch_note "this kernel ($(uname -r)) lacks ${lacks//,/, }: running in the testbed VM"
            dispatch_note "(Debian 12 under Vagrant + libvirt; results are copied back into results/;"
            dispatch_note " --local forces this machine, vm/vm.sh destroy removes the VM)"
            where=vm
        fi
    fi

    if [[ $where == local ]]; then
        exec "$bbrlab_repo/bbrlab" "${args[@]}"
    fi
    ((${#results[@]} == 0)) || dispatch_die "--results works with --local only (the VM's results are copied into results/)"
    if [[ $experiment == /* ]]; then # a file of one's own: the guest sees this checkout as /vagrant
        [[ $experiment == "$bbrlab_repo"/* ]] || dispatch_die "$experiment: the VM sees only this checkout; copy the file into $bbrlab_repo (e.g. experiments/)"
        local i
        for i in "${!args[@]}"; do
            [[ ${args[$i]} != "$experiment" ]] || args[i]=${experiment#"$bbrlab_repo"/}
        done
    fi
    local vm="$bbrlab_repo/vm/vm.sh" rc=0 said statuses
    # judged in the VM, drawn here from the pulled results: a figure takes half a minute to
    # draw under TCG and two seconds here, and here it can say the host's load beside its verdict
    [[ ${args[${#talk[@]}]} != run && ${args[${#talk[@]}]} != calibrate ]] || args+=(--no-figure)
    said=$(mktemp)
    "$vm" up # syncs the tree (run --synced: not again)
    "$vm" push # a run left unfinished in an earlier VM resumes in this one
    # the guest's paths (/vagrant/results/...) printed as the host's, where pull copies them
    set +e
    "$vm" run --synced ./bbrlab "${args[@]}" 2> >(dispatch_host_paths >&2) | dispatch_host_paths | tee "$said" |
        grep --line-buffered -v '^figure: not drawn (--no-figure)'
    statuses=("${PIPESTATUS[@]}")
    set -e
    rc=${statuses[0]}
    "$vm" pull || rc=$((rc ? rc : 1))
    dispatch_draw "$said"
    rm -f "$said"
    dispatch_note "results copied into $bbrlab_repo/results; the VM keeps running for the next run (vm/vm.sh destroy stops it)"
    return "$rc"
}

dispatch_host_paths() { sed -u "s#/vagrant/#$bbrlab_repo/#g"; }

dispatch_draw() { # dispatch_draw FILE: draw here each run the VM judged without its figure (FILE: what it said)
    local run
    while read -r run; do
        [[ -f $run/verdict.json ]] || continue
        "$bbrlab_repo/bbrlab" plot "$run" | grep '^figure: ' ||
            dispatch_note "$run: its figure was not drawn here (above); ./bbrlab plot $run draws it"
    done < <(sed -n 's/^figure: not drawn (--no-figure): bbrlab plot //p' "$1")
}

# What each action does, for the usage text.
dispatch_action_help() {
    local experiment=$1 action=$2
    case $experiment:$action in
        suite:all) echo "every experiment (shortest first, resumable), then results/report.md" ;;
        *:all) echo "every point, then the figure and the verdict" ;;
        *:plot) echo "redraw the latest run's figure (and verdict; today's claims judge beside it)" ;;
        *:list) echo "the experiments, their points and minutes of flows" ;;
        *:report) echo "write results/report.md from the latest run of every experiment" ;;
        *:calibrate) echo "measure this machine's emulator again (every rate, then how many flows each carries; the next runs are judged by it)" ;;
        *) echo "only $action's points, into the same resumable run as 'all'" ;;
    esac
}

dispatch_usage() {
    local experiment=$1 actions=$2 action
    if [[ $experiment == suite ]]; then
        echo "usage: sudo ./${0##*/} [options] ACTION     (ACTION: ${actions// /, })"
        echo
        echo "Runs every experiment in experiments/ with the paper's claims checked, then writes"
        echo "one page with every figure and verdict: results/report.md."
    elif [[ $experiment == */* ]]; then
        echo "usage: sudo ./${0##*/} FILE.yaml [options] ACTION     (ACTION: ${actions// /, })"
        echo
        echo "Runs the experiment in FILE.yaml (the format: docs/experiment-format.md) and draws its"
        echo "figure with its claims checked; in the testbed VM, FILE must be in this checkout."
    else
        echo "usage: sudo ./${0##*/} [options] ACTION     (ACTION: ${actions// /, })"
        echo
        echo "Runs the '$experiment' experiment (experiments/$experiment.yaml) and draws its figure with"
        echo "the paper's claims checked."
    fi
    echo
    echo "actions:"
    for action in $actions; do
        printf '  %-10s %s\n' "$action" "$(dispatch_action_help "$experiment" "$action")"
    done
    local here=()
    for action in $actions; do
        [[ " $dispatch_host_actions " == *" $action "* ]] && here+=("$action")
    done
    local joined="${here[*]}"
    echo "  (${joined// /, } run on this machine: no VM, no root)"
    echo
    echo "options:"
    echo "  --quick          short flows (CI, first tries)"
    echo "  --strict         exit 3 when a claim of the paper does not hold"
    echo "  --fresh          start a new run instead of resuming an unfinished one"
    if [[ $experiment != suite ]]; then
        echo "  --set KEY=VALUE  override a parameter, e.g. --set rate=20Mbit --set buffer=10bdp"
        echo "  --only AXIS=VALUE  run only these points of a sweep, e.g. --only loss=1% (repeatable)"
        echo "  --dry-run        print the points, every tc command and the flow schedule; run nothing"
        echo "                   (on this machine: no VM, no root)"
    fi
    if [[ -n ${dispatch_extra_options:-} ]]; then
        printf '%s\n' "$dispatch_extra_options"
    fi
    if [[ " $actions " == *" plot "* ]]; then
        echo "  --format png,svg,pdf  plot: the figure's formats (default: png)"
    fi
    echo "  --local | --vm   run on this machine / in the testbed VM (default: this machine"
    echo "                   when its kernel has sch_netem, sch_fq, sch_htb and tcp_bbr)"
    echo "  --results DIR    results root (here: every host-side action, or with --local;"
    echo "                   default: results/)"
    echo "  -q | -v          only warnings and errors / also each command run in the testbed's hosts"
}
