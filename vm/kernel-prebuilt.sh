#!/usr/bin/env bash
# Take a prebuilt BBRv3 kernel into the build cache, when one of exactly the current
# inputs exists: vm/build-kernel.sh's own entry, made elsewhere by the same script
# (by default ../shared/cache/kernels/<hash> next to the checkout, as sources are read
# from ../shared/src), so that a fresh machine need not spend 15-30 minutes of make.
#
#   vm/kernel-prebuilt.sh     exit 0 when the cache holds the current entry after it
#                             (taken now, or there before); 1 when there was nothing
#                             valid to take (then vm/build-kernel.sh builds it)
#
# An entry is taken only when its manifest names the current inputs hash (from
# vm/build-kernel.sh --print-dir, so this script is not one of those inputs) and its
# linux-image package holds tcp_bbr, tcp_bbr3 and tcp_bbr_noagg with the descriptions
# the manifest records. The box's first boot on it (CI's bbr3 stage) is the boot check.
#
# Environment: BBRLAB_CACHE (default /var/cache/bbrlab), BBRLAB_PREBUILT_KERNELS
# (default ../shared/cache/kernels next to the checkout).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
source_dir=${BBRLAB_PREBUILT_KERNELS:-$repo/../shared/cache/kernels}

lib_name=kernel-prebuilt
# shellcheck source=vm/lib.sh
source "$here/lib.sh" # log
refuse() { log "$*: the kernel is built instead"; exit 1; }

entry=$("$here/build-kernel.sh" --print-dir 2>/dev/null) && exit 0 # built or taken before
[[ -n $entry ]] || refuse "vm/build-kernel.sh --print-dir printed no entry"
hash=$(basename "$entry")
prebuilt=$source_dir/$hash
[[ -f $prebuilt/manifest ]] || exit 1 # none of these inputs: nothing to say
grep -qxF "inputs_hash=$hash" "$prebuilt/manifest" || refuse "$prebuilt/manifest does not name inputs hash $hash"
value() { sed -n "s/^$1=//p" "$prebuilt/manifest"; }
image=$(value image_deb) headers=$(value headers_deb)
[[ -n $image && -n $headers && -f $prebuilt/$image && -f $prebuilt/$headers ]] ||
    refuse "$prebuilt lacks the packages its manifest names"
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$prebuilt/$image" "$unpacked" 2>/dev/null || refuse "$prebuilt/$image cannot be unpacked"
for name in tcp_bbr tcp_bbr3 tcp_bbr_noagg; do
    ko=$(find "$unpacked/lib/modules" -path "*/net/ipv4/$name.ko*" -print -quit)
    [[ -n $ko ]] || refuse "$prebuilt/$image has no $name module"
    # modinfo's description, read without kmod: the module's .modinfo strings
    [[ $(xz -dcf "$ko" | tr '\0' '\n' | sed -n 's/^description=//p') == "$(value "description_$name")" ]] ||
        refuse "$name in $prebuilt/$image is not the module its manifest describes"
done
cache=$(dirname "$entry")
mkdir -p "$cache"
tmp=$cache/.$hash.prebuilt
rm -rf "$tmp" && mkdir -p "$tmp"
cp "$prebuilt/manifest" "$prebuilt/$image" "$prebuilt/$headers" "$tmp/"
find "$prebuilt" -maxdepth 1 -name 'config-*' -exec cp {} "$tmp/" \;
echo "taken_from=$(cd "$prebuilt" && pwd)" >>"$tmp/manifest"
mv "$tmp" "$entry"
log "taken from $prebuilt (inputs hash $hash, built $(value built) in $(value build_seconds)s): $image"
