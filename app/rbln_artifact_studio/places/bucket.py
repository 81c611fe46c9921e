"""Artifacts in S3-compatible buckets: scanned from a listing and ranged GETs, resized with conditional writes and
server-side copies (objectstore/); also the copies between a bucket and a folder here or on a server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix, LocalFolder, Location, ServerFolder, expect
from rbln_artifact_studio.places.kind import Capabilities, Report, ScanOptions

if TYPE_CHECKING:
    from rbln_artifact_studio.backends.settings import ToolchainSettings
    from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
    from rbln_artifact_studio.core.operations.resize import ResizeResult
    from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
    from rbln_artifact_studio.core.progress import CancelToken, Progress


def _prefix(where: Location | None) -> BucketPrefix:
    return expect(where, BucketPrefix)  # dispatch sends only this kind here


def _progress(request: ResizeRequest, report: Report) -> Progress:
    """The studio's own resize, which every copy into or out of a bucket runs: a request for optimum-rbln-cli or
    with a bad budget text is refused here, before the bucket is read."""
    from rbln_artifact_studio.core.progress import Progress

    if request.backend == "optimum":
        raise StudioError(
            f"{request.source}: optimum-rbln-cli resizes folders on this computer only; in a bucket the studio's "
            "own resize runs (simulator artifacts). Nothing was changed."
        )
    request.budget  # noqa: B018 -- a bad budget text is refused here, before the bucket is read
    return Progress(report.progress, report.cancel)


# The crossings dispatch.CROSSINGS names for a bucket and another kind of place, each given the request as built.


def to_folder(request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None) -> ResizeResult:
    """A bucket's artifact to a new folder here: downloaded into a staging folder, resized there."""
    from rbln_artifact_studio.objectstore.resize import resize_bucket_to_folder

    return resize_bucket_to_folder(request, _progress(request, report))


def from_folder(request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None) -> ResizeResult:
    """A folder here to a new prefix: uploaded with the new headers, rbln_config.json last."""
    from rbln_artifact_studio.objectstore.resize import resize_folder_to_bucket

    return resize_folder_to_bucket(request, _progress(request, report))


def to_server(request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None) -> ResizeResult:
    """A bucket's artifact to a new folder on a server, through a staging folder here."""
    from rbln_artifact_studio.places.bucket_server import bucket_to_server

    return bucket_to_server(request, _progress(request, report))


def from_server(request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None) -> ResizeResult:
    """A server's artifact to a new prefix, fetched here under the server's lock, then uploaded."""
    from rbln_artifact_studio.places.bucket_server import server_to_bucket

    return server_to_bucket(request, _progress(request, report))


class BucketKind:
    """A key prefix in a bucket of the store its location names. Nothing is downloaded but configs and graph headers."""

    capabilities = Capabilities(
        what="a prefix in a bucket",
        on_this_computer=False,
        writable=True,
        resize_in_place=True,  # where the store honours conditional writes (refused with the reason elsewhere)
        server_side_copy=True,  # a copy in the bucket: the payload copied by the store
        locks=True,  # a lock object created with If-None-Match
        copies_to=frozenset({BucketPrefix, LocalFolder, ServerFolder}),
        copies_beside=False,  # reading a bucket proves no right to write into it: a copy defaults to a folder here
    )

    def scan(self, root: Location, options: ScanOptions) -> Iterator[ArtifactSummary]:
        from rbln_artifact_studio.objectstore.scan import scan_bucket

        return scan_bucket(_prefix(root), options.cancel, options.use_cache)

    def verify(self, root: Location, rows: list[ArtifactSummary], options: ScanOptions) -> Iterator[ArtifactSummary]:
        """None to check: a bucket's scan reads every verdict as it lists (verify=False changes nothing)."""
        return iter(())

    def open(self, where: Location, inspector: GraphInspector | None, cancel: CancelToken | None) -> Artifact:
        from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact

        return open_bucket_artifact(_prefix(where))  # real compiler graphs: their tables need rebel and the payload

    def read_block_count(self, where: Location) -> int:
        return self.open(where, None, None).config.kvcache_num_blocks

    def resize(
        self, request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None
    ) -> ResizeResult:
        """In place (conditional writes), or into a copy in a bucket (server-side within one bucket of one store,
        else through here); a copy into another kind of place is one of the crossings above."""
        from rbln_artifact_studio.objectstore import resize as bucket_resize
        from rbln_artifact_studio.places import bucket_server

        progress = _progress(request, report)
        _prefix(request.source)
        if request.output is None:
            return bucket_resize.resize_bucket_in_place(request, progress)
        _prefix(request.output)
        return bucket_server.bucket_to_bucket(request, progress)

    def check_output(self, output: Location, report: Report) -> None:
        from rbln_artifact_studio.core.progress import Progress
        from rbln_artifact_studio.objectstore.resize import check_output_prefix

        check_output_prefix(_prefix(output), Progress(report.progress, report.cancel))

    def receive(self, folder: Path, output: Location, report: Report) -> int:
        """Uploaded below output, the marker object first and rbln_config.json last (a scan calls it incomplete
        until then)."""
        from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
        from rbln_artifact_studio.core.progress import Progress
        from rbln_artifact_studio.objectstore.resize import resize_folder_to_bucket

        as_it_is = ResizeRequest(LocalFolder(folder), output=_prefix(output))  # neither count nor budget
        return resize_folder_to_bucket(as_it_is, Progress(report.progress, report.cancel)).bytes_copied


KIND = BucketKind()
