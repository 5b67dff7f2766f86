#!/usr/bin/env bash
# Boot the arm64 box (bbrlab/bookworm-arm64, built by `vm/build-box.sh --arch arm64`)
# under qemu-system-aarch64, provision it once as Vagrant would, and check what the
# experiments need: tcp_bbr offered, netem and fq attachable, Mininet importable,
# iperf3 installed. Prints how long each stage took.
#
# For hosts without Vagrant's help for arm64 guests (e.g. an x86-64 CI machine,
# where qemu emulates the ARM CPU with TCG): no libvirt, no Vagrant, no root-owned
# network. The guest gets QEMU's user-mode network with ssh forwarded to
# 127.0.0.1, the project is copied to /vagrant (where Vagrant would put it), and
# ansible-playbook runs inside the guest with a local connection, as ansible_local
# does. The box itself is never changed: the guest writes to a throw-away overlay.
#
# Usage: vm/arm64-check.sh
#   Run it under `nice -n 19` on a shared machine: the build's second stage and the
#   guest emulate every ARM instruction.
#
# Environment:
#   BBRLAB_CACHE              the arm64 box's cache (default /var/cache/bbrlab/arm64,
#                             apart from the amd64 box's)
#   BBRLAB_CHECK_CPUS         guest vCPUs (default 2)
#   BBRLAB_CHECK_MEMORY       guest memory in MiB (default 2048)
#   BBRLAB_CHECK_CPU          QEMU CPU model (default max,pauth-impdef=on: every ARMv8
#                             feature, with pointer authentication cheap to emulate)
#   BBRLAB_CHECK_ACCEL        QEMU accelerator (default tcg,thread=multi; kvm on an
#                             arm64 Linux host with /dev/kvm, then use BBRLAB_CHECK_CPU=host)
#   BBRLAB_CHECK_NOAGG        1: let the bbrnoagg role build tcp_bbr_noagg in the guest
#                             (linux-source and a compiler under emulation: slow);
#                             default 0 (bbrnoagg_build=false); the same for the
#                             picoquic role's build of picoquicdemo (picoquic_build)
#   BBRLAB_CHECK_BOOT_TIMEOUT seconds to wait for ssh (default 900)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
export BBRLAB_CACHE=${BBRLAB_CACHE:-/var/cache/bbrlab/arm64}
cpus=${BBRLAB_CHECK_CPUS:-2}
memory=${BBRLAB_CHECK_MEMORY:-2048}
cpu_model=${BBRLAB_CHECK_CPU:-max,pauth-impdef=on}
accel=${BBRLAB_CHECK_ACCEL:-tcg,thread=multi}
noagg=${BBRLAB_CHECK_NOAGG:-0}
boot_timeout=${BBRLAB_CHECK_BOOT_TIMEOUT:-900}
work=$BBRLAB_CACHE/check

lib_name=arm64-check
# shellcheck source=vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # die, log, now, timed (into durations)

