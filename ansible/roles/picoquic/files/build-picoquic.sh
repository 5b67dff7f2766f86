#!/usr/bin/env bash
# Build picoquic's demo endpoint (picoquicdemo: QUIC server and "quicperf" client) and its
# binary-log reader (picolog_t) from picoquic and picotls at pinned commits, with OpenSSL
# from Debian (libssl-dev), and install them under PREFIX:
#   PREFIX/bin/picoquicdemo, PREFIX/bin/picolog_t
#   PREFIX/share/picoquic/certs/{cert,key}.pem   the test certificate picoquic ships
#   PREFIX/share/picoquic/build.txt              the pinned commits, the compiler, the date
#
#   build-picoquic.sh [--status] PREFIX
#     --status  print "current" (exit 0) or "stale" (exit 1): whether PREFIX holds this
#               script's build of the pinned commits; build nothing
#
# Sources: the offline copies picoquic-<commit:12>.tar.gz and picotls-<commit:12>.tar.gz in
# $BBRLAB_SRC (default: ../shared/src beside the checkout, when this script runs from one),
# checked against their sha256; else `git fetch` of the pinned commits from GitHub (git
# checks the commit; picotls's three submodules at the commits it records).
# Needs cmake, make, gcc, pkg-config, libssl-dev (and git to fetch). Exit 3: a
# prerequisite is missing (the message names it); other non-zero: the build failed.
set -euo pipefail

picoquic_commit=d199d45be8690dfa8653e214733243524112e3c0 # 2026-08-16
picoquic_sha256=a4c9f8d27f4e81cdf005019edb43f7147ad810b6afb5a2c3d78b736469f29b86
picotls_commit=bfa67875982afc4c24f21e146cef4747fa189c2f # the commit picoquic's CMakeLists.txt pins
picotls_sha256=47a652bde518610b9af3ccc1c7c5c6b3accf12d8ace6bd824e8711191dd76dd3
jobs=${BBRLAB_BUILD_JOBS:-$(nproc)}

status=0
[[ ${1:-} == --status ]] && { status=1; shift; }
prefix=${1:?usage: build-picoquic.sh [--status] PREFIX}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${BBRLAB_SRC:-$here/../../../../../shared/src}
stamp=$prefix/share/picoquic/build.txt
want="picoquic $picoquic_commit picotls $picotls_commit script $(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)"

if ((status)); then
    if [[ -x $prefix/bin/picoquicdemo && -f $stamp ]] && head -n1 "$stamp" | grep -qxF "$want"; then
        echo current
        exit 0
    fi
    echo stale
    exit 1
fi

missing() { echo "build-picoquic: $*" >&2; exit 3; }
for tool in cmake make gcc pkg-config; do
    command -v "$tool" >/dev/null || missing "$tool is needed: apt-get install cmake make gcc pkg-config libssl-dev"
done
pkg-config --exists openssl || missing "OpenSSL's headers are needed: apt-get install libssl-dev"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

unpack() { # unpack NAME COMMIT SHA256 URL: the sources of NAME in $work/NAME
    local name=$1 commit=$2 sha=$3 url=$4 tarball
    tarball=$src/$name-${commit:0:12}.tar.gz
    if [[ -f $tarball ]]; then
        echo "$sha  $tarball" | sha256sum -c --quiet - ||
            { echo "build-picoquic: $tarball is not the pinned copy (sha256 differs)" >&2; exit 1; }
        mkdir "$work/$name"
        tar -xzf "$tarball" -C "$work/$name" --strip-components=1
        echo "build-picoquic: $name from $tarball" >&2
    else
        command -v git >/dev/null || missing "no $tarball, and git is needed to fetch $name: apt-get install git"
        git -c advice.detachedHead=false clone -q --no-checkout "$url" "$work/$name"
        git -C "$work/$name" -c advice.detachedHead=false checkout -q "$commit"
        git -C "$work/$name" submodule -q update --init --recursive
        echo "build-picoquic: $name fetched from $url at $commit" >&2
    fi
}
unpack picoquic "$picoquic_commit" "$picoquic_sha256" https://github.com/private-octopus/picoquic.git
unpack picotls "$picotls_commit" "$picotls_sha256" https://github.com/h2o/picotls.git

# picotls first, built in its own tree: picoquic's FindPTLS looks for ../picotls beside it
cmake -S "$work/picotls" -B "$work/picotls" -DCMAKE_BUILD_TYPE=Release -DWITH_FUSION=OFF >"$work/picotls.log" 2>&1 ||
    { tail -n 20 "$work/picotls.log" >&2; exit 1; }
make -C "$work/picotls" -j"$jobs" picotls-core picotls-openssl picotls-minicrypto >>"$work/picotls.log" 2>&1 ||
    { tail -n 20 "$work/picotls.log" >&2; exit 1; }
cmake -S "$work/picoquic" -B "$work/picoquic" -DCMAKE_BUILD_TYPE=Release -DPTLS_WITH_FUSION=OFF \
    -Dpicoquic_BUILD_TESTS=OFF -DBUILD_PICO_SIM=OFF -DBUILD_PQBENCH=OFF \
    >"$work/picoquic.log" 2>&1 || { tail -n 20 "$work/picoquic.log" >&2; exit 1; }
make -C "$work/picoquic" -j"$jobs" picoquicdemo picolog_t >>"$work/picoquic.log" 2>&1 ||
    { tail -n 20 "$work/picoquic.log" >&2; exit 1; }

install -D -m 0755 "$work/picoquic/picoquicdemo" "$prefix/bin/picoquicdemo"
install -D -m 0755 "$work/picoquic/picolog_t" "$prefix/bin/picolog_t"
install -D -m 0644 "$work/picoquic/certs/cert.pem" "$prefix/share/picoquic/certs/cert.pem"
install -D -m 0644 "$work/picoquic/certs/key.pem" "$prefix/share/picoquic/certs/key.pem"
{
    echo "$want"
    echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) with $(gcc --version | head -n1) and $(openssl version 2>/dev/null || echo 'OpenSSL (version unknown)')"
} >"$stamp"
echo "build-picoquic: installed $prefix/bin/picoquicdemo and picolog_t ($want)"
