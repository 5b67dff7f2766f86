#!/usr/bin/env bash
# bbrlab's whole test suite, as CI runs it:  sudo tests/run.sh
#
# Stages (each prints its duration; the first failure stops the suite, exit non-zero):
#   deps         host packages: Vagrant, libvirt, qemu, mmdebstrap, linters (apt)
#                (then "vm up" starts in the background, beside lint, unit and host)
#   lint         yamllint, ansible-lint, flake8, shellcheck
#   unit         offline unit tests on captured tool output (pytest, on this host)
#   host         what this host's kernel can do, and that the preflight says so
#   vm up        the project's own Vagrantfile brought up with vagrant-libvirt on a
#                locally built debian/bookworm64 box, provisioned by ansible_local
#   idempotence  `vagrant provision` again: the recap must say changed=0 (with the BBRv3
#                kernel, after the reboot into it: one provisioning serves both kernels)
#   integration  tests/integration inside the VM as root: the environment, then the
#                experiments for real (short flows) with assertions on the paper's claims
#   pull         the integration runs' results copied into results/ on the host
#   figures      tests/pulled on this host: the integration runs the guest judged without
#                drawing (--no-figure: half a minute a figure under TCG) drawn from the pulled
#                results, each must draw, and the figures the tests are about looked at
#                (with the BBRv3 kernel: beside the reboot into it, which measures nothing)
#   sweep        tests/sweep.sh: a small sweep split into two shards through ansible/sweep.yml
#                (both on the test VM, one after the other), one shard killed and resumed,
#                the merged run holding the shards' points and judged alike when replotted,
#                a mismatched merge refused
#   kernel bbr3  the box carries the testbed's 6.12 kernel with BBRv3 beside Debian's (its
#                build cached by its inputs' hash): the VM rebooted into it, then the
#                idempotence stage above, then
#   bbr3         tests/integration/test_bbr3.py there: bbr, bbr3 and bbr_noagg side by side,
#                lab 5, the v3 experiments' quick profiles
#                (BBRLAB_BBR3_KERNEL=0: a box without that kernel, and no such stages)
# The VM is destroyed and the daemons this suite started are stopped on any exit
# (--keep-vm leaves the VM up for more runs: vm/vm.sh run ..., vm/vm.sh destroy).
#
# Options: --no-vm (lint, unit and host stages only), --keep-vm,
#          -k EXPR (passed to pytest for the integration stage).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
vm=vm/vm.sh
python=/usr/bin/python3 # Debian's interpreter: the one the packages install into
with_vm=1 keep_vm=0 pytest_k=()

while (($# > 0)); do
    case $1 in
        --no-vm) with_vm=0 ;;
        --keep-vm) keep_vm=1 ;;
        -k) pytest_k=(-k "$2"); shift ;;
        -h | --help) sed -n '2,/^[^#]/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "tests/run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[[ $(id -u) -eq 0 ]] || { echo "tests/run.sh: run as root: sudo tests/run.sh" >&2; exit 2; }
export BBRLAB_BBR3_KERNEL=${BBRLAB_BBR3_KERNEL:-1} # the box, vm up and the bbr3 stages
[[ $BBRLAB_BBR3_KERNEL == [01] ]] || { echo "tests/run.sh: BBRLAB_BBR3_KERNEL must be 0 or 1" >&2; exit 2; }

durations=()
suite_t0=$(date +%s)
timed() { # timed NAME CMD...: run a stage, record its duration, return its status
    local name=$1 t0 rc=0; shift
    echo "==== $name" >&2
    t0=$(date +%s)
    "$@" || rc=$?
    durations+=("$(printf '%-12s %5ss %s' "$name" $(($(date +%s) - t0)) "$( ((rc == 0)) && echo ok || echo "FAILED (exit $rc)")")")
    return "$rc"
}
fail() { # fail NAME RC: the suite ends here
    report
    echo "tests/run.sh: stage '$1' failed" >&2
    exit "$2"
}
stage() { # stage NAME CMD...: a stage whose failure stops the suite
    timed "$@" || fail "$1" "$?"
}
report() {
    echo "==== stage durations" >&2
    printf '  %s\n' "${durations[@]}" >&2
    echo "  total        $(($(date +%s) - suite_t0))s" >&2
}

vm_started=0 vm_pid="" vm_log="" figures_pid="" figures_log="" figures_t0=0
cleanup() {
    if [[ -n $figures_pid ]]; then # the figures stage still drawing: it and its pytest
        pkill -P "$figures_pid" 2>/dev/null || true
        kill "$figures_pid" 2>/dev/null || true
    fi
    [[ -z $figures_log ]] || rm -f "$figures_log"
    if [[ -n $vm_pid ]] && kill -0 "$vm_pid" 2>/dev/null; then # a bring-up still under way
        kill -- "-$vm_pid" 2>/dev/null || true
        wait "$vm_pid" 2>/dev/null || true
        # the group's other processes (vagrant, the box build) run their own cleanups: let
        # them end before the VM is destroyed, and no later than two minutes
        local _
        for _ in $(seq 120); do kill -0 -- "-$vm_pid" 2>/dev/null || break; sleep 1; done
        kill -KILL -- "-$vm_pid" 2>/dev/null || true
    fi
    [[ -z $vm_log ]] || rm -f "$vm_log" "$vm_log.took"
    if ((vm_started && !keep_vm)); then
        echo "==== destroy" >&2
        "$vm" destroy || echo "tests/run.sh: warning: vm/vm.sh destroy failed" >&2
    fi
}
trap cleanup EXIT

