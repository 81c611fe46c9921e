"""Rescan one changed folder against the artifacts already known: what is new or changed, what is gone."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, IssueCallback, scan, summarize
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER, is_internal_name
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME


def is_artifact_dir(folder: str | Path) -> bool:
    """A folder holding an rbln_config.json that is not a staging folder still being written."""
    return os.path.isfile(os.path.join(folder, CONFIG_NAME)) and not os.path.exists(
        os.path.join(folder, INCOMPLETE_MARKER)
    )


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass
class FolderRescan:
    """The outcome of rescanning `folder`: rows to drop now, folders to watch, and rows to add as they are read."""

    folder: str
    removed: list[str] = field(default_factory=list)
    watch: list[str] = field(default_factory=list)
    _pending: list[Path] = field(default_factory=list)
    _single: Path | None = None

    def summaries(
        self, cancel: CancelToken | None = None, on_issue: IssueCallback | None = None
    ) -> Iterator[ArtifactSummary]:
        """New or changed artifacts under the folder, in path order, read lazily."""
        if self._single is not None:
            yield summarize(self._single)
        for child in self._pending:
            yield from scan(child, cancel, on_issue)


def rescan_folder(folder: str | Path, known: Collection[str]) -> FolderRescan:
    """Compare a folder on disk with the known artifact paths (strings as the scan reports them).

    A changed folder is either gone (every known artifact under it goes), an artifact (read it again), or a
    plain folder: known artifacts under it whose config vanished go, and subfolders holding no known
    artifact are scanned, since a plain folder's change means entries appeared in it or left it.
    """
    folder = str(folder)
    result = FolderRescan(folder)
    inside = [p for p in known if _under(p, folder)]
    if not os.path.isdir(folder):
        result.removed = inside
        return result
    if is_artifact_dir(folder):
        result.removed = [p for p in inside if p != folder]
        result._single = Path(folder)
        return result
    result.removed = [p for p in inside if p == folder or not is_artifact_dir(p)]
    gone = set(result.removed)
    prefix = len(folder.rstrip(os.sep)) + 1
    occupied = {p[prefix:].split(os.sep, 1)[0] for p in inside if p not in gone}
    try:
        with os.scandir(folder) as entries:
            children = sorted(
                e.path for e in entries if not e.name.startswith(".") and not is_internal_name(e.name) and e.is_dir()
            )
    except OSError:
        children = []
    result.watch = [folder, *children]  # the folder too: made again after a delete, Qt no longer watches it
    result._pending = [Path(c) for c in children if os.path.basename(c) not in occupied]
    return result
