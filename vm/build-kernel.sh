#!/usr/bin/env bash
# Build the testbed's kernel: Debian's linux-source-6.12 with Google's BBRv3 (as
# ported to 6.12 by CachyOS), packaged as Debian packages (linux-image and
# linux-headers) by the kernel's own `make bindeb-pkg`.
#
# Why a kernel of our own: BBRv3 is no loadable module for a stock kernel; it
# needs the TCP core changes of its patch (a new congestion-control hook
# .tso_segs, a larger rate_sample and per-socket area). The kernel carries three
# BBR modules, so one sweep can compare them on the same TCP core:
#   tcp_bbr        "bbr"        Linux 6.12's own BBR (v1), adapted to the new hook
#                               (vm/kernel/tcp_bbr-v1-tso_segs.patch); in this
#                               project "bbr" always means v1
#   tcp_bbr3       "bbr3"       BBRv3, the patch's tcp_bbr.c under another name
#   tcp_bbr_noagg  "bbr_noagg"  v1 without the ACK-aggregation allowance, the same
#                               two edits as ansible/roles/bbrnoagg's build script
#
# The build runs natively in a throw-away bookworm chroot (debootstrap), with
# Debian's config for amd64 trimmed by `make localmodconfig` to the modules in
# vm/kernel/modules.lst; debug info and module signing are off. The packages are
# cached under $BBRLAB_CACHE/kernels/<hash>, keyed by a hash of this script, the
# build inputs in vm/kernel/ (boot-check.sh only tests the result and is left
# out), the BBRv3 patch's sha256 and the linux-source-6.12 version; a run with
# the same inputs finds the cached build and does nothing.
#
# Usage: vm/build-kernel.sh [--status | --print-dir]
#   --status     print "current" (exit 0) or "stale" (exit 1) and do nothing else
#   --print-dir  print the cache directory of the current inputs; exit 1 (after
#                printing it) when it has not been built
#
# Environment: BBRLAB_CACHE (default /var/cache/bbrlab), BBRLAB_BBR3_PATCH (the
# patch's local copy; default ../shared/kernel/bbr3-6.12.patch next to the
# checkout, fetched from its public URL when absent), BBRLAB_LINUX_SOURCE_VERSION
# (default below), BBRLAB_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# BBRLAB_DEBIAN_SECURITY_MIRROR (default http://deb.debian.org/debian-security),
# BBRLAB_KERNEL_JOBS (make -j; default the number of CPUs).
#
# Needs root, debootstrap, and curl or wget when the patch must be fetched.
# The chroot takes a few GB under $BBRLAB_CACHE while it builds; the entry keeps
# the two packages, the kernel's config, a manifest and the build's logs (a
# failed build leaves its logs in $BBRLAB_CACHE/kernels/logs).
set -Eeuo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
cache=${BBRLAB_CACHE:-/var/cache/bbrlab}
kernels=$cache/kernels
mirror=${BBRLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${BBRLAB_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
suite=bookworm
jobs=${BBRLAB_KERNEL_JOBS:-$(nproc)}

# The BBRv3 patch: never committed; read from the local copy when there is one,
# else fetched. Either way it must be exactly this file.
bbr3_patch_url=https://raw.githubusercontent.com/CachyOS/kernel-patches/b3d684160f64763d46da0368d9a1e6f1280e8685/6.12/0002-bbr3.patch
bbr3_patch_sha256=15d1563b4696ee35455f02b21fad0508fb77e0364f8dd1f48e0e82671dd05299
bbr3_patch=${BBRLAB_BBR3_PATCH:-$repo/../shared/kernel/bbr3-6.12.patch}
# Debian's kernel source, pinned: the patch is known to apply to it, and the
# cache key must not move when the archive does. bookworm carries it in
# bookworm-security, which keeps earlier versions for a while.
source_package=linux-source-6.12
config_package=linux-config-6.12
source_version=${BBRLAB_LINUX_SOURCE_VERSION:-6.12.117-1~deb12u1}
debian_config=config.amd64_none_amd64
localversion=-bbrlab

usage="usage: vm/build-kernel.sh [--status | --print-dir]"
action=build
while [[ $# -gt 0 ]]; do
    case $1 in
        --status) action=status; shift ;;
        --print-dir) action=print-dir; shift ;;
        *) echo "build-kernel: error: unknown argument: $1 ($usage)" >&2; exit 1 ;;
    esac
done

die() { echo "build-kernel: error: $*" >&2; exit 1; }
log() { echo "build-kernel: $*" >&2; }
now() { date +%s; }
timed() { # timed LABEL CMD...: run CMD and print how long it took
    local label=$1 t0 rc=0; shift
    t0=$(now)
    "$@" || rc=$?
    log "$label took $(( $(now) - t0 ))s"
    return "$rc"
}
logged() { # logged STEP LOG CMD...: run CMD quietly into LOG; on failure show its tail
    local step=$1 logfile=$2; shift 2
    local rc=0
    "$@" >"$logfile" 2>&1 </dev/null || rc=$?
    [[ $rc -ne 0 ]] || return 0
    tail -n 30 "$logfile" >&2
    die "step '$step' failed with exit status $rc (last lines of $logfile above)"
}
# Anything else that fails unexpectedly still names itself.
trap 'die "line $LINENO: command failed: $BASH_COMMAND"' ERR

# The build's inputs, one line each: a change to any of them is a new build.
kernel_inputs() {
    sha256sum <"${BASH_SOURCE[0]}"
    # Relative names, so that a renamed input changes the key too.
    (cd "$here" && find kernel -type f ! -name boot-check.sh -print0 | LC_ALL=C sort -z | xargs -0r sha256sum)
    echo "bbr3 patch sha256 $bbr3_patch_sha256"
    echo "$source_package $source_version"
}
[[ -f $here/kernel/modules.lst && -f $here/kernel/required-options ]] ||
    die "vm/kernel/modules.lst or vm/kernel/required-options is missing from the checkout"
hash=$(kernel_inputs | sha256sum | cut -c1-16)
entry=$kernels/$hash

entry_is_current() { [[ -f $entry/manifest ]]; }

case $action in
    status) if entry_is_current; then echo current; exit 0; else echo stale; exit 1; fi ;;
    print-dir)
        echo "$entry"
        entry_is_current || { log "$entry has not been built: run vm/build-kernel.sh"; exit 1; }
        exit 0 ;;
