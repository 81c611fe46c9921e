"""Swap two folders in one atomic step: Linux renameat2 with RENAME_EXCHANGE, through ctypes."""

import ctypes
import ctypes.util
import errno
import functools
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
UNSUPPORTED = (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP)
"""What exchange raises where the C library or the file system cannot exchange (nothing was changed)."""


# At the first exchange, not at import: find_library runs ldconfig (~30 ms). lru_cache: Python 3.6 has no cache.
@functools.lru_cache(maxsize=None)  # noqa: UP033
def _renameat2() -> "Callable[[int, bytes, int, bytes, int], int] | None":
    """glibc's renameat2 (2.28 and later), or None where the C library has none."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        func = libc.renameat2
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    func.restype = ctypes.c_int
    renameat2 = func  # type: Callable[[int, bytes, int, bytes, int], int]
    return renameat2


def exchange(a: "str | os.PathLike[str]", b: "str | os.PathLike[str]") -> None:
    """Atomically swap two paths: after it, a holds what b held and b what a held; never neither.

    Raises OSError; its errno is in UNSUPPORTED where this system cannot do it at all.
    """
    renameat2 = _renameat2()
    if renameat2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available here")
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(a))
