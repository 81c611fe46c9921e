"""One writer per artifact: an flock on a lock file inside it, with the holder's identity for the message.

filelock would give us the flock but not who holds it, and the message must say that. The kernel drops an
flock when its process dies, so a lock file left by a killed writer never blocks anyone; a normal release
removes the file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path

from rbln_artifact_studio.core.errors import ArtifactLockedError
from rbln_artifact_studio.core.storage.fsutil import LOCK_NAME


def _describe_holder(data: str) -> str:
    try:
        holder = json.loads(data)
        since = time.strftime("%H:%M:%S", time.localtime(holder["since"]))
        return f"process {holder['pid']} on {holder['host']} ({holder['command']}, since {since})"
    except (ValueError, KeyError, TypeError):
        return "another process"


class ArtifactLock:
    """Exclusive, non-blocking: a second writer fails at once with a message naming the first."""

    def __init__(self, artifact_dir: Path, purpose: str = "") -> None:
        self.path = Path(artifact_dir) / LOCK_NAME
        self.purpose = purpose or " ".join(os.path.basename(a) for a in sys.argv[:3])
        self._fd: int | None = None

    def acquire(self) -> None:
        for _ in range(10):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 4096, 0).decode("utf-8", "replace")
                os.close(fd)
                raise ArtifactLockedError(
                    f"{self.path.parent} is being changed by {_describe_holder(holder)}. "
                    "Wait for it to finish, then try again."
                ) from None
            except BaseException:
                os.close(fd)
                raise
            # The previous holder unlinks the file on release; a lock on an unlinked inode guards nothing.
            if self._same_file(fd):
                break
            os.close(fd)
        else:
            raise ArtifactLockedError(f"{self.path.parent} is contended by other writers; try again.")
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.purpose, "since": time.time()}
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
        # Unlink while still holding the flock, so the artifact folder is left as it was found; only our own file
        # (a folder swapped in meanwhile may hold another writer's lock at the same path).
        if self._same_file(self._fd):
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        os.close(self._fd)  # closing the descriptor drops the flock
        self._fd = None

    def __enter__(self) -> ArtifactLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()
