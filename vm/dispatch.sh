# Sourced by figure5.sh, its siblings and reproduce.sh: run a figure's action on this
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
#   --set KEY=VALUE  override a parameter (repeatable)
#   --results DIR    results root (default: results/ in this checkout)
# Without --local or --vm the kernel is probed: a kernel without sch_netem, sch_fq,
# sch_htb or tcp_bbr (such as a CI machine's) sends the run to the VM, with a note.

# shellcheck shell=bash
set -euo pipefail

bbrlab_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

dispatch_die() { echo "${0##*/}: error: $*" >&2; exit 2; }
dispatch_note() { echo "${0##*/}: $*" >&2; }

# Kernel features the testbed needs that this kernel lacks, one name per line.
# Tested by doing: each qdisc is attached in a throw-away namespace.
kernel_lacks() {
    local ns="bbrlab-probe-$$" spec module
    if ! ip netns add "$ns" 2>/dev/null; then
        echo "network-namespaces"
        return 0
    fi
    ip -n "$ns" link add d0 type dummy 2>/dev/null || true
    for spec in "netem delay 1ms" "fq" "htb default 1"; do
        module="sch_${spec%% *}"
        modprobe -q "$module" 2>/dev/null || true
        # shellcheck disable=SC2086 # the qdisc spec is split on purpose
        tc -n "$ns" qdisc replace dev d0 root $spec >/dev/null 2>&1 || echo "$module"
    done
    ip netns del "$ns" 2>/dev/null || true
    modprobe -q tcp_bbr 2>/dev/null || true
    grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null || echo "tcp_bbr"
}

# dispatch EXPERIMENT "ACTION ..." ARGS...: see the header.
dispatch() {
    local experiment=$1 actions=$2; shift 2
    local where=auto action="" opts=() results=() arg
    while (($# > 0)); do
        arg=$1; shift
        case $arg in
            --local) where=local ;;
            --vm) where=vm ;;
            --quick | --strict | --fresh) opts+=("$arg") ;;
            --set)
                (($# > 0)) || dispatch_die "--set needs KEY=VALUE"
                opts+=(--set "$1"); shift ;;
            --set=*) opts+=("$arg") ;;
            --results)
                (($# > 0)) || dispatch_die "--results needs a directory"
                results=(--results "$1"); shift ;;
            --results=*) results=("$arg") ;;
            -h | --help) dispatch_usage "$experiment" "$actions"; exit 0 ;;
            -*) dispatch_die "unknown option $arg (see --help)" ;;
            *)
                [[ -z $action ]] || dispatch_die "one action at a time (got $action and $arg)"
                [[ " $actions " == *" $arg "* ]] || dispatch_die "unknown action '$arg' (one of: $actions)"
                action=$arg ;;
        esac
    done
    [[ -n $action ]] || { dispatch_usage "$experiment" "$actions" >&2; exit 2; }
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

    local args=() # the bbrlab command line for this action
    case $experiment:$action in
        suite:all) args=("${results[@]}" suite "${opts[@]}") ;;
        suite:report) args=("${results[@]}" report) ;;
        *:all) args=("${results[@]}" run "$experiment" "${opts[@]}") ;;
        *:plot) args=("${results[@]}" plot --experiment "$experiment") ;;
        *) args=("${results[@]}" run "$experiment" --only "cc=$action" "${opts[@]}") ;;
    esac

    if [[ $where == local ]]; then
        exec "$bbrlab_repo/bbrlab" "${args[@]}"
    fi
    ((${#results[@]} == 0)) || dispatch_die "--results works with --local only (the VM's results are copied into results/)"
    local vm="$bbrlab_repo/vm/vm.sh" rc=0
    "$vm" up
    "$vm" push # a run left unfinished in an earlier VM resumes in this one
    "$vm" run ./bbrlab "${args[@]}" || rc=$?
    "$vm" pull || rc=$((rc ? rc : 1))
    dispatch_note "results copied into $bbrlab_repo/results; the VM keeps running for the next run (vm/vm.sh destroy stops it)"
    return "$rc"
}

dispatch_usage() {
    local experiment=$1 actions=$2
    cat <<EOF
usage: sudo ./${0##*/} [options] ACTION     (ACTION: ${actions// /, })

Runs the '$experiment' experiment (experiments/$experiment.yaml) and draws its figure with
the paper's claims checked. 'all' runs every point; a congestion control name runs only
its points into the same (resumable) run; 'plot' redraws the latest run's figure.

options:
  --quick          short flows (CI, first tries)
  --strict         exit 3 when a claim of the paper does not hold
  --fresh          start a new run instead of resuming an unfinished one
  --set KEY=VALUE  override a parameter, e.g. --set rate=20Mbit --set buffer=10bdp
  --local | --vm   run on this machine / in the testbed VM (default: this machine
                   when its kernel has sch_netem, sch_fq, sch_htb and tcp_bbr)
  --results DIR    results root (with --local; default: results/)
EOF
}
