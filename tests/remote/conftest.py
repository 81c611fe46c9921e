"""A real sshd on 127.0.0.1 (throwaway host key, authorized key, this user) playing an NPU server.

The "server" is this machine seen through sshd: its PATH holds a fake `rbln-smi` and the fake toolchain
(`optimum-rbln-cli`, `rebel`) from tests/fakes; its artifacts are folders the tests create. The client side
is an ssh_config naming the identity, the known_hosts file and the port, as a user's ~/.ssh/config would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fakes.install import FakeToolchain, build_toolchain

from rbln_artifact_studio.remote.transport import SshOptions
from remote.sshd import missing, running_sshd

HERE = Path(__file__).resolve().parent
HOST_ALIAS = "npu-test"
Run = Callable[..., subprocess.CompletedProcess[str]]

# Two ATOM+ (15.7 GiB available each after the reserve), one busy with a 2.4 GiB context.
DEFAULT_DEVICES = [
    {
        "name": "RBLN-CA12",
        "used": "2.4GiB",
        "total": "15.7GiB",
        "processes": [{"pid": 4242, "name": "vllm-serve", "memory": "2.4GiB"}],
    },
    {"name": "RBLN-CA12", "used": "0.0B", "total": "15.7GiB", "processes": []},
]


@dataclass(frozen=True)
class SshServer:
    """The running sshd and everything a client needs to reach it."""

    dir: Path
    port: int
    client_config: Path
    known_hosts: Path
    bin: Path  # first on the server's PATH
    devices: Path  # what the fake rbln-smi prints
    jobs: Path  # the server's job folders (RBLN_STUDIO_JOBS_DIR)
    gate: Path  # the fake optimum-rbln-cli waits (up to 30 s) while this file is missing
    host_key_pub: Path
    toolchain: FakeToolchain

    def options(self, control_dir: Path) -> SshOptions:
        return SshOptions(config_file=self.client_config, control_dir=control_dir)


@pytest.fixture(scope="session")
def ssh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    absent = missing()
    if absent is not None:
        pytest.skip(f"needs {absent} (tools/system_packages.sh installs it when root)")
    root = tmp_path_factory.mktemp("sshd")
    toolchain = build_toolchain(root / "toolchain")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "rbln-smi").write_text((HERE / "fake_rbln_smi.py").read_text())
    (bin_dir / "rbln-smi").chmod(0o755)
    devices = root / "devices.json"
    devices.write_text(json.dumps(DEFAULT_DEVICES))
    env = {
        "PATH": os.pathsep.join([str(bin_dir), str(toolchain.path_dir), "/usr/local/bin", "/usr/bin", "/bin"]),
        "FAKE_RBLN_SMI_DEVICES": str(devices),
        "RBLN_STUDIO_JOBS_DIR": str(root / "jobs"),
        "FAKE_OPTIMUM_GATE": str(root / "gate"),
    }
    with running_sshd(root / "sshd", HOST_ALIAS, env) as sshd:
        yield SshServer(
            root,
            sshd.port,
            sshd.client_config,
            sshd.known_hosts,
            bin_dir,
            devices,
            root / "jobs",
            root / "gate",
            sshd.host_key_pub,
            toolchain,
        )


@pytest.fixture
def control_dir() -> Iterator[Path]:
    """A fresh folder for the connection-sharing sockets (short: a socket path has about 100 bytes)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="rs-"))
    yield folder
    for sock in [p for p in folder.rglob("*") if p.is_socket()]:  # stop the shared connections this test left
        subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "x"], capture_output=True, timeout=10)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def server(ssh_server: SshServer) -> Iterator[SshServer]:
    """The server with its default devices and an open gate (a test may change them)."""
    ssh_server.devices.write_text(json.dumps(DEFAULT_DEVICES))
    ssh_server.gate.touch()
    yield ssh_server
    ssh_server.devices.write_text(json.dumps(DEFAULT_DEVICES))
    ssh_server.gate.touch()


@pytest.fixture
def studio_on_server(server: SshServer) -> Iterator[None]:
    """rbln-studio-cli installed on the server (this checkout's)."""
    from conftest import SRC, cli_command

    wrapper = server.bin / "rbln-studio-cli"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={SRC} exec {cli_command()[0]} "$@"\n')
    wrapper.chmod(0o755)
    yield
    wrapper.unlink()


@pytest.fixture
def remote_cli(run_cli: Run, server: SshServer, control_dir: Path) -> Run:
    """The CLI with the test server's ssh_config, its shared connections in a throwaway folder."""

    def run(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run_cli(
            *args,
            env={
                "RBLN_STUDIO_SSH_CONFIG": str(server.client_config),
                "XDG_RUNTIME_DIR": str(control_dir),
                **(env or {}),
            },
        )

    return run


def url(path: Path | str) -> str:
    return f"ssh://{HOST_ALIAS}{path}"
