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
    volume: "str | None"  # the Kubernetes volume (atomic writer's layout) the folder is read through, if any


DATA_LINK = "..data"
"""The kubelet's atomic writer: a volume's `..data` links to its current `..<timestamp>` folder, and each top-level
entry is a link through `..data`; an update writes a new timestamped folder and renames a new link over `..data`."""


def volume_version(volume: str) -> "str | None":
    """Which version of a Kubernetes volume `..data` names now (its link's text), None when it names none."""
    try:
        return os.readlink(os.path.join(volume, DATA_LINK))
    except OSError:
        return None


def _hidden_below(path: str, folder: str) -> bool:
    """True when path lies below folder through a hidden name (one the walk never enters by its real path)."""
    rest = path[len(folder.rstrip(os.sep)) + 1 :] if path != folder else ""
    return any(part.startswith(".") for part in rest.split(os.sep) if part)


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

    A Kubernetes ConfigMap or Secret volume (see DATA_LINK) is read as the kubelet means it: its entries are
    entered through their links (their real folders, under a hidden timestamped one, are never walked), so each
    artifact is listed once, by the name the volume shows; each Found names the volume, for the caller to notice
    a swap of `..data` (volume_version) while it reads.
    """
    boundary_real = os.path.realpath(boundary or root)
    seen = set() if seen is None else seen
    parent = os.path.dirname(root.rstrip(os.sep))
    opened_volume = parent if os.path.basename(root.rstrip(os.sep)) == DATA_LINK and os.path.islink(root) else None
    stack = [(root, None, None, opened_volume)]  # type: list[tuple[str, str | None, OSError | None, str | None]]
    first = True
    while stack:
        if check is not None:
            check()
        folder, link_target, failure, volume = stack.pop()
        if failure is not None:
            yield Found(folder, None, None, failure, "read", volume)
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
                yield Found(folder, None, link_target, exc, "list", volume)
            first = False
            continue
        skip = skip_children if first else frozenset()
        first = False
        if any(e.name == DATA_LINK and e.is_symlink() for e in entries):
            volume = folder
        if is_artifact((e.name for e in entries), folder):
            yield Found(folder, entries, link_target, None, "", volume)
            continue  # an artifact's subfolders belong to it (a VLM's language_model/, a pipeline's unet/)
        subfolders = []  # type: list[tuple[str, str | None, OSError | None, str | None]]
        for entry in entries:
            if entry.name.startswith(".") or entry.name in skip:
                continue  # hidden folders, and our staging folders, are never artifacts
            try:
                if not entry.is_dir():
                    continue
                if not entry.is_symlink():
                    subfolders.append((entry.path, None, None, volume))
                    continue
                target = os.path.realpath(entry.path)
                if is_inside(target, boundary_real) and _hidden_below(target, boundary_real):
                    subfolders.append((entry.path, None, None, volume))  # e.g. a volume's entry through `..data`
                    continue
                if is_inside(boundary_real, target) or is_inside(target, boundary_real):
                    continue  # an ancestor (would loop or wander out), or a folder reached by its real path
                if is_artifact(os.listdir(target), target):
                    subfolders.append((entry.path, target, None, volume))
                elif on_issue is not None:
                    on_issue(entry.path, f"{entry.path} links to {target}, outside {root}; not followed.")
            except OSError as exc:  # this entry fails (a link to itself, no permission): it alone becomes a row
                subfolders.append((entry.path, None, exc, volume))
        stack.extend(sorted(subfolders, key=lambda s: s[0], reverse=True))


class VolumeVersions:
    """Which version of each Kubernetes volume every row was read from: a swap of `..data` while a scan reads is
    told (which rows come from which version) instead of passing as one volume."""

    def __init__(self) -> None:
        self.rows = {}  # type: dict[str, list[tuple[str | None, str]]]

    def note(self, volume: "str | None", version: "str | None", folder: str) -> None:
        if volume is not None:
            self.rows.setdefault(volume, []).append((version, folder))

    def messages(self) -> "list[str]":
        """One sentence per volume whose rows were read from more than one version."""
        out = []
        for volume, rows in sorted(self.rows.items()):
            versions = []  # type: list[str | None]
            for version, _ in rows:
                if version not in versions:
                    versions.append(version)
            if len(versions) < 2:
                continue
            parts = [
                "{} from {}".format(
                    ", ".join(os.path.basename(f) for v, f in rows if v == version), version or "no version"
                )
                for version in versions
            ]
            out.append(
                "{} was updated while it was scanned (its {} moved): rows {}; scan again to see one version.".format(
                    volume, DATA_LINK, "; ".join(parts)
                )
            )
        return out
