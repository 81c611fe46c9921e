"""The full check behind a scan row: the reading inspect does, so scan, the table and inspect give one verdict."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import GraphInspector, open_artifact
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, folder_signature
from rbln_artifact_studio.core.fleet.scan_cache import ScanCache
from rbln_artifact_studio.core.fleet.status import Status
from rbln_artifact_studio.core.progress import CancelToken


def verify_summary(row: ArtifactSummary, inspector: GraphInspector | None = None) -> ArtifactSummary:
    """The row with inspect's status and problems (every .rbln header read), never "checking"."""
    try:
        artifact = open_artifact(Path(row.path), inspector)
    except StudioError as exc:
        message = exc.one_line()
        problems = row.problems if message in row.problems else [*row.problems, message]
        return replace(row, status=Status.INVALID, problems=problems)
    return replace(
        row,
        status=artifact.status,
        problems=[p.message for p in artifact.problems],
        kv_bytes_per_npu=artifact.kv_bytes_per_npu,
    )


def verify_rows(
    root: Path,
    rows: Iterable[ArtifactSummary],
    inspector: GraphInspector | None = None,
    cancel: CancelToken | None = None,
    use_cache: bool = True,
) -> Iterator[ArtifactSummary]:
    """The background verification of rows a fast scan left "checking": each verified row, remembered in the
    root's scan cache (keyed by the listing taken before the check, so a change meanwhile forces a new one)."""
    cache = ScanCache(Path(root)) if use_cache else None
    try:
        for row in rows:
            if cancel is not None:
                cancel.raise_if_cancelled()
            if row.status is not Status.CHECKING:
                continue
            signature = folder_signature(row.path)
            verified = verify_summary(row, inspector)
            if cache is not None and signature is not None and os.path.isdir(row.path):
                cache.put(row.path, signature, verified.to_json())
            yield verified
    finally:
        if cache is not None:
            cache.save(False)
