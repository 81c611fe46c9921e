"""A bucket's writes: its resizes in place or into a copy in a bucket (objectstore/resize.py), the copies between a
bucket and a folder here (dispatch.CROSSINGS), and the resized copies between a bucket and a folder on a server, or
between two buckets (two stores), staged in a private folder on this computer.

A bucket and a server cannot reach each other, so the bytes pass through here: bucket to server downloads the
objects into a staging folder, resizes them there and sends them into a staging folder beside the server's output
that is renamed into place only when whole (remote/transfer.py); server to bucket fetches the server's folder under
its lock, then uploads it as a folder here is uploaded (rbln_config.json last). Each output is checked before a
byte moves, and a stopped copy leaves at worst what the destination's own copy leaves (nothing on a server; a
prefix scans call incomplete in a bucket, cleaned by the next run). The staging folder here is removed either way,
or by the next copy when this process was killed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix, LocalFolder, ServerFolder, expect
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest, ResizeResult
from rbln_artifact_studio.core.progress import Progress
from rbln_artifact_studio.core.storage.fsutil import StagingDir, describe_os_error, staging_root
from rbln_artifact_studio.objectstore.resize import (
    check_output_prefix,
    download_objects,
    download_resized,
    plan,
    read_planned,
    refuse_overlap,
    resize_bucket_in_place,
    resize_bucket_to_copy,
    resize_bucket_to_folder,
    resize_folder_to_bucket,
)
from rbln_artifact_studio.objectstore.store import Bucket
from rbln_artifact_studio.places.kind import Report
from rbln_artifact_studio.places.ssh import server
from rbln_artifact_studio.remote.artifact import open_remote_artifact
from rbln_artifact_studio.remote.transfer import ServerCopyResult, check_output, fetch_folder, send_folder

if TYPE_CHECKING:
    from rbln_artifact_studio.backends.settings import ToolchainSettings


def _progress(request: ResizeRequest, report: Report) -> Progress:
    """The studio's own resize, which every copy into or out of a bucket runs: a request for optimum-rbln-cli or
    with a bad budget text is refused here, before the bucket is read."""
    if request.backend == "optimum":
        raise StudioError(
            f"{request.source}: optimum-rbln-cli resizes folders on this computer only; in a bucket the studio's "
            "own resize runs (simulator artifacts). Nothing was changed."
        )
    request.budget  # noqa: B018 -- a bad budget text is refused here, before the bucket is read
    return Progress(report.progress, report.cancel)


class BucketWrites:
    """What the bucket's Kind (places/bucket.py) writes, each with the request or output as it was given."""

    def resize(self, request: ResizeRequest, report: Report) -> ResizeResult:
        """In place (conditional writes), or into a copy in a bucket (server-side within one bucket of one store,
        else through here)."""
        progress = _progress(request, report)
        expect(request.source, BucketPrefix)
        if request.output is None:
            return resize_bucket_in_place(request, progress)
        expect(request.output, BucketPrefix)
        return bucket_to_bucket(request, progress)

    def check_output(self, output: BucketPrefix, report: Report) -> None:
        check_output_prefix(output, Progress(report.progress, report.cancel))

    def receive(self, folder: Path, output: BucketPrefix, report: Report) -> int:
        as_it_is = ResizeRequest(LocalFolder(folder), output=output)  # neither count nor budget
        return resize_folder_to_bucket(as_it_is, Progress(report.progress, report.cancel)).bytes_copied


WRITES = BucketWrites()


# The crossings dispatch.CROSSINGS names for a bucket and another kind of place, each given the request as built.


def to_folder(request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None) -> ResizeResult:
    """A bucket's artifact to a new folder here: downloaded into a staging folder, resized there."""
    return resize_bucket_to_folder(request, _progress(request, report))


def from_folder(request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None) -> ResizeResult:
    """A folder here to a new prefix: uploaded with the new headers, rbln_config.json last."""
    return resize_folder_to_bucket(request, _progress(request, report))