esac
if entry_is_current; then
    log "cached build $entry is current (inputs hash $hash): nothing to do"
    exit 0
fi

[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
for tool in chroot sha256sum; do
    command -v "$tool" >/dev/null || die "$tool is missing: apt-get install coreutils"
done
for tool in mount mountpoint flock; do
    command -v "$tool" >/dev/null || die "$tool is missing: apt-get install util-linux"
done

mkdir -p "$kernels"
# One build at a time: two would share the logs and race for the entry.
exec 9>"$kernels/.lock"
flock -n 9 || die "another vm/build-kernel.sh is running (lock $kernels/.lock)"

build_root="" root=""
cleanup() {
    [[ -n $build_root ]] || return 0
    local mnt
    for mnt in dev/pts dev sys proc; do
        if mountpoint -q "$root/$mnt" 2>/dev/null; then
            umount "$root/$mnt" 2>/dev/null || umount -l "$root/$mnt"
        fi
    done
    # Never delete through a mount that is still there (a bound /dev above all).
    if grep -q " $build_root/" /proc/mounts; then
        log "warning: something is still mounted under $build_root; left in place"
        return 0
    fi
    rm -rf --one-file-system "$build_root"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Commands in the chroot get a clean environment: nothing of the caller's
# locale, make flags or compiler settings leaks into the build.
in_root() {
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LC_ALL=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}

fetch_patch() { # fetch_patch DEST: the BBRv3 patch, from the local copy or its URL, checked
    local dest=$1 sum
    if [[ -f $bbr3_patch ]]; then
        cp "$bbr3_patch" "$dest"
        log "BBRv3 patch: $bbr3_patch"
    else
        log "BBRv3 patch: no local copy at $bbr3_patch; fetching $bbr3_patch_url"
        if command -v curl >/dev/null; then
            curl -fsSL --retry 3 -o "$dest" "$bbr3_patch_url" || die "cannot fetch $bbr3_patch_url (curl)"
        elif command -v wget >/dev/null; then
            wget -q -O "$dest" "$bbr3_patch_url" || die "cannot fetch $bbr3_patch_url (wget)"
        else
            die "curl is missing (needed to fetch the BBRv3 patch): apt-get install curl"
        fi
    fi
    sum=$(sha256sum <"$dest" | cut -d' ' -f1)
    [[ $sum == "$bbr3_patch_sha256" ]] ||
        die "the BBRv3 patch has sha256 $sum, expected $bbr3_patch_sha256 (${bbr3_patch} or $bbr3_patch_url)"
}

# --- source edits: each one checked, a failed one stops the build ----------------

edit_failed() { die "source edit '$1' did not apply to $2"; }

apply_patch() { # apply_patch STEP PATCH: apply PATCH (-p1) to the tree, trying it first
    local step=$1 patch=$2 name files
    name=$(basename "$patch" .patch)
    files=$(sed -n 's|^+++ b/||p' "$patch" | tr '\n' ' ')
    # The dry run leaves the tree untouched when a hunk does not fit.
    if ! in_root patch -p1 -f -s --dry-run -d "$src_in" <"$patch" >"$logs/patch-$name.log" 2>&1; then
        tail -n 20 "$logs/patch-$name.log" >&2
        edit_failed "$step ($(basename "$patch"))" "$files"
    fi
    in_root patch -p1 -f -s -d "$src_in" <"$patch" >>"$logs/patch-$name.log" 2>&1 ||
        edit_failed "$step ($(basename "$patch"))" "$files"
}

c_description() { # c_description FILE TEXT: replace the module's MODULE_DESCRIPTION with TEXT
    local file=$1 text=$2
    # TEXT goes into a sed replacement and a C string: keep it free of those syntaxes.
    [[ $text != *[\"\\\|\&]* ]] || die "module description contains a character sed or C would read: $text"
    sed -i -E "s|^MODULE_DESCRIPTION\\(\".*\"\\);\$|MODULE_DESCRIPTION(\"$text\");|" "$file"
    grep -qxF "MODULE_DESCRIPTION(\"$text\");" "$file" || edit_failed "MODULE_DESCRIPTION" "$file"
}

cc_name() { # cc_name FILE OLD NEW: rename the congestion control registered by FILE
    local file=$1 old=$2 new=$3
    sed -i -E "s/^(\\s*\\.name\\s*=\\s*)\"$old\",\$/\\1\"$new\",/" "$file"
    grep -qE "^\\s*\\.name\\s*=\\s*\"$new\",\$" "$file" || edit_failed "congestion control name $old -> $new" "$file"
}

prepare_sources() {
    local ipv4=$src/net/ipv4 upstream commit path
    upstream=${source_version%%-*}

    # The unpatched tcp_bbr.c is v1: keep it before the BBRv3 patch replaces it.
    cp "$ipv4/tcp_bbr.c" "$build_root/tcp_bbr.v1.c"
    grep -q 'min_tso_segs' "$build_root/tcp_bbr.v1.c" ||
        edit_failed "keep v1 (expected Linux 6.12's tcp_bbr.c with .min_tso_segs)" "net/ipv4/tcp_bbr.c"

    apply_patch "BBRv3" "$root/build/bbr3-6.12.patch"
    grep -q '^#define BBR_VERSION[[:space:]]*3$' "$ipv4/tcp_bbr.c" || edit_failed "BBRv3 (no BBR_VERSION 3)" "net/ipv4/tcp_bbr.c"
    apply_patch "export tcp_tso_autosize" "$here/kernel/export-tcp-tso-autosize.patch"

    # tcp_bbr3.c: the patch's v3 under the name "bbr3".
    cp "$ipv4/tcp_bbr.c" "$ipv4/tcp_bbr3.c"
    cc_name "$ipv4/tcp_bbr3.c" bbr bbr3
    # The patch's origin, from its URL: .../kernel-patches/COMMIT/PATH.
    commit=$(cut -d/ -f6 <<<"$bbr3_patch_url")
    path=$(cut -d/ -f7- <<<"$bbr3_patch_url")
    c_description "$ipv4/tcp_bbr3.c" "TCP BBRv3 (Bottleneck Bandwidth and RTT), registered as bbr3: Google's BBRv3 as ported to Linux 6.12 by CachyOS (kernel-patches ${commit:0:12}, $path, sha256 ${bbr3_patch_sha256:0:16})"
    if grep -q '"bbr"' "$ipv4/tcp_bbr3.c"; then edit_failed "bbr3 (the name \"bbr\" is still there)" "net/ipv4/tcp_bbr3.c"; fi

    # tcp_bbr.c: v1 again, adapted to the .tso_segs hook.
    cp "$build_root/tcp_bbr.v1.c" "$ipv4/tcp_bbr.c"
    apply_patch "v1 on the .tso_segs hook" "$here/kernel/tcp_bbr-v1-tso_segs.patch"
    if grep -q 'min_tso_segs[[:space:]]*=' "$ipv4/tcp_bbr.c"; then
        edit_failed "v1 on the .tso_segs hook (.min_tso_segs is still set)" "net/ipv4/tcp_bbr.c"
    fi

    # tcp_bbr_noagg.c: the adapted v1 with the two edits of build-tcp-bbr-noagg.sh.
    cp "$ipv4/tcp_bbr.c" "$ipv4/tcp_bbr_noagg.c"
    sed -i -E 's/^(static const int bbr_extra_acked_gain = )BBR_UNIT;/\10;  \/* bbrlab: no ACK-aggregation allowance *\//' "$ipv4/tcp_bbr_noagg.c"
    grep -q '^static const int bbr_extra_acked_gain = 0;' "$ipv4/tcp_bbr_noagg.c" ||
        edit_failed "bbr_extra_acked_gain = 0" "net/ipv4/tcp_bbr_noagg.c"
    cc_name "$ipv4/tcp_bbr_noagg.c" bbr bbr_noagg
    c_description "$ipv4/tcp_bbr_noagg.c" "TCP BBR (Bottleneck Bandwidth and RTT) v1 of Linux $upstream ($source_package $source_version) without the ACK-aggregation allowance, registered as bbr_noagg"
    c_description "$ipv4/tcp_bbr.c" "TCP BBR (Bottleneck Bandwidth and RTT) v1 of Linux $upstream ($source_package $source_version), registered as bbr"

    # The two new modules build with tcp_bbr, under the same option.
    # shellcheck disable=SC2016 # make's $(...), not the shell's
    sed -i -E 's/^(obj-\$\(CONFIG_TCP_CONG_BBR\) \+= tcp_bbr\.o)$/\1\nobj-$(CONFIG_TCP_CONG_BBR) += tcp_bbr3.o tcp_bbr_noagg.o/' "$ipv4/Makefile"
    # shellcheck disable=SC2016 # make's $(...), not the shell's
    grep -qxF 'obj-$(CONFIG_TCP_CONG_BBR) += tcp_bbr3.o tcp_bbr_noagg.o' "$ipv4/Makefile" ||
        edit_failed "build tcp_bbr3 and tcp_bbr_noagg" "net/ipv4/Makefile"
}

# --- configuration -------------------------------------------------------------

config_value() { # config_value NAME: NAME's value in the tree's .config; n when unset or absent
    local line
    line=$(grep -E "^($1=|# $1 is not set\$)" "$src/.config" | head -n1 || true)
    if [[ $line == "$1="* ]]; then echo "${line#*=}"; else echo n; fi
}

check_config() { # every line of vm/kernel/required-options holds, else stop naming the option
    local line name want have
    while read -r line; do
        line=${line%%#*}
        line=${line%"${line##*[![:space:]]}"}
        [[ -n $line ]] || continue
        name=${line%%=*}
        have=$(config_value "$name")
        if [[ $line != *=* ]]; then
            [[ $have == y || $have == m ]] || die "kernel option $name is '$have', must be y or m (vm/kernel/required-options)"
        else
            want=${line#*=}
            # An empty string option may be absent when what it belongs to is off.
            [[ $have == "$want" || ( $want == '""' && $have == n ) ]] ||
                die "kernel option $name is '$have', must be $want (vm/kernel/required-options)"
        fi
    done <"$here/kernel/required-options"
}

configure_kernel() {
    in_root xz -dc "/usr/src/$config_package/$debian_config.xz" >"$src/.config" ||
        die "cannot read Debian's $debian_config from $config_package"
    logged "olddefconfig (Debian's config)" "$logs/olddefconfig.log" in_root make -C "$src_in" olddefconfig
    # localmodconfig reads the first word of each line; comments would read as modules.
    sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/kernel/modules.lst" >"$root/build/modules.lst"
    chmod 0644 "$root/build/modules.lst" # an executable LSMOD file would be run, not read
    logged "localmodconfig" "$logs/localmodconfig.log" in_root make -C "$src_in" LSMOD=/build/modules.lst localmodconfig
    # No debug info (a fraction of the build time and size), no module signing
    # (Debian signs with keys it does not ship), a release of our own. The
    # lockdown LSM selects MODULE_SIG, so it goes too: it only guards Secure Boot
    # machines, and the testbed VM boots its kernel directly.
    logged "scripts/config" "$logs/scripts-config.log" in_root "$src_in/scripts/config" --file "$src_in/.config" \
        --enable DEBUG_INFO_NONE --disable DEBUG_INFO --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
        --disable DEBUG_INFO_DWARF4 --disable DEBUG_INFO_DWARF5 --disable DEBUG_INFO_BTF \
        --disable MODULE_SIG --disable MODULE_SIG_ALL --disable SECURITY_LOCKDOWN_LSM \
        --disable SECURITY_LOCKDOWN_LSM_EARLY --disable LOCK_DOWN_IN_EFI_SECURE_BOOT \
        --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
        --set-str LOCALVERSION "$localversion" --disable LOCALVERSION_AUTO \
        --module TCP_CONG_BBR
    logged "olddefconfig (final)" "$logs/olddefconfig-final.log" in_root make -C "$src_in" olddefconfig
    check_config
    # `make kernelrelease` reads CONFIG_LOCALVERSION from include/config/auto.conf,
    # which syncconfig writes (a build would, later).
    logged "syncconfig" "$logs/syncconfig.log" in_root make -C "$src_in" syncconfig
}

# --- checks of the result ------------------------------------------------------

check_packages() { # check_packages IMAGE_DEB: the image holds every listed module and the three BBRs
    local deb=$1 x=$root/build/image have name missing=() ko
    in_root dpkg-deb -x "/build/$(basename "$deb")" /build/image || die "cannot unpack $deb"
    # Module names as lsmod prints them: the package's .ko files plus the built-in ones.
    have=$( { find "$x" -path "*/modules/$release/*" -name '*.ko*' -printf '%f\n' | sed 's/\.ko.*//';
              sed 's|.*/||; s/\.ko$//' "$src/modules.builtin"; } | tr - _ | sort -u)
    while read -r name; do
        grep -qxF "$name" <<<"$have" || missing+=("$name")
    done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/kernel/modules.lst" | tr - _)
    [[ ${#missing[@]} -eq 0 ]] ||
        die "modules of vm/kernel/modules.lst missing from the kernel: ${missing[*]} (see $logs/localmodconfig.log)"
    for name in tcp_bbr tcp_bbr3 tcp_bbr_noagg; do
        ko=$(find "$x" -path "*/modules/$release/*" -name "$name.ko*" -print -quit)
        [[ -n $ko ]] || die "$name is not in $(basename "$deb")"
        description[$name]=$(in_root modinfo -F description "${ko#"$root"}") || die "modinfo $name failed"
    done
}

build_kernel() {
    local t_all t0 deb pkg_version image_deb headers_deb tmp
    declare -gA description=()
    t_all=$(now)
    build_root=$(mktemp -d "$cache/kernel-build.XXXXXX")
    root=$build_root/rootfs
    src_in=/build/$source_package
    src=$root$src_in
    logs=$kernels/logs
    rm -rf "$logs" && mkdir -p "$logs"
    log "building kernel $hash in $build_root (logs in $logs)"

    fetch_patch "$build_root/bbr3-6.12.patch"

    timed "debootstrap" logged "debootstrap" "$logs/debootstrap.log" \
        debootstrap --arch=amd64 --variant=minbase "$suite" "$root" "$mirror"
    cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security_mirror $suite-security main
EOF
    mount -t proc proc "$root/proc"
    mount -t sysfs sysfs "$root/sys"
    mount --bind /dev "$root/dev"
    mount --bind /dev/pts "$root/dev/pts"
    logged "apt-get update" "$logs/apt-update.log" in_root apt-get update -q
    local offered
    offered=$(in_root apt-cache madison "$source_package" | awk '{print $3}' | sort -u | tr '\n' ' ')
    [[ " $offered " == *" $source_version "* ]] ||
        die "$source_package $source_version is not in the archive (it has: ${offered:-none}); set BBRLAB_LINUX_SOURCE_VERSION to one of them"
    # The kernel's build needs (scripts/package/mkdebian's Build-Depends, and
    # debhelper for bindeb-pkg's debian/rules), zstd for the compressed kernel
    # (Debian's config: KERNEL_ZSTD) and xz for the modules (MODULE_COMPRESS_XZ),
    # patch, and the pinned sources.
    timed "chroot apt-get install" logged "chroot apt-get install" "$logs/apt-install.log" \
        in_root apt-get install -y -q --no-install-recommends \
        build-essential bc bison flex libelf-dev libssl-dev cpio kmod rsync debhelper dpkg-dev \
        xz-utils zstd python3 patch "$source_package=$source_version" "$config_package=$source_version"

    mkdir -p "$root/build"
    cp "$build_root/bbr3-6.12.patch" "$root/build/bbr3-6.12.patch"
    timed "unpack $source_package" logged "unpack $source_package" "$logs/unpack.log" \
        in_root tar -xJf "/usr/src/$source_package.tar.xz" -C /build
    [[ -f $src/Makefile ]] || die "$source_package.tar.xz did not unpack to $src_in"

    t0=$(now); prepare_sources; log "source edits took $(( $(now) - t0 ))s"
    t0=$(now); configure_kernel; log "configuration took $(( $(now) - t0 ))s"

    release=$(in_root make -s -C "$src_in" kernelrelease) || die "make kernelrelease failed"
    [[ $release == "${source_version%%-*}$localversion" ]] ||
        die "kernel release is '$release', expected ${source_version%%-*}$localversion"
    # The package version names the Debian source it came from and this build's
    # inputs; uname -v shows the part after the last '-' (KBUILD_BUILD_VERSION),
    # so both make runs below agree on it and vmlinux is linked once. The date
    # alone, as uname -v holds 64 characters: "#1~deb12u1+bbrlab.<hash> SMP
    # PREEMPT_DYNAMIC 2026-01-31".
    pkg_version=$source_version+bbrlab.${hash:0:8}
    local kenv=(KBUILD_BUILD_USER=bbrlab KBUILD_BUILD_HOST=bbrlab
        "KBUILD_BUILD_TIMESTAMP=$(date -u -d "@$t_all" '+%Y-%m-%d')"
        "KBUILD_BUILD_VERSION=${pkg_version##*-}" KBUILD_VERBOSE=0 LOCALVERSION=
        "KDEB_PKGVERSION=$pkg_version" "KDEB_CHANGELOG_DIST=$suite"
        "DEBFULLNAME=bbrlab vm/build-kernel.sh" DEBEMAIL=root@localhost)
    timed "make -j$jobs (kernel and modules)" logged "make" "$logs/make.log" \
        in_root "${kenv[@]}" make -C "$src_in" -j"$jobs" all
    timed "make bindeb-pkg" logged "make bindeb-pkg" "$logs/bindeb-pkg.log" \
        in_root "${kenv[@]}" make -C "$src_in" -j"$jobs" bindeb-pkg

    image_deb=$(find "$root/build" -maxdepth 1 -name "linux-image-${release}_*.deb" -print -quit)
    headers_deb=$(find "$root/build" -maxdepth 1 -name "linux-headers-${release}_*.deb" -print -quit)
    [[ -n $image_deb && -n $headers_deb ]] || die "bindeb-pkg made no linux-image/linux-headers-$release .deb (see $logs/bindeb-pkg.log)"
    check_packages "$image_deb"

    # The entry appears whole or not at all. linux-libc-dev is left out: the
    # testbed keeps Debian's.
    tmp=$kernels/.$hash.tmp
    rm -rf "$tmp" && mkdir -p "$tmp"
    for deb in "$image_deb" "$headers_deb"; do cp "$deb" "$tmp/"; done
    cp "$src/.config" "$tmp/config-$release"
    cat >"$tmp/manifest" <<EOF
# bbrlab kernel, built by vm/build-kernel.sh
kernel_release=$release
package_version=$pkg_version
linux_source=$source_package $source_version
bbr3_patch_sha256=$bbr3_patch_sha256
bbr3_patch_url=$bbr3_patch_url
modules=tcp_bbr:bbr tcp_bbr3:bbr3 tcp_bbr_noagg:bbr_noagg
description_tcp_bbr=${description[tcp_bbr]}
description_tcp_bbr3=${description[tcp_bbr3]}
description_tcp_bbr_noagg=${description[tcp_bbr_noagg]}
image_deb=$(basename "$image_deb")
headers_deb=$(basename "$headers_deb")
inputs_hash=$hash
built=$(date -u '+%Y-%m-%dT%H:%M:%SZ')
build_seconds=$(( $(now) - t_all ))
EOF
    mv "$tmp" "$entry"
    mv "$logs" "$entry/build-logs"
    # Older builds go: only the entry of the current inputs is kept.
    find "$kernels" -mindepth 1 -maxdepth 1 -type d ! -name "$hash" ! -name logs -exec rm -rf {} +
    log "kernel $release built into $entry: $(basename "$image_deb"), $(basename "$headers_deb")"
    log "whole build took $(( $(now) - t_all ))s"
}

build_kernel
