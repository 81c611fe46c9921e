"""Artifacts in S3-compatible buckets: scanned from a listing and ranged GETs, opened from their metadata, and
downloaded as they are (objectstore/); the writes (resizes with conditional writes and server-side copies, and the
copies between a bucket and a folder here or on a server) are places/bucket_server.py's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.core.location import BucketPrefix, Location, expect
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest, ResizeResult
from rbln_artifact_studio.core.progress import CancelToken, Progress
from rbln_artifact_studio.objectstore.artifacts import find, open_bucket_artifact
from rbln_artifact_studio.objectstore.scan import scan_bucket
from rbln_artifact_studio.places.dispatch import BUILT_IN_CAPABILITIES
from rbln_artifact_studio.places.kind import Report, ScanOptions

if TYPE_CHECKING:
    from rbln_artifact_studio.backends.settings import ToolchainSettings
    from rbln_artifact_studio.places.bucket_server import BucketWrites


def _prefix(where: Location | None) -> BucketPrefix:
    return expect(where, BucketPrefix)  # dispatch sends only this kind here


def _writes() -> BucketWrites:
    """The bucket's writes (places/bucket_server.py), loaded with the first one."""
    # A scan of a bucket loads this module and needs no pydantic (docs/performance.md row 10).
    # deferred: the writes resize with the core's resize, which brings pydantic (~0.1 s of CPU)
    from rbln_artifact_studio.places.bucket_server import WRITES

    return WRITES


def fetch_from_bucket(source: Location, into: Path, progress: Progress) -> int:
    """A bucket's artifact into the empty folder into here, each object as of the ETag listed: the download
    dispatch.DOWNLOADS names for this kind."""
    source = _prefix(source)
    bucket, found = find(source)  # none there, or an unfinished copy: refused with the reason
    progress.start(found.size, f"Downloading {source.name}")
    for name, obj in sorted(found.objects.items()):
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        bucket.download(obj, into / name, progress.advance)
    return found.size


class BucketKind:
    """A key prefix in a bucket of the store its location names. Nothing is downloaded but configs and graph headers."""

    capabilities = BUILT_IN_CAPABILITIES[__name__]

    def scan(self, root: Location, options: ScanOptions) -> Iterator[ArtifactSummary]:
        return scan_bucket(_prefix(root), options.cancel, options.use_cache)

    def verify(self, root: Location, rows: list[ArtifactSummary], options: ScanOptions) -> Iterator[ArtifactSummary]:
        """None to check: a bucket's scan reads every verdict as it lists (verify=False changes nothing)."""
        return iter(())

    def open(self, where: Location, inspector: GraphInspector | None, cancel: CancelToken | None) -> Artifact:
        return open_bucket_artifact(_prefix(where))  # real compiler graphs: their tables need rebel and the payload

    def read_block_count(self, where: Location) -> int:
        return self.open(where, None, None).config.kvcache_num_blocks

    def resize(
        self, request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None
    ) -> ResizeResult:
        """In place (conditional writes), or into a copy in a bucket (server-side within one bucket of one store,
        else through here); a copy into another kind of place is one of the crossings (places/bucket_server.py)."""
        return _writes().resize(request, report)

    def check_output(self, output: Location, report: Report) -> None:
        _writes().check_output(_prefix(output), report)

    def receive(self, folder: Path, output: Location, report: Report) -> int:
        """Uploaded below output, the marker object first and rbln_config.json last (a scan calls it incomplete
        until then)."""
        return _writes().receive(folder, _prefix(output), report)


KIND = BucketKind()