def to_server(request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None) -> ResizeResult:
    """A bucket's artifact to a new folder on a server, through a staging folder here."""
    return bucket_to_server(request, _progress(request, report))


def from_server(request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None) -> ResizeResult:
    """A server's artifact to a new prefix, fetched here under the server's lock, then uploaded."""
    return server_to_bucket(request, _progress(request, report))


def bucket_to_server(request: ResizeRequest, progress: Progress) -> ResizeResult:
    """Bucket to a server: a resized copy of the bucket's artifact in a new folder on the server; the bucket is
    only read."""
    source, output = expect(request.source, BucketPrefix), expect(request.output, ServerFolder)  # dispatch.CROSSINGS
    read, made = read_planned(source, request)  # a bad request or a denied key fails here, before any write
    there = server(output.host)
    check_output(there, output, progress)  # an output that exists, or a server that cannot be reached
    try:
        with StagingDir(staging_root() / (source.name or "artifact"), claim=False) as staging:
            download_resized(read, made, staging.path, progress)
            sent = send_folder(there, staging.path, output, progress)
    except OSError as exc:
        raise StudioError(describe_os_error(exc, "staging the copy here"), unchanged=True) from None
    progress.say(f"Wrote {output} with kvcache_num_blocks={made.count}")
    return ServerCopyResult.on(output, made.previous, made.count, made.warnings, sent)


def bucket_to_bucket(request: ResizeRequest, progress: Progress) -> ResizeResult:
    """Bucket to a bucket: server-side within one bucket of one store (objectstore/resize); else neither can copy from
    the other, so the objects pass through a staging folder here (downloaded each as of its ETag) and are uploaded
    below the output as a folder here is (the marker first, rbln_config.json last). The source is only read."""
    source, output = expect(request.source, BucketPrefix), expect(request.output, BucketPrefix)  # the bucket's Kind
    if source.at("") == output.at(""):
        return resize_bucket_to_copy(request, progress)
    read, _ = read_planned(source, request)  # a bad request or a denied key fails here, before any write
    if read.bucket.name == output.bucket and read.bucket.ep.url == Bucket(output).ep.url:  # two names of one bucket
        refuse_overlap(source._replace(profile="", endpoint=""), output._replace(profile="", endpoint=""))
    check_output_prefix(output, progress)
    progress.say(
        f"{output} is in another {'store' if output.store != source.store else 'bucket'}: copying through here"
    )
    try:
        with StagingDir(staging_root() / (source.name or "artifact"), claim=False) as staging:
            folder = staging.path / (source.name or "artifact")  # beside the staging marker: an artifact of its own
            folder.mkdir()
            download_objects(read, folder, progress)
            return resize_folder_to_bucket(request, progress, folder)  # checked again: the bytes fetched
    except OSError as exc:
        raise StudioError(describe_os_error(exc, "staging the copy here") + f" {output} was not written.") from None


def server_to_bucket(request: ResizeRequest, progress: Progress) -> ResizeResult:
    """Server to a bucket: a resized copy of the server's artifact below the bucket's prefix; the server's folder
    is only read."""
    source, output = expect(request.source, ServerFolder), expect(request.output, BucketPrefix)  # dispatch.CROSSINGS
    there = server(source.host)
    artifact = open_remote_artifact(there, source, progress.cancel)  # checked as inspect checks it, read there
    plan(artifact, request)  # a bad request fails before a byte moves
    check_output_prefix(output, progress)
    try:
        with StagingDir(staging_root() / (source.name or "artifact"), claim=False) as staging:
            folder = staging.path / (source.name or "artifact")  # beside the staging marker: an artifact of its own
            folder.mkdir()
            fetch_folder(there, source, folder, progress)
            return resize_folder_to_bucket(request, progress, folder)  # checked again: the bytes fetched
    except OSError as exc:
        raise StudioError(describe_os_error(exc, "staging the copy here") + f" {output} was not written.") from None
