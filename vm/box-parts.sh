# shellcheck shell=bash disable=SC2154 # the variables are vm/build-box.sh's, which sources this file
# Sourced by vm/build-box.sh: the box's optional parts, what the roles would otherwise compile
# under TCG, built here natively in the box's own root: tcp_bbr_noagg (from Debian's
# linux-source), tcp_bbr410 (Linux 4.10.1's tcp_bbr.c), picoquic's builds and Mahimahi
# 0.96's shells. Figure 5 needs none of them, so none may stop the box: a part whose sources
# are neither in the source folder nor reachable, or whose build fails, is left out with one
# line that says which, why (the URL it could not reach, or the build's last line) and how to
# supply it (docs/troubleshooting.md, "Offline"); its role then tries again at provisioning,
# and the preflight names it when an experiment needs it.
#
# The source folder: $BBRLAB_SRC, else ../shared/src beside the checkout (copies of the pinned
# sources, each checked against its sha256 by its build script). The code hosts are asked
# once each, before anything is built (`vm/build-box.sh --sources` prints that plan alone).
# Uses the caller's repo, cache, build_root, log, timed and build_in_root.

part_src=${BBRLAB_SRC:-$(dirname "$repo")/shared/src}
# name | what | copies in the source folder (a glob; none: Debian's own) | URLs the build fetches otherwise
box_parts=(
    "noagg|tcp_bbr_noagg (BBR v1 without the ACK-aggregation allowance)||"
    "bbr410|tcp_bbr410 (Linux 4.10.1's BBR)|linux-4.10.1-tcp_bbr.c|https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git/plain/net/ipv4/tcp_bbr.c?h=v4.10.1"
    "picoquic|picoquic (picoquicdemo and picolog_t, four builds)|pico*.tar.gz|https://github.com/private-octopus/picoquic.git https://github.com/h2o/picotls.git"
    "mahimahi|Mahimahi 0.96 (mm-delay, mm-loss, mm-link)|mahimahi-*.tar.gz|https://github.com/ravinet/mahimahi.git"
)
declare -A part_what=() part_from=() part_out=() host_reason=()

reach() { # reach URL: nothing when its host answers (any HTTP status), else why not (one line)
    local host=${1#*://}
    host=${1%%://*}://${host%%/*}/
    if [[ ! -v host_reason[$host] ]]; then
        host_reason[$host]=$(python3 - "$host" <<'PY'
import sys
import urllib.error
import urllib.request

try:
    urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="HEAD"), timeout=15)
except urllib.error.HTTPError:
    pass  # it answered
except Exception as exc:  # noqa: BLE001 - any failure to reach it is the reason given
    print(str(getattr(exc, "reason", exc)).replace("\n", " ") or type(exc).__name__)
PY
)
    fi
    printf '%s' "${host_reason[$host]}"
}