lint() {
    yamllint --strict .
    ansible-lint -q
    flake8 mininet tests benchmarks
    shellcheck -x figure*.sh experiment.sh reproduce.sh setup.sh vm/*.sh vm/kernel/*.sh ansible/roles/*/files/*.sh \
        tests/run.sh tests/fixtures/capture.sh tests/sweep.sh .ci/run
    # (vagrant validate: the host stage's tests/host/test_vagrantfile.py, per architecture)
}

pytest_here() { # pytest_here DIR: tests that run on this host, not in the VM
    PYTHONPATH="$repo/mininet" "$python" -m pytest -q -p no:cacheprovider "$1"
}

integration() {
    # Results of the integration runs stay in the guest's /vagrant/results until pulled.
    "$vm" run env BBRLAB_TEST_RESULTS=/vagrant/results/integration \
        python3 -m pytest -v -p no:cacheprovider -rs --durations=40 "${pytest_k[@]}" tests/integration
}

figures() { # the pulled runs' figures, drawn and looked at on this host (tests/pulled)
    BBRLAB_PULLED="$repo/results/integration" pytest_here tests/pulled
}

figures_start() { # the figures stage in the background, beside a stage that measures nothing
    figures_log=$(mktemp)
    figures_t0=$(date +%s)
    figures >"$figures_log" 2>&1 &
    figures_pid=$!
}
figures_wait() { # its end: its output and its status
    local rc=0
    wait "$figures_pid" || rc=$?
    figures_pid=""
    cat "$figures_log" >&2
    rm -f "$figures_log"
    echo "tests/run.sh: the figures took $(($(date +%s) - figures_t0))s beside the reboot" >&2
    return "$rc"
}

vm_up_wait() { # the background bring-up's end: its output, how long it took, its status
    local rc=0
    wait "$vm_pid" || rc=$?
    vm_pid=""
    cat "$vm_log" >&2
    echo "tests/run.sh: the VM came up in $(cat "$vm_log.took" 2>/dev/null || echo ?)s, beside lint, unit and host" >&2
    return "$rc"
}

stage deps "$vm" deps --test-tools
if ((with_vm)); then
    # The box (and the BBRv3 kernel it carries), the daemons and `vagrant up` take the
    # longest: they run while the host-side stages do, in a process group of their own.
    vm_started=1
    vm_log=$(mktemp)
    # shellcheck disable=SC2016 # the inner shell expands them
    setsid bash -c 't0=$(date +%s); "$1" up; rc=$?; echo $(( $(date +%s) - t0 )) >"$2"; exit "$rc"' \
        vm-up "$vm" "$vm_log.took" >"$vm_log" 2>&1 &
    vm_pid=$!
fi
stage lint lint
stage unit pytest_here tests/unit
stage host pytest_here tests/host
if ((with_vm)); then
    stage "vm up" vm_up_wait
    # with the BBRv3 kernel the second provision runs on it, after the reboot below: what
    # provisioning wrote on Debian's kernel must serve that one unchanged
    [[ $BBRLAB_BBR3_KERNEL == 1 ]] || stage idempotence "$vm" provision-check
    integration_rc=0
    timed integration integration || integration_rc=$?
    stage pull "$vm" pull # also after a failure: the evidence is in the results
    ((integration_rc == 0)) || fail integration "$integration_rc"
    stage sweep bash tests/sweep.sh # two shards on the one VM, merged, replotted
    if [[ $BBRLAB_BBR3_KERNEL == 1 ]]; then
        # the same VM on the testbed's BBRv3 kernel: bbr, bbr3 and bbr_noagg side by side;
        # this host draws the pulled runs' figures while the guest reboots (nothing measured)
        figures_start
        stage "kernel bbr3" "$vm" kernel bbr3 # a reboot, no provisioning
        stage figures figures_wait
        stage idempotence "$vm" provision-check
        bbr3_rc=0
        timed "bbr3" "$vm" run env BBRLAB_TEST_RESULTS=/vagrant/results/integration BBRLAB_EXPECT_BBR3=1 \
            python3 -m pytest -v -p no:cacheprovider -rs tests/integration/test_bbr3.py || bbr3_rc=$?
        stage pull "$vm" pull # also after a failure, as above
        ((bbr3_rc == 0)) || fail bbr3 "$bbr3_rc"
        stage figures figures
    else
        stage figures figures
    fi
fi
report
echo "tests/run.sh: all stages passed" >&2
