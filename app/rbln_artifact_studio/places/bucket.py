"""Artifacts in S3-compatible buckets: scanned from a listing and ranged GETs, resized with conditional writes and
server-side copies (objectstore/); also the copies between a bucket and a folder here or on a server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix, LocalFolder, Location, ServerFolder
from rbln_artifact_studio.places.kind import Capabilities, Report, ResizeOrder, ScanOptions, cross_kind_error

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
    from rbln_artifact_studio.core.operations.resize import ResizeResult
    from rbln_artifact_studio.core.progress import CancelToken


def _prefix(where: Location) -> BucketPrefix:
    assert isinstance(where, BucketPrefix), where  # dispatch.kind_of sends only this kind here
    return where


class BucketKind:
    """A key prefix in a bucket the AWS chain reaches. Nothing is downloaded but configs and graph headers."""

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

    def open(self, where: Location, inspector: GraphInspector | None, cancel: CancelToken | None) -> Artifact:
        from rbln_artifact_studio.objectstore.artifacts import open_bucket_artifact

        return open_bucket_artifact(_prefix(where))  # real compiler graphs: their tables need rebel and the payload

    def read_block_count(self, where: Location) -> int:
        return self.open(where, None, None).config.kvcache_num_blocks

    def resize(self, order: ResizeOrder, report: Report) -> ResizeResult:
        """In place, into a copy in the same bucket, or across a bucket and a folder here or on a server
        (dispatch.CROSSINGS)."""
        from rbln_artifact_studio.core.model.budget import parse_budget
        from rbln_artifact_studio.core.progress import Progress
        from rbln_artifact_studio.objectstore import resize as bucket_resize

        if order.backend is not None and order.backend.value == "optimum":
            raise StudioError(
                f"{order.source}: optimum-rbln-cli resizes folders on this computer only; in a bucket the studio's "
                "own resize runs (simulator artifacts). Nothing was changed."
            )
        budget = parse_budget(order.budget_text) if order.budget_text is not None else None
        progress = Progress(report.progress, report.cancel)
        source, output = order.source, order.output
        if isinstance(source, BucketPrefix):
            if output is None:
                return bucket_resize.resize_bucket_in_place(source, order.target, budget)
            if isinstance(output, BucketPrefix):
                return bucket_resize.resize_bucket_to_copy(source, output, order.target, budget, progress)
            if isinstance(output, LocalFolder):
                return bucket_resize.resize_bucket_to_folder(source, output.path, order.target, budget, progress)
            if isinstance(output, ServerFolder):
                from rbln_artifact_studio.places.bucket_server import bucket_to_server

                return bucket_to_server(source, output, order.target, budget, progress)
        elif isinstance(output, BucketPrefix):
            if isinstance(source, LocalFolder):
                return bucket_resize.resize_folder_to_bucket(source.path, output, order.target, budget, progress)
            if isinstance(source, ServerFolder):
                from rbln_artifact_studio.places.bucket_server import server_to_bucket

                return server_to_bucket(source, output, order.target, budget, progress)
        raise cross_kind_error(order)

    def check_output(self, output: Location, report: Report) -> None:
        from rbln_artifact_studio.core.progress import Progress
        from rbln_artifact_studio.objectstore.resize import check_output_prefix

        check_output_prefix(_prefix(output), Progress(report.progress, report.cancel))

    def receive(self, folder: Path, output: Location, report: Report) -> int:
        """Uploaded below output, the marker object first and rbln_config.json last (a scan calls it incomplete
        until then)."""
        from rbln_artifact_studio.core.progress import Progress
        from rbln_artifact_studio.objectstore.resize import resize_folder_to_bucket

        progress = Progress(report.progress, report.cancel)
        return resize_folder_to_bucket(folder, _prefix(output), progress=progress).bytes_copied  # as it is


KIND = BucketKind()
