#!/usr/bin/env bash
# Provision THIS machine (a bare Debian or Ubuntu host) for bbrlab with the
# same Ansible playbook the Vagrant VM uses:  sudo ./setup.sh [ansible-playbook options]
# Installs Ansible from apt when it is missing; the project directory is this
# checkout, so /usr/local/bin/bbrlab runs the code found here.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "setup.sh: error: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "run as root: sudo ./setup.sh"
command -v apt-get >/dev/null || die "only Debian and Ubuntu hosts are supported (no apt-get)"

if ! command -v ansible-playbook >/dev/null; then
    echo "setup.sh: installing ansible from apt" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # python3-apt: Ansible's apt module needs it on the target (this host).
    # The roles use ansible.builtin only: ansible-core suffices where it exists.
    apt-get install -y -q --no-install-recommends ansible-core python3-apt </dev/null \
        || apt-get install -y -q --no-install-recommends ansible python3-apt </dev/null
fi

cd "$repo"
exec ansible-playbook -i localhost, -c local \
    -e "testbed_project_dir=$repo" "$@" ansible/playbook.yml
