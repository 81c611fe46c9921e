"""trust-host for a key known_hosts already records: "already trusted", exit 0, nothing changed."""

from __future__ import annotations

import subprocess

from remote.conftest import HOST_ALIAS, Run, SshServer


def test_trusting_a_key_already_recorded_says_so(remote_cli: Run, server: SshServer) -> None:
    fingerprint = subprocess.run(
        ["ssh-keygen", "-l", "-f", str(server.host_key_pub)], capture_output=True, text=True
    ).stdout.split()[1]
    before = server.known_hosts.read_bytes()
    done = remote_cli("trust-host", f"ssh://{HOST_ALIAS}", "--fingerprint", fingerprint)
    assert done.returncode == 0, done.stderr
    assert "already trusted" in done.stdout
    assert "CHANGED" not in done.stdout + done.stderr and "ssh-keygen -R" not in done.stdout + done.stderr
    assert server.known_hosts.read_bytes() == before
    other = remote_cli("trust-host", f"ssh://{HOST_ALIAS}", "--fingerprint", "SHA256:not-it")
    assert other.returncode == 1 and "Nothing was changed." in other.stderr
