"""Read artifacts where they live through a kind of place's file access (list a folder, read a small file, read a
range): the studio's own reader checks what it fetched from memory, so such a place gets exactly a local verdict.

A kind of place that offers a FileAccess needs no reader of its own: scan_through and open_through walk it, fetch
each artifact's configs whole and its graphs' headers by range (never a payload), and check them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple, Protocol

from rbln_artifact_studio.core.errors import NotAnArtifactError, StudioError, reworded
from rbln_artifact_studio.core.fleet.artifact import GRAPH_SUFFIX, Artifact, GraphInspector, open_from
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, summarize_files
from rbln_artifact_studio.core.fleet.sent_files import FetchedFiles, Pieces
from rbln_artifact_studio.core.fleet.verify import described_row, with_verdict
from rbln_artifact_studio.core.location import Location
from rbln_artifact_studio.core.model.kinds import PIPELINE_INDEX, NoKvCacheError
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.status import Problem, Status
from rbln_artifact_studio.core.storage.fsutil import is_internal_name
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME, MAX_JSON_BYTES

TEXTS = frozenset({CONFIG_NAME, "config.json", PIPELINE_INDEX})
"""Files read whole: what the checks read of a config."""
MAX_DEPTH = 12  # how deep a scan looks below its root (a fleet is a few levels of folders, never a deep tree)


class Entry(NamedTuple):
    """One entry of a folder: its name, whether it is a folder, and its size in bytes (0 for a folder)."""

    name: str
    is_dir: bool
    size: int


class FileAccess(Protocol):
    """What a kind of place offers the reader. Paths are POSIX paths there ('/srv/a/rbln_config.json'); every call
    is bounded in time by the kind and raises StudioError saying what failed and what to do."""

    def list(self, path: str) -> list[Entry]:
        """The entries of the folder at path (StudioError when it is not a folder there)."""
        ...

    def read(self, path: str, limit: int) -> bytes:
        """The whole file at path, refused (StudioError) when it is larger than limit."""
        ...

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        """Up to length bytes of the file at path from offset (fewer at its end)."""
        ...


def path_there(root: Path, name: str) -> str:
    """The path there of the file called name (a name below the artifact's folder, "language_model/x.rbln")."""
    return f"{root.as_posix().rstrip('/')}/{name}"


class AccessFiles(FetchedFiles):
    """An artifact's files for the reader: the configs read whole, any other range read through the access when the
    reader first asks for it (a graph's preamble and header slots). pieces: what the caller fetched ahead (a
    bucket's scan fetches many artifacts' configs and headers at once), the configs then among them."""

    def __init__(self, root: Path, sizes: dict[str, int], access: FileAccess, pieces: Pieces | None = None) -> None:
        super().__init__(root, [[name, size] for name, size in sizes.items()], {} if pieces is None else pieces)
        self.access = access
        for name in sizes if pieces is None else ():
            if name.rsplit("/", 1)[-1] in TEXTS:
                self.pieces[name] = [(0, access.read(self.there(name), MAX_JSON_BYTES))]

    def there(self, name: str) -> str:
        return path_there(self.root, name)

    def fetch(self, name: str, low: int, high: int) -> bytes:
        return self.access.read_range(self.there(name), low, high - low)


def _hidden(name: str) -> bool:
    return name.startswith(".") or is_internal_name(name)


def artifact_files(access: FileAccess, path: str, listed: list[Entry] | None = None) -> dict[str, int] | None:
    """The files of the artifact at path (name below it -> size), its compiled parts' subfolders included; None when the
    folder holds no rbln_config.json or pipeline index (no artifact). listed: path's entries, when already listed."""
    entries = [e for e in (access.list(path) if listed is None else listed) if not _hidden(e.name)]
    names = {e.name for e in entries if not e.is_dir}
    if CONFIG_NAME not in names and PIPELINE_INDEX not in names:
        return None
    sizes = {e.name: e.size for e in entries if not e.is_dir}
    for folder in (e for e in entries if e.is_dir):
        inner = [e for e in access.list(f"{path.rstrip('/')}/{folder.name}") if not e.is_dir and not _hidden(e.name)]
        if any(e.name == CONFIG_NAME for e in inner):  # a compiled part (language_model/, unet/), as a scan here counts
            sizes.update((f"{folder.name}/{e.name}", e.size) for e in inner)
    return sizes


def _named_there(text: str, root: Path, where: Location) -> str:
    """A message of the reader, which names the artifact's path there, with the place's URL instead."""
    return text.replace(str(root), str(where))


def open_through(access: FileAccess, where: Location, path: str, inspector: GraphInspector | None = None) -> Artifact:
    """The artifact at path (where, as the user names it), checked as inspect checks a local folder; NoKvCacheError
    for a model without a resizable KV cache."""
    sizes = artifact_files(access, path)
    if sizes is None:
        raise NotAnArtifactError(
            f"{where} holds no artifact: there is no {CONFIG_NAME} there. Give an artifact's folder."
        )
    root = Path(path)
    try:
        artifact = open_from(root, AccessFiles(root, sizes, access), inspector)  # every layout, read where it lives
    except NoKvCacheError as exc:
        d = exc.description
        problems = tuple(Problem(p.severity, _named_there(p.message, root, where)) for p in d.problems)
        raise NoKvCacheError(replace(d, path=where, problems=problems)) from None
    except StudioError as exc:
        raise reworded(exc, lambda text: _named_there(text, root, where)) from None
    artifact.problems = [Problem(p.severity, _named_there(p.message, root, where)) for p in artifact.problems]
    artifact.unknown_reason = artifact.unknown_reason and _named_there(artifact.unknown_reason, root, where)
    artifact.where = where
    return artifact


def row_through(access: FileAccess, where: Location, path: str, sizes: dict[str, int]) -> ArtifactSummary:
    """The row of the artifact at path with the verdict inspect gives it; never raises for a bad artifact."""
    graphs = {n[: -len(GRAPH_SUFFIX)]: s for n, s in sizes.items() if "/" not in n and n.endswith(GRAPH_SUFFIX)}

    def read(file: str) -> bytes:
        try:
            return access.read(file, MAX_JSON_BYTES)
        except StudioError as exc:
            raise OSError(str(exc)) from None

    row = summarize_files(path, sum(sizes.values()), graphs, read)
    row = replace(row, path=str(where), name=where.name)
    try:
        artifact = open_through(access, where, path)
    except NoKvCacheError as exc:
        return described_row(row, exc.description)
    except StudioError as exc:
        return with_verdict(row, exc)
    return with_verdict(row, artifact)


def scan_through(
    access: FileAccess, root: Location, path: str, cancel: CancelToken | None = None
) -> Iterator[ArtifactSummary]:
    """Every artifact at or below path (root, as the user names it), in path order, each with its verdict; a folder
    that cannot be listed is a row saying why, not the end of the scan."""
    todo: list[tuple[Location, str, int]] = [(root, path, 0)]
    while todo:
        where, folder, depth = todo.pop(0)
        if cancel is not None:
            cancel.raise_if_cancelled()
        try:
            entries = access.list(folder)
            sizes = artifact_files(access, folder, entries)
        except StudioError as exc:
            if depth == 0:
                raise  # the root itself: the command's error, not a row
            yield ArtifactSummary(str(where), where.name, Status.INVALID, [exc.one_line()])
            continue
        if sizes is not None:
            yield row_through(access, where, folder, sizes)
            continue
        if depth >= MAX_DEPTH:
            continue
        below = sorted(e.name for e in entries if e.is_dir and not _hidden(e.name))
        todo[:0] = [(where.child(name), f"{folder.rstrip('/')}/{name}", depth + 1) for name in below]
