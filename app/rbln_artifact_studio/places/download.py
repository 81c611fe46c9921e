"""A server's or a bucket's artifact copied to a new folder on this computer as it is (no resize): the desktop's
"Download to This Computer…".

The bytes go into a hidden staging folder beside the destination (core/storage/fsutil.StagingDir) and reach the
destination's name by one rename only when all of them are on disk; a failure or a cancel removes the staging
folder, so the destination holds the whole artifact or nothing. A server's folder is read under its lock there
(remote/transfer.fetch_folder), a bucket's objects each as of the ETag listed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rbln_artifact_studio.core.errors import NOTHING_CHANGED, CancelledError, Remedy, StudioError
from rbln_artifact_studio.core.location import LocalFolder, Location
from rbln_artifact_studio.core.progress import Progress
from rbln_artifact_studio.core.storage.fsutil import StagingDir, check_new_output_dir, describe_os_error
from rbln_artifact_studio.places.dispatch import DOWNLOADS, capabilities, path_here


@dataclass(frozen=True)
class Downloaded:
    """Where the copy was written, and how many bytes it holds."""

    where: LocalFolder
    size: int


def download_refusal(source: Location) -> str | None:
    """Why source cannot be downloaded to this computer (None: it can), asked before anything is read."""
    caps = capabilities(source)
    if caps.on_this_computer:
        return f"{source} is already on this computer; copy it with the file manager. {NOTHING_CHANGED}"
    if type(source) in DOWNLOADS:
        return None
    return f"{source} is {caps.what}: the studio downloads artifacts from a server or a bucket only. {NOTHING_CHANGED}"


def _fetch(source: Location, into: Path, progress: Progress) -> int:
    """Every file of source into the empty staging folder `into`, by the function dispatch.DOWNLOADS names for
    its kind (download_refusal let no other kind through); the bytes fetched."""
    module, name = DOWNLOADS[type(source)]
    fetch: Callable[[Location, Path, Progress], int] = getattr(importlib.import_module(module), name)
    return fetch(source, into, progress)


def destination_refusal(output: Location) -> StudioError | None:
    """Why output cannot take a download, as the refusal to raise (None: it is a folder on this computer), before
    anything is read."""
    if path_here(output) is not None:
        return None
    return StudioError(
        f"{output} is {capabilities(output).what}: a download writes a new folder on this computer",
        remedy=Remedy("To put a copy there, resize to a copy ({option}).", "output", str(output)),
        unchanged=True,
    )


def download(source: Location, output: Location, progress: Progress | None = None) -> Downloaded:
    """source's artifact, as it is, into the new folder output here (a Location parsed once, by the caller);
    StudioError (nothing written) when it cannot."""
    progress = progress or Progress()
    refusal = download_refusal(source)
    if refusal is not None:
        raise StudioError(refusal)
    refused = destination_refusal(output)
    if refused is not None:
        raise refused
    here = path_here(output)
    assert here is not None  # destination_refusal let no other place through
    folder = check_new_output_dir(here)  # exists with content, inside an artifact, not writable: said first
    try:
        with StagingDir(folder, what="download") as staging:
            size = _fetch(source, staging.path, progress)
            progress.check()
            staging.publish()
    except CancelledError:
        raise CancelledError(f"Cancelled before {folder} was written", unchanged=True) from None
    except OSError as exc:
        raise StudioError(describe_os_error(exc, f"writing {folder}"), unchanged=True) from None
    progress.say(f"Downloaded {source} to {folder}")
    return Downloaded(LocalFolder(folder), size)
