#!/usr/bin/env bash
# Boot a kernel built by vm/build-kernel.sh and check its BBR modules.
#
#   vm/kernel/boot-check.sh CACHE_DIR
#
# CACHE_DIR is a build's cache entry (vm/build-kernel.sh --print-dir). The check
# makes a minimal bookworm root file system, installs the entry's linux-image
# package in it (so that initramfs-tools makes Debian's own initrd for it), and
# boots it under QEMU with a direct kernel boot and a virtio disk, as the testbed
# VM boots. PID 1 is a small script that loads the three BBR modules and the main
# qdiscs, prints the kernel release, tcp_available_congestion_control and the
# modules' descriptions, sends data through a veth pair with netem delay under
# each of bbr, bbr3 and bbr_noagg (reading the congestion control's own report,
# TCP_CC_INFO, on the way), and powers the machine off.
#
# Prints the check's lines; the whole console log goes to CACHE_DIR/boot-check.log.
# Exit 0 when everything held, 1 otherwise. Needs root, debootstrap, e2fsprogs and
# qemu-system-x86. Under TCG (no KVM) the boot takes a minute or two.
#
# Environment: BBRLAB_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# BBRLAB_BOOT_CHECK_TIMEOUT (seconds QEMU may run, default 900).
set -Eeuo pipefail

