#!/usr/bin/env bash
# The sharded sweep end to end, on the test VM vm/vm.sh brought up:  sudo tests/sweep.sh
#
#   1. An inventory of two hosts that are both the one VM (two names, one ssh target); the
#      two shards of tests/fixtures/sweep.yaml (2 CCs x 2 buffers, 8 s flows) run one after
#      the other through ansible/sweep.yml (sweep_serial=1). Shard 1 is killed (SIGTERM)
#      while its second point runs: the playbook fetches and merges what exists, names shard
#      1's missing point and fails.
#   2. The playbook again for shard 1 only (--limit vm-shard1,localhost, as the failed play
#      says to do): shard 1 resumes its run (its finished point is not run again), shard 2 is
#      not touched; the merge takes shard 2's results fetched in 1 and is complete.
#   3. The merged run holds the shards' points byte for byte (4 of 4 planned, complete), and
#      a replot of a copy without its verdict judges it the same, claim by claim.
#   4. A merge of shards of different specs is refused in one line (exit 2).
#
# Needs: the VM running and provisioned (vm/vm.sh up), calibrated or not (a first run
# calibrates, ~3 min); on this host ansible-playbook and Debian's python3 with yaml,
# matplotlib and scipy (vm/vm.sh deps --test-tools). About 8 minutes under TCG (each of the
# playbook's tasks on a host is a module run of 5-15 s there), beyond a first calibration.
# Results: results/sweep-ci/ on this host (merged runs; the shards under shards/sweep/).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
vm=vm/vm.sh
python=/usr/bin/python3
work=$repo/results/sweep-ci
host_results=/var/lib/bbrlab/sweep-ci # in the VM
shard1_root=$host_results/sweep/vm-shard1
export ANSIBLE_HOST_KEY_CHECKING=False ANSIBLE_NOCOLOR=1

die() { echo "tests/sweep.sh: FAILED: $*" >&2; exit 1; }
log() { echo "tests/sweep.sh: $*" >&2; }
[[ $(id -u) -eq 0 ]] || { echo "tests/sweep.sh: run as root: sudo tests/sweep.sh" >&2; exit 2; }

rm -rf "$work"
mkdir -p "$work"
"$vm" ssh-config >"$work/ssh-config"
cat >"$work/inventory" <<EOF
[bbrlab_shards]
vm-shard1 ansible_host=default
vm-shard2 ansible_host=default

[bbrlab_shards:vars]
ansible_ssh_common_args='-F $work/ssh-config'
ansible_python_interpreter=/usr/bin/python3
ansible_pipelining=true
EOF

in_vm() { # in_vm SHELL-COMMAND: run it as root in the VM (through the same inventory)
    ansible -i "$work/inventory" vm-shard1 -b -m ansible.builtin.shell -a "$1" -o
}

# Every poll is an async_status module run in the guest: 5-15 s of its CPU under TCG, beside
# the shard's flows. At 10 s instead of 3 a shard's end is seen at most 10 s late; the sweep
# took 10.4 minutes either way (the polls' share was not measured apart).
sweep() { # sweep LOG [ARG...]: the playbook with the CI sweep's variables; its exit status
    local log=$1; shift
    ansible-playbook -i "$work/inventory" ansible/sweep.yml "$@" \
        -e sweep_run=tests/fixtures/sweep.yaml -e sweep_provision=false -e sweep_serial=1 \
        -e sweep_poll=10 -e "sweep_results=$work" -e "sweep_host_results=$host_results" >"$log" 2>&1
}

# A run's point ids and verdict, claim by claim, as one line of JSON (here and in the VM).
summary_py='
import json, pathlib, sys
run = pathlib.Path(sys.argv[1])
v = json.loads((run / "verdict.json").read_text())
points = sorted(p.name for p in (run / "points").iterdir() if not p.name.startswith("."))
print(json.dumps({"points": points, "verdict": v["verdict"], "claims": [[c["id"], c["status"]] for c in v["claims"]]}))
'

newest() { find "$1" -mindepth 1 -maxdepth 1 -type d -name '2*' | sort | tail -n 1; }

log "clearing the VM's earlier sweep results ($host_results)"
in_vm "rm -rf $host_results" >/dev/null

# 1. shard 1 killed mid-run: a watcher in the VM waits for its first finished point and
# stops it two seconds later, while its second point runs (the [-] keeps the watcher's own
# command line from matching its pattern)
log "1. the sweep with shard 1 killed after its first point"
ansible -i "$work/inventory" vm-shard1 -b -B 900 -P 0 -m ansible.builtin.shell -a \
    "for _ in \$(seq 1800); do if ls -d $shard1_root/sweep/*/points/[!.]* >/dev/null 2>&1; then sleep 2; pkill -TERM -f '[-]m bbrlab --results $shard1_root run'; exit 0; fi; sleep 0.5; done; exit 1" \
    >/dev/null
