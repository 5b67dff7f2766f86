"""vm/build-box.sh's arguments, checked without building anything: the architecture is
validated first, --status reads only the stamp under VAGRANT_HOME (a temporary one), and
--sources says where each part's sources come from, or why an optional one is left out."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def build_box(tmp_path, *args):
    env = dict(os.environ, BBRLAB_CACHE=str(tmp_path / "cache"), VAGRANT_HOME=str(tmp_path / "vagrant.d"))
    return subprocess.run([str(REPO / "vm" / "build-box.sh"), *args], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.mark.parametrize("arch", ["amd64", "arm64"])
def test_status_of_a_box_never_built_is_stale(tmp_path, arch):
    proc = build_box(tmp_path, "--arch", arch, "--status")
    assert (proc.returncode, proc.stdout) == (1, "stale\n"), proc.stderr
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("args, message", [
    (["--arch", "sparc"], "--arch must be amd64 or arm64, got 'sparc'"),
    (["--arch"], "--arch needs a value"),
    (["--bogus"], "unknown argument: --bogus"),
])
def test_bad_arguments_are_refused(tmp_path, args, message):
    proc = build_box(tmp_path, *args)
    assert proc.returncode == 1 and message in proc.stderr


def test_with_the_code_hosts_out_of_reach_and_nothing_beside_the_clone_only_optional_parts_are_left_out(tmp_path):
    # a clone with nothing beside it (no ../shared/src), the code hosts unreachable (every https
    # request goes to a proxy that refuses it), Debian's mirror as it is: the box's source step
    clone = tmp_path / "clone" / "bbrlab"
    clone.mkdir(parents=True)
    for part in ("vm", "ansible"):
        subprocess.run(["cp", "-a", str(REPO / part), str(clone / part)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("BBRLAB_SRC", "HTTPS_PROXY", "https_proxy")}
    env.update(BBRLAB_CACHE=str(tmp_path / "cache"), VAGRANT_HOME=str(tmp_path / "vagrant.d"),
               https_proxy="http://127.0.0.1:9")
    proc = subprocess.run([str(clone / "vm" / "build-box.sh"), "--sources"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == "build-box: Debian's packages (the kernel, tc's qdiscs, iperf3, Mininet: figure 5's parts) " \
                       "from http://deb.debian.org/debian"  # reached: figure 5's parts are all there
    assert "build-box: tcp_bbr_noagg (BBR v1 without the ACK-aggregation allowance): sources from Debian's " \
           "linux-source (the mirror)" in lines
    src = clone.parent / "shared" / "src"
    for what, url in [("tcp_bbr410 (Linux 4.10.1's BBR)", "https://git.kernel.org/pub/scm/linux/kernel/git/stable/"
                       "linux.git/plain/net/ipv4/tcp_bbr.c?h=v4.10.1"),
                      ("picoquic (picoquicdemo and picolog_t, four builds)",
                       "https://github.com/private-octopus/picoquic.git"),
                      ("Mahimahi 0.96 (mm-delay, mm-loss, mm-link)", "https://github.com/ravinet/mahimahi.git")]:
        line = next(x for x in lines if x.startswith(f"build-box: {what} "))
        assert line.startswith(f"build-box: {what} left out of the box: no copy of its sources in {src}, and "
                               f"{url} cannot be reached ("), line
        assert line.endswith('figure 5 does not need it, its role tries again at provisioning, and to build it in: '
                             'docs/troubleshooting.md, "Offline"')
    assert len(lines) == 5 and not (tmp_path / "cache").exists()  # nothing built, nothing cached
    # a folder of copies (BBRLAB_SRC) supplies them; each build checks its copies' sha256
    (tmp_path / "copies").mkdir()
    (tmp_path / "copies" / "mahimahi-36ea873583b5.tar.gz").write_bytes(b"")
    proc = subprocess.run([str(clone / "vm" / "build-box.sh"), "--sources"], capture_output=True, text=True,
                          env={**env, "BBRLAB_SRC": str(tmp_path / "copies")}, timeout=120)
    assert f"build-box: Mahimahi 0.96 (mm-delay, mm-loss, mm-link): sources from the copies in {tmp_path}/copies" \
        in proc.stderr.splitlines()
