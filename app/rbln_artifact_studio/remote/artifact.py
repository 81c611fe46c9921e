"""Open an artifact that lives on a server: one round trip fetches its configs, listing and graph headers.

The studio's own reader checks the answer, so a server's artifact is checked exactly like a local one, every layout
(a VLM's language_model/ part, a pipeline's components) read from memory (SentFiles: each file its size, the pieces
sent, zeros between) with the server's paths; nothing is copied here. Real compiler graphs are read by `rebel` on
the server.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from rbln_artifact_studio.backends import rebel_probe
from rbln_artifact_studio.backends.rebel_inspect import allocations_from_json
from rbln_artifact_studio.core.errors import StudioError, reworded
from rbln_artifact_studio.core.estimation.estimator import GraphAllocations
from rbln_artifact_studio.core.fleet.artifact import GRAPH_SUFFIX, Artifact, open_from
from rbln_artifact_studio.core.fleet.sent_files import Pieces, SentFiles
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.core.model.kinds import PIPELINE_INDEX, NoKvCacheError
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.simulator.container import (
    PREAMBLE_SIZE,
)
from rbln_artifact_studio.core.status import Problem
from rbln_artifact_studio.core.storage.fsutil import PARTIAL_TAG, SKIP_NAMES, TMP_TAG
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME, MAX_JSON_BYTES
from rbln_artifact_studio.remote.server import OPERATION_LIMIT, Server

REBEL_TIMEOUT = 180
RULES = json.dumps(
    {
        "texts": [CONFIG_NAME, "config.json", PIPELINE_INDEX],
        "skip_names": sorted(SKIP_NAMES),
        "internal_tags": [TMP_TAG, PARTIAL_TAG],
        "max_json_bytes": MAX_JSON_BYTES,
        "rebel_timeout": REBEL_TIMEOUT,
    }
)


def _unpack(text: str) -> bytes:
    return zlib.decompress(base64.b64decode(text))


def _head_pieces(head: bytes) -> list[tuple[int, bytes]]:
    """A container's preamble and header slots without their zero padding (a slot is mostly padding)."""
    slot_size = int.from_bytes(head[12:16], "little") if len(head) >= 16 else 0
    bounds = (
        [0, PREAMBLE_SIZE, PREAMBLE_SIZE + slot_size, PREAMBLE_SIZE + 2 * slot_size] if slot_size else [0, len(head)]
    )
    return [(start, used) for start, end in itertools.pairwise(bounds) if (used := head[start:end].rstrip(b"\0"))]


def snapshot_pieces(record: dict[str, Any]) -> Pieces:
    """The snapshot program's configs and graph headers as pieces."""
    pieces: Pieces = {name: [(0, _unpack(text))] for name, text in record["texts"].items()}
    pieces.update((name, _head_pieces(_unpack(head))) for name, head in record["heads"].items())
    return pieces


def _inspector(host: str, rebel: dict[str, Any] | None, base: Path) -> Any:
    """The tables the server's rebel read, for the graphs asked for (paths below base, the folder as sent): each
    part of a VLM gets its own graphs, and fails alone, as a local read of that part does."""

    def inspect(_folder: Path, graphs: list[Path]) -> dict[str, GraphAllocations]:
        if rebel is None:
            raise StudioError(f"{host} sent no allocation tables.")
        if "error" in rebel:
            raise StudioError(f"on {host}: {rebel['error']}")
        sent, errors = rebel.get("graphs"), rebel.get("errors") or {}
        if not isinstance(sent, dict) or not isinstance(errors, dict):
            raise StudioError(f"on {host}: the rebel helper's answer is not usable.")
        asked: dict[str, Any] = {}
        for path in graphs:
            name = path.relative_to(base).as_posix() if path.is_relative_to(base) else path.name
            if name in errors:
                raise StudioError(f"on {host}: {errors[name]}")
            if name not in sent:
                raise StudioError(f"{host} sent no allocation table for {name}.")
            asked[path.name[: -len(GRAPH_SUFFIX)]] = sent[name]
        try:
            return allocations_from_json({"graphs": asked})
        except StudioError as exc:
            raise reworded(exc, lambda text: f"on {host}: {text}") from None

    return inspect


