#!/usr/bin/env bash
# An inventory for ansible/sweep.yml over this checkout's running Vagrant VMs, one shard
# each, in the Vagrantfile's order:
#   BBRLAB_VMS=3 vagrant up && vm/sweep-inventory.sh >sweep.ini
# Their ssh settings (vagrant ssh-config) are kept in .vagrant/sweep-ssh-config.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export VAGRANT_CWD=$repo VAGRANT_CHECKPOINT_DISABLE=1

mapfile -t machines < <(vagrant status --machine-readable </dev/null | awk -F, '$3 == "state" && $4 == "running" {print $2}')
if ((${#machines[@]} == 0)); then
    echo "vm/sweep-inventory.sh: no running VM here (BBRLAB_VMS=N vagrant up)" >&2
    exit 1
fi
config=$repo/.vagrant/sweep-ssh-config
vagrant ssh-config "${machines[@]}" </dev/null >"$config"
echo "[bbrlab_shards]"
printf '%s\n' "${machines[@]}"
echo
echo "[bbrlab_shards:vars]"
echo "ansible_ssh_common_args='-F $config'"
echo "ansible_python_interpreter=/usr/bin/python3"
echo "ansible_pipelining=true"
