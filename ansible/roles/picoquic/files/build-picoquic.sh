#!/usr/bin/env bash
# Build picoquic's demo endpoint (picoquicdemo: QUIC server and "quicperf" client) and its
# binary-log reader (picolog_t) from picoquic and picotls at pinned commits, with OpenSSL
# from Debian (libssl-dev), and install them under PREFIX:
#   PREFIX/bin/picoquicdemo, PREFIX/bin/picolog_t       today's build (the first in `builds`)
#   PREFIX/lib/picoquic/NAME/{picoquicdemo,picolog_t}   each older build, by its name: its
#                                                commit's first 12 hex digits, and for a
#                                                what-if build a suffix (see below)
#   PREFIX/share/picoquic/certs/{cert,key}.pem   the test certificate picoquic ships
#   PREFIX/share/picoquic/build.txt              the pinned commits, then one line per build:
#                                                "NAME built ..." or "NAME failed: why"
#
#   build-picoquic.sh [--status | --sources] PREFIX
#     --status  print "current" (exit 0) or "stale" (exit 1): whether PREFIX holds this
#               script's builds of the pinned commits; build nothing
#     --sources print where today's build's sources would come from (exit 0), or why they
#               cannot be had (exit 1: no copies, and the code host out of reach); build nothing
#
# The older builds are the picoquic of Huitema's post "Random loopback delays cause BBR
# slowdowns" (Oct 2024): its BBR as first measured, and the fix it describes (PR #1761).
# They are optional: when one does not build, build.txt says why and today's stays.
# A what-if build is one of them with one constant of picoquic_internal.h changed (its entry's
# fifth and sixth words: the suffix of its name and NAME=VALUE); its version (PICOQUIC_VERSION,
# which picoquicdemo prints and its performance log keeps) carries the same suffix, so that a
# run proves it ran the what-if and not the commit as published.
# Sources: the offline copies picoquic-<commit:12>.tar.gz and picotls-<commit:12>.tar.gz in
# $BBRLAB_SRC (default: ../shared/src beside the checkout, when this script runs from one),
# checked against their sha256; else `git fetch` of the pinned commits from GitHub (git
# checks the commit; picotls's three submodules at the commits it records).
# Needs cmake, make, gcc, pkg-config, libssl-dev (and git to fetch). Exit 3: a
# prerequisite is missing (the message names it); other non-zero: today's build failed.
set -euo pipefail

# picoquic commit, its tarball's sha256, the picotls commit it pins, that tarball's sha256
# [, a what-if's name suffix and the constant it changes]
builds=(
    # 2026-08-16: today's picoquic; picotls as its CMakeLists.txt pins it
    "d199d45be8690dfa8653e214733243524112e3c0 a4c9f8d27f4e81cdf005019edb43f7147ad810b6afb5a2c3d78b736469f29b86
     bfa67875982afc4c24f21e146cef4747fa189c2f 47a652bde518610b9af3ccc1c7c5c6b3accf12d8ace6bd824e8711191dd76dd3"
    # 2024-09-27: the last commit before PR #1761, the post's BBR as first measured
    "401781f40e04543bf160ec4f73987fc0edd8d423 c42e54391b28541093b401e57201dd41e7d3c8d1d34ecbe0c2c24e540a0aa6d3
     5a4461d8a3948d9d26bf861e7d90cb80d8093515 383997dd685603b525dd6857654b7790945b1e1199dda1650f80b3b0fea205a9"
    # 2024-10-12: PR #1761 merged, BBR's delay tests off below a min RTT of 128 us (the fix)
    "6fc1ff2dedd93f7f524901e96bf10c09effad003 618df8964d9861af57ee2a13aa024868238222075f7cb4088768965dedac65a9
     5a4461d8a3948d9d26bf861e7d90cb80d8093515 383997dd685603b525dd6857654b7790945b1e1199dda1650f80b3b0fea205a9"
    # what if: the fix with its threshold at 25 ms, above this testbed's floor of min RTT as
    # picoquic sees it (3-6 ms), as 128 us was above the post's loopback (20 us)
    "6fc1ff2dedd93f7f524901e96bf10c09effad003 618df8964d9861af57ee2a13aa024868238222075f7cb4088768965dedac65a9
     5a4461d8a3948d9d26bf861e7d90cb80d8093515 383997dd685603b525dd6857654b7790945b1e1199dda1650f80b3b0fea205a9
     minrtt25ms PICOQUIC_MINRTT_THRESHOLD=25000"
)
jobs=${BBRLAB_BUILD_JOBS:-$(nproc)}