[[ $# -eq 0 ]] || die "no arguments expected (see the header of vm/arm64-check.sh)"
[[ $cpus =~ ^[0-9]+$ && $memory =~ ^[0-9]+$ ]] || die "BBRLAB_CHECK_CPUS and BBRLAB_CHECK_MEMORY must be whole numbers"
[[ $noagg == 0 || $noagg == 1 ]] || die "BBRLAB_CHECK_NOAGG must be 0 or 1, got '$noagg'"
for tool in qemu-system-aarch64 qemu-img ssh tar python3; do
    command -v "$tool" >/dev/null || die "$tool is missing: apt-get install qemu-system-arm qemu-utils openssh-client tar python3"
done
key_src=$(dpkg -L vagrant 2>/dev/null | grep '/keys/vagrant$' | head -n1)
[[ -n $key_src && -f $key_src ]] || die "Vagrant's insecure private key not found: apt-get install vagrant"

qemu_pid=""
cleanup() {
    if [[ -n $qemu_pid ]] && kill -0 "$qemu_pid" 2>/dev/null; then
        log "stopping qemu (pid $qemu_pid)"
        kill "$qemu_pid" 2>/dev/null || true
        # A qemu that was stopped (SIGSTOP) never handles SIGTERM: SIGKILL after a grace period.
        local deadline=$(($(now) + 10))
        while kill -0 "$qemu_pid" 2>/dev/null && (($(now) < deadline)); do sleep 1; done
        kill -KILL "$qemu_pid" 2>/dev/null || true
        wait "$qemu_pid" 2>/dev/null || true
    fi
    rm -f "$work/overlay.qcow2"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ssh_opts=(-i "$work/vagrant.key" -p "$port" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
          -o LogLevel=ERROR -o ConnectTimeout=10 -o ServerAliveInterval=30 -o BatchMode=yes)
# shellcheck disable=SC2029 # the commands are meant for the guest, built here
guest() { ssh "${ssh_opts[@]}" vagrant@127.0.0.1 "$@"; }

get_box() {
    box_file=$("$here/build-box.sh" --arch arm64 --no-add) || return 1
    log "box: $box_file"
}

unpack() {
    # Chained: under timed's `||` a failing step would not stop the function.
    rm -rf "$work" && mkdir -p "$work" &&
        tar -C "$work" -xf "$box_file" box.img vmlinuz initrd.img &&
        qemu-img create -q -f qcow2 -b "$work/box.img" -F qcow2 "$work/overlay.qcow2" &&
        install -m 0600 "$key_src" "$work/vagrant.key"
}

boot() {
    # panic=1 and -no-reboot: a guest that cannot boot ends qemu instead of looping.
    qemu-system-aarch64 -M virt -cpu "$cpu_model" -accel "$accel" -smp "$cpus" -m "$memory" \
        -kernel "$work/vmlinuz" -initrd "$work/initrd.img" \
        -append "root=/dev/vda rw console=ttyAMA0 net.ifnames=0 panic=1" \
        -drive "file=$work/overlay.qcow2,format=qcow2,if=virtio" \
        -netdev "user,id=net0,hostfwd=tcp:127.0.0.1:$port-:22" -device virtio-net-pci,netdev=net0 \
        -display none -monitor none -serial "file:$work/console.log" -no-reboot &
    qemu_pid=$!
    log "qemu pid $qemu_pid, ssh on 127.0.0.1:$port, console in $work/console.log"
    local deadline=$(($(now) + boot_timeout))
    until guest true 2>/dev/null; do
        kill -0 "$qemu_pid" 2>/dev/null || { tail -n 30 "$work/console.log" >&2; die "qemu exited during boot"; }
        (($(now) < deadline)) || { tail -n 30 "$work/console.log" >&2; die "no ssh after ${boot_timeout}s"; }
        sleep 5
    done
    guest uname -a
}

copy_project() {
    # What Vagrant's rsync share excludes (see the Vagrantfile), to where it puts it.
    tar -C "$repo" --exclude=./.git --exclude=./results --exclude=./.vagrant -czf - . |
        guest 'sudo mkdir -p /vagrant && sudo tar -xzf - -C /vagrant --no-same-owner'
}

provision() {
    local extra
    # JSON: a boolean, not the string "false" (which Jinja would take as true).
    extra=$(printf '{"testbed_project_dir": "/vagrant", "bbrnoagg_build": %s, "picoquic_build": %s}' \
        "$( ((noagg)) && echo true || echo false)" "$( ((noagg)) && echo true || echo false)")
    log "ansible-playbook ansible/playbook.yml -e '$extra' (log: $work/provision.log)"
    if guest "cd /vagrant && sudo env ANSIBLE_NOCOLOR=1 PYTHONUNBUFFERED=1 ansible-playbook \
            --connection=local --inventory=localhost, --extra-vars '$extra' ansible/playbook.yml" \
            >"$work/provision.log" 2>&1; then
        sed -n '/PLAY RECAP/,$p' "$work/provision.log" >&2
    else
        tail -n 40 "$work/provision.log" >&2
        return 1
    fi
}

verify() {
    # One ssh round trip; every check says ok or FAILED, and any failure fails the stage.
    guest sudo bash -s <<'EOF'
fails=0
check() { # check NAME CMD...
    local name=$1 out; shift
    if out=$("$@" 2>&1); then echo "ok      $name"; else echo "FAILED  $name: $out"; fails=$((fails + 1)); fi
}
bbr_offered() { modprobe tcp_bbr && grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control; }
qdisc_on_lo() { tc qdisc add dev lo root "$@" && tc qdisc show dev lo | grep -q "qdisc $1 " && tc qdisc del dev lo root; }
echo "kernel $(uname -r) on $(uname -m) ($(dpkg --print-architecture)); $(nproc) CPUs"
check "tcp_bbr in tcp_available_congestion_control" bbr_offered
check "tc qdisc add dev lo root netem delay 1ms" qdisc_on_lo netem delay 1ms
check "tc qdisc add dev lo root fq" qdisc_on_lo fq
check "python3 -c 'import mininet.net'" python3 -c 'import mininet.net'
check "iperf3 installed" command -v iperf3
echo "tcp_available_congestion_control: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"
exit "$fails"
EOF
}

shutdown_guest() {
    guest 'sudo systemctl poweroff' 2>/dev/null || true
    local deadline=$(($(now) + 120))
    while kill -0 "$qemu_pid" 2>/dev/null && (($(now) < deadline)); do sleep 2; done
    if kill -0 "$qemu_pid" 2>/dev/null; then
        log "the guest did not power off within 120s: stopping qemu"
    else
        wait "$qemu_pid" 2>/dev/null || true
        qemu_pid=""
    fi
}

t_all=$(now)
status=0
timed box get_box || die "vm/build-box.sh --arch arm64 failed"
timed unpack unpack
timed boot boot
timed copy copy_project
timed provision provision || status=1
if ((status == 0)); then timed verify verify || status=1; fi
timed shutdown shutdown_guest
durations+=("$(printf '%-10s %5ss' total "$(($(now) - t_all))")")
echo "==== arm64 check: stage durations (qemu-system-aarch64 -accel $accel -cpu $cpu_model -smp $cpus -m $memory)"
printf '  %s\n' "${durations[@]}"
if ((status == 0)); then echo "arm64 check passed"; else echo "arm64 check FAILED (logs in $work)"; fi
((status == 0)) # the script's exit status
