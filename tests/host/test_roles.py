"""One list of the testbed's roles (ansible/testbed-roles.yml): the VM's playbook, setup.sh
and every shard host of a sweep apply exactly it, and it names every role but the sweep's and
those the listed roles include themselves (debpackages)."""

from pathlib import Path

import yaml

ANSIBLE = Path(__file__).resolve().parents[2] / "ansible"


def roles_list():
    return yaml.safe_load((ANSIBLE / "testbed-roles.yml").read_text())["bbrlab_roles"]


def included(role: str) -> set[str]:
    """The roles ROLE's tasks include by name (include_role with a literal name)."""
    names = set()
    for path in (ANSIBLE / "roles" / role / "tasks").glob("*.yml"):
        for task in yaml.safe_load(path.read_text()) or []:
            name = (task.get("ansible.builtin.include_role") or {}).get("name", "")
            if name and "{{" not in name:
                names.add(name)
    return names


def test_the_list_names_every_role_but_the_sweeps_and_each_exists():
    helpers = set().union(*(included(r) for r in roles_list()))
    assert helpers == {"debpackages"}  # netkernel's and testbed's packages, asked of apt once each
    assert sorted(roles_list()) == sorted(p.name for p in (ANSIBLE / "roles").iterdir()
                                          if p.name != "sweep" and p.name not in helpers)
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
