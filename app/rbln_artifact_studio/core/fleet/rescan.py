"""Rescan one changed folder against the artifacts already known: what is new or changed, what is gone."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, IssueCallback, Verifier, is_inside, scan, summarize
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER, is_internal_name
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME


def is_artifact_dir(folder: str | Path) -> bool:
    """A folder holding an rbln_config.json that is not a staging folder still being written."""
    return os.path.isfile(os.path.join(folder, CONFIG_NAME)) and not os.path.exists(
        os.path.join(folder, INCOMPLETE_MARKER)
    )


@dataclass
class FolderRescan:
    """The outcome of rescanning `folder`: rows to drop now, folders to watch, and rows to add as they are read."""

    folder: str
    root: str
    removed: list[str] = field(default_factory=list)
    watch: list[str] = field(default_factory=list)
    _occupied: frozenset[str] = frozenset()
    _single: Path | None = None
    _walk: bool = False

    def summaries(
        self,
        cancel: CancelToken | None = None,
        on_issue: IssueCallback | None = None,
        verify: Verifier | bool | None = True,
    ) -> Iterator[ArtifactSummary]:
        """New or changed artifacts under the folder, in path order, read lazily (the scan's own walk: links
        judged against the root, each real folder once; verify=False leaves rows "checking", see verify.py)."""
        if self._single is not None:
            link = os.path.realpath(self._single) if os.path.islink(self._single) else None
            yield summarize(self._single, verify=verify, link_target=link)
        if self._walk:
            yield from scan(
                Path(self.folder),
                cancel,
                on_issue,
                verify=verify,
                boundary=Path(self.root),
                skip_children=self._occupied,
            )


def _child_folders(folder: str) -> list[str]:
    """The visible subfolders, each entry on its own: one that cannot be read (a link to itself) is left out."""
    children = []
    try:
        with os.scandir(folder) as entries:
            for e in entries:
                if e.name.startswith(".") or is_internal_name(e.name):
                    continue
                try:
                    if e.is_dir():
                        children.append(e.path)
                except OSError:
                    continue  # the walk reports it as a row
    except OSError:
        return []
    return sorted(children)


def rescan_folder(folder: str | Path, known: Collection[str], root: str | Path | None = None) -> FolderRescan:
    """Compare a folder on disk with the known artifact paths (strings as the scan reports them).

    A changed folder is either gone (every known artifact under it goes), an artifact (read it again), or a
    plain folder: known rows under it that are no artifact any more go, and the folder is walked again
    except for subfolders that hold known artifacts, since a plain folder's change means entries appeared
    in it or left it. root is the opened folder (links are judged against it; default: folder).
    """
    folder = str(folder)
    result = FolderRescan(folder, str(root or folder))
    inside = [p for p in known if is_inside(p, folder)]
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
    result._occupied = frozenset(p[prefix:].split(os.sep, 1)[0] for p in inside if p not in gone)
    result.watch = [
        folder,
        *_child_folders(folder),
    ]  # the folder too: made again after a delete, Qt no longer watches it
    result._walk = True
    return result
