"""The rows of a server scan's records: each artifact checked from what the server sent, each copy of a model once.

The server names a blob it sent before instead of sending the same bytes again (on_server/scan.py's "keep" and
"same"); here a blob is inflated once, and an artifact whose files, sizes and sent bytes are those of one already
checked gets that verdict, made its own (its path, name, size and date), as the local check shares its per-model
work across copies by contents. A verdict whose words name a path or the folder's name is never shared: such a row
is checked on its own.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import failed_row, summarize_files
from rbln_artifact_studio.core.fleet.scan_pool import Done, ordered_map
from rbln_artifact_studio.core.fleet.sent_files import Pieces
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary
from rbln_artifact_studio.core.fleet.verify import described_row, with_verdict
from rbln_artifact_studio.core.location import ServerFolder, parse_server_folder
from rbln_artifact_studio.core.model.kinds import LM_SECTIONS, NoKvCacheError, graph_not_a_file, missing_graph
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME
from rbln_artifact_studio.remote.artifact import check_snapshot, open_remote_artifacts
from rbln_artifact_studio.remote.server import Server

_ROW_FIELDS = {f.name for f in dataclasses.fields(ArtifactSummary)}
_SHARED_MAX = 256  # distinct verdicts remembered in one scan (a fleet holds many copies of few models)


def pieces_of(record: dict[str, Any]) -> Pieces:
    """What the server sent of an artifact's files for its check (see on_server/scan.py): its rbln_config.json,
    then every other piece, one after another."""
    return _pieces(record, *_unpacked(record))


def _unpacked(record: dict[str, Any]) -> tuple[bytes | None, bytes]:
    """The record's rbln_config.json (None when not sent) and its pieces' bytes, inflated from its blob."""
    blob: bytes = record.get("blob_data", b"")
    end = int(record.get("cz", 0))  # none for a pipeline: model_index.json and its components' configs
    config = zlib.decompress(blob[:end]) if end else None
    return config, zlib.decompress(blob[end:]) if record["x"] else b""


def _pieces(record: dict[str, Any], config: bytes | None, sent: bytes) -> Pieces:
    pieces: Pieces = {CONFIG_NAME: [(0, config)]} if config is not None else {}
    start = 0
    for name, offset, length in record["x"]:
        pieces.setdefault(str(name), []).append((int(offset), sent[start : start + int(length)]))
        start += int(length)
    return pieces


def _modified(record: dict[str, Any]) -> int | None:
    """When the server says the artifact was compiled or last changed (Unix seconds), as the local scan's Modified."""
    value = record.get("m")
    return value if isinstance(value, int) and value > 0 else None


def _with_not_files(row: ArtifactSummary, record: dict[str, Any]) -> ArtifactSummary:
    """A graph the server found under its name but as no regular file (a FIFO, a folder) is said to be that, as
    the local scan says it, not missing (the server sent only its files)."""
    odd = {str(k): str(v) for k, v in (record.get("nf") or {}).items()}
    if not odd:
        return row
    said = {missing_graph(None, name).message: graph_not_a_file(name, what).message for name, what in odd.items()}
    return dataclasses.replace(row, problems=[said.get(p, p) for p in row.problems])


def failed_record_row(host: str, record: dict[str, Any]) -> ArtifactSummary:
    """The row of an entry the server could not read (a link to itself, no permission), as the local scan words it."""
    code, message = record["e"]
    url = ServerFolder(host, str(record["f"])).url  # named as the checked rows name their files
    return failed_row(url, OSError(int(code), str(message)), str(record["do"]))


def studio_row(host: str, data: dict[str, Any]) -> ArtifactSummary:
    """A row the server's own rbln-studio-cli wrote (fields this version does not know are dropped)."""
    row = ArtifactSummary.from_json({k: v for k, v in data.items() if k in _ROW_FIELDS})
    return dataclasses.replace(row, path=ServerFolder(host, row.path).url)


def _is_portable(row: ArtifactSummary, folder: str) -> bool:
    """Whether the verdict's words hold for a copy in another folder: none names a path (the server's paths are
    written as its URLs) or the folder's own name. The model's name comes from what the server sent."""
    name = os.path.basename(folder)
    words = [*row.problems, row.kv_note or ""]
    return bool(name) and not any("/" in w or name in w for w in words)


