#!/usr/bin/env bash
# Build tcp_bbr410.ko: Linux 4.10.1's net/ipv4/tcp_bbr.c, BBR as Linux shipped it in
# early 2017, adapted to Debian's 6.1 kernel by tcp_bbr-4.10-on-6.1.patch (beside this
# script; its head lists each adaptation) and registered as "bbr410", so figure 8 can
# run the authors' BBR beside the running kernel's own (bbr, always that kernel's v1).
#
#   build-tcp-bbr410.sh KERNEL_RELEASE [SOURCE]
#
# SOURCE: a copy of 4.10.1's tcp_bbr.c (default: fetched from the URL below); either
# way its sha256 must be the pinned one. Needs the headers of KERNEL_RELEASE, gcc, make
# and patch. Installs the module under /lib/modules/KERNEL_RELEASE/updates and runs
# depmod; prints one line "built <path> from <source>". Exit 3: a prerequisite is
# missing (the message says which); other non-zero: the build failed.
set -euo pipefail

url="https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git/plain/net/ipv4/tcp_bbr.c?h=v4.10.1"
sha256=7cd6e19822ce485a7ca4f99b87df1e3a3cbc87dffa889a3474161ccb2aa244e9
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
patch_file=${BBRLAB_BBR410_PATCH:-$here/tcp_bbr-4.10-on-6.1.patch}

release=${1:?usage: build-tcp-bbr410.sh KERNEL_RELEASE [SOURCE]}
source=${2:-}
build=/lib/modules/$release/build
missing() { echo "build-tcp-bbr410: $*" >&2; exit 3; }
fail() { echo "build-tcp-bbr410: $*" >&2; exit 1; }
[[ $release == 6.1.* ]] || missing "Linux 4.10's BBR is adapted to Debian's 6.1 kernel only, not $release"
[[ -d $build ]] || missing "no headers for kernel $release ($build): apt-get install linux-headers-$release"
{ command -v gcc && command -v make && command -v patch; } >/dev/null || missing "gcc, make and patch are needed: apt-get install gcc make patch"
[[ -f $patch_file ]] || missing "no $patch_file"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$work/tcp_bbr410.c
if [[ -n $source && -f $source ]]; then
    cp "$source" "$src"
else
    python3 -c 'import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1], timeout=60).read())' \
        "$url" "$src" 2>"$work/fetch.log" || missing "cannot fetch $url ($(tail -n1 "$work/fetch.log")): give a copy as SOURCE"
    source=$url
fi
[[ $(sha256sum <"$src" | cut -d' ' -f1) == "$sha256" ]] || fail "$source is not Linux 4.10.1's tcp_bbr.c (sha256 differs from $sha256)"

# The adaptations, tried first, then each checked: a source they no longer fit must
# not give a module that is something else under this name.
patch -p1 -f -s --dry-run -d "$work" <"$patch_file" >"$work/patch.log" 2>&1 || { cat "$work/patch.log" >&2; fail "the adaptations do not apply"; }
patch -p1 -f -s -d "$work" <"$patch_file"
for gone in 'struct skb_mstamp\s+cycle' 'skb_mstamp_us_delta' 'stamp_jiffies' 'tcp_time_stamp' \
    '\.tso_segs_goal\s*=' '[^_]tcp_tso_autosize\(sk' '"bbr",' 'rate \*= tcp_mss_to_mtu'; do
    if grep -qP "$gone" "$src"; then fail "adaptation incomplete: $gone is still in the source"; fi
done
for made in '\.name\s*=\s*"bbr410",' '\.min_tso_segs\s*=\s*bbr_min_tso_segs,' 'u64\s+cycle_mstamp;' \
    'return div_u64\(rate \* mtu, wire\);' \
    'MODULE_DESCRIPTION\("TCP BBR \(Bottleneck Bandwidth and RTT\) of Linux 4\.10\.1, registered as bbr410"\);'; do
    grep -qP "$made" "$src" || fail "adaptation missing: $made"
done

echo 'obj-m := tcp_bbr410.o' >"$work/Makefile"
make -s -C "$build" M="$work" modules >"$work/make.log" 2>&1 || { cat "$work/make.log" >&2; exit 1; }
if grep -q 'warning:' "$work/make.log"; then cat "$work/make.log" >&2; fail "the compiler warned: not built"; fi
install -D -m 0644 "$work/tcp_bbr410.ko" "/lib/modules/$release/updates/tcp_bbr410.ko"
depmod "$release"
echo "built /lib/modules/$release/updates/tcp_bbr410.ko from $source"
