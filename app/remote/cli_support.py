"""What the CLI needs to take `ssh://HOST/PATH` wherever it takes a folder: open, scan, read, devices, plan --on."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector, open_artifact
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, IssueCallback, scan
from rbln_artifact_studio.core.model.rbln_config import LoadedConfig, load_config
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.remote.server import Server
from rbln_artifact_studio.remote.target import check_host, is_remote, parse_remote
from rbln_artifact_studio.remote.transport import SshOptions

ENV_SSH_CONFIG = "RBLN_STUDIO_SSH_CONFIG"  # an ssh_config to use instead of ~/.ssh/config (like ssh -F)
ENV_REMOTE_PYTHON = "RBLN_STUDIO_REMOTE_PYTHON"  # the servers' Python, when python3 on their PATH is not it

_servers: dict[str, Server] = {}


def server(host: str) -> Server:
    """The Server for a host, one per process (the connection itself is shared across processes by ssh)."""
    if host not in _servers:
        config = os.environ.get(ENV_SSH_CONFIG)
        options = SshOptions(config_file=Path(config) if config else None)
        _servers[host] = Server(host, options, os.environ.get(ENV_REMOTE_PYTHON) or "python3")
    return _servers[host]


def parse_host(text: str) -> str:
    """`ssh://HOST` (a trailing slash or path allowed) or a bare HOST."""
    if is_remote(text):
        text = text[len("ssh://") :].split("/", 1)[0]
    return check_host(text)


def open_any(target: str | Path, inspector: GraphInspector | None) -> Artifact:
    """A local folder through the local reader and inspector; ssh://HOST/PATH through the server."""
    text = os.fspath(target)
    if is_remote(text):
        from rbln_artifact_studio.remote.artifact import open_remote_artifact

        remote = parse_remote(text)
        return open_remote_artifact(server(remote.host), remote)
    return open_artifact(Path(text), inspector)


def scan_any(root: str | Path, on_issue: IssueCallback | None, use_cache: bool) -> Iterator[ArtifactSummary]:
    text = os.fspath(root)
    if is_remote(text):
        from rbln_artifact_studio.remote.scan import scan_remote

        remote = parse_remote(text)
        return scan_remote(server(remote.host), remote, on_issue=on_issue)
    return scan(Path(text), on_issue=on_issue, use_cache=use_cache)


def load_config_any(target: str | Path) -> LoadedConfig:
    text = os.fspath(target)
    return open_any(text, None).loaded if is_remote(text) else load_config(Path(text))


def read_block_count_any(target: str | Path) -> int:
    text = os.fspath(target)
    if is_remote(text):
        return open_any(text, None).config.kvcache_num_blocks
    return read_block_count(text)


def cmd_devices(host_text: str, as_json: bool) -> int:
    from rbln_artifact_studio.remote.devices import devices_text, read_devices

    status = read_devices(server(parse_host(host_text)))
    if as_json:
        json.dump(status.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(devices_text(status))
    return 0


def cmd_plan_on(host_text: str, targets: list[str], inspector: GraphInspector | None, as_json: bool) -> int:
    """`plan --on ssh://HOST ART...`: 0 when the artifacts fit in what the server's NPUs have free now, else 1."""
    from rbln_artifact_studio.remote.devices import read_devices
    from rbln_artifact_studio.remote.server_plan import plan_on_server, server_plan_text

    host = parse_host(host_text)
    artifacts = [open_any(t, inspector) for t in targets]  # on this server, another, or here
    p = plan_on_server(artifacts, read_devices(server(host)))
    if as_json:
        json.dump(p.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(server_plan_text(p))
    return 0 if p.fits else 1