rc=0
sweep "$work/sweep-1.log" || rc=$?
((rc != 0)) || die "the playbook succeeded although shard 1 was killed (see $work/sweep-1.log)"
grep -q 'vm-shard1 (shard 1/2): failed (exit 130)' "$work/sweep-1.log" \
    || die "shard 1 was not reported as killed (see $work/sweep-1.log)"
grep -q 'merge: missing 1 point(s) of shard 1/2' "$work/sweep-1.log" \
    || die "the merge did not name shard 1's missing point (see $work/sweep-1.log)"
first=$(newest "$work/shards/sweep/vm-shard1/sweep")
[[ -n $first ]] || die "shard 1's results were not fetched"
mapfile -t kept < <(find "$first/points" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%f\n')
((${#kept[@]} == 1)) || die "shard 1 should have finished exactly one point before the kill: ${kept[*]:-none}"
before=$(sha256sum "$first/points/${kept[0]}/point.json")
partial=$(newest "$work/sweep")
status=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["status"])' "$partial/run.json")
[[ $status == incomplete ]] || die "the merge of a killed shard is $status, not incomplete ($partial)"

# 2. the playbook again resumes shard 1 only
log "2. the sweep again for shard 1 only: it resumes"
sweep "$work/sweep-2.log" --limit vm-shard1,localhost || die "the rerun failed (see $work/sweep-2.log)"
grep -q "resuming $shard1_root/sweep/$(basename "$first") (1 of 2 points done)" "$work/sweep-2.log" \
    || die "shard 1 did not resume its run (see $work/sweep-2.log)"
! grep -q '\[vm-shard2\]' "$work/sweep-2.log" || die "the rerun for shard 1 touched shard 2's host (see $work/sweep-2.log)"
[[ $(sha256sum "$first/points/${kept[0]}/point.json") == "$before" ]] \
    || die "shard 1's finished point ${kept[0]} was run again"
merged=$(newest "$work/sweep")
[[ $merged != "$partial" ]] || die "no new merged run"

# 3. the merged run is the shards' points, byte for byte, judged as any run: a replot of a
# copy without its verdict gives the same verdict, claim by claim (a second measurement of
# the grid would test the emulator's repeatability, which the claims' margins cannot settle)
log "3. the merged points are the shards' own, and a replot judges them alike"
status=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["status"])' "$merged/run.json")
[[ $status == complete ]] || die "the merged run is $status, not complete ($merged)"
shard_runs=("$(newest "$work/shards/sweep/vm-shard1/sweep")" "$(newest "$work/shards/sweep/vm-shard2/sweep")")
count=0
for point in "$merged"/points/[!.]*; do
    id=${point##*/} from=""
    for run in "${shard_runs[@]}"; do
        [[ -d $run/points/$id ]] && from=$run/points/$id
    done
    [[ -n $from ]] || die "merged point $id is in no shard's run"
    diff -r "$from" "$point" >/dev/null || die "merged point $id differs from shard's $from"
    count=$((count + 1))
done
planned=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["points_total"])' "$merged/run.json")
((count == planned && count == 4)) || die "the merged run holds $count points, planned $planned (4: 2 CCs x 2 buffers)"
replot=$work/replot/sweep/$(basename "$merged")
mkdir -p "$(dirname "$replot")"
cp -a "$merged" "$replot"
rm -f "$replot/verdict.json" "$replot/sweep.png"
PYTHONPATH=mininet "$python" -m bbrlab plot "$replot" >"$work/replot.log" 2>&1 || die "the replot failed (see $work/replot.log)"
ours=$("$python" -c "$summary_py" "$merged")
again=$("$python" -c "$summary_py" "$replot")
log "merged:   $ours"
log "replotted: $again"
[[ $ours == "$again" ]] || die "the replot judged the merged run otherwise"
[[ -f $replot/sweep.png ]] || die "the replot drew no figure"

# 4. shards of different specs are refused, in one line
log "4. a merge of mismatched shards is refused"
other=$work/mismatch/sweep/$(basename "$(newest "$work/shards/sweep/vm-shard2/sweep")")
mkdir -p "$(dirname "$other")"
cp -a "$(newest "$work/shards/sweep/vm-shard2/sweep")" "$other"
"$python" - "$other/spec.yaml" <<'EOF'
import sys, yaml
path = sys.argv[1]
raw = yaml.safe_load(open(path))
raw["seed"] = raw.get("seed", 1) + 1  # measures otherwise
open(path, "w").write(yaml.safe_dump(raw, sort_keys=False))
EOF
rc=0
PYTHONPATH=mininet "$python" -m bbrlab merge "$first" "$other" --into "$work/refused" >"$work/refused.out" 2>"$work/refused.err" || rc=$?
((rc == 2)) || die "a mismatched merge exited $rc, not 2"
(($(wc -l <"$work/refused.err") == 1)) || die "a mismatched merge said more than one line: $(cat "$work/refused.err")"
grep -q 'shards of different specs are not merged' "$work/refused.err" || die "unexpected refusal: $(cat "$work/refused.err")"
[[ ! -e $work/refused ]] || die "a refused merge wrote $work/refused"

log "all passed: merged $merged"
