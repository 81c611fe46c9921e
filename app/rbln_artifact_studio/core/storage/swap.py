"""Swap a staged folder in for an existing one with one atomic exchange (Linux renameat2 RENAME_EXCHANGE)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.core.storage.fsutil import tree_size

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    """glibc's renameat2 (2.28 and later), or None where the C library has none."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        func = libc.renameat2
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    func.restype = ctypes.c_int
    renameat2: Callable[[int, bytes, int, bytes, int], int] = func
    return renameat2


_RENAMEAT2 = _renameat2()


def exchange(a: Path, b: Path) -> None:
    """Atomically swap two paths: after it, a holds what b held and b what a held; never neither."""
    if _RENAMEAT2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available here")
    result = _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(a))


def can_exchange(parent: Path) -> bool:
    """Whether the file system under parent swaps folders atomically (tried on two empty folders there)."""
    token = secrets.token_hex(4)
    a, b = parent / f".rbln-studio-swap-a-{token}", parent / f".rbln-studio-swap-b-{token}"
    try:
        a.mkdir()
        b.mkdir()
        (a / "a").touch()
        exchange(a, b)
        return (b / "a").exists()
    except OSError:
        return False
    finally:
        shutil.rmtree(a, ignore_errors=True)
        shutil.rmtree(b, ignore_errors=True)


def require_exchange(parent: Path, what: str) -> None:
    """Refuse before any work when the swap at the end could not be atomic."""
    if not can_exchange(parent):
        raise StudioError(
            f"The file system of {parent} cannot swap folders atomically, so {what} could not guarantee the old "
            "or the new artifact after a crash. Resize to a copy instead (--output-dir)."
        )


def free_bytes(folder: Path) -> int:
    with contextlib.suppress(OSError):
        return shutil.disk_usage(folder).free
    return 0


def staging_room(folder: Path) -> tuple[int, int]:
    """(bytes a staged copy of the artifact takes, bytes free on its disk) for a staged in-place resize."""
    return tree_size(folder, dereference=True), free_bytes(folder.parent)


def staging_room_problem(folder: Path, tool: str) -> str | None:
    """Why a staged in-place resize does not fit the disk, with the numbers; None when it fits."""
    needed, free = staging_room(folder)
    if needed <= free:
        return None
    return (
        f"Resizing {folder.name} in place through {tool} first writes the resized artifact beside it "
        f"({format_bytes_exact(needed)}) and then swaps it in, so a crash leaves the old or the new one; the "
        f"disk has {format_bytes_exact(free)} free. Free {format_bytes(needed - free)} more, or resize to a "
        "copy on another disk (--output-dir). Nothing was changed."
    )
