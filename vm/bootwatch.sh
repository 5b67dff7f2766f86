# shellcheck shell=bash
# Sourced by vm/vm.sh: the guest's first boot watched from the host while `vagrant up` waits
# for its address. vagrant-libvirt waits about 10 minutes and then says only that a timeout
# of 2 seconds was exceeded; this says what the guest's console showed, and resets a guest
# whose console fell silent without an address (a boot stuck early) once, inside that wait.
#
# The console is written to $bootwatch_console (the Vagrantfile's BBRLAB_CONSOLE_LOG).

bootwatch_console=$BBRLAB_CONSOLE_LOG
bootwatch_domain=bbrlab_default
bootwatch_silent_s=${BBRLAB_BOOT_SILENT_S:-90} # console unchanged this long, no address: stuck
bootwatch_after_s=${BBRLAB_BOOT_RESET_AFTER_S:-240} # never before this long after the start

bootwatch_has_address() { virsh -q domifaddr "$bootwatch_domain" --source lease 2>/dev/null | grep -q ipv4; }
bootwatch_size() { stat -c %s "$bootwatch_console" 2>/dev/null || echo 0; }

bootwatch_tail() { # the console's last lines, said
    [[ -s $bootwatch_console ]] || { log "the guest's console ($bootwatch_console) is empty"; return 0; }
    log "the guest's console, its last lines ($bootwatch_console):"
    tail -n "${1:-15}" "$bootwatch_console" | tr -d '\r' | sed 's/^/    /' >&2
}

bootwatch() { # bootwatch: runs beside `vagrant up` until the guest has an address
    local started="" size last_size=-1 changed reset=0 t
    while sleep 5; do
        if [[ -z $started ]]; then
            [[ $(virsh domstate "$bootwatch_domain" 2>/dev/null) == running ]] || continue
            started=$(now) changed=$started
        fi
        bootwatch_has_address && return 0
        t=$(now) size=$(bootwatch_size)
        ((size == last_size)) || changed=$t last_size=$size
        if ((reset == 0 && t - started >= bootwatch_after_s && t - changed >= bootwatch_silent_s)); then
            log "the guest has no address $((t - started))s after it started and its console has said nothing for $((t - changed))s"
            bootwatch_tail
            log "resetting it (once)"
            virsh reset "$bootwatch_domain" >/dev/null 2>&1 || log "warning: virsh reset $bootwatch_domain failed"
            reset=1 started=$t changed=$t
        fi
    done
}

bootwatch_up() { # bootwatch_up CMD...: CMD (vagrant up) with the boot watched; its status
    local watcher rc=0
    rm -f "$bootwatch_console"
    bootwatch &
    watcher=$!
    "$@" || rc=$?
    kill "$watcher" 2>/dev/null || true
    wait "$watcher" 2>/dev/null || true
    ((rc == 0)) || bootwatch_tail 25
    return "$rc"
}