status=0 sources=0
[[ ${1:-} == --status ]] && { status=1; shift; }
[[ ${1:-} == --sources ]] && { sources=1; shift; }
prefix=${1:?usage: build-picoquic.sh [--status | --sources] PREFIX}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(realpath -m "${BBRLAB_SRC:-$here/../../../../../shared/src}")
stamp=$prefix/share/picoquic/build.txt
# name COMMIT SHA PTLS PTLS_SHA [SUFFIX CONSTANT]: the build's name (its directory, its stamp line)
name() { echo "${1:0:12}${5:+-$5}"; }
# shellcheck disable=SC2086 # each entry of builds is four or six words
want="picoquic $(for b in "${builds[@]}"; do printf '%s ' "$(name $b)"; done)script $(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)"

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
    # shellcheck disable=SC2086 # each entry of builds is four words
    set -- ${builds[0]}
    if [[ -f $src/picoquic-${1:0:12}.tar.gz && -f $src/picotls-${3:0:12}.tar.gz ]]; then
        echo "the copies in $src"
        exit 0
    fi
    why=$(reachable https://github.com/private-octopus/picoquic.git)
    [[ -n $why ]] || { echo "https://github.com/private-octopus/picoquic.git and https://github.com/h2o/picotls.git"; exit 0; }
    echo "no picoquic-${1:0:12}.tar.gz and picotls-${3:0:12}.tar.gz in $src, and https://github.com/private-octopus/picoquic.git cannot be reached ($why)"
    exit 1
fi

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
    rm -rf "${work:?}/$name"
    if [[ -f $tarball ]]; then
        echo "$sha  $tarball" | sha256sum -c --quiet - ||
            { echo "build-picoquic: $tarball is not the pinned copy (sha256 differs)" >&2; return 1; }
        mkdir "$work/$name"
        tar -xzf "$tarball" -C "$work/$name" --strip-components=1
        echo "build-picoquic: $name from $tarball" >&2
    else
        command -v git >/dev/null || missing "no $tarball, and git is needed to fetch $name: apt-get install git"
        git -c advice.detachedHead=false clone -q --no-checkout "$url" "$work/$name" &&
            git -C "$work/$name" -c advice.detachedHead=false checkout -q "$commit" &&
            git -C "$work/$name" submodule -q update --init --recursive || return 1
        echo "build-picoquic: $name fetched from $url at $commit" >&2
    fi
}

whatif() { # whatif SUFFIX NAME=VALUE: change #define NAME in picoquic_internal.h to VALUE and
    # suffix picoquic's version; fail unless both changed exactly one line
    local header=$work/picoquic/picoquic/picoquic_internal.h version=$work/picoquic/picoquic/picoquic.h
    local const=${2%%=*} value=${2#*=}
    [[ $(grep -c "^#define $const " "$header") == 1 && $(grep -c '^#define PICOQUIC_VERSION "' "$version") == 1 ]] ||
        { echo "build-picoquic: what-if $1: #define $const or PICOQUIC_VERSION is not there once" >&2; return 1; }
    sed -i "s|^#define $const .*|#define $const $value /* what-if $1 (build-picoquic.sh) */|" "$header"
    sed -i "s|^#define PICOQUIC_VERSION \"\([^\"]*\)\"|#define PICOQUIC_VERSION \"\1-$1\"|" "$version"
    if ! grep -q "^#define $const $value " "$header" || ! grep -q "^#define PICOQUIC_VERSION \".*-$1\"" "$version"; then
        echo "build-picoquic: what-if $1 did not apply" >&2
        return 1
    fi
}

compile() { # compile PICOQUIC PQ_SHA PICOTLS PT_SHA [SUFFIX CONSTANT]: picoquicdemo and picolog_t
    # in $work/picoquic
    unpack picoquic "$1" "$2" https://github.com/private-octopus/picoquic.git || return 1
    unpack picotls "$3" "$4" https://github.com/h2o/picotls.git || return 1
    [[ -z ${5:-} ]] || whatif "$5" "$6" || return 1
    # picotls first, built in its own tree: picoquic's FindPTLS looks for ../picotls beside it
    if ! { cmake -S "$work/picotls" -B "$work/picotls" -DCMAKE_BUILD_TYPE=Release -DWITH_FUSION=OFF &&
        make -C "$work/picotls" -j"$jobs" picotls-core picotls-openssl picotls-minicrypto; } >"$work/picotls.log" 2>&1
    then
        tail -n 20 "$work/picotls.log" >&2
        return 1
    fi
    if ! { cmake -S "$work/picoquic" -B "$work/picoquic" -DCMAKE_BUILD_TYPE=Release -DPTLS_WITH_FUSION=OFF \
        -Dpicoquic_BUILD_TESTS=OFF -DBUILD_PICO_SIM=OFF -DBUILD_PQBENCH=OFF &&
        make -C "$work/picoquic" -j"$jobs" picoquicdemo picolog_t; } >"$work/picoquic.log" 2>&1
    then
        tail -n 20 "$work/picoquic.log" >&2
        return 1
    fi
}

# shellcheck disable=SC2086 # each entry of builds is four words
set -- ${builds[0]}
compile "$@" || exit 1
install -D -m 0755 "$work/picoquic/picoquicdemo" "$prefix/bin/picoquicdemo"
install -D -m 0755 "$work/picoquic/picolog_t" "$prefix/bin/picolog_t"
install -D -m 0644 "$work/picoquic/certs/cert.pem" "$prefix/share/picoquic/certs/cert.pem"
install -D -m 0644 "$work/picoquic/certs/key.pem" "$prefix/share/picoquic/certs/key.pem"
built="built $(date -u +%Y-%m-%dT%H:%M:%SZ) with $(gcc --version | head -n1) and $(openssl version 2>/dev/null || echo 'OpenSSL (version unknown)')"
lines=("${1:0:12} $built")
for entry in "${builds[@]:1}"; do
    # shellcheck disable=SC2086
    set -- $entry
    build=$(name "$@")
    dir=$prefix/lib/picoquic/$build
    if why=$(compile "$@" 2>&1 >/dev/null); then
        install -D -m 0755 "$work/picoquic/picoquicdemo" "$dir/picoquicdemo"
        install -D -m 0755 "$work/picoquic/picolog_t" "$dir/picolog_t"
        lines+=("$build $built")
        echo "build-picoquic: installed $dir/picoquicdemo"
    else
        rm -rf "$dir"
        lines+=("$build failed: $(tail -n 1 <<<"$why")")
        echo "build-picoquic: warning: picoquic $build not built: $why" >&2
    fi
done
printf '%s\n' "$want" "${lines[@]}" >"$stamp"
echo "build-picoquic: installed $prefix/bin/picoquicdemo and picolog_t ($want)"
