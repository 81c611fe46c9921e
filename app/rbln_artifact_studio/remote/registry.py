"""One Server per host for the whole process, with the ssh options the front end chose (CLI: environment)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from rbln_artifact_studio.remote import preferences
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


def _configure_first() -> None:
    """The configuration of a first use: what the desktop chose (remote/preferences.py), else the environment."""
    chosen = preferences.chosen()
    if chosen is None:
        configure_from_environment()
    else:
        config_file, python = chosen
        configure(SshOptions(config_file=config_file), python or os.environ.get(ENV_REMOTE_PYTHON) or "python3")


def server(host: str) -> Server:
    """The Server for a host (its connection is shared with other processes by ssh's ControlMaster)."""
    if not _configured:
        _configure_first()
    with _lock:
        if host not in _servers:
            _servers[host] = Server(SshConnection(host, _options), _python)
        return _servers[host]


def ssh_connection(host: str) -> SshConnection:
    """An ssh connection to a host with the configured options: for what is SSH's own, such as its host key."""
    if not _configured:
        _configure_first()
    return SshConnection(host, _options)


def forget() -> None:
    """Back to the start: no server kept, nothing chosen, and the next server() reads the environment (tests)."""
    global _options, _python, _configured
    with _lock:
        _options, _python, _configured = None, "python3", False
        _servers.clear()
    preferences.forget()