entry=${1:?usage: vm/kernel/boot-check.sh CACHE_DIR (see vm/build-kernel.sh --print-dir)}
mirror=${BBRLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
timeout_s=${BBRLAB_BOOT_CHECK_TIMEOUT:-900}

lib_name=boot-check
# shellcheck source=vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh" # die, log, now
trap 'die "line $LINENO: command failed: $BASH_COMMAND"' ERR

[[ -f $entry/manifest ]] || die "$entry is no build of vm/build-kernel.sh (no manifest)"
manifest_value() { sed -n "s/^$1=//p" "$entry/manifest"; }
release=$(manifest_value kernel_release)
image_deb=$(manifest_value image_deb)
[[ -n $release && -f $entry/$image_deb ]] || die "$entry/manifest names no linux-image package that is there"
[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 is missing: apt-get install e2fsprogs"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing: apt-get install qemu-system-x86"

work="" root="" qemu_pid=""
cleanup() {
    # Never leave QEMU behind.
    if [[ -n $qemu_pid ]] && kill -0 "$qemu_pid" 2>/dev/null; then
        kill "$qemu_pid" 2>/dev/null || true
        sleep 1
        kill -9 "$qemu_pid" 2>/dev/null || true
    fi
    [[ -n $work ]] || return 0
    local mnt
    for mnt in dev/pts dev sys proc; do
        if mountpoint -q "$root/$mnt" 2>/dev/null; then
            umount "$root/$mnt" 2>/dev/null || umount -l "$root/$mnt"
        fi
    done
    if grep -q " $work/" /proc/mounts; then
        log "warning: something is still mounted under $work; left in place"
        return 0
    fi
    rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

work=$(mktemp -d "${TMPDIR:-/var/tmp}/bbrlab-boot-check.XXXXXX")
root=$work/rootfs
t0=$(now)
log "root file system for $release in $work"
# python3 sends the test traffic (setsockopt TCP_CONGESTION, getsockopt TCP_CC_INFO).
debootstrap --variant=minbase --include=kmod,iproute2,initramfs-tools,zstd,python3 \
    bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
cp "$entry/$image_deb" "$root/tmp/"
# The package's postinst runs initramfs-tools' hook, which makes /boot/initrd.img-$release.
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    dpkg -i "/tmp/$image_deb" >"$work/dpkg.log" 2>&1 ||
    { tail -n 20 "$work/dpkg.log" >&2; die "dpkg -i $image_deb failed"; }
rm -f "$root/tmp/$image_deb"
for mnt in dev/pts dev sys proc; do umount "$root/$mnt"; done
kernel=$root/boot/vmlinuz-$release
initrd=$root/boot/initrd.img-$release
[[ -f $kernel && -f $initrd ]] || die "no $kernel or $initrd after installing $image_deb"
cp "$kernel" "$initrd" "$work/"

cat >"$root/check-tcp.py" <<'PY'
"""Bulk TCP through the veth pair, one connection per congestion control.

server: accept connections; read each to EOF, answer with the byte count.
client ADDR CC...: send for a few seconds per CC; print what the CC reports.
"""
import socket
import struct
import sys
import time

PORT = 5201
TCP_CONGESTION = 13
TCP_CC_INFO = 26


def server():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", PORT))
    s.listen()
    while True:
        conn, _ = s.accept()
        total = 0
        while True:
            data = conn.recv(1 << 16)
            if not data:
                break
            total += len(data)
        conn.sendall(struct.pack("!Q", total))
        conn.close()


def bbr_info(sock):
    """struct tcp_bbr_info as this kernel fills it (the BBRv3 patch made it 52 bytes)."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 64)
    if len(raw) < 20:
        return f"cc_info {len(raw)} bytes"
    bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain = struct.unpack_from("=5I", raw)
    text = (f"bw={((bw_hi << 32) | bw_lo) * 8 / 1e6:.1f}Mbit/s min_rtt={min_rtt}us "
            f"pacing_gain={pacing_gain / 256:.2f} cwnd_gain={cwnd_gain / 256:.2f}")
    if len(raw) >= 40:
        mode, phase, _, version = struct.unpack_from("=4B", raw, 36)
        text += f" version={version} mode={mode} phase={phase}"
    return text


def client(addr, ccs, seconds=4.0):
    ok = True
    chunk = b"x" * (1 << 16)
    for cc in ccs:
        s = socket.socket()
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
        s.connect((addr, PORT))
        used = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
        start = time.monotonic()
        sent, info = 0, ""
        while time.monotonic() - start < seconds:
            sent += s.send(chunk)
            if not info and time.monotonic() - start > seconds * 0.75:
                info = bbr_info(s)
        s.shutdown(socket.SHUT_WR)
        got = struct.unpack("!Q", s.recv(8))[0]
        elapsed = time.monotonic() - start
        s.close()
        good = used == cc and got == sent and got > 0
        ok = ok and good
        print(f"BOOTCHECK tcp {cc}: {'ok' if good else 'FAILED'} cc={used} bytes={got} "
              f"rate={got * 8 / elapsed / 1e6:.1f}Mbit/s {info}", flush=True)
    return ok


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server()
    else:
        sys.exit(0 if client(sys.argv[2], sys.argv[3:]) else 1)
PY

cat >"$root/check.sh" <<'SH'
#!/bin/sh
# PID 1 of vm/kernel/boot-check.sh: check the kernel, print, power off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# initramfs-tools hands over /proc and /sys already mounted; a boot without it does not.
[ -e /proc/self ] || mount -t proc proc /proc
[ -d /sys/kernel ] || mount -t sysfs sysfs /sys
echo "BOOTCHECK begin"
# -a: every argument is a module (without it, the rest would be tcp_bbr's parameters).
if modprobe -a tcp_bbr tcp_bbr3 tcp_bbr_noagg sch_netem sch_fq sch_fq_codel sch_cake sch_htb; then
    echo "BOOTCHECK modprobe: ok"
else
    echo "BOOTCHECK modprobe: FAILED"
fi
echo "BOOTCHECK uname -r: $(uname -r)"
echo "BOOTCHECK uname -v: $(uname -v)"
echo "BOOTCHECK tcp_available_congestion_control: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"
for m in tcp_bbr tcp_bbr3 tcp_bbr_noagg; do
    echo "BOOTCHECK description $m: $(modinfo -F description $m)"
done
# Two namespaces joined by a veth pair; the sender's side delays and limits the
# rate with netem, as the testbed's links do.
ip netns add snd && ip netns add rcv &&
    ip link add veth-s netns snd type veth peer name veth-r netns rcv &&
    ip -n snd addr add 10.0.0.1/24 dev veth-s && ip -n snd link set veth-s up && ip -n snd link set lo up &&
    ip -n rcv addr add 10.0.0.2/24 dev veth-r && ip -n rcv link set veth-r up && ip -n rcv link set lo up &&
    ip netns exec snd tc qdisc add dev veth-s root netem delay 10ms rate 50mbit limit 1000
echo "BOOTCHECK netns and netem: $?"
ip netns exec rcv python3 /check-tcp.py server &
sleep 2
if ip netns exec snd python3 /check-tcp.py client 10.0.0.2 bbr bbr3 bbr_noagg; then
    echo "BOOTCHECK traffic: ok"
else
    echo "BOOTCHECK traffic: FAILED"
fi
kill $! 2>/dev/null
# Kernel warnings and oopses, if any (the BBRv3 core has WARN_ONCE checks of its own).
dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|tcp_bbr' | sed 's/^/BOOTCHECK dmesg: /'
echo "BOOTCHECK end"
sync
echo 1 > /proc/sys/kernel/sysrq
echo o > /proc/sysrq-trigger
sleep 30
SH
chmod 0755 "$root/check.sh"

mkfs.ext4 -q -F -L root -d "$root" "$work/disk.img" 2G >/dev/null
log "root file system ready after $(( $(now) - t0 ))s; booting under QEMU"

console=$entry/boot-check.log
# TCG as on the testbed's hosts, where KVM does not work.
accel=tcg,thread=multi
t0=$(now)
timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 -accel "$accel" -smp 2 -m 2048 \
    -kernel "$work/vmlinuz-$release" -initrd "$work/initrd.img-$release" \
    -append "console=ttyS0 root=/dev/vda rw panic=1 init=/check.sh" \
    -drive "file=$work/disk.img,format=raw,if=virtio" -nographic -no-reboot \
    </dev/null >"$console" 2>&1 &
qemu_pid=$!
rc=0
wait "$qemu_pid" || rc=$?
qemu_pid=""
log "QEMU ran $(( $(now) - t0 ))s (exit $rc); console log in $console"

tr -d '\r' <"$console" | grep '^BOOTCHECK' | sed 's/^BOOTCHECK //' || true
lines=$(tr -d '\r' <"$console" | grep '^BOOTCHECK ' || true)
available=$(sed -n 's/^BOOTCHECK tcp_available_congestion_control: //p' <<<"$lines")
problems=()
grep -q '^BOOTCHECK end$' <<<"$lines" || problems+=("the check did not finish (rc $rc)")
grep -qxF "BOOTCHECK uname -r: $release" <<<"$lines" || problems+=("uname -r is not $release")
grep -qxF 'BOOTCHECK modprobe: ok' <<<"$lines" || problems+=("modprobe failed")
for cc in bbr bbr3 bbr_noagg; do
    [[ " $available " == *" $cc "* ]] || problems+=("$cc not in tcp_available_congestion_control")
done
grep -qxF 'BOOTCHECK traffic: ok' <<<"$lines" || problems+=("traffic under bbr, bbr3, bbr_noagg failed")
if [[ ${#problems[@]} -gt 0 ]]; then
    die "kernel $release: $(IFS=';'; echo "${problems[*]}") (console log: $console)"
fi
log "kernel $release boots; bbr, bbr3 and bbr_noagg load and carry traffic"