def _named_there(text: str, target: ServerFolder) -> str:
    """A message of the reader, which names the server's paths as paths, with each written as the server's URL."""
    return re.sub(re.escape(target.path.rstrip("/")) + r"(?=[/\s'\"),:;]|\.(?:\s|$)|$)", target.url, text)


def _on_server(artifact: Artifact, target: ServerFolder) -> Artifact:
    """An artifact read from what the server sent, its messages naming the server's URLs, `where` the server."""
    artifact.problems = [Problem(p.severity, _named_there(p.message, target)) for p in artifact.problems]
    if artifact.unknown_reason:
        artifact.unknown_reason = _named_there(artifact.unknown_reason, target)
    artifact.where = target
    return artifact


def open_remote_artifact(server: Server, target: ServerFolder, cancel: CancelToken | None = None) -> Artifact:
    """The artifact at target on the server, read in one round trip; writes nothing on the server."""
    [(artifact_or_error)] = list(open_remote_artifacts(server, [target], cancel))
    if isinstance(artifact_or_error, StudioError):
        raise artifact_or_error
    return artifact_or_error


def open_remote_artifacts(
    server: Server, targets: list[ServerFolder], cancel: CancelToken | None = None
) -> Iterator[Artifact | StudioError]:
    """Several artifacts of one server in one round trip, each as it arrives (or the error that says why not)."""
    probe = Path(rebel_probe.__file__).read_text()
    # the server may run rebel on each graph (up to REBEL_TIMEOUT) before it says anything more
    args = [RULES, probe, *(t.path for t in targets)]
    total = OPERATION_LIMIT + REBEL_TIMEOUT * len(targets)  # each artifact may need its rebel run, in turn
    answers = server.stream("snapshot", args, cancel, REBEL_TIMEOUT + 60, total=total)
    count = 0
    try:
        for record in answers:  # to its end: the program's exit status is checked there
            if count >= len(targets):
                raise StudioError(f"{server.host} answered about more artifacts than it was asked.")
            target = targets[count]
            count += 1
            try:
                yield artifact_from_record(server.host, target, record)
            except StudioError as exc:
                yield exc
    finally:
        answers.close()  # a consumer that stopped early ends the program there now, not at exit
    if count != len(targets):
        raise StudioError(f"{server.host} answered about {count} of {len(targets)} artifacts.")


def artifact_from_record(host: str, target: ServerFolder, record: dict[str, Any]) -> Artifact:
    """One record of the snapshot program (a folder's files, or why it could not be read) as an artifact."""
    if "error" in record:
        raise StudioError(f"{record['error']}".replace(target.path, target.url, 1))
    for name, reason in record.get("errors", {}).items():
        raise StudioError(f"Cannot read {name} in {target}: {reason}.")
    return check_snapshot(host, target, record["files"], snapshot_pieces(record), record.get("rebel"))


def check_snapshot(
    host: str, target: ServerFolder, files: list[list[Any]], pieces: Pieces, rebel: dict[str, Any] | None = None
) -> Artifact:
    """The artifact at target as the studio's own reader sees it, from what the server sent of its files, whatever
    its layout; NoKvCacheError and every message name the server's paths (its paths are the server's)."""
    root = Path(target.path)
    try:
        artifact = open_from(root, SentFiles(root, files, pieces), _inspector(host, rebel, root))
    except NoKvCacheError as exc:  # described as for a local folder, with the server's paths
        d = exc.description
        problems = tuple(Problem(p.severity, _named_there(p.message, target)) for p in d.problems)
        raise NoKvCacheError(replace(d, path=target, problems=problems)) from None
    except StudioError as exc:
        raise reworded(exc, lambda text: _named_there(text, target)) from None
    return _on_server(artifact, target)
