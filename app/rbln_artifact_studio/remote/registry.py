"""One Server per host for the whole process, with the ssh options the front end chose (CLI: environment)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.remote.server import ENV_REMOTE_PYTHON, Server
from rbln_artifact_studio.remote.target import is_remote, parse_remote
from rbln_artifact_studio.remote.transport import SshOptions, options_from_environment

if TYPE_CHECKING:  # the artifact reader (pydantic) loads when an artifact is first opened
    from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector

ENV_SSH_CONFIG = "RBLN_STUDIO_SSH_CONFIG"  # an ssh_config to use instead of ~/.ssh/config (like ssh -F)

_lock = threading.Lock()
_servers: dict[str, Server] = {}
_options: SshOptions | None = None
_python: str = "python3"


def configure(options: SshOptions | None = None, python: str = "python3") -> None:
    """Set how servers are reached from now on (servers already made keep theirs until forget())."""
    global _options, _python
    with _lock:
        _options, _python = options, python or "python3"
        _servers.clear()


def configure_from_environment() -> None:
    """The CLI's configuration: RBLN_STUDIO_SSH_CONFIG, RBLN_STUDIO_REMOTE_PYTHON and RBLN_STUDIO_SSH_TIMEOUT,
    read once."""
    config = os.environ.get(ENV_SSH_CONFIG)
    options = options_from_environment(Path(config) if config else None)
    configure(options, os.environ.get(ENV_REMOTE_PYTHON) or "python3")


def server(host: str) -> Server:
    """The Server for a host (its connection is shared with other processes by ssh's ControlMaster)."""
    with _lock:
        if host not in _servers:
            _servers[host] = Server(host, _options, _python)
        return _servers[host]


def open_any(target: str | Path, inspector: GraphInspector | None, cancel: CancelToken | None = None) -> Artifact:
    """A local folder through the local reader and inspector; ssh://HOST/PATH through that server."""
    from rbln_artifact_studio.core.fleet.artifact import open_artifact

    text = str(target)
    if is_remote(text):
        from rbln_artifact_studio.remote.artifact import open_remote_artifact

        remote = parse_remote(text)
        return open_remote_artifact(server(remote.host), remote, cancel)
    return open_artifact(Path(text), inspector)
