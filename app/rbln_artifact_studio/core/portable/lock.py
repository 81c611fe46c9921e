"""One writer per folder: an flock on a lock file inside it, with the holder's identity for the message.

The same file name and protocol here and in a server's job (remote/on_server/job.py bundles this module), so a
resize started on a laptop and one started on the server exclude each other on a shared folder. filelock would
give the flock but not who holds it, and the message must say that. The kernel drops an flock when its process
dies, so a lock file left by a killed writer never blocks anyone; a normal release removes the file.
"""

import contextlib
import fcntl
import json
import os
import time
from typing import TypeVar

from rbln_artifact_studio.core.portable.staging import host_name

LOCK_NAME = ".rbln-studio.lock"
_TRIES = 10  # a lock file unlinked by its releaser between our open and our flock: open the new one

_Lock = TypeVar("_Lock", bound="FolderLock")


class LockHeld(Exception):
    """Another live process holds the folder's lock; `holder` says which, in words."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


class LockContended(Exception):
    """Other writers took and gave back the lock under us every time we tried."""


def describe_holder(data: str) -> str:
    """The holder a lock file records, in words ("process 12 on npu-7 (resize, since 10:04:05)")."""
    try:
        holder = json.loads(data)
        since = time.strftime("%H:%M:%S", time.localtime(holder["since"]))
        return f"process {holder['pid']} on {holder['host']} ({holder['command']}, since {since})"
    except (ValueError, KeyError, TypeError):
        return "another process"


class FolderLock:
    """Exclusive, non-blocking: a second writer fails at once (LockHeld) with words naming the first."""

    def __init__(self, folder: "str | os.PathLike[str]", purpose: str) -> None:
        self.path = os.path.join(os.fspath(folder), LOCK_NAME)
        self.purpose = purpose
        self._fd = None  # type: int | None

    def acquire(self) -> None:
        for _ in range(_TRIES):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 4096, 0).decode("utf-8", "replace")
                os.close(fd)
                raise LockHeld(describe_holder(holder)) from None
            except BaseException:
                os.close(fd)
                raise
            # The previous holder unlinks the file on release; a lock on an unlinked inode guards nothing.
            if self._same_file(fd):
                break
            os.close(fd)
        else:
            raise LockContended(self.path)
        info = {"pid": os.getpid(), "host": host_name(), "command": self.purpose, "since": time.time()}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
        except BaseException:
            # Disk full or read-only: give the lock back now, or this process would hold it until it exits.
            self._fd = fd
            self.release()
            raise
        self._fd = fd

    def _same_file(self, fd: int) -> bool:
        try:
            return os.stat(self.path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            return False

    def release(self) -> None:
        if self._fd is None:
            return
        # Unlink while still holding the flock, so the folder is left as it was found; only our own file
        # (a folder swapped in meanwhile may hold another writer's lock at the same path).
        if self._same_file(self._fd):
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        os.close(self._fd)  # closing the descriptor drops the flock
        self._fd = None

    def __enter__(self: _Lock) -> _Lock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()
