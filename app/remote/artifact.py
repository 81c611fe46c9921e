"""Open an artifact that lives on a server: one round trip fetches its configs, listing and graph headers.

The answer is laid out in a private local folder (configs as they are, every other file as a sparse file of
its size, simulator graphs with their real header) and opened by the studio's own reader, so a server's
artifact is checked exactly like a local one. Real compiler graphs are read by `rebel` on the server.
"""

from __future__ import annotations

import base64
import itertools
import json
import tempfile
import zlib
from collections.abc import Iterator
from functools import cache
from pathlib import Path, PosixPath
from typing import Any, BinaryIO

from rbln_artifact_studio.backends import rebel_probe
from rbln_artifact_studio.backends.rebel_inspect import allocations_from_json
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.estimation.estimator import GraphAllocations
from rbln_artifact_studio.core.fleet.artifact import Artifact, open_artifact
from rbln_artifact_studio.core.fleet.status import Problem
from rbln_artifact_studio.core.model.rbln_config import LoadedConfig
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.simulator.container import MAGIC, MAX_SLOT_SIZE, PREAMBLE_SIZE, SLOT_MAGIC
from rbln_artifact_studio.core.storage.fsutil import PARTIAL_TAG, SKIP_NAMES, TMP_TAG
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME, MAX_JSON_BYTES
from rbln_artifact_studio.remote.server import Server
from rbln_artifact_studio.remote.target import RemotePath

REBEL_TIMEOUT = 180
RULES = json.dumps(
    {
        "magic": MAGIC.decode("latin-1"),
        "slot_magic": SLOT_MAGIC.decode("latin-1"),
        "preamble_size": PREAMBLE_SIZE,
        "max_slot_size": MAX_SLOT_SIZE,
        "texts": [CONFIG_NAME, "config.json"],
        "skip_names": sorted(SKIP_NAMES),
        "internal_tags": [TMP_TAG, PARTIAL_TAG],
        "max_json_bytes": MAX_JSON_BYTES,
        "rebel_timeout": REBEL_TIMEOUT,
    }
)


class ServerPath(PosixPath):
    """A path on a server: behaves as its server-side path, prints as ssh://HOST/PATH (and opens nothing here).

    One subclass per host, so that paths derived from it (parent, / name) stay on that host.
    """

    host: str = ""

    def __str__(self) -> str:
        return RemotePath(self.host, super().__str__()).url

    @staticmethod
    def on(target: RemotePath) -> ServerPath:
        return _server_path_class(target.host)(target.path)


@cache
def _server_path_class(host: str) -> type[ServerPath]:
    return type("ServerPath", (ServerPath,), {"host": host})


def _unpack(text: str) -> bytes:
    return zlib.decompress(base64.b64decode(text))


def _write_sparse(f: BinaryIO, head: bytes) -> None:
    """A container's preamble and header slots, leaving their zero padding as holes (a slot is mostly padding)."""
    slot_size = int.from_bytes(head[12:16], "little") if len(head) >= 16 else 0
    bounds = (
        [0, PREAMBLE_SIZE, PREAMBLE_SIZE + slot_size, PREAMBLE_SIZE + 2 * slot_size] if slot_size else [0, len(head)]
    )
    for start, end in itertools.pairwise(bounds):
        used = head[start:end].rstrip(b"\0")
        if used:
            f.seek(start)
            f.write(used)


def _lay_out(record: dict[str, Any], folder: Path) -> None:
    """The server's answer as local files: configs whole, simulator graphs' headers, every size kept (sparse)."""
    folder.mkdir()
    texts: dict[str, str] = record["texts"]
    heads: dict[str, str] = record["heads"]
    for name, size in record["files"]:
        with open(folder / name, "wb") as f:
            if name in texts:
                f.write(_unpack(texts[name]))
            elif name in heads:
                _write_sparse(f, _unpack(heads[name]))
            f.truncate(size)


def _inspector(host: str, rebel: dict[str, Any] | None) -> Any:
    def inspect(_folder: Path, _graphs: list[Path]) -> dict[str, GraphAllocations]:
        if rebel is None:
            raise StudioError(f"{host} sent no allocation tables.")
        try:
            return allocations_from_json(rebel)
        except StudioError as exc:
            raise StudioError(f"on {host}: {exc}") from None

    return inspect


def _relabel(text: str, local: Path, target: RemotePath) -> str:
    return text.replace(str(local), target.url)


def open_remote_artifact(server: Server, target: RemotePath, cancel: CancelToken | None = None) -> Artifact:
    """The artifact at target on the server, read in one round trip; writes nothing on the server."""
    [(artifact_or_error)] = list(open_remote_artifacts(server, [target], cancel))
    if isinstance(artifact_or_error, StudioError):
        raise artifact_or_error
    return artifact_or_error


def open_remote_artifacts(
    server: Server, targets: list[RemotePath], cancel: CancelToken | None = None
) -> Iterator[Artifact | StudioError]:
    """Several artifacts of one server in one round trip, each as it arrives (or the error that says why not)."""
    probe = Path(rebel_probe.__file__).read_text()
    answers = server.stream("snapshot", [RULES, probe, *(t.path for t in targets)], cancel)
    count = 0
    try:
        for record in answers:  # to its end: the program's exit status is checked there
            if count >= len(targets):
                raise StudioError(f"{server.host} answered about more artifacts than it was asked.")
            target = targets[count]
            count += 1
            try:
                yield _artifact_from(server.host, target, record)
            except StudioError as exc:
                yield exc
    finally:
        answers.close()  # a consumer that stopped early ends the program there now, not at exit
    if count != len(targets):
        raise StudioError(f"{server.host} answered about {count} of {len(targets)} artifacts.")


def _artifact_from(host: str, target: RemotePath, record: dict[str, Any]) -> Artifact:
    if "error" in record:
        raise StudioError(f"{record['error']}".replace(target.path, target.url, 1))
    for name, reason in record.get("errors", {}).items():
        raise StudioError(f"Cannot read {name} in {target}: {reason}.")
    with tempfile.TemporaryDirectory(prefix="rbln-studio-server-") as tmp:
        local = Path(tmp) / (target.name or "artifact")
        _lay_out(record, local)
        try:
            artifact = open_artifact(local, _inspector(host, record.get("rebel")))
        except StudioError as exc:
            raise StudioError(_relabel(exc.message, local, target), hint=exc.hint) from None
    artifact.problems = [Problem(p.severity, _relabel(p.message, local, target)) for p in artifact.problems]
    if artifact.unknown_reason:
        artifact.unknown_reason = _relabel(artifact.unknown_reason, local, target)
    remote_path = ServerPath.on(target)
    artifact.path = remote_path
    artifact.loaded = LoadedConfig(remote_path / CONFIG_NAME, artifact.loaded.raw, artifact.loaded.model)
    return artifact
