#!/usr/bin/env bash
# Host-side driver of the bbrlab VM (Vagrant + libvirt, KVM or TCG).
#
#   vm/vm.sh deps [--test-tools]  install the host packages (apt; quick when present),
#                             with --test-tools also the linters and unit-test tools
#   vm/vm.sh daemons          start virtlogd, libvirtd and libvirt's "default" network
#   vm/vm.sh box              build/add the local debian/bookworm64 box when stale
#   vm/vm.sh up               deps + daemons + box, then vagrant up (or rsync if running)
#   vm/vm.sh run CMD [ARG..]  rsync the tree, run CMD as root in /vagrant in the guest
#                             (run --synced CMD: no rsync, the tree was just synced by up)
#   vm/vm.sh push             copy the host's results/ (without the tools' raw output)
#                             into the guest's (a guest file is only replaced by a newer
#                             host copy), so a new VM resumes what an earlier one left
#   vm/vm.sh pull             copy the guest's results/ into the host's results/
#                             (a host file is only replaced by a newer guest copy)
#   vm/vm.sh provision-check  vagrant provision; fail unless the recap says changed=0
#   vm/vm.sh kernel debian|bbr3  reboot the VM into Debian's 6.1 kernel or the testbed's
#                             6.12 with BBRv3 (both are in the box)
#   vm/vm.sh ssh-config       the VM's ssh settings (host "default"), for ssh -F and Ansible
#   vm/vm.sh destroy          destroy the VM, its volumes, and stop what we started
#
# Environment: BBRLAB_CACHE (default /var/cache/bbrlab) holds the box, the
# Vagrant home ($BBRLAB_CACHE/vagrant.d, outside /root so libvirt-qemu can read
# the box's kernel) and the pid files of the daemons this script started.
# BBRLAB_LIBVIRT_DRIVER forces kvm or qemu (default: probed). BBRLAB_VM_CPUS and
# BBRLAB_VM_MEMORY size the VM (see Vagrantfile). BBRLAB_KERNEL (debian or bbr3)
# picks the kernel `up` boots.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
cache=${BBRLAB_CACHE:-/var/cache/bbrlab}
run_dir=$cache/run
export BBRLAB_CACHE=$cache
export VAGRANT_HOME=${VAGRANT_HOME:-$cache/vagrant.d}
export VAGRANT_CWD=$repo
export VAGRANT_CHECKPOINT_DISABLE=1
export VAGRANT_BOX_UPDATE_CHECK_DISABLE=1
export VAGRANT_DEFAULT_PROVIDER=libvirt
export LIBVIRT_DEFAULT_URI=qemu:///system
export BBRLAB_CONSOLE_LOG=/var/log/libvirt/qemu/bbrlab-console.log # the guest's serial console
box_dir=$VAGRANT_HOME/boxes/debian-VAGRANTSLASH-bookworm64/0/libvirt
# shellcheck source=vm/hostload.sh
source "$here/hostload.sh"
# shellcheck source=vm/bootwatch.sh
source "$here/bootwatch.sh"

host_packages=(vagrant vagrant-libvirt libvirt-daemon-system libvirt-clients
    qemu-system-x86 qemu-utils dnsmasq-base mmdebstrap debootstrap rsync iptables ebtables
    python3 python3-yaml python3-matplotlib python3-scipy ca-certificates tar)
# What tests/run.sh needs on the host besides: linters and the offline unit tests.
test_packages=(yamllint ansible-lint ansible-core shellcheck flake8 python3-pytest python3-pandas python3-hypothesis
    python3-yaml python3-matplotlib python3-scipy python3-venv flent)

lib_name=vm.sh
# shellcheck source=vm/lib.sh
source "$here/lib.sh" # die, log, now, timed
need_root() { [[ $(id -u) -eq 0 ]] || die "'$1' needs root (libvirt's system instance, apt)"; }
vagrant_q() { vagrant "$@" </dev/null; }
# vagrant up/box add print thousands of "Progress: N%" updates on one line.
quiet_progress() { sed -u -E 's/(\x1b\[K)?Progress: [0-9]+%( \([^)]*\))?//g'; }

