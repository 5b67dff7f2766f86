#!/usr/bin/env bash
# Build tcp_bbr_noagg.ko: the kernel's own BBR (net/ipv4/tcp_bbr.c from Debian's
# linux-source package) with the ACK-aggregation allowance switched off
# (bbr_extra_acked_gain = 0) and registered as "bbr_noagg", so one sweep can run
# cc: [bbr, bbr_noagg, cubic] on the same kernel.
#
#   build-tcp-bbr-noagg.sh KERNEL_RELEASE [SOURCE_TARBALL]
#
# Needs the headers of KERNEL_RELEASE (/lib/modules/KERNEL_RELEASE/build), gcc and
# make; SOURCE_TARBALL defaults to the newest /usr/src/linux-source-*.tar.xz. Installs
# the module under /lib/modules/KERNEL_RELEASE/updates and runs depmod. Prints one
# line "built <path> from <tarball>". Exit 3: a prerequisite is missing (the message
# says which); other non-zero: the build failed.
set -euo pipefail

release=${1:?usage: build-tcp-bbr-noagg.sh KERNEL_RELEASE [SOURCE_TARBALL]}
tarball=${2:-$(find /usr/src -maxdepth 1 -name 'linux-source-*.tar.xz' 2>/dev/null | sort -V | tail -n1)}
build=/lib/modules/$release/build
missing() { echo "build-tcp-bbr-noagg: $*" >&2; exit 3; }
[[ -d $build ]] || missing "no headers for kernel $release ($build): apt-get install linux-headers-$release"
[[ -n $tarball && -f $tarball ]] || missing "no kernel source tarball in /usr/src: apt-get install linux-source-$(cut -d. -f1,2 <<<"$release")"
{ command -v gcc && command -v make && command -v xz; } >/dev/null || missing "gcc, make and xz are needed: apt-get install gcc make xz-utils"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
top=$(basename "$tarball" .tar.xz) # Debian's tarball holds linux-source-6.1/...
tar -xJf "$tarball" -C "$work" "$top/net/ipv4/tcp_bbr.c" || { echo "build-tcp-bbr-noagg: no $top/net/ipv4/tcp_bbr.c in $tarball" >&2; exit 1; }
source_version=$(dpkg-query -W -f='${Version}' "$top" 2>/dev/null || echo unknown)
src=$work/tcp_bbr_noagg.c
mv "$work/$top/net/ipv4/tcp_bbr.c" "$src"

# The two edits, each checked: a source that no longer has these lines must not
# silently give a module that is plain BBR under another name.
sed -i -E 's/^(static const int bbr_extra_acked_gain = )BBR_UNIT;/\10;  \/* bbrlab: no ACK-aggregation allowance *\//' "$src"
sed -i -E 's/(\.name[[:space:]]*=[[:space:]]*)"bbr",/\1"bbr_noagg",/' "$src"
grep -q '^static const int bbr_extra_acked_gain = 0;' "$src" || { echo "build-tcp-bbr-noagg: bbr_extra_acked_gain not found in $tarball's tcp_bbr.c" >&2; exit 1; }
grep -q '"bbr_noagg",' "$src" || { echo "build-tcp-bbr-noagg: the congestion control's name not found in $tarball's tcp_bbr.c" >&2; exit 1; }
sed -i -E "s/^MODULE_DESCRIPTION\\(\"(.*)\"\\);/MODULE_DESCRIPTION(\"\\1, without the ACK-aggregation allowance (bbrlab, from $top $source_version)\");/" "$src"

echo 'obj-m := tcp_bbr_noagg.o' >"$work/Makefile"
make -s -C "$build" M="$work" modules >"$work/make.log" 2>&1 || { cat "$work/make.log" >&2; exit 1; }
install -D -m 0644 "$work/tcp_bbr_noagg.ko" "/lib/modules/$release/updates/tcp_bbr_noagg.ko"
depmod "$release"
echo "built /lib/modules/$release/updates/tcp_bbr_noagg.ko from $top $source_version"
