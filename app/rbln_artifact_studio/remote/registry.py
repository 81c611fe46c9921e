"""One Server per host for the whole process, with the ssh options the front end chose (CLI: environment)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from rbln_artifact_studio.remote.server import ENV_REMOTE_PYTHON, Server
from rbln_artifact_studio.remote.ssh_config import ENV_SSH_CONFIG
from rbln_artifact_studio.remote.transport import SshConnection, SshOptions, options_from_environment

_lock = threading.Lock()
_servers: dict[str, Server] = {}
_options: SshOptions | None = None
_python: str = "python3"
_configured = False  # configure() not called yet: the first server() reads the environment, as the CLI wants


def configure(options: SshOptions | None = None, python: str = "python3") -> None:
    """Set how servers are reached from now on (servers already made keep theirs until forget())."""
    global _options, _python, _configured
    with _lock:
        _options, _python, _configured = options, python or "python3", True
        _servers.clear()


def configure_from_environment() -> None:
    """The CLI's configuration: RBLN_STUDIO_SSH_CONFIG, RBLN_STUDIO_REMOTE_PYTHON and RBLN_STUDIO_SSH_TIMEOUT,
    read once."""
    config = os.environ.get(ENV_SSH_CONFIG)
    options = options_from_environment(Path(config) if config else None)
    configure(options, os.environ.get(ENV_REMOTE_PYTHON) or "python3")


def server(host: str) -> Server:
    """The Server for a host (its connection is shared with other processes by ssh's ControlMaster)."""
    if not _configured:
        configure_from_environment()
    with _lock:
        if host not in _servers:
            _servers[host] = Server(SshConnection(host, _options), _python)
        return _servers[host]


def ssh_connection(host: str) -> SshConnection:
    """An ssh connection to a host with the configured options: for what is SSH's own, such as its host key."""
    if not _configured:
        configure_from_environment()
    return SshConnection(host, _options)


def forget() -> None:
    """Back to the start: no server kept, and the next server() reads the environment again (tests)."""
    global _options, _python, _configured
    with _lock:
        _options, _python, _configured = None, "python3", False
        _servers.clear()