part_key() { # part_key NAME: the cache key of a part cached by build_cached (none for the others)
    case $1 in
        picoquic) sha256sum "$picoquic_script" | cut -c1-16 ;;
        mahimahi) cat "$mahimahi_files"/* | sha256sum | cut -c1-16 ;;
    esac
}

parts_plan() { # where each optional part's sources come from (part_from), or why it is left out (part_out)
    local entry name what glob urls url why key
    for entry in "${box_parts[@]}"; do
        IFS='|' read -r name what glob urls <<<"$entry"
        part_what[$name]=$what
        unset "part_out[$name]" "part_from[$name]"
        key=$(part_key "$name")
        if [[ -z $glob ]]; then
            part_from[$name]="Debian's linux-source (the mirror)"
        elif [[ -n $key && -f $cache/$name/$key/share/$name/build.txt ]]; then
            part_from[$name]="the cache ($cache/$name/$key)"
        elif compgen -G "$part_src/$glob" >/dev/null; then
            part_from[$name]="the copies in $part_src"
        else
            for url in $urls; do
                why=$(reach "$url")
                if [[ -n $why ]]; then
                    part_out[$name]="no copy of its sources in $part_src, and $url cannot be reached ($why)"
                    continue 2
                fi
            done
            part_from[$name]="$urls"
        fi
    done
}

part_left_out() { # part_left_out NAME WHY: say so in one line and keep it for the box's record
    part_out[$1]=$2
    log "${part_what[$1]} left out of the box: $2; figure 5 does not need it, its role tries again at" \
        "provisioning, and to build it in: docs/troubleshooting.md, \"Offline\""
}

parts_say() { # the plan, one line a part
    local entry name
    for entry in "${box_parts[@]}"; do
        name=${entry%%|*}
        if [[ -v part_out[$name] ]]; then
            part_left_out "$name" "${part_out[$name]}"
        else
            log "${part_what[$name]}: sources from ${part_from[$name]}"
        fi
    done
}

parts_record() { # parts_record FILE: the parts left out of the box just written, "NAME<TAB>WHY" (none: no file)
    local name
    rm -f "$1"
    for name in "${!part_out[@]}"; do
        printf '%s\t%s\n' "$name" "${part_out[$name]}"
    done | sort >"$1.tmp"
    if [[ -s $1.tmp ]]; then mv "$1.tmp" "$1"; else rm -f "$1.tmp"; fi
}

parts_in_reach_again() { # parts_in_reach_again FILE: whether a part FILE names as left out for its
    # sources now has them (the box is then built again); says the others' reasons again
    local name why again=1
    [[ -s $1 ]] || return 1
    parts_plan
    while IFS=$'\t' read -r name why; do
        if [[ $why == "its build failed"* ]]; then
            log "the box lacks ${part_what[$name]:-$name}: $why"
        elif [[ -v part_out[$name] ]]; then
            log "the box lacks ${part_what[$name]:-$name}: ${part_out[$name]} (docs/troubleshooting.md, \"Offline\")"
        else
            log "${part_what[$name]:-$name} was left out of the cached box; its sources are in reach now (${part_from[$name]})"
            again=0
        fi
    done <"$1"
    return "$again"
}

build_failed() { # build_failed NAME LOG: the part left out, its log kept where the next run can read it
    local kept=$cache/logs/build-box-$1.log
    mkdir -p "$cache/logs" && cp "$2" "$kept"
    part_left_out "$1" "its build failed: $(tail -n1 "$2") (log: $kept)"
}

build_noagg() { # build_noagg ROOT: the bbrnoagg role's module, built here at native speed
    # for the box's kernel (the role then only loads it)
    local root=$1 release series version
    release=$(stock_release "$root")
    series=$(cut -d. -f1,2 <<<"$release")
    # shellcheck disable=SC2016 # dpkg's format, not the shell's
    version=$(chroot "$root" dpkg-query -W -f='${Version}' "linux-image-$release")
    install -m 0755 "$noagg_script" "$root/tmp/build-tcp-bbr-noagg.sh"
    if build_in_root "$root" "tcp_bbr_noagg for $release" "$build_root/noagg.log" \
        "gcc make xz-utils linux-headers-$release linux-source-$series=$version" "/tmp/build-tcp-bbr-noagg.sh $release"; then
        log "built tcp_bbr_noagg for $release"
    else
        build_failed noagg "$build_root/noagg.log"
    fi
    rm -f "$root/tmp/build-tcp-bbr-noagg.sh"
}

build_bbr410() { # build_bbr410 ROOT: the bbr410 role's module (Linux 4.10.1's BBR), built
    # here at native speed for the box's Debian kernel, from the source folder's copy or its URL
    local root=$1 release source=/tmp/bbr410/none
    release=$(stock_release "$root")
    mkdir -p "$root/tmp/bbr410"
    cp "$bbr410_files"/* "$root/tmp/bbr410/"
    if [[ -f $part_src/linux-4.10.1-tcp_bbr.c ]]; then
        cp "$part_src/linux-4.10.1-tcp_bbr.c" "$root/tmp/bbr410/source.c"
        source=/tmp/bbr410/source.c
    fi
    if build_in_root "$root" "tcp_bbr410 for $release" "$build_root/bbr410.log" \
        "gcc make patch linux-headers-$release" "/tmp/bbr410/build-tcp-bbr410.sh $release $source"; then
        log "built tcp_bbr410 (Linux 4.10.1's BBR) for $release"
    else
        build_failed bbr410 "$build_root/bbr410.log"
    fi
    rm -rf "$root/tmp/bbr410"
}

build_cached() { # build_cached ROOT NAME WHAT KEY TOOLS GLOB: build NAME in the box's own root
    # at native speed with /usr/local/lib/bbrlab/build-NAME.sh (installed by the caller), from
    # the source folder's GLOB when present (the pinned commits by git otherwise), cached under
    # $cache/NAME/KEY; the entry is copied into /usr/local of the box
    local root=$1 name=$2 what=$3 entry=$cache/$2/$4 tools=$5 glob=$6
    if [[ ! -f $entry/share/$name/build.txt ]]; then
        mkdir -p "$root/tmp/src"
        if compgen -G "$part_src/$glob" >/dev/null; then
            # shellcheck disable=SC2086 # GLOB names the sources
            cp "$part_src"/$glob "$root/tmp/src/"
        else
            tools+=" git ca-certificates" # the pinned commits are fetched
        fi
        if build_in_root "$root" "$name" "$build_root/$name.log" "$tools" \
            "/usr/local/lib/bbrlab/build-$name.sh /tmp/$name" BBRLAB_SRC=/tmp/src; then
            rm -rf "$entry.tmp" && mkdir -p "$entry.tmp" && cp -a "$root/tmp/$name/." "$entry.tmp/" &&
                rm -rf "$entry" && mv "$entry.tmp" "$entry"
            log "built $what into $entry"
        else
            build_failed "$name" "$build_root/$name.log"
        fi
        rm -rf "$root/tmp/src" "$root/tmp/$name"
    else
        log "$what from the cache ($entry)"
    fi
    [[ ! -f $entry/share/$name/build.txt ]] || cp -a "$entry/." "$root/usr/local/"
}

build_picoquic() { # build_picoquic ROOT: picoquicdemo and picolog_t in /usr/local of the box,
    # cached by the hash of the build script (which holds the pinned commits); the picoquic
    # role then finds them current.
    local root=$1
    install -D -m 0755 "$picoquic_script" "$root/usr/local/lib/bbrlab/build-picoquic.sh"
    build_cached "$root" picoquic picoquic "$(part_key picoquic)" \
        "cmake make gcc pkg-config libssl-dev" "pico*.tar.gz"
}

build_mahimahi() { # build_mahimahi ROOT: Mahimahi 0.96's mm-delay, mm-loss and mm-link (setuid
    # root) in /usr/local/lib/mahimahi/bin of the box, cached by the hash of the build script
    # and its patch; the mahimahi role then finds them current.
    local root=$1 tools
    tools=$(python3 -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1]))["mahimahi_build_packages"]))' \
        "$repo/ansible/roles/mahimahi/defaults/main.yml" | sed 's/ git$//; s/ git / /')
    install -D -m 0755 "$mahimahi_files/build-mahimahi.sh" "$root/usr/local/lib/bbrlab/build-mahimahi.sh"
    install -D -m 0644 "$mahimahi_files/mahimahi-0.96-on-debian12.patch" "$root/usr/local/lib/bbrlab/mahimahi-0.96-on-debian12.patch"
    build_cached "$root" mahimahi Mahimahi "$(part_key mahimahi)" "$tools" "mahimahi-*.tar.gz"
}

build_parts() { # build_parts ROOT: each optional part whose sources are in reach
    local root=$1 name
    for name in noagg bbr410 picoquic mahimahi; do
        [[ -v part_out[$name] ]] || "build_$name" "$root"
    done
}
