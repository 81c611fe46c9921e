"""In-process I/O fault injection: the write primitives fail with a chosen errno from the N-th write on.

Every call that writes below a root folder is a numbered "write point": opening a file for writing, each
write through such a file, os.open with write flags, os.write/pwrite/ftruncate/fsync/copy_file_range,
os.replace/rename, os.mkdir, os.symlink, os.chmod/utime. Removing files (unlink, rmdir) always works,
as it does on a full disk. From the fail_at-th point on every point raises OSError(errno), as a disk
that fills up or is remounted read-only stays so.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class InjectedFault(OSError):
    """The OSError the injector raises (a subclass, so a test can tell it from a real one)."""


class FaultFS:
    def __init__(self, root: Path, fail_at: int | None = None, err: int = errno.ENOSPC) -> None:
        self.root = os.path.realpath(root)
        self.fail_at = fail_at
        self.err = err
        self.points: list[str] = []  # every write point reached, with its outcome
        self.renamed: list[str] = []  # destinations of renames that succeeded
        self.failed = False

    # ---- bookkeeping --------------------------------------------------------------------------------

    def _under_root(self, path: Any) -> bool:
        try:
            real = os.path.realpath(os.fspath(path))
        except (TypeError, ValueError):
            return False
        return real == self.root or real.startswith(self.root + os.sep)

    def _fd_under_root(self, fd: int) -> str | None:
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
        return path if path == self.root or path.startswith(self.root + os.sep) else None

    def point(self, what: str, path: Any) -> None:
        n = len(self.points) + 1
        if self.fail_at is not None and n >= self.fail_at:
            self.points.append(f"{what} {path} -> {errno.errorcode[self.err]}")
            self.failed = True
            raise InjectedFault(self.err, os.strerror(self.err), os.fspath(path) if path else None)
        self.points.append(f"{what} {path}")

    # ---- patched primitives -------------------------------------------------------------------------

    @contextmanager
    def active(self) -> Iterator[FaultFS]:
        saved: dict[tuple[Any, str], Any] = {}

        def patch(owner: Any, name: str, make: Callable[[Any], Any]) -> None:
            saved[(owner, name)] = getattr(owner, name)
            setattr(owner, name, make(saved[(owner, name)]))

        patch(builtins, "open", self._open)
        patch(io, "open", self._open)
        patch(os, "open", self._os_open)

        def wrap(method: Callable[[str, Any], Any], name: str) -> Callable[[Any], Any]:
            return lambda real: method(name, real)

        for name in ("write", "pwrite", "ftruncate", "fsync"):
            patch(os, name, wrap(self._fd_call, name))
        patch(os, "copy_file_range", self._copy_range)
        for name in ("replace", "rename"):
            patch(os, name, wrap(self._rename, name))
        for name in ("mkdir", "symlink", "chmod", "utime"):
            patch(os, name, wrap(self._path_call, name))
        try:
            yield self
        finally:
            for (owner, name), value in saved.items():
                setattr(owner, name, value)

    def _open(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def fake_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            writing = any(c in mode for c in "wax+")
            if writing and not isinstance(file, int) and self._under_root(file):
                self.point(f"open({mode})", file)
                return _FaultyFile(real(file, mode, *args, **kwargs), self, str(file))
            return real(file, mode, *args, **kwargs)

        return fake_open

    def _os_open(self, real: Callable[..., int]) -> Callable[..., int]:
        def fake(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if flags & _WRITE_FLAGS and self._under_root(path):
                self.point("os.open", path)
            return real(path, flags, *args, **kwargs)

        return fake

    def _fd_call(self, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def fake(fd: int, *args: Any) -> Any:
            path = self._fd_under_root(fd)
            if path:
                self.point(f"os.{name}", path)
            return real(fd, *args)

        return fake

    def _copy_range(self, real: Callable[..., int]) -> Callable[..., int]:
        def fake(src: int, dst: int, count: int, *args: Any) -> int:
            path = self._fd_under_root(dst)
            if path:
                self.point("os.copy_file_range", path)
            return real(src, dst, count, *args)

        return fake

    def _rename(self, name: str, real: Callable[..., None]) -> Callable[..., None]:
        def fake(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            if self._under_root(src):
                self.point(f"os.{name}", f"{src} -> {dst}")
                real(src, dst, *args, **kwargs)
                self.renamed.append(os.fspath(dst))
                return
            real(src, dst, *args, **kwargs)

        return fake

    def _path_call(self, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def fake(path: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(path, int) and self._under_root(path):
                self.point(f"os.{name}", path)
            return real(path, *args, **kwargs)

        return fake


class _FaultyFile:
    """A file object whose writes are write points."""

    def __init__(self, f: Any, fs: FaultFS, path: str) -> None:
        self._f, self._fs, self._path = f, fs, path

    def write(self, data: Any) -> int:
        self._fs.point("write", self._path)
        return self._f.write(data)

    def __enter__(self) -> _FaultyFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._f)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)