# ---------------------------------------------------------------- deps
do_deps() { # do_deps [--test-tools]
    need_root deps
    local missing=() pkg wanted=("${host_packages[@]}")
    [[ ${1:-} == --test-tools ]] && wanted+=("${test_packages[@]}")
    for pkg in "${wanted[@]}"; do
        [[ $(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null) == installed ]] || missing+=("$pkg")
    done
    if ((${#missing[@]} == 0)); then
        log "host packages already installed"
        return 0
    fi
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2
}

# ---------------------------------------------------------------- daemons
pid_alive() { # pid_alive PIDFILE NAME: the pid file names a live process called NAME
    local pid
    [[ -s $1 ]] || return 1
    pid=$(cat "$1")
    [[ -r /proc/$pid/comm && $(cat "/proc/$pid/comm") == "$2" ]]
}

libvirt_answers() { virsh -q list --all >/dev/null 2>&1; }

start_daemon() { # start_daemon NAME: start virtlogd/libvirtd, record its pid file
    local name=$1 pidfile=$run_dir/$1.pid
    if pid_alive "$pidfile" "$name" || pgrep -x "$name" >/dev/null; then
        return 0
    fi
    mkdir -p "$run_dir"
    rm -f "$pidfile"
    setsid "$name" --daemon --pid-file "$pidfile" </dev/null >>"$run_dir/$name.log" 2>&1
    for _ in $(seq 50); do
        pid_alive "$pidfile" "$name" && { log "started $name (pid $(cat "$pidfile"))"; return 0; }
        sleep 0.2
    done
    die "$name did not start: see $run_dir/$name.log"
}

kvm_device_default() { # /dev/kvm as Debian's udev rules leave it (root:kvm 0660)
    # Without udev (a container) /dev/kvm may be root's alone. libvirt then finds KVM "not
    # available" for its qemu user while its probe (as root) used it, calls its cached qemu
    # capabilities outdated at every lookup and probes qemu again: seconds idle, a minute and
    # more under load, inside vagrant up. Debian's own mode makes the two agree.
    [[ -c /dev/kvm ]] && getent group kvm >/dev/null || return 0
    [[ $(stat -c %G:%a /dev/kvm) == kvm:660 ]] && return 0
    chgrp kvm /dev/kvm && chmod 0660 /dev/kvm && log "set /dev/kvm to Debian's default, root:kvm 0660"
}

do_daemons() {
    need_root daemons
    kvm_device_default

    if [[ -d /run/systemd/system ]]; then
        systemctl start virtlogd.socket libvirtd.service >&2 || die "systemctl start libvirtd failed"
    else
        start_daemon virtlogd
        start_daemon libvirtd
    fi
    for _ in $(seq 100); do libvirt_answers && break; sleep 0.3; done
    libvirt_answers || die "libvirtd does not answer on qemu:///system (see $run_dir/libvirtd.log)"
    # libvirt probes each qemu binary for its capabilities once (then cached): in the
    # background, while the box is built or checked, rather than inside vagrant up
    setsid virsh capabilities </dev/null >/dev/null 2>&1 &
    if ! virsh net-info default >/dev/null 2>&1; then
        virsh net-define /usr/share/libvirt/networks/default.xml >/dev/null \
            || die "cannot define libvirt's default network"
    fi
    if [[ $(virsh net-info default | awk '$1 == "Active:" {print $2}') != yes ]]; then
        virsh net-start default >/dev/null || die "cannot start libvirt's default network (dnsmasq, iptables?)"
        mkdir -p "$run_dir"
        touch "$run_dir/net-default.started"
        log "started libvirt network default"
    fi
}

stop_started() { # stop the network and daemons this script started, and only those
    local name pidfile pid
    if [[ -f $run_dir/net-default.started ]]; then
        virsh net-destroy default >/dev/null 2>&1 || true
        rm -f "$run_dir/net-default.started"
        log "stopped libvirt network default"
    fi
    for name in libvirtd virtlogd; do
        pidfile=$run_dir/$name.pid
        if pid_alive "$pidfile" "$name"; then
            pid=$(cat "$pidfile")
            kill "$pid"
            for _ in $(seq 50); do [[ -d /proc/$pid ]] || break; sleep 0.2; done
            [[ -d /proc/$pid ]] && die "$name (pid $pid) did not stop"
            log "stopped $name (pid $pid)"
        fi
        rm -f "$pidfile"
    done
}

# ---------------------------------------------------------------- box, kvm
do_box() {
    need_root box
    "$here/build-box.sh"
}

kvm_probe_boot() { # the box's kernel under KVM until its panic, at most 20 s: its console
    # A guest that runs prints its first line within a second or two; where /dev/kvm exists
    # but hangs (nested virtualization without its features), nothing comes: 5 s of silence
    # end the probe, not the whole 20 s.
    local out pid i
    out=$(mktemp)
    # -cpu host: vagrant-libvirt's default cpu_mode is host-model.
    timeout 20 qemu-system-x86_64 -accel kvm -cpu host -m 256 -smp 1 \
        -nodefaults -no-user-config -display none -serial stdio -no-reboot \
        -kernel "$box_dir/vmlinuz" -append "console=ttyS0 panic=-1 root=/dev/bbrlab-none" \
        </dev/null >"$out" 2>&1 &
    pid=$!
    for ((i = 0; i < 200; i++)); do
        grep -q 'Unable to mount root fs' "$out" && break
        kill -0 "$pid" 2>/dev/null || break
        ((i < 50)) || [[ -s $out ]] || break
        sleep 0.1
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    grep -v 'terminating on signal' "$out" || true # (the probe's own end, not the guest's)
    rm -f "$out"
}

kvm_usable() { # KVM works for a stock kernel: /dev/kvm, libvirt offers it, Debian's kernel boots
    local out stamp key
    [[ -r /dev/kvm && -w /dev/kvm ]] || { log "no usable /dev/kvm"; return 1; }
    virsh capabilities 2>/dev/null | grep -q "<domain type='kvm'" \
        || { log "libvirt offers no kvm domain type"; return 1; }
    [[ -f $box_dir/vmlinuz ]] || { log "no box kernel to probe KVM with"; return 1; }
    # /dev/kvm can exist and still fail real guests (nested virtualization
    # without the CPU features a distribution kernel expects), so boot the
    # box's kernel under KVM without a root file system: it must reach the
    # "Unable to mount root fs" panic quickly. Cached per host boot and kernel.
    key="$(cat /proc/sys/kernel/random/boot_id) $(sha256sum "$box_dir/vmlinuz" | cut -c1-16)"
    stamp=$cache/kvm-probe
    if [[ -f $stamp && $(head -n1 "$stamp") == "$key" ]]; then
        [[ $(sed -n 2p "$stamp") == usable ]]
        return
    fi
    out=$(kvm_probe_boot)
    if grep -q 'Unable to mount root fs' <<<"$out"; then
        printf '%s\nusable\n' "$key" >"$stamp"
        return 0
    fi
    log "KVM probe failed: ${out:+$(tail -n 3 <<<"$out" | tr '\n' ' ')}${out:-the box kernel printed nothing under KVM}"
    printf '%s\nunusable\n' "$key" >"$stamp"
    return 1
}

pick_driver() {
    if [[ -n ${BBRLAB_LIBVIRT_DRIVER:-} ]]; then
        log "libvirt driver $BBRLAB_LIBVIRT_DRIVER (from BBRLAB_LIBVIRT_DRIVER)"
    elif kvm_usable; then
        export BBRLAB_LIBVIRT_DRIVER=kvm
        log "KVM is usable: libvirt driver kvm"
    else
        export BBRLAB_LIBVIRT_DRIVER=qemu
        log "KVM is not usable: libvirt driver qemu (TCG, slow)"
    fi
}

machine_state() { # running, shutoff, not_created, ...
    vagrant_q status --machine-readable 2>/dev/null | awk -F, '$3 == "state" {print $4; exit}'
}

# A bbrlab_ domain this tree's Vagrant state does not name is left from a run that
# never reached its destroy (a killed CI run, a rebooted host, another clone): vagrant
# up then stops with "Name `bbrlab_default` ... is already taken". One that is shut off
# is removed with its disk; a running one is removed only under CI=true, where the
# machine belongs to the test run, and otherwise named with the commands to remove it.
our_domain_uuid() { cat "$repo/.vagrant/machines/default/libvirt/id" 2>/dev/null || true; }
qemu_pid() { # the VM's qemu process (it runs with -uuid, the domain's), or nothing
    local uuid
    uuid=$(our_domain_uuid)
    [[ -z $uuid ]] || pgrep -f -- "-uuid $uuid" | head -n 1 || true
}

clear_stale_domains() {
    local dom uuid ours state
    ours=$(our_domain_uuid)
    for dom in $(virsh -q list --all --name 2>/dev/null | grep '^bbrlab_' || true); do
        uuid=$(virsh domuuid "$dom" 2>/dev/null | head -n1)
        [[ -n $ours && $uuid == "$ours" ]] && continue
        state=$(virsh domstate "$dom" 2>/dev/null | head -n1)
        if [[ $state != "shut off" && ${CI:-} != true ]]; then
            die "libvirt domain $dom ($state) is not this tree's VM (.vagrant names ${ours:-none}); if it is a leftover, remove it: virsh destroy $dom; virsh undefine $dom --remove-all-storage"
        fi
        [[ $state == "shut off" ]] || virsh destroy "$dom" >/dev/null 2>&1 || true
        # A disk already deleted makes --remove-all-storage complain: then plain undefine.
        virsh undefine "$dom" --remove-all-storage --managed-save --snapshots-metadata >/dev/null 2>&1 \
            || virsh undefine "$dom" --managed-save --snapshots-metadata >/dev/null \
            || die "cannot remove the leftover libvirt domain $dom: virsh undefine $dom --remove-all-storage"
        log "removed leftover libvirt domain $dom ($state, uuid $uuid) that no Vagrant state here names"
    done
}

# ---------------------------------------------------------------- up, run, pull
do_up() {
    need_root up
    # each step's failure ends here, its error the last line (a timed step runs with errexit off:
    # without these, a failed box went on to `vagrant up`, whose own error hid the first)
    timed deps do_deps || die "up: the host packages could not be installed (above)"
    timed daemons do_daemons || die "up: libvirt's daemons did not start (above)"
    timed box do_box || die "up: the box was not built (above); nothing was started"
    pick_driver
    local state
    state=$(machine_state)
    if [[ $state == running ]]; then
        log "VM already running: syncing the tree"
        timed "vagrant rsync" vagrant_q rsync >&2
    else
        clear_stale_domains
        timed "vagrant up" bootwatch_up vagrant_q up --provider=libvirt 2>&1 | quiet_progress >&2 ||
            die "up: vagrant up failed (above)"
    fi
}

do_kernel() { # do_kernel debian|bbr3: boot the VM into that kernel (both are in the box)
    need_root kernel
    local want=${1:-}
    [[ $want == debian || $want == bbr3 ]] || die "usage: vm/vm.sh kernel debian|bbr3"
    require_running
    # the box's Vagrantfile reads BBRLAB_KERNEL when the domain starts. No provisioning:
    # what it wrote serves both kernels (the netkernel role's unit loads tcp_bbr3 at boot
    # where the kernel has it)
    pick_driver
    BBRLAB_KERNEL=$want timed "vagrant reload" vagrant_q reload --no-provision 2>&1 | quiet_progress >&2 ||
        die "vagrant reload into the $want kernel failed (above)"
    local running
    running=$(vagrant_q ssh -c 'uname -r' 2>/dev/null | tr -d '\r' | tail -n1)
    [[ -n $running ]] || die "cannot read the VM's kernel release after the reload"
    if [[ $want == bbr3 && $running != *-bbrlab* ]] || [[ $want == debian && $running == *-bbrlab* ]]; then
        die "the VM runs kernel $running after the reload, not the $want one"
    fi
    log "the VM runs kernel $running"
}

require_running() {
    [[ $(machine_state) == running ]] || die "the VM is not running: run vm/vm.sh up first"
}

do_run() {
    local sync=1
    [[ ${1:-} != --synced ]] || { sync=0; shift; }
    (($# > 0)) || die "usage: vm/vm.sh run [--synced] CMD [ARG...]"
    require_running
    ((sync == 0)) || timed "vagrant rsync" vagrant_q rsync >&2
    local inner script rc=0 rev
    inner=$(printf '%q ' "$@")
    # The guest's copy has no .git: pass on which code it is, for each run's provenance.
    rev=$(git -C "$repo" rev-parse HEAD 2>/dev/null || true)
    if [[ -n $rev ]] && [[ -n $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
        rev+="+dirty"
    fi
    local data_env
    data_env=$(share_data)
    script="cd /vagrant && BBRLAB_GIT_REV=${rev:-unknown} ${data_env}exec $inner"
    # As root: everything the testbed does (netns, tc, sysctl) needs it. The host's own
    # load meanwhile is measured beside it (hostload.sh): the guest cannot see it.
    local pid before start samples sampler
    pid=$(qemu_pid)
    before=$(hostload_sample "$pid")
    start=$(now)
    samples=$(mktemp)
    hostload_every "$pid" "$$" >"$samples" &
    sampler=$!
    timed "vagrant ssh -c" vagrant_q ssh -c "sudo -n bash -c $(printf '%q' "$script")" || rc=$?
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
    local end last
    end=$(now)
    last=$(hostload_sample "$pid") # one sample for both: the samples' last line and the line said
    echo "$end $last" >>"$samples"
    hostload_record=$repo/results/host-load.jsonl hostload_report "$before" "$last" "$start" "$end" "$*"
    # kept with the runs and calibrations the command made, in the guest (runs/hostload.py),
    # while it still runs (its qemu process; Vagrant's status, slower, where none was found)
    if { [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; } || { [[ -z $pid ]] && [[ $(machine_state) == running ]]; }; then
        { echo "cpus $(hostload_cpus)"; echo "now $(now)"; cat "$samples"; } |
            vagrant ssh -c "cd /vagrant && sudo -n env PYTHONPATH=/vagrant/mininet python3 -m bbrlab.runs.hostload results" >&2 ||
            log "warning: the host's load could not be kept with the runs (above)"
    fi
    rm -f "$samples"
    return "$rc"
}

# The development data beside the checkout (shared/traces, shared/reference: another
# project's licence, so never in this repository), copied into the guest once per VM,
# and the variables that point the testbed at it: prints "NAME=DIR " for each one.
share_data() {
    local name var dir stamp key
    for name in traces reference; do
        var=BBRLAB_${name^^}
        dir=${!var:-$(dirname "$repo")/shared/$name}
        [[ -d $dir ]] || continue
        stamp=$repo/.vagrant/bbrlab-copied-$name
        key="$(cat "$repo"/.vagrant/machines/default/*/id 2>/dev/null) $(find "$dir" -type f -printf '%T@ %s %p\n' | sort | md5sum)"
        if [[ $(cat "$stamp" 2>/dev/null) != "$key" ]]; then
            tar -C "$dir" -cf - . | vagrant ssh -c "sudo mkdir -p /var/lib/bbrlab/$name && sudo tar -C /var/lib/bbrlab/$name -xf - --no-same-owner" >&2 \
                || die "copying $dir into the VM failed"
            echo "$key" >"$stamp"
            log "copied $dir into the VM (/var/lib/bbrlab/$name)"
        fi
        printf '%s=/var/lib/bbrlab/%s ' "$var" "$name"
    done
}

do_push() {
    require_running
    [[ -d $repo/results ]] || return 0
    local t0
    t0=$(now)
    # The same rule as pull, the other way: finished points never change, so a point
    # the guest already has is never rewritten; a newer host file (a run's summary) wins.
    # The tools' raw output stays behind: resuming, the report and plots need only each
    # point's records (point, metrics, series), and raw/ is most of the bytes.
    # shellcheck disable=SC2016 # expanded in the guest
    tar -C "$repo/results" --exclude='*/points/*/raw' -cf - . \
        | vagrant ssh -c 'sudo mkdir -p /vagrant/results && sudo tar -C /vagrant/results -xf - --keep-newer-files --warning=no-ignore-newer --no-same-owner' \
        || die "copying results/ into the VM failed"
    log "pushed $repo/results into the VM (newer guest files kept); took $(( $(now) - t0 ))s"
}

do_pull() {
    require_running
    mkdir -p "$repo/results"
    local t0 listing
    t0=$(now)
    listing=$(mktemp)
    # --keep-newer-files: a host file is replaced only by a newer guest copy (a resumed
    # run's summary); finished points never change, so they are never rewritten.
    # shellcheck disable=SC2016 # expanded in the guest
    vagrant_q ssh -c 'if [ -d /vagrant/results ]; then sudo tar -C /vagrant/results -cf - .; else tar -cf - -T /dev/null; fi' \
        | tar -C "$repo/results" -xvf - --keep-newer-files --warning=no-ignore-newer --no-same-owner >"$listing"
    log "pulled $(grep -cv '/$' "$listing" || true) entries into $repo/results (existing files kept); took $(( $(now) - t0 ))s"
    rm -f "$listing"
}

do_provision_check() {
    require_running
    local out rc=0 changed
    out=$(mktemp)
    # vagrant provision does not sync rsync folders: provision the current tree.
    timed "vagrant rsync" vagrant_q rsync >&2
    # every role in full, even where the box's image was built by these roles (whose first boot
    # runs only the tasks that need the running kernel): what the image holds must be what
    # the roles make
    BBRLAB_FULL_PROVISION=1 timed "vagrant provision" vagrant_q provision 2>&1 | tee "$out" >&2 || rc=$?
    changed=$(sed -nE 's/.*default +: ok=[0-9]+ +changed=([0-9]+) .*/\1/p' "$out" | tail -n1)
    rm -f "$out"
    ((rc == 0)) || die "vagrant provision failed (exit $rc)"
    [[ -n $changed ]] || die "no Ansible recap for host 'default' in the provision output"
    [[ $changed == 0 ]] || die "provisioning is not idempotent: changed=$changed on the second run"
    log "provisioning is idempotent (changed=0)"
}

# ---------------------------------------------------------------- destroy
do_destroy() {
    need_root destroy
    timed daemons do_daemons
    timed "vagrant destroy" vagrant_q destroy -f >&2 || true
    clear_stale_domains
    local vol
    for vol in $(virsh -q vol-list default 2>/dev/null | awk '$1 ~ /^(bbrlab_|debian-VAGRANTSLASH-bookworm64_vagrant_box_image_)/ {print $1}'); do
        virsh vol-delete --pool default "$vol" >/dev/null && log "deleted volume $vol"
    done
    if virsh -q list --all --name 2>/dev/null | grep -q '^bbrlab_'; then
        die "a bbrlab_ domain is still defined: virsh list --all"
    fi
    stop_started
}

cmd=${1:-}
(($# > 0)) && shift
case $cmd in
    deps) timed deps do_deps "$@" ;;
    daemons) timed daemons do_daemons ;;
    box) timed box do_box ;;
    up) timed up do_up ;;
    run) do_run "$@" ;;
    push) do_push ;;
    pull) do_pull ;;
    provision-check) timed provision-check do_provision_check ;;
    kernel) timed kernel do_kernel "$@" ;;
    ssh-config) require_running; vagrant_q ssh-config ;;
    destroy) timed destroy do_destroy ;;
    *) die "usage: vm/vm.sh deps|daemons|box|up|run CMD...|push|pull|provision-check|kernel debian|bbr3|ssh-config|destroy" ;;
esac
