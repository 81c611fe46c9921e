"""An artifact's files as pieces held in memory (what a server sent, or what ranged GETs fetched from a bucket).

The studio's own reader (artifact.Files, artifact.open_from) checks them exactly as it checks a local folder, every
layout (a VLM's language_model/ part, a pipeline's components) read where it lives: each file has its size, the
pieces sent, and zeros between them, as a sparse file of that size would read. Nothing is written anywhere.
"""

from __future__ import annotations

import threading
from pathlib import Path, PurePosixPath
from typing import Any

from rbln_artifact_studio.core.errors import ConfigError, StudioError
from rbln_artifact_studio.core.fleet.artifact import GRAPH_SUFFIX
from rbln_artifact_studio.core.fleet.damage import damage_read
from rbln_artifact_studio.core.simulator.container import ContainerInfo, ReadAt, probe_read
from rbln_artifact_studio.core.storage.jsonfile import MAX_JSON_BYTES
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


class SentFiles:
    """An artifact's files as they were sent, for the reader (artifact.Files): each file its size, the
    pieces sent, zeros between them (as a sparse file of its size reads); nothing here is read or written.
    A path outside root (the folder above a language_model/ opened alone) is not there."""

    on_disk = False

    def __init__(self, root: Path, files: list[list[Any]], pieces: Pieces) -> None:
        self.root = root
        self.sizes = {file_name(name): int(size) for name, size in files}
        self.pieces = pieces

    def _below(self, path: Path) -> str | None:
        """path's name below root ('' for root itself), None when it is not below root."""
        parts = path.parts
        return "/".join(parts[len(self.root.parts) :]) if parts[: len(self.root.parts)] == self.root.parts else None

    def read(self, path: Path) -> bytes:
        name = self._below(path)
        data = None if name is None else self.whole(name)
        if data is not None:
            return data
        size = self.sizes.get(name or "")
        if size is not None and size > MAX_JSON_BYTES:  # listed, never fetched: too large for a config
            raise ConfigError(f"{path} is {size:,} bytes, far too large for a config file.")
        raise ConfigError(f"{path} does not exist: this folder is not a compiled artifact.")

    def is_file(self, path: Path) -> bool:
        return self._below(path) in self.sizes

    def is_dir(self, path: Path) -> bool:
        name = self._below(path)
        return name == "" or (name is not None and any(n.startswith(name + "/") for n in self.sizes))

    def exists(self, path: Path) -> bool:
        return self.is_file(path) or self.is_dir(path)

    def has_graphs(self, folder: Path) -> bool:
        return bool(self.listing(folder)[0])

    def _size(self, path: Path) -> tuple[str, int]:
        """path's name and size; FileNotFoundError (as a missing local file) when it is none of the files."""
        name = self._below(path)
        if name is None or name not in self.sizes:
            raise FileNotFoundError(f"{path} does not exist")
        return name, self.sizes[name]

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

    def listing(self, folder: Path) -> tuple[list[tuple[str, Path, int]], list[tuple[str, int]]]:
        prefix = self._below(folder)
        graphs: list[tuple[str, Path, int]] = []
        others: list[tuple[str, int]] = []
        if prefix is None:
            return graphs, others  # a folder outside the artifact's: none of its files
        prefix = f"{prefix}/" if prefix else ""
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
        name, size = self._size(path)
        return probe_read(path, size, self.read_at(name))

    def damage_without_magic(self, path: Path) -> str | None:
        name, size = self._size(path)
        return damage_read(size, self.read_at(name))

    def shared(self, folder: Path, names: list[str]) -> list[SharedFile]:
        return []  # links where the files live are that side's concern


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
