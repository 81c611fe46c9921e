"""The walk of a scan: every artifact folder under a root in path order, never looping, never leaving the root."""

import os
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    IsArtifact = Callable[[Iterable[str], str], bool]
    """Whether a folder (its entries' names, its path) is an artifact; the scan's own rule, passed in."""


class Found(NamedTuple):
    """An artifact folder with its listing, or an entry that could not be read (entries None, error set)."""

    folder: str
    entries: "list[os.DirEntry[str]] | None"
    link_target: "str | None"
    error: "OSError | None"
    action: str  # what failed on the entry: "read" it, or "list" its folder (no defaults: Python 3.6.0 has none)


def is_inside(path: str, folder: str) -> bool:
    """True when path is folder or lies below it (whole path components, not a shared prefix)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def walk(
    root: str,
    is_artifact: "IsArtifact",
    on_issue: "Callable[[str, str], None] | None" = None,
    boundary: "str | None" = None,
    skip_children: "frozenset[str]" = frozenset(),
    seen: "set[tuple[int, int]] | None" = None,
    check: "Callable[[], None] | None" = None,
) -> "Iterator[Found]":
    """Artifacts under root in path order, each real folder once (by device and inode).

    Folders are entered by their real paths only: a symlinked folder inside the boundary (the opened root)
    is reached where it really lies; a link to the boundary or an ancestor is never followed (no loops, no
    wandering out); a link to an artifact outside is listed once, marked with its target; a link to any
    other folder outside is reported (on_issue(path, message)) and skipped. An entry that cannot be read is
    yielded with its error. Hidden names are never entered: the studio's lock, marker, temp and staging
    names all start with a dot. skip_children: names in root not to enter; check runs before each folder
    (a cancel raises there).
    """
    boundary_real = os.path.realpath(boundary or root)
    seen = set() if seen is None else seen
    stack = [(root, None, None)]  # type: list[tuple[str, str | None, OSError | None]]
    first = True
    while stack:
        if check is not None:
            check()
        folder, link_target, failure = stack.pop()
        if failure is not None:
            yield Found(folder, None, None, failure, "read")
            continue
        try:
            st = os.stat(folder)
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue
            seen.add(key)
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            if first:
                if on_issue is not None:
                    on_issue(folder, f"Cannot list {folder}: {exc.strerror or exc}; skipped.")
            else:
                yield Found(folder, None, link_target, exc, "list")
            first = False
            continue
        skip = skip_children if first else frozenset()
        first = False
        if is_artifact((e.name for e in entries), folder):
            yield Found(folder, entries, link_target, None, "")
            continue  # an artifact's subfolders belong to it (a VLM's language_model/, a pipeline's unet/)
        subfolders = []  # type: list[tuple[str, str | None, OSError | None]]
        for entry in entries:
            if entry.name.startswith(".") or entry.name in skip:
                continue  # hidden folders, and our staging folders, are never artifacts
            try:
                if not entry.is_dir():
                    continue
                if not entry.is_symlink():
                    subfolders.append((entry.path, None, None))
                    continue
                target = os.path.realpath(entry.path)
                if is_inside(boundary_real, target) or is_inside(target, boundary_real):
                    continue  # an ancestor (would loop or wander out), or a folder reached by its real path
                if is_artifact(os.listdir(target), target):
                    subfolders.append((entry.path, target, None))
                elif on_issue is not None:
                    on_issue(entry.path, f"{entry.path} links to {target}, outside {root}; not followed.")
            except OSError as exc:  # this entry fails (a link to itself, no permission): it alone becomes a row
                subfolders.append((entry.path, None, exc))
        stack.extend(sorted(subfolders, key=lambda s: s[0], reverse=True))
