"""Small file primitives: read a small regular file without ever waiting on a pipe, flush a folder to disk."""

import errno
import os
import stat

_NOT_A_FILE = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)


def not_a_file(mode):  # type: (int) -> str | None
    """What a file of this st_mode is, in the words a row says, when it is no regular file (None for a file or
    a symbolic link); the local check and a server's scan both say it so."""
    return next((words for test, words in _NOT_A_FILE if test(mode)), None)


def read_to_end(fd: int, size: int, limit: int) -> bytes:
    """An open regular file's bytes, `size` its fstat size: one read when the file is all there, more while a read
    comes back short before that size (FUSE, network file systems) or the file grows; at most ~`limit` bytes."""
    chunks = []  # type: list[bytes]
    want, total = size + 1, 0  # the whole file in one read, in a buffer of its size (not 64 KiB each)
    while total <= limit:
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total == size and len(chunk) < want:  # all fstat saw, and no more came: no read to see nothing
            break  # (a short read before that size, a FUSE or network file's, reads on)
        want = 4096 if total <= size else 1 << 16  # the end is near; it only grew since the fstat
    return b"".join(chunks)


def read_small(path: str, limit: int) -> bytes:
    """A small regular file's bytes through the os module (a scan reads two per artifact; io's objects cost more).

    Opened non-blocking and checked with fstat, so a named pipe or a device in place of a config never hangs
    a scan; raises OSError with a message that says what is wrong, also for a file over `limit` bytes.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a pipe, socket or device); replace it with the real file")
        if st.st_size > limit:
            raise OSError(errno.EFBIG, f"{st.st_size:,} bytes, far too large for a config file")
        return read_to_end(fd, st.st_size, limit)
    finally:
        os.close(fd)


def fsync_dir(path: "str | os.PathLike[str]") -> None:
    """Flush a folder's entries to disk: after a rename into it, the new name survives a power loss."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
