"""Scan a folder on a server in one round trip: the walk runs there, the rows are built here as lines arrive."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, IssueCallback, failed_row, summarize_files
from rbln_artifact_studio.core.fleet.scan_pool import Done, ordered_map
from rbln_artifact_studio.core.location import ServerFolder, parse_server_folder
from rbln_artifact_studio.core.logs import logged, logger
from rbln_artifact_studio.core.model.kinds import PIPELINE_INDEX, graph_not_a_file, missing_graph
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER, PARTIAL_TAG, SKIP_NAMES, TMP_TAG
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME, MAX_JSON_BYTES
from rbln_artifact_studio.remote.server import OPERATION_LIMIT, Server

if TYPE_CHECKING:  # the reader of what was sent loads with the first artifact to check
    from rbln_artifact_studio.remote.artifact import Pieces

RULES = json.dumps(
    {
        "config_name": CONFIG_NAME,
        "incomplete_marker": INCOMPLETE_MARKER,
        "skip_names": sorted(SKIP_NAMES),
        "internal_tags": [TMP_TAG, PARTIAL_TAG],
        "max_json_bytes": MAX_JSON_BYTES,
        "texts": [CONFIG_NAME, "config.json", PIPELINE_INDEX],
    }
)
log = logger(__name__)
CHECK_CHUNK = 1000  # rows per full-check round trip: the first verdicts come early, few round trips in all
_ROW_FIELDS = {f.name for f in dataclasses.fields(ArtifactSummary)}


def _row(host: str, record: dict[str, Any]) -> ArtifactSummary:
    """The table row for one artifact the server reported, its path written as the server's URL."""
    folder: str = record["a"]
    url = ServerFolder(host, folder).url
    if "le" in record:
        return ArtifactSummary(
            url, os.path.basename(folder), Status.INVALID, [f"Cannot list {folder}: {record['le']}."]
        )
    config_path, model_path = os.path.join(folder, CONFIG_NAME), os.path.join(folder, "config.json")
    if "fl" in record and not record.get("real"):
        return _checked_row(host, record)

    def read(path: str) -> bytes:
        if path == config_path:
            if "cz" in record:
                return zlib.decompress(record["blob_data"][: int(record["cz"])])
            code, message = record["ce"]
            raise OSError(code, message)
        if path == model_path and "n" in record:
            return json.dumps({"_name_or_path": record["n"]}).encode()
        raise OSError(errno.ENOENT, "No such file or directory")

    summary = summarize_files(folder, int(record["s"]), {str(k): int(v) for k, v in record["g"].items()}, read)
    return dataclasses.replace(summary, path=url, modified=_modified(record))


def _modified(record: dict[str, Any]) -> int | None:
    """When the server says the artifact was compiled or last changed (Unix seconds), as the local scan's Modified."""
    value = record.get("m")
    return value if isinstance(value, int) and value > 0 else None


def pieces_of(record: dict[str, Any]) -> Pieces:
    """What the server sent of an artifact's files for its check (see on_server/scan.py): its rbln_config.json,
    then every other piece, one after another."""
    blob: bytes = record.get("blob_data", b"")
    end = int(record.get("cz", 0))  # none for a pipeline: model_index.json and its components' configs
    pieces: Pieces = {CONFIG_NAME: [(0, zlib.decompress(blob[:end]))]} if end else {}
    sent = zlib.decompress(blob[end:]) if record["x"] else b""
    start = 0
    for name, offset, length in record["x"]:
        pieces.setdefault(str(name), []).append((int(offset), sent[start : start + int(length)]))
        start += int(length)
    return pieces


def _checked_row(host: str, record: dict[str, Any]) -> ArtifactSummary:
    """The row with the full check's verdict, from the files the server sent with it (a model with graphs of the
    real compiler is left "checking": rebel reads those on the server, in verify_remote_rows)."""
    from rbln_artifact_studio.core.fleet.verify import described_row, with_verdict
    from rbln_artifact_studio.core.model.kinds import NoKvCacheError
    from rbln_artifact_studio.remote.artifact import check_snapshot

    folder: str = record["a"]
    target = ServerFolder(host, folder)
    found = ArtifactSummary(target.url, os.path.basename(folder), Status.CHECKING, model=record.get("n"))
    found = dataclasses.replace(found, size_on_disk=int(record["s"]), modified=_modified(record))
    try:
        artifact = check_snapshot(host, target, record["fl"], pieces_of(record))
    except NoKvCacheError as exc:  # inspect describes it: kind, parts and problems, no KV figures
        return described_row(found, exc.description)
    except StudioError as exc:
        return with_verdict(found, exc)
    return with_verdict(found, artifact)


def _with_not_files(row: ArtifactSummary, record: dict[str, Any]) -> ArtifactSummary:
    """A graph the server found under its name but as no regular file (a FIFO, a folder) is said to be that, as
    the local scan says it, not missing (the server sent only its files)."""
    odd = {str(k): str(v) for k, v in (record.get("nf") or {}).items()}
    if not odd:
        return row
    said = {missing_graph(None, name).message: graph_not_a_file(name, what).message for name, what in odd.items()}
    return dataclasses.replace(row, problems=[said.get(p, p) for p in row.problems])


