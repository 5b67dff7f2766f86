"""One list of the testbed's roles (ansible/testbed-roles.yml): the VM's playbook, setup.sh
and every shard host of a sweep apply exactly it, and it names every role but the sweep's."""

from pathlib import Path

import yaml

ANSIBLE = Path(__file__).resolve().parents[2] / "ansible"


def roles_list():
    return yaml.safe_load((ANSIBLE / "testbed-roles.yml").read_text())["bbrlab_roles"]


def test_the_list_names_every_role_but_the_sweeps_and_each_exists():
    assert sorted(roles_list()) == sorted(p.name for p in (ANSIBLE / "roles").iterdir() if p.name != "sweep")
    assert roles_list()[:2] == ["netkernel", "testbed"]  # the kernel first: the others load modules


def test_the_playbook_and_the_shard_hosts_apply_the_list():
    (play,) = yaml.safe_load((ANSIBLE / "playbook.yml").read_text())
    assert play["vars_files"] == ["testbed-roles.yml"] and "roles" not in play
    (task,) = play["tasks"]
    assert task["ansible.builtin.include_role"]["name"] == "{{ bbrlab_role }}" and task["loop"] == "{{ bbrlab_roles }}"
    tasks = yaml.safe_load((ANSIBLE / "roles" / "sweep" / "tasks" / "provision.yml").read_text())
    assert tasks[0]["ansible.builtin.include_vars"]["file"] == "{{ playbook_dir }}/testbed-roles.yml"
    assert tasks[1]["loop"] == "{{ bbrlab_roles }}"
    assert {k: v for k, v in tasks[1]["ansible.builtin.include_role"].items()} == {"name": "{{ bbrlab_role }}"}
