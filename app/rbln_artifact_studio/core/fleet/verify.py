"""The full check behind a scan row: the reading inspect does, so scan, the table and inspect give one verdict."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import ChangingError, StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact, ConfigIdentity, Inspector, Listing, open_artifact
from rbln_artifact_studio.core.fleet.listing import folder_signature
from rbln_artifact_studio.core.fleet.scan_pool import ordered_map
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary, architecture
from rbln_artifact_studio.core.model.kinds import ModelDescription, NoKvCacheError
from rbln_artifact_studio.core.status import Status, worst

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.scan_cache import Signature
    from rbln_artifact_studio.core.progress import CancelToken


def verify_summary(
    row: ArtifactSummary,
    inspector: Inspector = None,
    listing: Listing | None = None,
    folder: Path | None = None,
    identity: ConfigIdentity | None = None,
) -> ArtifactSummary:
    """The row with inspect's status and problems (every .rbln header read); "checking" only while a resize
    beside it keeps changing it; `listing` and `identity`: the folder's files and its config's identity as a scan
    just listed them (open_artifact); `folder`: row.path as a Path, when the caller has made it."""
    try:
        where = Path(row.path) if folder is None else folder
        # A row shows no sharing: sharing=False.
        artifact = open_artifact(where, inspector, sharing=False, listing=listing, identity=identity)
    except NoKvCacheError as exc:  # inspect describes it: kind, parts and problems, no KV figures
        return described_row(row, exc.description)
    except ChangingError as exc:  # being resized, not broken: the row stays "checking" until the next read
        return replace(row, status=Status.CHECKING, problems=[exc.one_line()])
    except StudioError as exc:
        return with_verdict(row, exc)
    return with_verdict(row, artifact)


def with_verdict(row: ArtifactSummary, artifact: Artifact | StudioError) -> ArtifactSummary:
    """The row with the verdict of the artifact as read (here, or on a server), or with the error that stopped it."""
    if isinstance(artifact, StudioError):  # inspect says exactly this ("error: …")
        return replace(row, status=Status.INVALID, problems=[artifact.one_line()])
    c = artifact.config
    described = artifact.location.description if artifact.location else None
    kv_per_npu = artifact.kv_bytes_per_npu
    # A new row rather than dataclasses.replace (a scan makes one per artifact); every field the verdict does not
    # set is the row's own.
    return ArtifactSummary(
        path=row.path,
        name=row.name,
        status=artifact.status,
        problems=[p.message for p in artifact.problems],
        model=row.model or architecture(described.cls_name if described else c.cls_name),
        npu=c.npu,
        num_devices=c.num_devices,
        batch_size=c.batch_size,
        max_seq_len=c.max_seq_len,
        block_size=c.block_size,
        attn_impl=c.attn.value,
        kvcache_num_blocks=c.kvcache_num_blocks,
        num_min_blocks=c.num_min_blocks,
        num_full_blocks=c.num_full_blocks,
        kv_bytes_per_npu=kv_per_npu,
        size_on_disk=row.size_on_disk,
        link_target=row.link_target,
        kind=artifact.kind.value,
        kv_note=c.kv_unknown_reason if kv_per_npu is None else None,
        modified=row.modified,
    )


def described_row(row: ArtifactSummary, description: ModelDescription) -> ArtifactSummary:
    """The verdict on a model without a resizable KV cache: the description inspect prints."""
    return replace(
        row,
        status=worst(list(description.problems)),
        problems=[p.message for p in description.problems],
        model=row.model or architecture(description.cls_name),
        npu=description.npu,
        num_devices=description.num_devices,
        batch_size=description.batch_size,
        kind=description.kind.value,
        kv_note=description.kv_note,
    )


def verify_rows(
    root: Path,
    rows: Iterable[ArtifactSummary],
    inspector: Inspector = None,
    cancel: CancelToken | None = None,
    use_cache: bool = True,
    processes: int = 1,
) -> Iterator[ArtifactSummary]:
    """The background verification of rows a fast scan left "checking": each verified row, in the order given,
    remembered in the root's scan cache (keyed by the listing taken before the check, so a change meanwhile forces
    a new one). processes > 1 checks in that many processes (scan_pool: where forking is safe)."""
    cache = None
    if use_cache:
        # A scan with --no-cache loads this module with its first read (tests/test_config_reader.py).
        # deferred: scan_cache loads hashlib (OpenSSL) and platformdirs, which a scan with --no-cache never needs
        from rbln_artifact_studio.core.fleet.scan_cache import ScanCache

        cache = ScanCache(Path(root))

    def checking() -> Iterator[ArtifactSummary]:
        for row in rows:
            if cancel is not None:
                cancel.raise_if_cancelled()
            if row.status is Status.CHECKING:
                yield row

    try:
        for _, (signature, verified) in ordered_map(lambda row: _checked(row, inspector), checking(), processes):
            settled = verified.status is not Status.CHECKING  # a row read mid-resize is not remembered
            if cache is not None and signature is not None and settled and os.path.isdir(verified.path):
                cache.put(verified.path, signature, verified.to_json())
            yield verified
    finally:
        if cache is not None:
            cache.save(False)
            cache.release()


def _checked(row: ArtifactSummary, inspector: Inspector) -> tuple[Signature | None, ArtifactSummary]:
    """The listing taken before the check, and the verified row (what a worker process hands back)."""
    return folder_signature(row.path), verify_summary(row, inspector)
