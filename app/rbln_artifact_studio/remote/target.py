"""`ssh://HOST/PATH` targets: which server, which folder on it, and how to write them back."""

from __future__ import annotations

from dataclasses import dataclass

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import SSH_SCHEME

SCHEME = SSH_SCHEME


def is_remote(text: str) -> bool:
    return text.startswith(SCHEME)


@dataclass(frozen=True)
class RemotePath:
    """A folder or artifact on a server: `host` is an ssh_config alias or user@host[:port]; `path` is literal.

    The path is taken byte for byte (no percent-decoding): `ssh://gpu1/srv/my models` names "/srv/my models".
    A path starting with `~/` is relative to the login folder on the server.
    """

    host: str
    path: str

    @property
    def url(self) -> str:
        path = self.path if self.path.startswith("/") else "/" + self.path
        return f"{SCHEME}{self.host}{path}"

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1] or self.path

    def child(self, path: str) -> RemotePath:
        return RemotePath(self.host, path)

    def __str__(self) -> str:
        return self.url


def check_host(host: str) -> str:
    """A host as the user typed it; refuse what ssh would read as an option or what cannot be a host."""
    if not host or host.startswith("-") or any(c.isspace() or c in "/'\"\\" for c in host):
        raise StudioError(
            f"{host!r} is not a server name; give an alias from ~/.ssh/config or user@host[:port], e.g. npu1 or "
            "ops@10.0.0.5:2222."
        )
    return host


def parse_remote(text: str) -> RemotePath:
    """`ssh://HOST/PATH` as a RemotePath; StudioError with an example when it is malformed."""
    if not is_remote(text):
        raise StudioError(f"{text} is not an ssh:// target; write ssh://HOST/PATH, e.g. ssh://npu1/srv/artifacts.")
    rest = text[len(SCHEME) :]
    if rest.startswith("["):  # [ipv6]:port
        close = rest.find("]")
        slash = rest.find("/", close if close >= 0 else 0)
    else:
        slash = rest.find("/")
    host, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    check_host(host)
    if path.startswith("/~/") or path == "/~":
        path = path[1:]
    if not path:
        raise StudioError(f"{text} names no folder; write ssh://{host}/PATH, e.g. ssh://{host}/srv/artifacts.")
    return RemotePath(host, path)
