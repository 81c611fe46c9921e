"""The walk of a scan: every artifact folder under a root in path order, never looping, never leaving the root."""

import os
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    IsArtifact = Callable[[Iterable[str], str], bool]
    """Whether a folder (its entries' names, its path) is an artifact; the scan's own rule, passed in."""
    Subfolders = list[tuple[str, str | None, OSError | None, str | None]]  # path, link target, failure, volume
    Reading = tuple[list[os.DirEntry[str]], str | None, bool, Subfolders, list[tuple[str, str]]]


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
    seen_at = {}  # type: dict[tuple[int, int], str | None]  # a volume's folder seen: the version it was read at
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
        skip = skip_children if first else frozenset()
        try:
            reading = _steady_reading(folder, volume, seen, seen_at, skip, boundary_real, is_artifact, root)
        except OSError as exc:
            if first:
                if on_issue is not None:
                    on_issue(folder, f"Cannot list {folder}: {exc.strerror or exc}; skipped.")
            else:
                yield Found(folder, None, link_target, exc, "list", volume)
            first = False
            continue
        first = False
        if reading is None:
            continue  # a folder already walked (by another path to it)
        entries, volume, artifact, subfolders, issues = reading
        if artifact:
            yield Found(folder, entries, link_target, None, "", volume)
            continue  # an artifact's subfolders belong to it (a VLM's language_model/, a pipeline's unet/)
        if on_issue is not None:
            for path, message in issues:
                on_issue(path, message)
        stack.extend(sorted(subfolders, key=lambda s: s[0], reverse=True))


REREADS = 5  # readings of a folder inside a Kubernetes volume beyond the first, at most (see _steady_reading)


def _steady_reading(
    folder: str,
    volume: "str | None",
    seen: "set[tuple[int, int]]",
    seen_at: "dict[tuple[int, int], str | None]",
    skip: "frozenset[str]",
    boundary_real: str,
    is_artifact: "IsArtifact",
    root: str,
) -> "Reading | None":
    """folder's entries, the volume it is read through, whether it is an artifact, the subfolders to walk and the
    issues to report; None for a folder already seen (its device and inode).

    Inside a Kubernetes volume, the folder is read again until `..data` names the same version before and after
    a reading (REREADS more at most; then the last reading): a swap under a reading could show the version the
    kubelet was removing, half gone, so an artifact's folder looked like no artifact and was left out. A folder
    of a volume is seen with the version it was read at: the kubelet frees the old version's inodes, and a later
    version's folder may reuse one (it is another folder, not one walked already)."""
    before = volume_version(volume) if volume is not None else None
    for attempt in range(REREADS + 1):
        last = attempt == REREADS
        try:
            st = os.stat(folder)
            key = (st.st_dev, st.st_ino)
            if key in seen and seen_at.get(key, before) == before:
                return None  # (the same inode in a later version of a volume: another folder, reusing it)
            with os.scandir(folder) as it:
                entries = list(it)
            inside = folder if any(e.name == DATA_LINK and e.is_symlink() for e in entries) else volume
            artifact = is_artifact((e.name for e in entries), folder)
            subfolders, issues = (
                ([], []) if artifact else _subfolders(entries, skip, inside, boundary_real, is_artifact, root)
            )
        except OSError:
            if volume is None or last or volume_version(volume) == before:
                raise
            before = volume_version(volume)
            continue
        after = volume_version(inside) if inside is not None else None
        if inside is None or last or (inside == volume and after == before):
            seen.add(key)
            if inside is not None:
                seen_at[key] = after
            return entries, inside, artifact, subfolders, issues
        volume, before = inside, after  # a volume's own folder: read again, now that its version is known
    raise AssertionError("unreachable: the last attempt returns or raises")


def _subfolders(
    entries: "list[os.DirEntry[str]]",
    skip: "frozenset[str]",
    volume: "str | None",
    boundary_real: str,
    is_artifact: "IsArtifact",
    root: str,
) -> "tuple[Subfolders, list[tuple[str, str]]]":
    """The folders among entries the walk enters, and the issues to report (a link to a folder outside)."""
    subfolders = []  # type: Subfolders
    issues = []  # type: list[tuple[str, str]]
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
            else:
                issues.append((entry.path, f"{entry.path} links to {target}, outside {root}; not followed."))
        except OSError as exc:  # this entry fails (a link to itself, no permission): it alone becomes a row
            subfolders.append((entry.path, None, exc, volume))
    return subfolders, issues


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
