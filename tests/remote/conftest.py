"""A real sshd on 127.0.0.1 (throwaway host key, authorized key, this user) playing an NPU server.

The "server" is this machine seen through sshd: its PATH holds a fake `rbln-smi` and the fake toolchain
(`optimum-rbln-cli`, `rebel`) from tests/fakes; its artifacts are folders the tests create. The client side
is an ssh_config naming the identity, the known_hosts file and the port, as a user's ~/.ssh/config would.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fakes.install import FakeToolchain, build_toolchain
from rbln_artifact_studio.remote.transport import SshOptions

SSHD = Path("/usr/sbin/sshd")
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rbln-studio-test", "-f", str(path)], check=True
    )


def _wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited with {proc.returncode}: {log.read_text()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"sshd did not listen on {port}: {log.read_text()}")


@pytest.fixture(scope="session")
def ssh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    if not SSHD.exists() or shutil.which("ssh") is None:
        pytest.skip("needs openssh-server and openssh-client (tools/system_packages.sh installs them when root)")
    root = tmp_path_factory.mktemp("sshd")
    toolchain = build_toolchain(root / "toolchain")
    _keygen(root / "host_ed25519")
    _keygen(root / "id_ed25519")
    shutil.copy(root / "id_ed25519.pub", root / "authorized_keys")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for name in ("rbln-smi",):
        (bin_dir / name).write_text((HERE / "fake_rbln_smi.py").read_text())
        (bin_dir / name).chmod(0o755)
    devices = root / "devices.json"
    devices.write_text(json.dumps(DEFAULT_DEVICES))
    port = _free_port()
    path = os.pathsep.join([str(bin_dir), str(toolchain.path_dir), "/usr/local/bin", "/usr/bin", "/bin"])
    (root / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root / 'host_ed25519'}\nPidFile {root / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\nStrictModes no\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nUsePAM no\nPermitRootLogin prohibit-password\n"
        "MaxSessions 50\nMaxStartups 50\nLogLevel ERROR\n"
        f"SetEnv PATH={path} FAKE_RBLN_SMI_DEVICES={devices} RBLN_STUDIO_JOBS_DIR={root / 'jobs'} "
        f"FAKE_OPTIMUM_GATE={root / 'gate'}\n"
    )
    known_hosts = root / "known_hosts"
    key_type, key, _ = (root / "host_ed25519.pub").read_text().split(" ", 2)
    known_hosts.write_text(f"[127.0.0.1]:{port} {key_type} {key}\n")
    (root / "ssh_config").write_text(
        f"Host {HOST_ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {root / 'id_ed25519'}\n  IdentitiesOnly yes\n  UserKnownHostsFile {known_hosts}\n"
        "  GlobalKnownHostsFile /dev/null\n  LogLevel ERROR\n"
    )
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation folder
    log = root / "sshd.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(root / "sshd_config")], stdout=out, stderr=out)
    try:
        _wait_listening(port, proc, log)
        yield SshServer(
            root,
            port,
            root / "ssh_config",
            known_hosts,
            bin_dir,
            devices,
            root / "jobs",
            root / "gate",
            root / "host_ed25519.pub",
            toolchain,
        )
    finally:
        proc.terminate()
        proc.wait(10)


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
