"""One list of the testbed's roles (ansible/testbed-roles.yml): the VM's playbook, setup.sh
and every shard host of a sweep apply exactly it, and it names every role but the sweep's and
those the listed roles include themselves (debpackages)."""

import re
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
    check, full, runtime, folder, record = play["tasks"]
    task = full
    assert task["ansible.builtin.include_role"]["name"] == "{{ bbrlab_role }}" and task["loop"] == "{{ bbrlab_roles }}"
    # an image these roles built runs only their runtime tasks; never when asked for all of them
    assert runtime["ansible.builtin.include_role"] == {"name": "{{ bbrlab_role }}", "tasks_from": "runtime"}
    assert runtime["loop"] == "{{ bbrlab_runtime_roles }}"
    assert "bbrlab_full_provision" in check["when"] and "bbrlab_image_build" in check["when"]
    assert full["when"] == "bbrlab_image.rc | default(1) != 0" and runtime["when"] == "bbrlab_image.rc | default(1) == 0"
    assert record["when"] == folder["when"] == "bbrlab_image_build | bool"
    tasks = yaml.safe_load((ANSIBLE / "roles" / "sweep" / "tasks" / "provision.yml").read_text())
    assert tasks[0]["ansible.builtin.include_vars"]["file"] == "{{ playbook_dir }}/testbed-roles.yml"
    assert tasks[1]["loop"] == "{{ bbrlab_roles }}"
    assert {k: v for k, v in tasks[1]["ansible.builtin.include_role"].items()} == {"name": "{{ bbrlab_role }}"}


def test_each_runtime_role_keeps_its_kernel_tasks_apart_and_skips_them_in_the_image():
    """Where vm/build-box.sh applies the roles into the box's image, the running kernel is the
    build host's: every task that loads a module or puts a setting in force is in the role's
    tasks/runtime.yml, which main.yml imports only outside the image build."""
    listed = yaml.safe_load((ANSIBLE / "testbed-roles.yml").read_text())
    assert set(listed["bbrlab_runtime_roles"]) <= set(listed["bbrlab_roles"])
    for role in listed["bbrlab_roles"]:
        tasks_dir = ANSIBLE / "roles" / role / "tasks"
        main = yaml.safe_load((tasks_dir / "main.yml").read_text())
        imports = [t for t in main if "ansible.builtin.import_tasks" in t]
        text = (tasks_dir / "main.yml").read_text()
        if role in listed["bbrlab_runtime_roles"]:
            (imp,) = imports
            assert imp["ansible.builtin.import_tasks"] == "runtime.yml"
            assert imp["when"] == "not (bbrlab_image_build | default(false) | bool)"
        else:
            assert not (tasks_dir / "runtime.yml").exists() and not imports
        # the kernel's own tools, outside runtime.yml, would act on the build host's kernel
        assert not re.search(r"\bsysctl +-|modprobe|uname|kernel_probe", text), role
    handlers = yaml.safe_load((ANSIBLE / "roles" / "netkernel" / "handlers" / "main.yml").read_text())
    assert all(h["when"] == "not (bbrlab_image_build | default(false) | bool)" for h in handlers)
