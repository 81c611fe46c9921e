"""The SSH transport against a real sshd: quoting, connection sharing, host keys decided by the user."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import parse_server_folder
from rbln_artifact_studio.remote.transport import HostKeyError, SshConnection, SshOptions, accept_host_key, run_to_end
from remote.conftest import HOST_ALIAS, SshServer

HOSTILE = [
    "two words",
    "it's",
    '"double"',
    "$(touch {canary})",
    "`touch {canary}`",
    "semi;touch {canary}",
    "line one\nline two",
    "*",
    "~",
    "-n",
    os.fsdecode(b"caf\xe9-latin1"),  # not UTF-8: travels as the same bytes
    "",
]


def _with_known_hosts(server: SshServer, tmp_path: Path, content: str, control_dir: Path) -> SshOptions:
    """A copy of the client config whose known_hosts file holds `content`."""
    known = tmp_path / "known_hosts"
    known.write_text(content)
    config = tmp_path / "ssh_config"
    config.write_text(server.client_config.read_text().replace(str(server.known_hosts), str(known)))
    return SshOptions(config_file=config, control_dir=control_dir)


def _fingerprint(pub: Path) -> str:
    return subprocess.run(["ssh-keygen", "-l", "-f", str(pub)], capture_output=True, text=True).stdout.split()[1]


def test_every_argument_reaches_the_server_byte_for_byte(server: SshServer, control_dir: Path, tmp_path: Path) -> None:
    canary = tmp_path / "pwned"
    args = [a.format(canary=canary) for a in HOSTILE]
    conn = SshConnection(HOST_ALIAS, server.options(control_dir))
    result = run_to_end(conn, ["printf", "%s\\0", *args])
    assert result.returncode == 0, result.stderr
    assert result.stdout.split(b"\0")[:-1] == [os.fsencode(a) for a in args]
    assert not canary.exists(), "an argument was run by the remote shell"


def test_commands_share_one_connection(server: SshServer, control_dir: Path) -> None:
    conn = SshConnection(HOST_ALIAS, server.options(control_dir))
    conn.connect()
    sockets = list(control_dir.iterdir())
    assert len(sockets) == 1, "connect() leaves one shared master connection"
    check = subprocess.run(
        [*conn.base_argv(), "-O", "check", "--", HOST_ALIAS], capture_output=True, text=True, timeout=10
    )
    assert check.returncode == 0, check.stderr
    for _ in range(3):
        assert run_to_end(conn, ["true"]).returncode == 0
    assert list(control_dir.iterdir()) == sockets
    conn.close()
    assert subprocess.run([*conn.base_argv(), "-O", "check", "--", HOST_ALIAS], capture_output=True).returncode != 0


def test_unknown_host_key_is_shown_and_recorded_only_when_accepted(
    server: SshServer, tmp_path: Path, control_dir: Path
) -> None:
    options = _with_known_hosts(server, tmp_path, "", control_dir)
    conn = SshConnection(HOST_ALIAS, options)
    with pytest.raises(HostKeyError) as caught:
        conn.connect()
    check = caught.value.check
    assert not check.changed
    assert check.known_as == f"[127.0.0.1]:{server.port}"
    assert any(_fingerprint(server.host_key_pub) in f for f in check.fingerprints)
    assert _fingerprint(server.host_key_pub) in caught.value.one_line()
    assert (tmp_path / "known_hosts").read_text() == "", "nothing is recorded before the user decides"
    accept_host_key(check)
    conn.connect()  # now trusted
    assert run_to_end(conn, ["echo", "ok"]).stdout == b"ok\n"


def test_changed_host_key_is_refused_and_never_replaced(server: SshServer, tmp_path: Path, control_dir: Path) -> None:
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    key_type, key, _ = other.with_suffix(".pub").read_text().split(" ", 2)
    recorded = f"[127.0.0.1]:{server.port} {key_type} {key}\n"
    options = _with_known_hosts(server, tmp_path, recorded, control_dir)
    with pytest.raises(HostKeyError) as caught:
        SshConnection(HOST_ALIAS, options).connect()
    assert caught.value.check.changed
    assert "CHANGED" in caught.value.message and "ssh-keygen -R" in caught.value.message
    with pytest.raises(StudioError, match="does not replace"):
        accept_host_key(caught.value.check)
    assert (tmp_path / "known_hosts").read_text() == recorded


def test_user_at_host_port_form(server: SshServer, tmp_path: Path, control_dir: Path) -> None:
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host *\n  IdentityFile {server.client_config.parent / 'id_ed25519'}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {server.known_hosts}\n  GlobalKnownHostsFile /dev/null\n  LogLevel ERROR\n"
    )
    user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
    conn = SshConnection(f"{user}@127.0.0.1:{server.port}", SshOptions(config_file=config, control_dir=control_dir))
    assert run_to_end(conn, ["echo", "hi"]).stdout == b"hi\n"
    conn.close()


def test_unreachable_server_says_what_to_check(tmp_path: Path, control_dir: Path) -> None:
    config = tmp_path / "ssh_config"
    config.write_text("Host nowhere\n  HostName 127.0.0.1\n  Port 1\n")
    with pytest.raises(StudioError, match="Cannot reach nowhere") as caught:
        SshConnection("nowhere", SshOptions(config_file=config, control_dir=control_dir)).connect()
    assert "ssh nowhere" in caught.value.one_line()


@pytest.mark.parametrize("bad", ["-oProxyCommand=touch x", "a b", "", "host/with/slash"])
def test_host_names_that_are_not_hosts_are_refused(bad: str) -> None:
    with pytest.raises(StudioError, match="not a server name"):
        SshConnection(bad)


def test_remote_targets_parse() -> None:
    assert parse_server_folder("ssh://npu1/srv/my models").path == "/srv/my models"
    assert parse_server_folder("ssh://ops@10.0.0.5:2222/srv/a").host == "ops@10.0.0.5:2222"
    assert parse_server_folder("ssh://npu1/~/artifacts").path == "~/artifacts"
    assert parse_server_folder("ssh://npu1/srv/a").url == "ssh://npu1/srv/a"
    with pytest.raises(StudioError, match="names no folder"):
        parse_server_folder("ssh://npu1")
    assert shutil.which("ssh")
