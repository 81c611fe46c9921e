"""Start a throwaway sshd on 127.0.0.1 as this user (standard library only: the benchmark uses it too).

The host key and the client's key are made here; the client side is an ssh_config naming the alias, port,
identity and known_hosts, as a user's ~/.ssh/config would. `env` is what sessions get (sshd's SetEnv).
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SSHD = Path("/usr/sbin/sshd")


@dataclass(frozen=True)
class Sshd:
    dir: Path
    alias: str
    port: int
    client_config: Path
    known_hosts: Path
    host_key_pub: Path
    ports: dict[str, int]  # alias -> port: each extra alias is the same sshd on a port of its own


def missing() -> str | None:
    """What is not installed, or None."""
    if not SSHD.exists():
        return "openssh-server (/usr/sbin/sshd)"
    if shutil.which("ssh") is None:
        return "openssh-client (ssh)"
    return None


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


@contextmanager
def running_sshd(root: Path, alias: str, env: dict[str, str], extra_aliases: tuple[str, ...] = ()) -> Iterator[Sshd]:
    """An sshd for the length of the block, with a client ssh_config for `alias`.

    Each of `extra_aliases` reaches the same sshd on a port of its own: separate shared connections, and a
    session can tell which "server" it is from SSH_CONNECTION's fourth field (the port it came in on).
    """
    root.mkdir(parents=True, exist_ok=True)
    _keygen(root / "host_ed25519")
    _keygen(root / "id_ed25519")
    shutil.copy(root / "id_ed25519.pub", root / "authorized_keys")
    port = _free_port()
    ports = {alias: port, **{extra: _free_port() for extra in extra_aliases}}
    set_env = " ".join(f"{k}={v}" for k, v in env.items())
    (root / "sshd_config").write_text(
        "".join(f"Port {p}\n" for p in ports.values()) + "ListenAddress 127.0.0.1\n"
        f"HostKey {root / 'host_ed25519'}\nPidFile {root / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\nStrictModes no\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nUsePAM no\nPermitRootLogin prohibit-password\n"
        "MaxSessions 50\nMaxStartups 50\nLogLevel ERROR\n" + (f"SetEnv {set_env}\n" if env else "")
    )
    known_hosts = root / "known_hosts"
    key_type, key, _ = (root / "host_ed25519.pub").read_text().split(" ", 2)
    known_hosts.write_text("".join(f"[127.0.0.1]:{p} {key_type} {key}\n" for p in ports.values()))
    (root / "ssh_config").write_text(
        "".join(
            f"Host {name}\n  HostName 127.0.0.1\n  Port {p}\n  User {getpass.getuser()}\n"
            f"  IdentityFile {root / 'id_ed25519'}\n  IdentitiesOnly yes\n  UserKnownHostsFile {known_hosts}\n"
            "  GlobalKnownHostsFile /dev/null\n  LogLevel ERROR\n"
            for name, p in ports.items()
        )
    )
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation folder
    log = root / "sshd.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(root / "sshd_config")], stdout=out, stderr=out)
    try:
        for p in ports.values():
            _wait_listening(p, proc, log)
        yield Sshd(root, alias, port, root / "ssh_config", known_hosts, root / "host_ed25519.pub", ports)
    finally:
        proc.terminate()
        proc.wait(10)
