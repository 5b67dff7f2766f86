#!/usr/bin/env bash
# Build Mahimahi 0.96's delay, loss and link shells (mm-delay, mm-loss, mm-link), the
# emulator ReBBR ran figure 8 on, from its pinned commit, and install them setuid root
# (Mahimahi's own install does the same: its shells make namespaces, TUN devices and NAT
# rules, then run their command as the invoking user):
#   PREFIX/lib/mahimahi/bin/mm-delay, mm-loss, mm-link   (out of PATH: bbrlab calls them by path)
#   PREFIX/share/mahimahi/build.txt    the pinned commit and this script's hash, then how it was built
#
#   build-mahimahi.sh [--status | --sources] PREFIX
#     --status  print "current" (exit 0) or "stale" (exit 1): whether PREFIX holds this
#               script's build of the pinned commit; build nothing
#     --sources print where its sources would come from (exit 0), or why they cannot be had
#               (exit 1: no copy, and the code host out of reach); build nothing
#
# Source: the offline copy mahimahi-<commit:12>.tar.gz in $BBRLAB_SRC (default: ../shared/src
# beside the checkout, when this script runs from one), checked against its sha256; else a
# `git fetch` of the pinned commit from GitHub. The adaptations Debian 12 requires are the
# patch beside this script (each one listed at its top). Needs autoconf, automake, libtool,
# make, g++, pkg-config and the -dev packages Mahimahi's configure checks for (the mahimahi
# role's mahimahi_build_packages). Exit 3: a prerequisite is missing (the message names it);
# other non-zero: the build failed.
set -euo pipefail

commit=36ea873583b5a9bb20e92f506437b98ad98a9cc7 # 2017-08-23: the last commit of version 0.96
sha256=6bfa8e4c31a14b540cc34c55f45cb9d8798e7ea5224188dc3dfb93005a595d25
url=https://github.com/ravinet/mahimahi.git
shells=(mm-delay mm-loss mm-link)
jobs=${BBRLAB_BUILD_JOBS:-$(nproc)}

status=0 sources=0
[[ ${1:-} == --status ]] && { status=1; shift; }
[[ ${1:-} == --sources ]] && { sources=1; shift; }
prefix=${1:?usage: build-mahimahi.sh [--status | --sources] PREFIX}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(realpath -m "${BBRLAB_SRC:-$here/../../../../../shared/src}")
patch_file=$here/mahimahi-0.96-on-debian12.patch
stamp=$prefix/share/mahimahi/build.txt
bindir=$prefix/lib/mahimahi/bin
want="mahimahi ${commit:0:12} script $(cat "${BASH_SOURCE[0]}" "$patch_file" | sha256sum | cut -c1-16)"

reachable() { # reachable URL: nothing when its host answers (any HTTP status), else why not
    python3 -c 'import sys, urllib.error, urllib.request
try:
    urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="HEAD"), timeout=15)
except urllib.error.HTTPError:
    pass
except Exception as exc:
    print(getattr(exc, "reason", exc))' "${1%%://*}://$(cut -d/ -f3 <<<"$1")/" 2>&1 | tr '\n' ' ' | sed 's/ $//'
}

if ((sources)); then
    [[ ! -f $src/mahimahi-${commit:0:12}.tar.gz ]] || { echo "the copy in $src"; exit 0; }
    why=$(reachable "$url")
    [[ -n $why ]] || { echo "$url"; exit 0; }
    echo "no mahimahi-${commit:0:12}.tar.gz in $src, and $url cannot be reached ($why)"
    exit 1
fi

if ((status)); then
    for shell in "${shells[@]}"; do
        [[ -u $bindir/$shell && -x $bindir/$shell ]] || { echo stale; exit 1; }
    done
    if [[ -f $stamp ]] && head -n1 "$stamp" | grep -qxF "$want"; then
        echo current
        exit 0
    fi
    echo stale
    exit 1
fi

missing() { echo "build-mahimahi: $*" >&2; exit 3; }
for tool in autoreconf automake libtoolize make g++ pkg-config protoc patch; do
    command -v "$tool" >/dev/null || missing "$tool is needed: apt-get install the mahimahi role's mahimahi_build_packages"
done
[[ -f $patch_file ]] || missing "$patch_file is missing from the checkout"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/mahimahi
tarball=$src/mahimahi-${commit:0:12}.tar.gz
if [[ -f $tarball ]]; then
    echo "$sha256  $tarball" | sha256sum -c --quiet - ||
        { echo "build-mahimahi: $tarball is not the pinned copy (sha256 differs)" >&2; exit 1; }
    mkdir "$tree"
    tar -xzf "$tarball" -C "$tree" --strip-components=1
    echo "build-mahimahi: sources from $tarball" >&2
else
    command -v git >/dev/null || missing "no $tarball, and git is needed to fetch Mahimahi: apt-get install git"
    git -c advice.detachedHead=false clone -q --no-checkout "$url" "$tree"
    git -C "$tree" -c advice.detachedHead=false checkout -q "$commit"
    echo "build-mahimahi: sources fetched from $url at $commit" >&2
fi
# every hunk must apply as written, or nothing is built
patch -d "$tree" -p1 --dry-run --forward <"$patch_file" >"$work/patch.log" 2>&1 ||
    { cat "$work/patch.log" >&2; echo "build-mahimahi: $patch_file does not apply to ${commit:0:12}" >&2; exit 1; }
patch -d "$tree" -p1 --forward --quiet <"$patch_file"
[[ -f $tree/traces/Makefile.am ]] || { mkdir -p "$tree/traces" && : >"$tree/traces/Makefile.am"; }
if ! { (cd "$tree" && ./autogen.sh && ./configure --prefix="$prefix") &&
    make -C "$tree/src" -j"$jobs" PICKY_CXXFLAGS=-Wall; } >"$work/build.log" 2>&1; then
    tail -n 20 "$work/build.log" >&2
    echo "build-mahimahi: the build failed (last lines above)" >&2
    exit 1
fi
for shell in "${shells[@]}"; do
    install -D -o root -g root -m 4755 "$tree/src/frontend/$shell" "$bindir/$shell"
done
mkdir -p "$(dirname "$stamp")"
printf '%s\n%s\n' "$want" "built $(date -u +%Y-%m-%dT%H:%M:%SZ) with $(g++ --version | head -n1), patched by $(basename "$patch_file")" >"$stamp"
echo "build-mahimahi: installed ${shells[*]} setuid root in $bindir ($want)"
