"""Where an artifact row lives: on this computer, or on a server as ssh://HOST/PATH."""

from __future__ import annotations

SSH_SCHEME = "ssh://"
LOCAL = "local"


def host_of(path: str) -> str:
    """The server of an ssh://HOST/PATH row path; '' for a local path."""
    return path[len(SSH_SCHEME) :].split("/", 1)[0] if path.startswith(SSH_SCHEME) else ""