def _failed_row(host: str, record: dict[str, Any]) -> ArtifactSummary:
    """The row of an entry the server could not read (a link to itself, no permission), as the local scan words it."""
    code, message = record["e"]
    url = ServerFolder(host, str(record["f"])).url  # named as the checked rows name their files
    return failed_row(url, OSError(int(code), str(message)), str(record["do"]))


def _studio_row(host: str, data: dict[str, Any]) -> ArtifactSummary:
    """A row the server's own rbln-studio-cli wrote (fields this version does not know are dropped)."""
    row = ArtifactSummary.from_json({k: v for k, v in data.items() if k in _ROW_FIELDS})
    return dataclasses.replace(row, path=ServerFolder(host, row.path).url)


def _artifact_row(task: tuple[str, dict[str, Any]]) -> ArtifactSummary:
    """The row of an artifact the server reported (in whichever process checks it: scan_pool)."""
    host, record = task
    row = _with_not_files(_row(host, record), record)
    return row if "lt" not in record else dataclasses.replace(row, link_target=str(record["lt"]))


def scan_remote(
    server: Server,
    root: ServerFolder,
    cancel: CancelToken | None = None,
    on_issue: IssueCallback | None = None,
    processes: int = 1,
    total: float = OPERATION_LIMIT,
) -> Iterator[ArtifactSummary]:
    """Every artifact under root on the server, in path order, as the server finds them. Writes nothing there.
    The whole walk ends within `total` seconds (then StudioError; what ran there is stopped).

    processes > 1 checks the artifacts in that many processes in all (forked before the answer is read: the
    single-threaded CLI), as the local scan does.
    """
    records = server.stream("scan", [root.path, RULES], cancel, total=total)
    first = next(records, None)  # the server's word on the folder itself, before any row: as the local scan
    if first is not None and "nd" in first:
        records.close()
        raise StudioError(f"{root} is not a folder; give a folder that holds compiled artifacts.")
    return logged(log, f"Scan of {root}", _scan_remote(server, root, records, on_issue, processes))


def _scan_remote(
    server: Server,
    root: ServerFolder,
    records: Iterator[dict[str, Any]],
    on_issue: IssueCallback | None,
    processes: int,
) -> Iterator[ArtifactSummary]:
    ended = False

    def items() -> Iterator[tuple[str, dict[str, Any]] | Done[ArtifactSummary]]:
        nonlocal ended
        for record in records:
            if "i" in record:
                if on_issue is not None:
                    on_issue(Path(root.path), str(record["i"]))
            elif "row" in record:
                yield Done(_studio_row(server.host, record["row"]))
            elif "a" in record:
                yield (server.host, record)
            elif "f" in record:
                yield Done(_failed_row(server.host, record))
            elif "error" in record:
                raise StudioError(f"Scanning {root} failed on the server: {record['error']}")
            elif "end" in record:
                ended = True

    if processes > 1:
        yield from (row for _, row in ordered_map(_artifact_row, items(), processes, fork_first=True))
    else:  # each row as soon as its artifact arrives
        yield from (item.result if isinstance(item, Done) else _artifact_row(item) for item in items())
    if not ended:
        raise StudioError(f"The scan of {root} ended early: the server stopped answering.")


def verify_remote_rows(
    server: Server, rows: list[ArtifactSummary], cancel: CancelToken | None = None
) -> Iterator[ArtifactSummary]:
    """The full check inspect runs (every .rbln header read), for a server scan's "checking" rows, in one round
    trip; each row with inspect's verdict, as for a local row (verify.with_verdict)."""
    from rbln_artifact_studio.core.fleet.verify import described_row, with_verdict
    from rbln_artifact_studio.core.model.kinds import NoKvCacheError
    from rbln_artifact_studio.remote.artifact import open_remote_artifacts

    checking = [r for r in rows if r.status is Status.CHECKING]
    if not checking:
        return  # no round trip: every row has its verdict
    targets = [parse_server_folder(r.path) for r in checking]
    for row, result in zip(checking, open_remote_artifacts(server, targets, cancel), strict=True):
        if isinstance(result, NoKvCacheError):  # inspect describes it: kind, parts and problems, no KV figures
            yield described_row(row, result.description)
        else:
            yield with_verdict(row, result)


def checked_rows(
    server: Server, rows: Iterable[ArtifactSummary], cancel: CancelToken | None = None, chunk: int = CHECK_CHUNK
) -> Iterator[ArtifactSummary]:
    """The rows in their order, each with the full check's verdict (a round trip per `chunk` rows)."""
    pending: list[ArtifactSummary] = []

    def flush() -> Iterator[ArtifactSummary]:
        verified = {r.path: r for r in verify_remote_rows(server, pending, cancel)}
        yield from (verified.get(r.path, r) for r in pending)
        pending.clear()

    for row in rows:
        pending.append(row)
        if len(pending) >= chunk:
            yield from flush()
    if pending:
        yield from flush()
