#!/usr/bin/env bash
# Build the libvirt box "debian/bookworm64" (amd64) or "bbrlab/bookworm-arm64"
# (arm64) from Debian's packages alone and add it to Vagrant.
#
# Why a local box: CI and development machines reach no box registry, and their
# own kernels lack sch_netem/sch_fq. The box boots Debian's kernel directly
# (no bootloader: the box's Vagrantfile points libvirt at vmlinuz/initrd) and
# is pre-seeded with every package the Ansible roles install plus ansible
# itself, so `vagrant up` + ansible_local need no network in the guest. What the
# roles would compile under TCG is compiled here, natively (amd64): tcp_bbr_noagg,
# tcp_bbr410 (Linux 4.10.1's tcp_bbr.c from ../shared/src, else fetched at its pinned
# tag), and picoquic's picoquicdemo and picolog_t (from ../shared/src, else fetched at the
# pinned commits; cached under $BBRLAB_CACHE/picoquic by the hash of their script), and
# Mahimahi 0.96's mm-delay, mm-loss and mm-link (from ../shared/src, else fetched at the pinned
# commit; cached under $BBRLAB_CACHE/mahimahi by the hash of its script and patch). These parts
# are optional (vm/box-parts.sh): one whose sources are out of reach, or whose build fails, is
# left out of the box with one line saying which, why and how to supply it; the box records
# it beside its file, and is built again once that part's sources are in reach. Last, the
# testbed's roles are applied into the image natively (ansible-playbook in its chroot), all
# but their tasks that need the running kernel, and the image records which roles: its
# first `vagrant up` runs only those tasks (ansible/playbook.yml).
#
# The .box is cached under $BBRLAB_CACHE/boxes, keyed by a hash of this script,
# the build scripts, the roles (ansible/) and (for arm64) the architecture; it is rebuilt only
# when they change, and re-added to Vagrant only when the installed box is not
# the current one.
#
# Usage: vm/build-box.sh [--arch amd64|arm64] [--status | --no-add]
#   --arch    the box's Debian architecture (default amd64). A foreign one is
#             built through qemu-user-static and binfmt_misc (apt-get install
#             qemu-user-static binfmt-support); tcp_bbr_noagg is then left to
#             provisioning (a compiler under user-mode emulation is too slow).
#   --status  print "current" (exit 0) or "stale" (exit 1) and do nothing else
#   --sources print where the box's sources come from, or why an optional part would be left
#             out (vm/box-parts.sh), and do nothing else
#   --no-add  build the .box if needed, print its path, and leave Vagrant alone
#             (vm/arm64-check.sh boots the image with qemu directly)
#
# With BBRLAB_BBR3_KERNEL=1 the amd64 box carries two kernels: Debian's own (6.1,
# booted by default) and the testbed's 6.12 with BBRv3 (vm/build-kernel.sh, built
# natively and cached by the hash of its inputs; the box's hash includes it). Its
# Vagrantfile boots the one BBRLAB_KERNEL names at `vagrant up`: "debian" or "bbr3".
#
# Environment: BBRLAB_CACHE (default /var/cache/bbrlab), VAGRANT_HOME (default
# $BBRLAB_CACHE/vagrant.d), BBRLAB_DEBIAN_MIRROR (default
# http://deb.debian.org/debian), BBRLAB_BOX_DISK_GB (default 10),
# BBRLAB_BBR3_KERNEL (default 0; 1: the box carries the BBRv3 kernel too), BBRLAB_SRC (the
# folder of source copies, default ../shared/src beside the checkout).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
cache=${BBRLAB_CACHE:-/var/cache/bbrlab}
export VAGRANT_HOME=${VAGRANT_HOME:-$cache/vagrant.d}
mirror=${BBRLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
disk_gb=${BBRLAB_BOX_DISK_GB:-10}
suite=bookworm

usage="usage: vm/build-box.sh [--arch amd64|arm64] [--status | --sources | --no-add]"
arch=amd64 action=add
while [[ $# -gt 0 ]]; do
    case $1 in
        --arch) [[ $# -ge 2 ]] || { echo "build-box: error: --arch needs a value ($usage)" >&2; exit 1; }
                arch=$2; shift 2 ;;
        --status) action=status; shift ;;
        --sources) action=sources; shift ;;
        --no-add) action=no-add; shift ;;
        *) echo "build-box: error: unknown argument: $1 ($usage)" >&2; exit 1 ;;
    esac
