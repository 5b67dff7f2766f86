# shellcheck shell=bash
# vm/lib.sh: the vm/ scripts' messages and timing, sourced by each (set lib_name first; its
# default is the script's file name). One prefix per script: "NAME: ..." and "NAME: error: ...".
#
# vm/build-box.sh and vm/build-kernel.sh keep their own copies of these few lines: the text of
# each is its build's cache key (the box's and the BBRv3 kernel's inputs hash), so sourcing this
# file from them would put it into the key, and an edit here would rebuild the box and the kernel.

lib_name=${lib_name:-${0##*/}}
durations=() # "LABEL  Ns" for each timed command, in order (a script prints them as a table)

die() { echo "$lib_name: error: $*" >&2; exit 1; }
log() { echo "$lib_name: $*" >&2; }
now() { date +%s; }
timed() { # timed LABEL CMD...: run CMD, print how long it took and remember it; keep its exit status
    local label=$1 t0 rc=0; shift
    t0=$(now)
    "$@" || rc=$?
    durations+=("$(printf '%-10s %5ss' "$label" "$(($(now) - t0))")")
    log "$label took $(($(now) - t0))s$( ((rc == 0)) || echo " (failed, exit $rc)")"
    return "$rc"
}
