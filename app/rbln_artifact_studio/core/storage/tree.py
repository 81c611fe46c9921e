"""What the model's readers ask of a folder's files: read a small file, whether a path is a file or a folder there,
whether a folder holds graphs. This computer's disk answers (DISK_TREE), or what a server sent of an artifact, or a
bucket's objects (core/fleet/sent_files.py): one reader then reads every kind of place where it lives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from rbln_artifact_studio.core.storage.jsonfile import read_bytes

GRAPH_SUFFIX = ".rbln"


class Tree(Protocol):
    """An artifact's folder and the files below it, where they live. Paths are as the reader names them."""

    on_disk: bool
    """Whether the paths are this computer's (a missing graph's path may then be looked at for what it is)."""

    def read(self, path: Path) -> bytes:
        """A small file's bytes (a config); ConfigError saying why not, in jsonfile.read_bytes's words."""
        ...

    def is_file(self, path: Path) -> bool: ...

    def is_dir(self, path: Path) -> bool: ...

    def exists(self, path: Path) -> bool: ...

    def has_graphs(self, folder: Path) -> bool:
        """Whether the folder holds a .rbln file directly."""
        ...


class DiskTree:
    """This computer's files."""

    on_disk = True
    read = staticmethod(read_bytes)

    @staticmethod
    def is_file(path: Path) -> bool:
        return path.is_file()

    @staticmethod
    def is_dir(path: Path) -> bool:
        return path.is_dir()

    @staticmethod
    def exists(path: Path) -> bool:
        return path.exists()

    @staticmethod
    def has_graphs(folder: Path) -> bool:
        return any(folder.glob(f"*{GRAPH_SUFFIX}"))


DISK_TREE: Tree = DiskTree()
