"""The Vagrantfile picks its box by the host's CPU and the provider: read offline by
evaluating it in Ruby against a stand-in for Vagrant that records every setting (no
box, no provider, no VM), and checked by `vagrant validate` for both architectures."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# A stand-in for Vagrant's configuration objects: settings are recorded, provider
# blocks are kept and run one by one with their own `override`, as Vagrant does for
# the provider in use. respond_to? is true throughout, as on Vagrant >= 2.4.
RECORDER = r'''
require "json"
require "rbconfig"

class Recorder
  attr_reader :values, :providers

  def initialize
    @values = {}
    @providers = {}
  end

  def method_missing(name, *args, &block)
    key = name.to_s
    if key.end_with?("=")
      @values[key.chomp("=")] = args.first
    elsif key == "provider" && block
      @providers[args.first.to_s] = block
    else
      @values[key] ||= Recorder.new
    end
  end

  def respond_to_missing?(_name, _include_private = false)
    true
  end

  def [](key)
    @values[key]
  end

  def []=(key, value)
    @values[key] = value
  end

  def setting(*path)
    path.reduce(self) { |node, key| node.is_a?(Recorder) ? node.values[key] : nil }
  end
end

module Vagrant
  def self.configure(_version)
    config = Recorder.new
    yield config
    out = {}
    config.setting("vm").providers.each do |name, block|
      provider = Recorder.new
      override = Recorder.new
      block.call(provider, override)
      out[name] = {
        "box" => override.setting("vm", "box") || config.setting("vm", "box"),
        "box_architecture" => (override.setting("vm", "box_architecture") ||
                               config.setting("vm", "box_architecture"))&.to_s,
        "cpu_mode" => provider.values["cpu_mode"],
      }
    end
    puts JSON.generate(out)
  end
end

load ARGV.fetch(0)
'''


def boxes(tmp_path, **env):
    """What the Vagrantfile configures per provider under this environment."""
    if shutil.which("ruby") is None:
        pytest.skip("ruby is missing (it comes with vagrant)")
    script = tmp_path / "recorder.rb"
    script.write_text(RECORDER)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BBRLAB_")}
    proc = subprocess.run(["ruby", str(script), str(REPO / "Vagrantfile")], capture_output=True,
                          text=True, env={**clean, **env}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("host", ["amd64", "x86_64"])
def test_an_x86_host_gets_debians_box_for_every_provider(tmp_path, host):
    chosen = boxes(tmp_path, BBRLAB_HOST_ARCH=host)
    assert set(chosen) == {"virtualbox", "parallels", "vmware_desktop", "libvirt"}
    for provider, settings in chosen.items():
        assert settings["box"] == "debian/bookworm64", provider
        assert settings["box_architecture"] is None, provider
    assert chosen["libvirt"]["cpu_mode"] is None  # vagrant-libvirt's default, as before


@pytest.mark.parametrize("host", ["arm64", "aarch64"])
def test_an_arm64_host_gets_an_arm64_box(tmp_path, host):
    chosen = boxes(tmp_path, BBRLAB_HOST_ARCH=host)
    for provider in ("virtualbox", "parallels", "vmware_desktop"):
        assert chosen[provider] == {"box": "bento/debian-12", "box_architecture": "arm64", "cpu_mode": None}
    assert chosen["libvirt"]["box"] == "bbrlab/bookworm-arm64"
    assert chosen["libvirt"]["box_architecture"] == "auto"  # a local box has no architecture
    assert chosen["libvirt"]["cpu_mode"] == "host-passthrough"
    assert boxes(tmp_path, BBRLAB_HOST_ARCH=host, BBRLAB_LIBVIRT_DRIVER="qemu")["libvirt"]["cpu_mode"] == "custom"


def test_bbrlab_box_overrides_every_provider(tmp_path):
    for host in ("amd64", "arm64"):
        chosen = boxes(tmp_path, BBRLAB_HOST_ARCH=host, BBRLAB_BOX="mine/debian")
        assert {settings["box"] for settings in chosen.values()} == {"mine/debian"}


def test_an_unknown_host_arch_is_refused(tmp_path):
    script = tmp_path / "recorder.rb"
    if shutil.which("ruby") is None:
        pytest.skip("ruby is missing (it comes with vagrant)")
    script.write_text(RECORDER)
    proc = subprocess.run(["ruby", str(script), str(REPO / "Vagrantfile")], capture_output=True, text=True,
                          env={**os.environ, "BBRLAB_HOST_ARCH": "sparc"}, timeout=60)
    assert proc.returncode != 0 and 'BBRLAB_HOST_ARCH must be amd64 or arm64, got "sparc"' in proc.stderr


@pytest.mark.parametrize("host", ["amd64", "arm64"])
def test_vagrant_validate_passes(tmp_path, host):
    if shutil.which("vagrant") is None:
        pytest.skip("vagrant is missing")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BBRLAB_")}
    # Its own VAGRANT_HOME: validating touches no installed box and no other VM's state.
    env.update(BBRLAB_HOST_ARCH=host, VAGRANT_CHECKPOINT_DISABLE="1", VAGRANT_HOME=str(tmp_path / "vagrant.d"))
    proc = subprocess.run(["vagrant", "validate"], cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
