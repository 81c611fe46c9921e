"""The scan cache keyed by ETags, and two writers at once: one wins, the other stops with a clear error."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import parse_bucket_prefix
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.storage import faults
from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact
from rbln_artifact_studio.objectstore.resize import resize_bucket_in_place
from rbln_artifact_studio.objectstore.scan import scan_bucket
from rbln_artifact_studio.objectstore.store import Bucket


def test_unchanged_bucket_is_listed_not_read(bucket: BucketFixture, cr13_artifact: Path, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet"
    for name in ("a", "b", "c"):
        shutil.copytree(cr13_artifact, fleet / name)
    bucket.upload(fleet, "fleet")
    prefix = parse_bucket_prefix(bucket.url("fleet"))
    cold = Bucket(bucket.name)
    first = list(scan_bucket(prefix, bucket=cold))
    assert cold.reads >= 3 * 4  # two configs and two headers' first reads each, at least
    warm = Bucket(bucket.name)
    assert list(scan_bucket(prefix, bucket=warm)) == first
    assert warm.reads == 0  # listed only
    resize_bucket_in_place(ResizeRequest(parse_bucket_prefix(bucket.url("fleet/b")), 12))
    changed = Bucket(bucket.name)
    rows = {row.name: row for row in scan_bucket(prefix, bucket=changed)}
    assert rows["b"].kvcache_num_blocks == 12 and rows["a"] == first[0]
    assert 0 < changed.reads < cold.reads  # b alone was read again


@pytest.fixture
def paused_at() -> Iterator[tuple[threading.Event, threading.Event, list[str]]]:
    """A hook holding the first thread that reaches the named step until released (faults' seam, in-process)."""
    reached, release, step = threading.Event(), threading.Event(), [""]

    def hook(name: str) -> None:
        if name == step[0] and not reached.is_set():
            reached.set()
            release.wait(60)

    previous = faults.install(hook)
    yield reached, release, step
    release.set()
    faults.install(previous)


def test_two_writers_one_wins(
    bucket: BucketFixture, cr13_artifact: Path, paused_at: tuple[threading.Event, threading.Event, list[str]]
) -> None:
    reached, release, step = paused_at
    step[0] = "resize.locked"
    bucket.upload(cr13_artifact, "fleet/qwen")
    prefix = parse_bucket_prefix(bucket.url("fleet/qwen"))
    results: dict[str, object] = {}
    first = threading.Thread(target=lambda: results.update(first=resize_bucket_in_place(ResizeRequest(prefix, 12))))
    first.start()
    assert reached.wait(60)
    with pytest.raises(StudioError, match="being changed by another run") as err:
        resize_bucket_in_place(ResizeRequest(prefix, 14))
    assert str(err.value).endswith("Nothing was changed.")
    release.set()
    first.join(60)
    assert open_bucket_artifact(prefix).config.kvcache_num_blocks == 12


def test_writer_that_ignores_the_lock_loses_to_the_etag(
    bucket: BucketFixture, cr13_artifact: Path, paused_at: tuple[threading.Event, threading.Event, list[str]]
) -> None:
    """Another tool rewrites rbln_config.json while our resize runs: our conditional write fails, theirs stands."""
    reached, release, step = paused_at
    step[0] = "resize.header_written.0"
    bucket.upload(cr13_artifact, "fleet/qwen")
    prefix = parse_bucket_prefix(bucket.url("fleet/qwen"))
    errors: list[BaseException] = []

    def run() -> None:
        try:
            resize_bucket_in_place(ResizeRequest(prefix, 12))
        except StudioError as exc:
            errors.append(exc)

    writer = threading.Thread(target=run)
    writer.start()
    assert reached.wait(60)
    theirs = bucket.get("fleet/qwen/rbln_config.json").replace(b"\n", b"\n ", 1)  # an edit by another tool
    bucket.client.put_object(Bucket=bucket.name, Key="fleet/qwen/rbln_config.json", Body=theirs)
    release.set()
    writer.join(60)
    assert errors and "changed by another writer" in str(errors[0]) and "keeps kvcache_num_blocks=21" in str(errors[0])
    assert bucket.get("fleet/qwen/rbln_config.json") == theirs
    assert open_bucket_artifact(prefix).config.kvcache_num_blocks == 21  # the old count: pending slots ignored
