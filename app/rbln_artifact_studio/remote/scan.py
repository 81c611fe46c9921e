"""Scan a folder on a server in one round trip: the walk runs there, the rows are built here as lines arrive.

The rows are made by remote/scan_rows.py, which holds the full check (the reader, msgspec): it loads once the
server has answered, while its walk goes on there; loaded before ssh is started, it would start the server's
program that much later.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.core.logs import logged, logger
from rbln_artifact_studio.core.portable.pipeline import PIPELINE_INDEX
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER, PARTIAL_TAG, SKIP_NAMES, TMP_TAG
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME, MAX_JSON_BYTES
from rbln_artifact_studio.remote.server import OPERATION_LIMIT, Server

# Blobs the server keeps for the studio to name again (on_server/scan.py's "keep"): at most this many, of at most
# this many raw bytes there (inflated, about as many here while the scan lasts).
KEEP = (256, 32 << 20)
RULES = json.dumps(
    {
        "config_name": CONFIG_NAME,
        "incomplete_marker": INCOMPLETE_MARKER,
        "skip_names": sorted(SKIP_NAMES),
        "internal_tags": [TMP_TAG, PARTIAL_TAG],
        "max_json_bytes": MAX_JSON_BYTES,
        "texts": [CONFIG_NAME, "config.json", PIPELINE_INDEX],
        "keep": list(KEEP),
    }
)
log = logger(__name__)
CHECK_CHUNK = 1000  # rows per full-check round trip: the first verdicts come early, few round trips in all


def _rows_module() -> ModuleType:
    """remote/scan_rows.py, loaded once."""
    # deferred: the check (~30 ms of imports) loads while the server walks, not before ssh starts
    from rbln_artifact_studio.remote import scan_rows

    return scan_rows


def scan_remote(
    server: Server,
    root: ServerFolder,
    cancel: CancelToken | None = None,
    on_issue: Callable[[Path, str], None] | None = None,
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
    return logged(log, f"Scan of {root}", _rows_module().rows_of(server, root, records, on_issue, processes))


def verify_remote_rows(
    server: Server, rows: list[ArtifactSummary], cancel: CancelToken | None = None
) -> Iterator[ArtifactSummary]:
    """The full check inspect runs (every .rbln header read), for a server scan's "checking" rows, in one round
    trip; each row with inspect's verdict, as for a local row (verify.with_verdict)."""
    return _rows_module().verify_rows(server, rows, cancel)


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
