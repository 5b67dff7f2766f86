# shellcheck shell=bash
# Sourced by vm/vm.sh: the host's own load while a command ran in the testbed VM.
#
# Under software virtualization the guest cannot see the host's load (steal time needs
# KVM), yet every CPU second another program takes on the host is one the emulator did
# not get: flows starve, points come out CPU-bound or below the link's rate. Measured
# here from the host's /proc: all CPUs' busy time (/proc/stat) beside the VM's own qemu
# process (/proc/PID/stat), before and after the command. Said in one line after it, with
# a warning when other programs took HOSTLOAD_BUSY CPUs or more (naming the command to run
# again, BBRLAB_RERUN, which the figure scripts set), and kept, one JSON line
# per command, in results/host-load.jsonl (what a verdict made then can be checked against);
# sampled every HOSTLOAD_EVERY seconds meanwhile, for each run's own time (runs/hostload.py).

hostload_proc=${BBRLAB_PROC:-/proc}
HOSTLOAD_BUSY=0.5 # CPUs other programs may take before the run's numbers are in doubt (store/host_load.py's BUSY_CPUS)
HOSTLOAD_EVERY=${BBRLAB_HOSTLOAD_EVERY:-5} # seconds between the samples kept with each run (runs/hostload.py)

hostload_sample() { # hostload_sample [QEMU_PID]: "TOTAL BUSY QEMU", clock ticks so far (QEMU: - unknown)
    awk -v pid_stat="${1:+$hostload_proc/$1/stat}" '
        $1 == "cpu" { # user nice system idle iowait irq softirq steal (guest: within user)
            total = 0
            for (i = 2; i <= 9 && i <= NF; i++) total += $i
            busy = total - $5 - $6
        }
        END {
            qemu = "-"
            if (pid_stat != "" && (getline line < pid_stat) > 0) {
                sub(/^.*\) /, "", line) # after "PID (comm) ": state is field 1, utime 12, stime 13
                split(line, f, " ")
                qemu = f[12] + f[13]
            }
            printf "%d %d %s\n", total, busy, qemu
        }' "$hostload_proc/stat"
}

hostload_cpus() { grep -c '^cpu[0-9]' "$hostload_proc/stat"; }

hostload_every() { # hostload_every QEMU_PID OWNER: "EPOCH TOTAL BUSY QEMU" now and every HOSTLOAD_EVERY s,
    # until killed or OWNER (a PID) has gone
    while kill -0 "$2" 2>/dev/null; do
        echo "$(date +%s) $(hostload_sample "$1")"
        sleep "$HOSTLOAD_EVERY"
    done
}

# hostload_report BEFORE AFTER START END COMMAND: the line said, and the record kept in
# $hostload_record (when set): BEFORE and AFTER are hostload_sample's output, START and END
# epochs, COMMAND what ran.
hostload_report() {
    local before=$1 after=$2 start=$3 end=$4 command=$5 said json busy vm other flag
    said=$(awk -v b="$before" -v a="$after" -v cpus="$(hostload_cpus)" -v start="$start" -v end="$end" \
        -v limit="$HOSTLOAD_BUSY" -v command="$command" '
        BEGIN {
            split(b, x, " "); split(a, y, " ")
            total = y[1] - x[1]
            if (total <= 0) exit 1
            busy = cpus * (y[2] - x[2]) / total
            if (x[3] == "-" || y[3] == "-") { # the VM not found: the host busy, no share of it
                vm = "null"; other = "null"; flag = "null"
            } else {
                vm = cpus * (y[3] - x[3]) / total
                if (vm > busy) vm = busy # sampled a tick apart
                other = sprintf("%.2f", busy - vm); vm = sprintf("%.2f", vm)
                flag = other >= limit ? "true" : "false"
            }
            gsub(/[\\"]/, "\\\\&", command)
            gsub(/[[:cntrl:]]/, " ", command)
            printf "%.2f %s %s %s\n", busy, vm, other, flag
            printf "{\"command\": \"%s\", \"start\": %d, \"end\": %d, \"cpus\": %d, \"busy_cpus\": %.2f, " \
                "\"vm_cpus\": %s, \"other_cpus\": %s, \"busy\": %s}\n", command, start, end, cpus, busy, vm,
                other, flag
        }') || return 0 # no time passed: nothing to say
    read -r busy vm other flag <<<"${said%%$'\n'*}"
    json=${said#*$'\n'}
    if [[ -n ${hostload_record:-} ]]; then
        mkdir -p "$(dirname "$hostload_record")" && echo "$json" >>"$hostload_record"
    fi
    if [[ $vm == null ]]; then
        echo "vm.sh: host load while it ran: $busy of $(hostload_cpus) CPUs busy (the VM's qemu process not found)" >&2
        return 0
    fi
    echo "vm.sh: host load while it ran: $busy of $(hostload_cpus) CPUs busy, the VM $vm, other programs $other" >&2
    if [[ $flag == true ]]; then
        echo "vm.sh: warning: other programs on this host took $other CPUs while the VM measured" \
            "($HOSTLOAD_BUSY or more puts its numbers in doubt: points may be set aside as CPU-bound" \
            "or below the link's rate); close them and run again${BBRLAB_RERUN:+: $BBRLAB_RERUN}" >&2
    fi
}
