"""Checks that a provisioned machine offers what bbrlab's experiments need.

Run inside the VM as root:  cd /vagrant && sudo python3 -m pytest tests/integration
(or from the host: vm/vm.sh run python3 -m pytest tests/integration).

The expected modules and sysctls are read from the netkernel role's defaults,
the one place they are declared. Per-Mininet-host (per-namespace) sysctls are
checked elsewhere; these tests look at the root namespace and a throw-away one.
"""

import os
import pathlib
import subprocess
import uuid

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
NETKERNEL_DEFAULTS = REPO / "ansible" / "roles" / "netkernel" / "defaults" / "main.yml"
MODULES_LOAD_DIR = pathlib.Path("/etc/modules-load.d")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, tc)"),
    pytest.mark.skipif(
        not (MODULES_LOAD_DIR / "bbrlab.conf").exists() and not os.environ.get("BBRLAB_INTEGRATION"),
        reason="not a provisioned bbrlab machine (run vm/vm.sh up or sudo ./setup.sh; "
        "BBRLAB_INTEGRATION=1 forces these tests)",
    ),
]


@pytest.fixture(scope="module")
def netkernel():
    with NETKERNEL_DEFAULTS.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def run(*args):
    """Run a command given as an argument list; return the completed process."""
    return subprocess.run(args, capture_output=True, text=True, check=False)


@pytest.fixture
def veth_in_fresh_netns():
    """A veth pair inside a new network namespace, deleted afterwards."""
    name = f"bbrlab-test-{uuid.uuid4().hex[:8]}"
    created = run("ip", "netns", "add", name)
    assert created.returncode == 0, f"ip netns add failed: {created.stderr}"
    try:
        for args in (
            ("link", "add", "v0", "type", "veth", "peer", "name", "v1"),
            ("link", "set", "v0", "up"),
            ("link", "set", "v1", "up"),
        ):
            result = run("ip", "-n", name, *args)
            assert result.returncode == 0, f"ip {' '.join(args)} failed: {result.stderr}"
        yield name, "v0"
    finally:
        run("ip", "netns", "delete", name)
    assert name not in run("ip", "netns", "list").stdout


def test_bbr_is_available(netkernel):
    available = pathlib.Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    assert netkernel["netkernel_required_cc"] in available


@pytest.mark.parametrize(
    "qdisc",
    [["fq"], ["netem", "delay", "1ms"]],
    ids=["fq", "netem"],
)
def test_qdisc_attaches_in_fresh_netns(veth_in_fresh_netns, qdisc):
    netns, dev = veth_in_fresh_netns
    added = run("tc", "-n", netns, "qdisc", "replace", "dev", dev, "root", *qdisc)
    assert added.returncode == 0, f"tc qdisc {' '.join(qdisc)} failed: {added.stderr.strip()}"
    shown = run("tc", "-n", netns, "qdisc", "show", "dev", dev)
    assert shown.stdout.split()[1] == qdisc[0], shown.stdout


def test_modules_are_loaded_at_boot_and_now(netkernel):
    listed = set()
    for conf in MODULES_LOAD_DIR.glob("*.conf"):
        for line in conf.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                listed.add(line)
    wanted = set(netkernel["netkernel_modules"])
    assert wanted <= listed, f"missing from {MODULES_LOAD_DIR}: {sorted(wanted - listed)}"
    not_loaded = [m for m in sorted(wanted) if not loaded(m)]
    assert not not_loaded, f"not loaded now: {not_loaded}"


def loaded(module: str) -> bool:
    """MODULE is loaded, or built into the running kernel."""
    builtin_list = pathlib.Path("/lib/modules", os.uname().release, "modules.builtin")
    builtin = set()
    if builtin_list.exists():
        builtin = {pathlib.Path(line).name.removesuffix(".ko") for line in builtin_list.read_text().split()}
    return pathlib.Path("/sys/module", module).exists() or module in builtin


def test_optional_modules_this_kernel_has_are_loaded_and_loaded_at_every_boot(netkernel):
    """tcp_bbr3 and the AQMs: loaded where the booted kernel has them, and by a unit at every
    boot (the same file on every kernel, so a reboot into the other one needs no
    provisioning: tests/run.sh provisions again after that reboot and expects no change,
    which holds only if the boot loaded them)."""
    unit = pathlib.Path("/etc/systemd/system", netkernel["netkernel_optional_unit"])
    assert (pathlib.Path("/etc/systemd/system/sysinit.target.wants") / unit.name).resolve() == unit
    assert "modprobe -abq " + " ".join(netkernel["netkernel_optional_modules"]) in unit.read_text()
    has = [m for m in netkernel["netkernel_optional_modules"] if run("modinfo", "-n", m).returncode == 0]
    assert {"sch_fq_codel", "sch_cake"} <= set(has), has  # every testbed kernel has the AQMs
    assert ("tcp_bbr3" in has) == ("-bbrlab" in os.uname().release), has
    not_loaded = [m for m in has if not loaded(m)]
    assert not not_loaded, f"not loaded now: {not_loaded}"


def test_sysctls_in_root_namespace(netkernel):
    wrong = {}
    for key, value in netkernel["netkernel_sysctls"].items():
        path = pathlib.Path("/proc/sys", *key.split("."))
        actual = path.read_text().split()
        if actual != str(value).split():
            wrong[key] = {"wanted": str(value), "actual": " ".join(actual)}
    assert not wrong, wrong


def test_sysctls_persist_in_sysctl_d(netkernel):
    text = pathlib.Path(netkernel["netkernel_sysctl_file"]).read_text()
    settings = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            key, value = line.split("=", 1)
            settings[key.strip()] = value.split()
    for key, value in netkernel["netkernel_sysctls"].items():
        assert settings.get(key) == str(value).split(), key
