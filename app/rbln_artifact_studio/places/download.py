"""A server's or a bucket's artifact copied to a new folder on this computer as it is (no resize): the desktop's
"Download to This Computer…".

The bytes go into a hidden staging folder beside the destination (core/storage/fsutil.StagingDir) and reach the
destination's name by one rename only when all of them are on disk; a failure or a cancel removes the staging
folder, so the destination holds the whole artifact or nothing. A server's folder is read under its lock there
(remote/transfer.fetch_folder), a bucket's objects each as of the ETag listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rbln_artifact_studio.core.errors import CancelledError, StudioError
from rbln_artifact_studio.core.location import BucketPrefix, LocalFolder, Location, ServerFolder
from rbln_artifact_studio.core.progress import Progress
from rbln_artifact_studio.core.storage.fsutil import StagingDir, check_new_output_dir, describe_os_error


@dataclass(frozen=True)
class Downloaded:
    """Where the copy was written, and how many bytes it holds."""

    where: LocalFolder
    size: int


def download_refusal(source: Location) -> str | None:
    """Why source cannot be downloaded to this computer (None: it can), asked before anything is read."""
    if isinstance(source, ServerFolder | BucketPrefix):
        return None
    if isinstance(source, LocalFolder):
        return f"{source} is already on this computer; copy it with the file manager. Nothing was written."
    from rbln_artifact_studio.places.dispatch import capabilities

    return (
        f"{source} is {capabilities(source).what}: the studio downloads artifacts from a server or a bucket only. "
        "Nothing was written."
    )


def _fetch(source: Location, into: Path, progress: Progress) -> int:
    """Every file of source into the empty staging folder `into`; the bytes fetched."""
    if isinstance(source, ServerFolder):
        from rbln_artifact_studio.places.ssh import server
        from rbln_artifact_studio.remote.transfer import fetch_folder

        return fetch_folder(server(source.host), source, into, progress)
    assert isinstance(source, BucketPrefix), source  # download_refusal let no other kind through
    from rbln_artifact_studio.objectstore.artifacts import find

    bucket, found = find(source)  # none there, or an unfinished copy: refused with the reason
    progress.start(found.size, f"Downloading {source.name}")
    for name, obj in sorted(found.objects.items()):
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        bucket.download(obj, into / name, progress.advance)
    return found.size


def download(source: Location, output: Path, progress: Progress | None = None) -> Downloaded:
    """source's artifact, as it is, into the new folder output here; StudioError (nothing written) when it cannot."""
    progress = progress or Progress()
    refusal = download_refusal(source)
    if refusal is not None:
        raise StudioError(refusal)
    output = check_new_output_dir(output)  # exists with content, inside an artifact, not writable: said first
    try:
        with StagingDir(output, what="download") as staging:
            size = _fetch(source, staging.path, progress)
            progress.check()
            staging.publish()
    except CancelledError:
        raise CancelledError(f"Cancelled; nothing was written at {output}.") from None
    except OSError as exc:
        raise StudioError(describe_os_error(exc, f"writing {output}") + " Nothing was written there.") from None
    progress.say(f"Downloaded {source} to {output}")
    return Downloaded(LocalFolder(output), size)
