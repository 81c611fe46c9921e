"""An artifact's files as pieces held in memory (what a server sent, or what ranged GETs fetched from a bucket).

The studio's own reader (artifact.Files) checks them exactly as it checks a local folder: each file has its size,
the pieces sent, and zeros between them, as a sparse file laid out from them would read.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path, PurePosixPath
from typing import Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import GRAPH_SUFFIX
from rbln_artifact_studio.core.fleet.damage import damage_read
from rbln_artifact_studio.core.simulator.container import ContainerInfo, ReadAt, probe_read
from rbln_artifact_studio.core.storage.sharing import SharedFile

Pieces = dict[str, list[tuple[int, bytes]]]
"""What a check reads of each file: (offset, bytes) pieces, the rest of the file being zeros (sparse)."""


def file_name(name: object) -> str:
    """A name sent for one of an artifact's files: "name", or "part/name" in a compiled part's folder."""
    text = str(name)
    parts = PurePosixPath(text).parts
    if not 1 <= len(parts) <= 2 or PurePosixPath(text).is_absolute() or {"..", "."} & set(parts):
        raise StudioError(f"The server named a file {text!r}, which is not a file of an artifact.")
    return text


def lay_out(files: list[list[Any]], pieces: Pieces, folder: Path) -> None:
    """What the checks read of the answer, as local files: the configs whole and every graph with its size
    (sparse: a simulator graph's header written, a real one's bytes left out). Other files are listed only."""
    folder.mkdir()
    for name, size in files:
        if name not in pieces and not str(name).endswith(GRAPH_SUFFIX):
            continue
        path = folder / file_name(name)
        path.parent.mkdir(exist_ok=True)  # a compiled part's subfolder (language_model/, unet/)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            for offset, data in pieces.get(name, ()):
                os.pwrite(fd, data, offset)
            os.ftruncate(fd, int(size))
        finally:
            os.close(fd)


class SentFiles:
    """An artifact's files as they were sent, for the reader (artifact.Files): each file its size, the
    pieces sent, zeros between them (as a file laid out from them reads); nothing here is read or written."""

    def __init__(self, root: Path, files: list[list[Any]], pieces: Pieces) -> None:
        self.root = root
        self.sizes = {file_name(name): int(size) for name, size in files}
        self.pieces = pieces

    def read_at(self, name: str) -> ReadAt:
        size, pieces = self.sizes[name], self.pieces.get(name, ())

        def read(length: int, offset: int) -> bytes:
            end = min(offset + length, size)
            out = bytearray(max(end - offset, 0))
            for start, data in pieces:
                low, high = max(start, offset), min(start + len(data), end)
                if low < high:
                    out[low - offset : high - offset] = data[low - start : high - start]
            return bytes(out)

        return read

    def whole(self, name: str) -> bytes | None:
        """A file sent whole (a config), or None when none of it was sent."""
        return self.read_at(name)(self.sizes[name], 0) if name in self.sizes and name in self.pieces else None

    def _name(self, path: Path) -> str:
        """The path's name in the answer (its parts below the artifact's folder)."""
        return "/".join(path.parts[len(self.root.parts) :])

    def listing(self, folder: Path) -> tuple[list[tuple[str, Path, int]], list[tuple[str, int]]]:
        prefix = self._name(folder)
        prefix = f"{prefix}/" if prefix else ""
        graphs, others = [], []
        for name, size in sorted(self.sizes.items()):
            own = name[len(prefix) :]
            if not name.startswith(prefix) or "/" in own:
                continue
            if own.endswith(GRAPH_SUFFIX):
                graphs.append((own[: -len(GRAPH_SUFFIX)], folder / own, size))
            else:
                others.append((own, size))
        return graphs, others

    def probe(self, path: Path) -> ContainerInfo | None:
        name = self._name(path)
        return probe_read(path, self.sizes[name], self.read_at(name))

    def damage_without_magic(self, path: Path) -> str | None:
        name = self._name(path)
        return damage_read(self.sizes[name], self.read_at(name))

    def shared(self, folder: Path, names: list[str]) -> list[SharedFile]:
        return []  # as a folder laid out from the answer: links where the files live are that side's concern


class FetchedFiles(SentFiles):
    """SentFiles whose missing ranges are fetched when the reader first asks for them (a header longer than the
    first read, a graph's slots), and kept for the next read: so a check never reads zeros where the file has
    bytes. A subclass says how one range is fetched."""

    def __init__(self, root: Path, files: list[list[Any]], pieces: Pieces) -> None:
        super().__init__(root, files, pieces)
        self._lock = threading.Lock()

    def fetch(self, name: str, low: int, high: int) -> bytes:
        """Bytes [low, high) of the file called name."""
        raise NotImplementedError

    def read_at(self, name: str) -> ReadAt:
        inner = super().read_at
        size = self.sizes[name]

        def read(length: int, offset: int) -> bytes:
            self._fill(name, offset, min(offset + length, size))
            return inner(name)(length, offset)

        return read

    def _fill(self, name: str, start: int, end: int) -> None:
        """Fetch the parts of [start, end) not fetched yet."""
        with self._lock:
            gaps, at = [], start
            for low, data in sorted(self.pieces.get(name, [])):
                if low > at and at < end:
                    gaps.append((at, min(low, end)))
                at = max(at, low + len(data))
            if at < end:
                gaps.append((at, end))
            for low, high in gaps:
                self.pieces.setdefault(name, []).append((low, self.fetch(name, low, high)))
