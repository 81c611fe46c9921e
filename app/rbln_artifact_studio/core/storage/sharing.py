"""Files of an artifact that another path can reach (hard links, symlinks), and copy-on-write before a write."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.core.storage.fsutil import copy_file, replace_via_temp


@dataclass(frozen=True)
class SharedFile:
    """A file an in-place write would reach through another path too, and why."""

    name: str
    size: int
    reason: str

    def describe(self) -> str:
        return f"{self.name} ({self.reason})"


def sharing_of(path: Path) -> str | None:
    """Why another path reaches this file (a symlink, or more than one hard link), or None when only it does."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return f"a link to {os.path.realpath(path)}"
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        return f"a hard link shared by {st.st_nlink} names"
    return None


def shared_files(folder: Path, names: Iterable[str]) -> list[SharedFile]:
    """Which of these files of folder another path can reach (they are written in place by a resize)."""
    out = []
    for name in sorted(names):
        path = Path(folder) / name
        reason = sharing_of(path)
        if reason is not None:
            try:
                size = os.stat(path).st_size
            except OSError:
                continue  # a dangling link: opening the artifact already reports the missing file
            out.append(SharedFile(name, size, reason))
    return out


def copy_on_write_bytes(files: Iterable[SharedFile]) -> int:
    """The bytes breaking the sharing writes (less where the file system clones the file)."""
    return sum(f.size for f in files)


def copy_on_write_note(files: list[SharedFile]) -> str | None:
    """What an in-place write does about shared files, in words, or None when nothing is shared."""
    if not files:
        return None
    names = "; ".join(f.describe() for f in files)
    total = copy_on_write_bytes(files)
    return (
        f"{len(files)} file(s) of this artifact are shared with another path: {names}. In place, the resize "
        f"first copies them ({format_bytes(total)}, {total:,} bytes; less where the file system clones files), "
        "so the other paths keep their bytes."
    )


def break_sharing(folder: Path, files: list[SharedFile], on_bytes: Callable[[int], None] | None = None) -> None:
    """Give the artifact its own copy of each shared file: copy beside it, fsync, rename over the link.

    The other path (a backup's hard link, a cache blob behind a symlink) is only read. Each step leaves the
    artifact meaning the same, so a kill at any instant leaves it opening as before (a temp file a killed
    run leaves is removed by the next writer: remove_stale_temp_files).
    """
    folder = Path(folder)
    for i, shared in enumerate(files):
        path = folder / shared.name

        def fill(tmp: Path, path: Path = path) -> None:
            copy_file(path, tmp, on_bytes or (lambda _n: None))

        replace_via_temp(path, fill, f"cow.copied.{i}", f"cow.renamed.{i}", "was unshared")