class RowMaker:
    """The rows of one scan's records, in whichever process checks them (scan_pool): kept() runs where the answer
    is read, in order; the row of a record is made by calling this."""

    def __init__(self, host: str) -> None:
        self.host = host
        self._kept: dict[int, bytes] = {}  # the blobs the server asked to keep, as sent (zlib'd)
        self._inflated: dict[int, tuple[bytes | None, bytes]] = {}  # blob number -> config and pieces' bytes
        # (blob number, model name, the folder's name when it is a VLM part's) -> (files, pieces sent, row, problems)
        self._checked: dict[tuple[Any, ...], list[tuple[Any, Any, ArtifactSummary, tuple[str, ...]]]] = {}

    def kept(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record with its blob: one the server named ("same") is the one it asked to keep earlier."""
        if record.get("forget"):
            self._kept.clear()
        if "keep" in record:
            self._kept[int(record["keep"])] = record.get("blob_data", b"")
        elif "same" in record:
            blob = self._kept.get(int(record["same"]))
            if blob is None:
                raise StudioError(f"{self.host} named a part of its answer that it never sent.")
            record["blob_data"] = blob
        return record

    def __call__(self, record: dict[str, Any]) -> ArtifactSummary:
        """The row of an artifact the server reported."""
        row = _with_not_files(self._row(record), record)
        return row if "lt" not in record else dataclasses.replace(row, link_target=str(record["lt"]))

    def _row(self, record: dict[str, Any]) -> ArtifactSummary:
        """The table row for one artifact the server reported, its path written as the server's URL."""
        folder: str = record["a"]
        url = ServerFolder(self.host, folder).url
        if "le" in record:
            return ArtifactSummary(
                url, os.path.basename(folder), Status.INVALID, [f"Cannot list {folder}: {record['le']}."]
            )
        if "fl" in record and not record.get("real"):
            return self._checked_row(record)
        config_path, model_path = os.path.join(folder, CONFIG_NAME), os.path.join(folder, "config.json")

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

    def _unpacked(self, record: dict[str, Any]) -> tuple[bytes | None, bytes]:
        number = record.get("keep", record.get("same"))
        if number is None:
            return _unpacked(record)
        found = self._inflated.get(int(number))
        if found is None:
            if len(self._inflated) >= _SHARED_MAX:
                self._inflated.clear()
            found = self._inflated[int(number)] = _unpacked(record)
        return found

    def _checked_row(self, record: dict[str, Any]) -> ArtifactSummary:
        """The row with the full check's verdict, from the files the server sent with it (a model with graphs of
        the real compiler is left "checking": rebel reads those on the server, in verify_rows)."""
        folder: str = record["a"]
        number = record.get("keep", record.get("same"))
        name = os.path.basename(folder)
        key = None
        if number is not None:
            key = (int(number), record.get("n"), name if name in LM_SECTIONS else None)
            for files, sent, row, problems in self._checked.get(key, ()):
                if files == record["fl"] and sent == record["x"]:
                    return dataclasses.replace(
                        row,
                        path=ServerFolder(self.host, folder).url,
                        name=name,
                        problems=list(problems),
                        size_on_disk=int(record["s"]),
                        modified=_modified(record),
                    )
        row = self._check(record)
        if key is not None and _is_portable(row, folder):
            if len(self._checked) >= _SHARED_MAX:
                self._checked.clear()
            # Its problems as they are now: the list is the caller's (the row's other fields cannot change).
            self._checked.setdefault(key, []).append((record["fl"], record["x"], row, tuple(row.problems)))
        return row

    def _check(self, record: dict[str, Any]) -> ArtifactSummary:
        folder: str = record["a"]
        target = ServerFolder(self.host, folder)
        found = ArtifactSummary(
            target.url,
            os.path.basename(folder),
            Status.CHECKING,
            model=record.get("n"),
            size_on_disk=int(record["s"]),
            modified=_modified(record),
        )
        try:
            artifact = check_snapshot(self.host, target, record["fl"], _pieces(record, *self._unpacked(record)))
        except NoKvCacheError as exc:  # inspect describes it: kind, parts and problems, no KV figures
            return described_row(found, exc.description)
        except StudioError as exc:
            return with_verdict(found, exc)
        return with_verdict(found, artifact)


def verify_rows(
    server: Server, rows: list[ArtifactSummary], cancel: CancelToken | None = None
) -> Iterator[ArtifactSummary]:
    """remote/scan.verify_remote_rows: the full check inspect runs for the "checking" rows, in one round trip."""
    checking = [r for r in rows if r.status is Status.CHECKING]
    if not checking:
        return  # no round trip: every row has its verdict
    targets = [parse_server_folder(r.path) for r in checking]
    for row, result in zip(checking, open_remote_artifacts(server, targets, cancel), strict=True):
        if isinstance(result, NoKvCacheError):  # inspect describes it: kind, parts and problems, no KV figures
            yield described_row(row, result.description)
        else:
            yield with_verdict(row, result)


def rows_of(
    server: Server,
    root: ServerFolder,
    records: Iterator[dict[str, Any]],
    on_issue: Callable[[Path, str], None] | None,
    processes: int,
) -> Iterator[ArtifactSummary]:
    """remote/scan.scan_remote's rows from the server's records (after its first), in their order."""
    make = RowMaker(server.host)
    ended = False

    def items() -> Iterator[dict[str, Any] | Done[ArtifactSummary]]:
        nonlocal ended
        for record in records:
            if "i" in record:
                if on_issue is not None:
                    on_issue(Path(root.path), str(record["i"]))
            elif "row" in record:
                yield Done(studio_row(server.host, record["row"]))
            elif "a" in record:
                yield make.kept(record)
            elif "f" in record:
                yield Done(failed_record_row(server.host, record))
            elif "error" in record:
                raise StudioError(f"Scanning {root} failed on the server: {record['error']}")
            elif "end" in record:
                ended = True

    if processes > 1:
        yield from (row for _, row in ordered_map(make, items(), processes, fork_first=True))
    else:  # each row as soon as its artifact arrives
        yield from (item.result if isinstance(item, Done) else make(item) for item in items())
    if not ended:
        raise StudioError(f"The scan of {root} ended early: the server stopped answering.")
