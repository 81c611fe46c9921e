"""Scan a bucket prefix: one listing, then each artifact's metadata (many ranged GETs in flight), each row with the
full check's verdict; rows of artifacts whose objects all keep their ETags come from the scan cache, unread."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.core.fleet.scan_cache import ScanCache
from rbln_artifact_studio.core.fleet.sent_files import Pieces
from rbln_artifact_studio.core.fleet.verify import described_row, with_verdict
from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.core.logs import logged, logger
from rbln_artifact_studio.core.model.kinds import NoKvCacheError
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.objectstore.artifacts import Found, check, fetched, group, incomplete_message
from rbln_artifact_studio.objectstore.client import Unreachable
from rbln_artifact_studio.objectstore.store import Bucket

log = logger(__name__)
WINDOW = 128


def cache_root(bucket: Bucket, prefix: BucketPrefix) -> Path:
    """The scan cache's key for a prefix: the endpoint's host as well as the bucket (two stores may share names)."""
    host = urlsplit(bucket.ep.url).netloc.rpartition("@")[2] or "aws"  # never a password, in a file of the cache
    return Path("/", "s3", host, prefix.bucket, prefix.prefix)


def _model_name(pieces: Pieces) -> str | None:
    """The hub id saved in config.json (_name_or_path), as a local scan reads it."""
    for _, data in pieces.get("config.json", []):
        try:
            raw = json.loads(data)
        except (ValueError, RecursionError):
            return None
        name = raw.get("_name_or_path") if isinstance(raw, dict) else None
        return name if isinstance(name, str) and name else None
    return None


def row_of(bucket: Bucket, found: Found, pieces: Pieces | StudioError) -> ArtifactSummary:
    """The row of one artifact with the verdict inspect gives it."""
    url = found.prefix.url
    if found.incomplete:
        return ArtifactSummary(url, found.prefix.name, Status.INVALID, [incomplete_message(found.prefix, bucket)])
    row = ArtifactSummary(url, found.prefix.name, Status.CHECKING, size_on_disk=found.size, modified=found.modified)
    if isinstance(pieces, StudioError):
        return with_verdict(row, pieces)
    row = dataclasses.replace(row, model=_model_name(pieces))
    try:
        artifact = check(bucket, found, pieces)
    except NoKvCacheError as exc:
        return described_row(row, exc.description)
    except StudioError as exc:
        return with_verdict(row, exc)
    return with_verdict(row, artifact)


def scan_bucket(
    prefix: BucketPrefix,
    cancel: CancelToken | None = None,
    use_cache: bool = True,
    bucket: Bucket | None = None,
    window: int = WINDOW,
) -> Iterator[ArtifactSummary]:
    """Every artifact below prefix, in key order, with its verdict. Writes nothing to the bucket.

    window: how many artifacts are read ahead of the row being yielded (their GETs in flight).

    A store that stops answering ends the scan with an error naming the endpoint (every request is bounded), not
    with a row per artifact.
    """
    return logged(log, f"Scan of {prefix.url}", _scan_bucket(prefix, cancel, use_cache, bucket, window))


def _scan_bucket(
    prefix: BucketPrefix, cancel: CancelToken | None, use_cache: bool, bucket: Bucket | None, window: int
) -> Iterator[ArtifactSummary]:
    bucket = bucket or Bucket(prefix)
    items = group(prefix, bucket.listing(prefix))
    cache = ScanCache(cache_root(bucket, prefix)) if use_cache else None
    complete = False
    read = fetched(bucket, [])  # replaced once the cache has said which artifacts need reading
    try:
        todo: list[Found] = []
        cached: dict[str, ArtifactSummary] = {}
        for item in items:
            hit = cache.get(item.prefix.url, item.signature()) if cache is not None and not item.incomplete else None
            if hit is not None:
                cached[item.prefix.url] = dataclasses.replace(ArtifactSummary.from_json(hit), modified=item.modified)
            elif not item.incomplete:
                todo.append(item)
        read = fetched(bucket, todo, window=window)
        for item in items:
            if cancel is not None:
                cancel.raise_if_cancelled()
            if item.prefix.url in cached:
                yield cached[item.prefix.url]
                continue
            if item.incomplete:
                yield row_of(bucket, item, {})
                continue
            found, pieces = next(read)
            assert found is item
            if isinstance(pieces, Unreachable):
                raise pieces
            row = row_of(bucket, found, pieces)
            if cache is not None and row.status is not Status.CHECKING and not isinstance(pieces, StudioError):
                cache.put(found.prefix.url, found.signature(), row.to_json())
            yield row
        complete = True
    finally:
        read.close()  # the reads still in flight are cancelled, their threads joined
        if cache is not None:
            cache.save(complete)
            cache.release()