done
# Per architecture: the box's name in Vagrant, the cached file's prefix, the
# stamp of the installed box, and how libvirt boots the kernel.
case $arch in
    amd64)
        box_name=debian/bookworm64 box_prefix=bookworm64 stamp_name=bbrlab-box.sha256
        # tsc=reliable: under TCG the kernel distrusts the TSC and falls back to the HPET,
        # whose every read is an emulated device access (netem, fq and htb read the clock
        # per packet). Under KVM kvm-clock still wins by rating.
        cmd_line="root=/dev/vda rw console=ttyS0 net.ifnames=0 tsc=reliable" ;;
    arm64)
        box_name=bbrlab/bookworm-arm64 box_prefix=bookworm-arm64 stamp_name=bbrlab-box-arm64.sha256
        cmd_line="root=/dev/vda rw console=ttyAMA0 net.ifnames=0" ;;
    *) echo "build-box: error: --arch must be amd64 or arm64, got '$arch'" >&2; exit 1 ;;
esac
box_dir=$VAGRANT_HOME/boxes/${box_name//\//-VAGRANTSLASH-}/0/libvirt
stamp=$VAGRANT_HOME/$stamp_name
host_arch=$(dpkg --print-architecture 2>/dev/null || echo unknown)

die() { echo "build-box: error: $*" >&2; exit 1; }
log() { echo "build-box: $*" >&2; }
now() { date +%s; }
timed() { # timed LABEL CMD...: run CMD and print how long it took
    local label=$1 t0 rc=0; shift
    t0=$(now)
    "$@" || rc=$?
    log "$label took $(( $(now) - t0 ))s"
    return "$rc"
}
logged() { # logged LOG CMD...: run CMD quietly into LOG; on failure show its tail, return its status
    local logfile=$1 rc=0; shift
    "$@" >"$logfile" 2>&1 || rc=$?
    ((rc == 0)) || tail -n 30 "$logfile" >&2
    return "$rc"
}

# Packages the box needs besides the roles' lists: booting, ssh, DHCP, sudo,
# and what ansible_local and Ansible's apt module need on the target. The roles
# use ansible.builtin only, so ansible-core suffices (the "ansible" package
# would add ~500 MB of collections to the box).
base_include=systemd-sysv,udev,dbus,linux-image-$arch,openssh-server,sudo,python3,python3-cffi-backend,iproute2,kmod,rsync,ca-certificates,ifupdown,isc-dhcp-client,netbase,less
provision_packages="ansible-core python3-apt"

role_packages() { # the package lists of the roles, one per line, sorted
    python3 - "$repo/ansible/roles/testbed/defaults/main.yml" \
        "$repo/ansible/roles/netkernel/defaults/main.yml" <<'PY'
import sys
import yaml

names = set()
for path, key in zip(sys.argv[1:], ("testbed_packages", "netkernel_packages")):
    with open(path, encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        sys.exit(f"{path}: {key} must be a list of package names")
    names.update(value)
print("\n".join(sorted(names)))
PY
}

command -v python3 >/dev/null || die "python3 is missing: run vm/vm.sh deps (apt-get install python3 python3-yaml)"
python3 -c 'import yaml' 2>/dev/null || die "python3-yaml is missing: run vm/vm.sh deps"
packages=$(role_packages) || die "cannot read the package lists from ansible/roles/*/defaults/main.yml"
noagg_script=$repo/ansible/roles/bbrnoagg/files/build-tcp-bbr-noagg.sh
picoquic_script=$repo/ansible/roles/picoquic/files/build-picoquic.sh
mahimahi_files=$repo/ansible/roles/mahimahi/files
bbr410_files=$repo/ansible/roles/bbr410/files
arch_key=""
[[ $arch == amd64 ]] || arch_key=$arch # amd64's key is computed as it always was
# The BBRv3 kernel (amd64): its cache directory's name is the hash of its inputs.
bbr3_kernel=""
if [[ $arch == amd64 && ${BBRLAB_BBR3_KERNEL:-0} == 1 ]]; then
    # --print-dir names the entry of the current inputs (exit 1 while it is not built yet)
    bbr3_kernel=$("$here/build-kernel.sh" --print-dir 2>/dev/null || true)
    [[ -n $bbr3_kernel ]] || die "BBRLAB_BBR3_KERNEL=1, but vm/build-kernel.sh --print-dir failed (run it to see why)"
fi
roles_files() { # the names and contents of ansible/'s files: the roles the box's image is provisioned by
    (cd "$repo/ansible" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}
box_key() { # the box's hash, its cached file's prefix and path, of these inputs and bbr3_kernel
    hash=$( { cat "${BASH_SOURCE[0]}" "$here/box-parts.sh" "$noagg_script" "$picoquic_script" "$bbr410_files"/* "$mahimahi_files"/*
        roles_files; printf '%s\n' "$packages" ${arch_key:+"$arch_key"} \
        ${bbr3_kernel:+"$(basename "$bbr3_kernel")"}; } | sha256sum | cut -c1-16)
    # A box with the BBRv3 kernel is cached beside the one without it, so switching
    # BBRLAB_BBR3_KERNEL back and forth rebuilds neither.
    box_prefix=${box_prefix%-bbr3}${bbr3_kernel:+-bbr3}
    box_file=$cache/boxes/$box_prefix-$hash.box
}
box_key

box_is_current() {
    [[ -f $box_dir/metadata.json && -f $box_dir/vmlinuz && -f $stamp && $(cat "$stamp") == "$hash" ]]
}

if [[ $action == status ]]; then
    if box_is_current; then echo current; exit 0; else echo stale; exit 1; fi
fi
# shellcheck source=vm/box-parts.sh
source "$here/box-parts.sh"
if [[ $action == sources ]]; then
    mirror_reason=$(reach "$mirror")
    log "Debian's packages (the kernel, tc's qdiscs, iperf3, Mininet: figure 5's parts) from $mirror${mirror_reason:+: cannot be reached ($mirror_reason)}"
    parts_plan
    parts_say
    exit 0
fi
[[ $(id -u) -eq 0 ]] || die "must run as root (mmdebstrap or debootstrap, chroot, mkfs)"
[[ $arch == amd64 ]] && bootstrap=mmdebstrap || bootstrap=debootstrap
for tool in "$bootstrap" mkfs.ext4 qemu-img vagrant; do
    command -v "$tool" >/dev/null || die "$tool is missing: run vm/vm.sh deps"
done
if [[ $arch != "$host_arch" ]]; then
    # debootstrap's second stage and the chroot's apt run the box's own binaries.
    [[ $arch == arm64 ]] && binfmt=qemu-aarch64 || binfmt=qemu-x86_64
    grep -qx enabled "/proc/sys/fs/binfmt_misc/$binfmt" 2>/dev/null ||
        die "cannot run $arch binaries on this $host_arch host: apt-get install qemu-user-static binfmt-support, then update-binfmts --enable $binfmt"
fi

build_root=""
cleanup() {
    [[ -n $build_root ]] || return 0
    for mnt in dev/pts dev sys proc; do
        mountpoint -q "$build_root/rootfs/$mnt" 2>/dev/null && umount -l "$build_root/rootfs/$mnt"
    done
    rm -rf "$build_root"
}
trap cleanup EXIT

configure_rootfs() { # configure_rootfs ROOTFS: everything the box needs to boot and be reached
    local root=$1 key
    echo bbrlab >"$root/etc/hostname"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\tbbrlab\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
    echo '/dev/vda / ext4 defaults,errors=remount-ro 0 1' >"$root/etc/fstab"
    # DHCP on eth0 only: matching eth* would also grab a private-network NIC.
    printf 'auto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet dhcp\n' >"$root/etc/network/interfaces"
    # Every VM gets its own machine id and ssh host keys at first boot.
    : >"$root/etc/machine-id"
    rm -f "$root"/etc/ssh/ssh_host_*
    mkdir -p "$root/etc/systemd/system/ssh.service.d"
    printf '[Service]\nExecStartPre=\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStartPre=/usr/sbin/sshd -t\n' \
        >"$root/etc/systemd/system/ssh.service.d/bbrlab-host-keys.conf"
    echo 'UseDNS no' >"$root/etc/ssh/sshd_config.d/bbrlab.conf"
    # No background apt runs competing with provisioning or experiments.
    ln -sf /dev/null "$root/etc/systemd/system/apt-daily.timer"
    ln -sf /dev/null "$root/etc/systemd/system/apt-daily-upgrade.timer"
    # User vagrant: NOPASSWD sudo and Vagrant's insecure key (replaced by vagrant up).
    chroot "$root" useradd --create-home --shell /bin/bash vagrant
    echo 'vagrant:vagrant' | chroot "$root" chpasswd
    echo 'vagrant ALL=(ALL) NOPASSWD: ALL' >"$root/etc/sudoers.d/vagrant"
    chmod 0440 "$root/etc/sudoers.d/vagrant"
    key=$(dpkg -L vagrant 2>/dev/null | grep '/keys/vagrant.pub$' | head -n1)
    [[ -n $key && -f $key ]] || die "Vagrant's insecure public key not found: apt-get install vagrant"
    install -d -m 0700 "$root/home/vagrant/.ssh"
    install -m 0600 "$key" "$root/home/vagrant/.ssh/authorized_keys"
    chroot "$root" chown -R vagrant:vagrant /home/vagrant/.ssh
}

write_box_vagrantfile() { # write_box_vagrantfile FILE
    local machine=""
    # arm64: QEMU's "virt" board (no firmware needed for a direct kernel boot).
    # The CPU model is the project Vagrantfile's choice (KVM or TCG).
    [[ $arch == arm64 ]] && machine='
    libvirt.machine_type = "virt"
    libvirt.machine_arch = "aarch64"'
    local kernels=debian
    [[ -z $bbr3_kernel ]] || kernels+=" bbr3"
    local choose="
  kernel = ENV.fetch(\"BBRLAB_KERNEL\", \"debian\")
  abort \"BBRLAB_KERNEL must be one of: $kernels (this box; BBRLAB_BBR3_KERNEL=1 vm/build-box.sh adds bbr3), got #{kernel.inspect}\" unless %w[$kernels].include?(kernel)
  suffix = kernel == \"bbr3\" ? \"-bbr3\" : \"\""
    cat >"$1" <<RUBY
# Box built by bbrlab's vm/build-box.sh ($arch): boots a kernel directly, Debian's own
# or (BBRLAB_KERNEL=bbr3) the testbed's 6.12 with BBRv3.
Vagrant.configure("2") do |config|$choose
  config.vm.provider :libvirt do |libvirt|
    libvirt.kernel = File.expand_path("../vmlinuz#{suffix}", __FILE__)
    libvirt.initrd = File.expand_path("../initrd#{suffix}.img", __FILE__)
    libvirt.cmd_line = "$cmd_line"
    libvirt.disk_bus = "virtio"$machine
  end
end
RUBY
}

virtio_initrd() { # virtio_initrd ROOT: an initrd with only what a QEMU virt board's disk needs
    # The arm64 box boots under QEMU (libvirt's or vm/arm64-check.sh's) and nowhere else:
    # Debian's default initrd (MODULES=most) copies some 1,500 modules, about 12 minutes
    # for every update under user-mode emulation. Not a conffile: dpkg leaves both alone.
    local root=$1
    mkdir -p "$root/etc/initramfs-tools/conf.d" "$root/etc/initramfs-tools/hooks"
    echo 'MODULES=list # bbrlab: the drivers come from hooks/bbrlab-virtio' \
        >"$root/etc/initramfs-tools/conf.d/bbrlab-virtio.conf"
    cat >"$root/etc/initramfs-tools/hooks/bbrlab-virtio" <<'SH'
#!/bin/sh
# bbrlab (vm/build-box.sh): the drivers the box's root file system needs under QEMU.
[ "$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
manual_add_modules virtio_pci virtio_mmio virtio_blk ext4
SH
    chmod 0755 "$root/etc/initramfs-tools/hooks/bbrlab-virtio"
}

stock_release() { # stock_release ROOT: the release of Debian's own kernel in ROOT
    find "$1/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | grep -v -- '-bbrlab' | sort -V | tail -n1
}

bbr3_manifest() { # bbr3_manifest KEY: a value the kernel build recorded in its manifest
    sed -n "s/^$1=//p" "$bbr3_kernel/manifest"
}

install_bbr3_kernel() { # install_bbr3_kernel ROOT: the testbed's 6.12 kernel beside Debian's
    local root=$1 image
    image=$bbr3_kernel/$(bbr3_manifest image_deb)
    [[ -f $image ]] || die "no linux-image package in $bbr3_kernel (vm/build-kernel.sh)"
    cp "$image" "$root/tmp/"
    timed "install the BBRv3 kernel" logged "$build_root/bbr3-kernel.log" \
        chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 dpkg -i "/tmp/$(basename "$image")" ||
        die "the BBRv3 kernel's package did not install (the last lines of its log above)"
    rm -f "$root/tmp/$(basename "$image")"
}

mount_root() { # mount_root ROOT: what the chroot's package scripts and builds need; no services start
    local root=$1
    mount -t proc proc "$root/proc"
    mount -t sysfs sysfs "$root/sys"
    mount --bind /dev "$root/dev"
    mount --bind /dev/pts "$root/dev/pts"
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 0755 "$root/usr/sbin/policy-rc.d"
}

base_root() { # base_root ROOT: Debian with the box's packages (base, Ansible's, the roles'), mounted
    local sources=("deb $mirror $suite main" "deb $mirror $suite-updates main"
        "deb http://deb.debian.org/debian-security $suite-security main")
    if [[ $arch == amd64 ]]; then
        # One apt run resolves and fetches everything in parallel: 108 s against debootstrap's
        # and apt's 144-148 s, the same packages. Its lists stay for the parts' build tools.
        timed "mmdebstrap" logged "$build_root/mmdebstrap.log" \
            mmdebstrap --mode=root --variant=minbase --arch="$arch" --skip=cleanup/apt/lists \
            --include="$base_include,${provision_packages// /,},$(paste -sd, <<<"$packages")" \
            "$suite" "$root" "${sources[@]}" ||
            die "mmdebstrap failed (the last lines of its log above)"
        mount_root "$root"
        return
    fi
    # Two stages, and between them the small initrd, before the kernel's package makes one.
    timed "debootstrap, first stage ($arch)" logged "$build_root/debootstrap.log" \
        debootstrap --foreign --arch="$arch" --variant=minbase --include="$base_include" "$suite" "$root" "$mirror" ||
        die "debootstrap's first stage failed (the last lines of its log above)"
    virtio_initrd "$root"
    timed "debootstrap, second stage ($arch)" logged "$build_root/debootstrap-second-stage.log" \
        chroot "$root" /debootstrap/debootstrap --second-stage ||
        die "debootstrap's second stage failed (the last lines of its log above)"
    printf '%s\n' "${sources[@]}" >"$root/etc/apt/sources.list"
    mount_root "$root"
    timed "chroot apt-get install" logged "$build_root/apt.log" \
        chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 sh -c \
        "apt-get update -q && apt-get install -y -q --no-install-recommends $provision_packages ${packages//$'\n'/ } && apt-get clean" ||
        die "the box's packages did not install (the last lines of apt's log above)"
}

provision_image() { # provision_image ROOT: the testbed's roles applied into the box's image
    # natively (ansible-playbook in its chroot), but for their tasks that need the running kernel
    # (bbrlab_image_build), here the build host's. The playbook records in the image which roles
    # built it; a VM booted from it, provisioned by the same roles, then runs only those tasks.
    local root=$1 record=$1/var/lib/bbrlab/image-roles.sha256
    mkdir -p "$root/tmp/bbrlab-ansible"
    cp -a "$repo/ansible/." "$root/tmp/bbrlab-ansible/"
    if timed "the roles into the image" logged "$build_root/provision.log" \
        in_root "$root" ANSIBLE_CONFIG=/tmp/bbrlab-ansible/ansible.cfg ansible-playbook -c local -i localhost, \
        -e testbed_project_dir=/vagrant -e bbrlab_image_build=true -e ansible_become=false \
        /tmp/bbrlab-ansible/playbook.yml; then
        if ((${#part_out[@]})); then
            # their roles try again at provisioning: the first boot runs every role
            rm -f "$record"
            log "the box's first boot runs every role: ${!part_out[*]} left out of the box"
        fi
    else
        rm -f "$record"
        log "warning: the roles did not apply to the box's image (log: $cache/logs/build-box-provision.log);" \
            "its first boot runs every role"
        mkdir -p "$cache/logs" && cp "$build_root/provision.log" "$cache/logs/build-box-provision.log"
    fi
    rm -rf "$root/tmp/bbrlab-ansible" "$root/root/.ansible"
}

build_box() {
    local root t_all
    t_all=$(now)
    mkdir -p "$cache/boxes"
    build_root=$(mktemp -d "$cache/build.XXXXXX")
    root=$build_root/rootfs
    log "building box $hash in $build_root"
    local mirror_reason
    mirror_reason=$(reach "$mirror")
    [[ -z $mirror_reason ]] || die "Debian's mirror $mirror cannot be reached ($mirror_reason): the box is made of its packages (BBRLAB_DEBIAN_MIRROR names another)"
    parts_plan
    parts_say
    base_root "$root"
    if [[ -n $bbr3_kernel ]]; then
        install_bbr3_kernel "$root"
    fi
    if [[ $arch == "$host_arch" ]]; then
        build_parts "$root"
        provision_image "$root"
    else
        log "tcp_bbr_noagg, tcp_bbr410, picoquic and Mahimahi not built for a foreign architecture: provisioning builds them (roles bbrnoagg, bbr410, picoquic, mahimahi)"
    fi
    rm -f "$root/usr/sbin/policy-rc.d"
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
    configure_rootfs "$root"
    for mnt in dev/pts dev sys proc; do umount "$root/$mnt"; done

    local stock kernel initrd
    stock=$(stock_release "$root")
    kernel=$root/boot/vmlinuz-$stock
    initrd=$root/boot/initrd.img-$stock
    [[ -f $kernel && -f $initrd ]] || die "no kernel/initrd of $stock in the root file system"
    mkdir -p "$build_root/box"
    cp "$kernel" "$build_root/box/vmlinuz"
    cp "$initrd" "$build_root/box/initrd.img"
    local files=(metadata.json Vagrantfile box.img vmlinuz initrd.img) bbr3
    if [[ -n $bbr3_kernel ]]; then
        bbr3=$(bbr3_manifest kernel_release)
        [[ -n $bbr3 && -f $root/boot/vmlinuz-$bbr3 && -f $root/boot/initrd.img-$bbr3 ]] ||
            die "the BBRv3 kernel's vmlinuz/initrd are not in the root file system"
        cp "$root/boot/vmlinuz-$bbr3" "$build_root/box/vmlinuz-bbr3"
        cp "$root/boot/initrd.img-$bbr3" "$build_root/box/initrd-bbr3.img"
        files+=(vmlinuz-bbr3 initrd-bbr3.img)
    fi
    timed "mkfs.ext4 -d" mkfs.ext4 -q -F -L root -d "$root" "$build_root/disk.raw" "${disk_gb}G" || die "mkfs.ext4 failed"
    # zstd-compressed clusters, written out of order by parallel coroutines: on 2 cores 8 s and
    # 615 MB, against zlib's 33 s and 645 MB (and 53 s in order); uncompressed, 1970 MB
    timed "qemu-img convert" qemu-img convert -c -o compression_type=zstd -m 4 -W -O qcow2 \
        "$build_root/disk.raw" "$build_root/box/box.img" ||
        die "qemu-img convert failed"
    printf '{"provider":"libvirt","format":"qcow2","virtual_size":%s}\n' "$disk_gb" >"$build_root/box/metadata.json"
    write_box_vagrantfile "$build_root/box/Vagrantfile"
    tar -C "$build_root/box" -cf "$box_file.tmp" "${files[@]}"
    parts_record "$box_file.parts"
    mv "$box_file.tmp" "$box_file"
    log "box written to $box_file ($(du -h "$box_file" | cut -f1)); build took $(( $(now) - t_all ))s"
}

remove_stale_box_volumes() {
    # vagrant-libvirt uploads a box's disk to the storage pool once and reuses
    # it by name; after the box changes, that copy must go.
    virsh -c qemu:///system list >/dev/null 2>&1 || return 0
    local vol
    for vol in $(virsh -c qemu:///system vol-list default 2>/dev/null \
        | awk -v prefix="${box_name//\//-VAGRANTSLASH-}_vagrant_box_image_" 'index($1, prefix) == 1 {print $1}'); do
        log "deleting stale box volume $vol"
        virsh -c qemu:///system vol-delete --pool default "$vol" >/dev/null
    done
}

if [[ -f $box_file ]] && parts_in_reach_again "$box_file.parts"; then
    log "building the box again with them"
    rm -f "$box_file" "$box_file.parts" "$stamp" # and adding it again: its hash is the same
fi
if [[ ! -f $box_file && -n $bbr3_kernel ]]; then
    # a build of these inputs made elsewhere is taken as it is (vm/kernel-prebuilt.sh); a
    # cached build returns at once; else it prints its stages and says which step failed and why
    "$here/kernel-prebuilt.sh" || true
    if ! timed "the BBRv3 kernel build" "$here/build-kernel.sh" >&2; then
        # optional as the other parts: the box without it, and one line on what needs it
        log "the BBRv3 kernel left out of the box: vm/build-kernel.sh failed (its last lines above); bbr3, lab 5" \
            "and the v3 experiments need it (docs/troubleshooting.md, \"Offline\", for its patch); the box has Debian's kernel only"
        bbr3_kernel=""
        box_key
    fi
fi
if [[ -f $box_file ]]; then
    log "cached box $box_file is current (inputs hash $hash)"
else
    # this variant's earlier boxes: the prefix and a 16-digit hash, nothing between
    hash_glob=$(printf '[0-9a-f]%.0s' {1..16})
    compgen -G "$cache/boxes/$box_prefix-$hash_glob.box" >/dev/null && log "inputs changed: rebuilding"
    build_box
    find "$cache/boxes" \( -name "$box_prefix-$hash_glob.box" -o -name "$box_prefix-$hash_glob.box.parts" \) \
        ! -name "$box_prefix-$hash.box*" -delete
fi

if [[ $action == no-add ]]; then
    echo "$box_file"
    exit 0
fi

if box_is_current; then
    log "vagrant box $box_name is already the current one"
else
    mkdir -p "$VAGRANT_HOME"
    chmod 0755 "$cache" "$VAGRANT_HOME"
    remove_stale_box_volumes
    # without BBRLAB_KERNEL: vagrant reads the box being replaced, whose kernels may not
    # include the one asked for (a box without bbr3 refuses BBRLAB_KERNEL=bbr3)
    timed "vagrant box add" env -u BBRLAB_KERNEL vagrant box add --force --name "$box_name" --provider libvirt "$box_file" >&2
    echo "$hash" >"$stamp"
fi
