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
# Uses the caller's repo, cache, build_root, log, timed, logged and stock_release.

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

# Each part's stage_NAME puts what its build needs into the box's root and names the
# packages (part_tools), the command (part_cmd, run in the root) and its environment
# (part_env); a part found in the cache sets no command. finish_NAME keeps what it built.
declare -A part_tools=() part_cmd=() part_env=() part_label=() part_entry=()

stage_noagg() { # the bbrnoagg role's module, built for the box's kernel (the role then only loads it)
    local root=$1 release series version
    release=$(stock_release "$root")
    series=$(cut -d. -f1,2 <<<"$release")
    # shellcheck disable=SC2016 # dpkg's format, not the shell's
    version=$(chroot "$root" dpkg-query -W -f='${Version}' "linux-image-$release")
    install -m 0755 "$noagg_script" "$root/tmp/build-tcp-bbr-noagg.sh"
    part_label[noagg]="tcp_bbr_noagg for $release"
    part_tools[noagg]="gcc make xz-utils linux-headers-$release linux-source-$series=$version"
    part_cmd[noagg]="/tmp/build-tcp-bbr-noagg.sh $release"
}

finish_noagg() { rm -f "$1/tmp/build-tcp-bbr-noagg.sh"; }

stage_bbr410() { # the bbr410 role's module (Linux 4.10.1's BBR) for the box's Debian kernel,
    # from the source folder's copy or its URL
    local root=$1 release source=/tmp/bbr410/none
    release=$(stock_release "$root")
    mkdir -p "$root/tmp/bbr410"
    cp "$bbr410_files"/* "$root/tmp/bbr410/"
    if [[ -f $part_src/linux-4.10.1-tcp_bbr.c ]]; then
        cp "$part_src/linux-4.10.1-tcp_bbr.c" "$root/tmp/bbr410/source.c"
        source=/tmp/bbr410/source.c
    fi
    part_label[bbr410]="tcp_bbr410 (Linux 4.10.1's BBR) for $release"
    part_tools[bbr410]="gcc make patch linux-headers-$release"
    part_cmd[bbr410]="/tmp/bbr410/build-tcp-bbr410.sh $release $source"
}

finish_bbr410() { rm -rf "$1/tmp/bbr410"; }

stage_cached() { # stage_cached ROOT NAME KEY TOOLS GLOB: NAME built with
    # /usr/local/lib/bbrlab/build-NAME.sh (installed by the caller) from the source folder's
    # GLOB when present (the pinned commits by git otherwise), unless $cache/NAME/KEY holds it
    local root=$1 name=$2 entry=$cache/$2/$3 tools=$4 glob=$5
    part_entry[$name]=$entry
    if [[ -f $entry/share/$name/build.txt ]]; then
        log "${part_label[$name]} from the cache ($entry)"
        return
    fi
    mkdir -p "$root/tmp/src-$name"
    if compgen -G "$part_src/$glob" >/dev/null; then
        # shellcheck disable=SC2086 # GLOB names the sources
        cp "$part_src"/$glob "$root/tmp/src-$name/"
    else
        tools+=" git ca-certificates" # the pinned commits are fetched
    fi
    part_tools[$name]=$tools
    part_cmd[$name]="/usr/local/lib/bbrlab/build-$name.sh /tmp/$name"
    part_env[$name]=BBRLAB_SRC=/tmp/src-$name
}

finish_cached() { # finish_cached ROOT NAME BUILT: the new build cached (BUILT 1), the entry
    # copied into /usr/local of the box
    local root=$1 name=$2 entry=${part_entry[$2]}
    if [[ $3 == 1 ]]; then
        rm -rf "$entry.tmp" && mkdir -p "$entry.tmp" && cp -a "$root/tmp/$name/." "$entry.tmp/" &&
            rm -rf "$entry" && mv "$entry.tmp" "$entry"
        log "built ${part_label[$name]} into $entry"
    fi
    rm -rf "$root/tmp/src-$name" "$root/tmp/$name"
    [[ ! -f $entry/share/$name/build.txt ]] || cp -a "$entry/." "$root/usr/local/"
}

stage_picoquic() { # picoquicdemo and picolog_t for /usr/local of the box, cached by the hash of
    # the build script (which holds the pinned commits); the picoquic role then finds them current
    install -D -m 0755 "$picoquic_script" "$1/usr/local/lib/bbrlab/build-picoquic.sh"
    part_label[picoquic]=picoquic
    stage_cached "$1" picoquic "$(part_key picoquic)" "cmake make gcc pkg-config libssl-dev" "pico*.tar.gz"
}

finish_picoquic() { finish_cached "$1" picoquic "$2"; }

stage_mahimahi() { # Mahimahi 0.96's mm-delay, mm-loss and mm-link (setuid root) for
    # /usr/local/lib/mahimahi/bin of the box, cached by the hash of the build script and its
    # patch; the mahimahi role then finds them current
    local root=$1 tools
    tools=$(python3 -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1]))["mahimahi_build_packages"]))' \
        "$repo/ansible/roles/mahimahi/defaults/main.yml" | sed 's/ git$//; s/ git / /')
    part_label[mahimahi]=Mahimahi
    install -D -m 0755 "$mahimahi_files/build-mahimahi.sh" "$root/usr/local/lib/bbrlab/build-mahimahi.sh"
    install -D -m 0644 "$mahimahi_files/mahimahi-0.96-on-debian12.patch" "$root/usr/local/lib/bbrlab/mahimahi-0.96-on-debian12.patch"
    stage_cached "$root" mahimahi "$(part_key mahimahi)" "$tools" "mahimahi-*.tar.gz"
}

finish_mahimahi() { finish_cached "$1" mahimahi "$2"; }

in_root() { # in_root ROOT CMD...: CMD in the box's root, apt and the builds non-interactive
    local root=$1
    shift
    chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"
}

installed_packages() { # installed_packages ROOT: the packages installed in ROOT, one per line, sorted
    # shellcheck disable=SC2016 # dpkg's format, not the shell's
    in_root "$1" dpkg-query -W -f='${db:Status-Status} ${binary:Package}\n' | sed -n 's/^installed //p' | sort
}

parts_tools() { # parts_tools ROOT NAME...: each part's build tools installed, by one apt run for
    # all (one resolution, one download, one dpkg run); when that fails, part by part, and a
    # part whose tools do not install is left out (its command unset). Sets parts_before: the
    # packages installed before, the box's own
    local root=$1 name tools=()
    shift
    for name; do
        # shellcheck disable=SC2206 # a list of package names
        tools+=(${part_tools[$name]})
    done
    parts_before=$(installed_packages "$root")
    if ! timed "the parts' build tools" logged "$build_root/parts-apt.log" \
        in_root "$root" apt-get install -y -q --no-install-recommends "${tools[@]}"; then
        for name; do
            # shellcheck disable=SC2086 # a list of package names
            if ! logged "$build_root/$name.log" in_root "$root" apt-get install -y -q --no-install-recommends ${part_tools[$name]}; then
                build_failed "$name" "$build_root/$name.log"
                unset "part_cmd[$name]"
            fi
        done
    fi
}

build_parts() { # build_parts ROOT: each optional part whose sources are in reach, the builds side by
    # side (their configure steps run on one core, the compilers on all); the build tools are
    # purged again afterwards, so the box keeps only what the roles install
    local root=$1 name staged=() rc
    local -A pids=() built=()
    for name in noagg bbr410 picoquic mahimahi; do
        [[ -v part_out[$name] ]] && continue
        "stage_$name" "$root"
        staged+=("$name")
    done
    local names=()
    for name in "${staged[@]}"; do
        [[ -v part_cmd[$name] ]] && names+=("$name")
    done
    if ((${#names[@]})); then
        parts_tools "$root" "${names[@]}"
        for name in "${names[@]}"; do
            [[ -v part_cmd[$name] ]] || continue
            # shellcheck disable=SC2086 # part_env holds VAR=VALUE words
            timed "${part_label[$name]}" logged "$build_root/$name.log" \
                in_root "$root" ${part_env[$name]:-} sh -c "${part_cmd[$name]}" &
            pids[$name]=$!
        done
        for name in "${!pids[@]}"; do
            rc=0
            wait "${pids[$name]}" || rc=$?
            if ((rc == 0)); then
                built[$name]=1
            else
                build_failed "$name" "$build_root/$name.log"
            fi
        done
        # two builds may have run depmod at once: this run has the last word on modules.dep
        in_root "$root" depmod "$(stock_release "$root")"
        # every package the tools brought, and nothing else: the box keeps exactly its own
        local added
        added=$(comm -13 <(echo "$parts_before") <(installed_packages "$root") | paste -sd' ')
        if [[ -n $added ]]; then
            in_root "$root" sh -c "apt-get purge -y -q $added >/dev/null && apt-get clean" ||
                log "warning: could not remove the parts' build tools from the box"
        fi
    fi
    for name in "${staged[@]}"; do
        case $name in
            noagg | bbr410) [[ ! -v built[$name] ]] || log "built ${part_label[$name]}"
                "finish_$name" "$root" ;;
            *) "finish_$name" "$root" "${built[$name]:-0}" ;;
        esac
    done
}
