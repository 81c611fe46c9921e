"""Durable file operations: atomic replace, staging folders published by rename, and fast copies with progress."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import grp
import json
import mmap
import os
import pwd
import shutil
import stat
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import BinaryIO

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.portable import staging
from rbln_artifact_studio.core.portable.exchange import exchange
from rbln_artifact_studio.core.portable.files import fsync_dir
from rbln_artifact_studio.core.portable.lock import LOCK_NAME, FolderLock, LockContended, LockHeld
from rbln_artifact_studio.core.portable.staging import NAME_MAX, claim_name, hidden_sibling_name, host_name
from rbln_artifact_studio.core.storage import faults
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME

INCOMPLETE_MARKER = ".rbln-studio-incomplete"
PARTIAL_TAG = ".partial-"
CLAIM_TAG = ".rbln-studio-claim"  # `.NAME{CLAIM_TAG}` beside a destination: its writer's flock (StagingDir)
TMP_TAG = ".tmp-"
COPY_CHUNK = 32 * 1024 * 1024  # 0.1 s of a disk at 300 MB/s: progress well above twice a second
DIRECT_ALIGN = 4096  # O_DIRECT offsets and sizes: a multiple of the device's block (512 B or 4 KiB)
DIRECT_WRITERS = 2  # direct writes in flight (one left the device idle between chunks: ~15% slower here)
_FICLONE = 0x40049409

# Our own bookkeeping files never travel with an artifact.
SKIP_NAMES = frozenset({LOCK_NAME, INCOMPLETE_MARKER})


def is_internal_name(name: str) -> bool:
    """Lock files, temp files and staging folders of this tool."""
    return name in SKIP_NAMES or (
        name.startswith(".") and (TMP_TAG in name or PARTIAL_TAG in name or name.endswith(CLAIM_TAG))
    )


def describe_os_error(exc: OSError, action: str) -> str:
    """A one-line message for an OS error, saying what to do."""
    if exc.errno == errno.ENOSPC:
        return f"No space left on the device while {action}. Free some space and try again."
    if exc.errno in (errno.EACCES, errno.EPERM):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"Permission denied while {action}{where}. Check the folder's permissions."
    if exc.errno == errno.EROFS:
        return f"The file system is read-only; cannot finish {action}. Remount it writable or use a writable folder."
    if exc.errno == errno.ENAMETOOLONG:  # the name's fault, not the disk's (a bucket's key names a folder here)
        return (
            f"A name is too long while {action}: a file system takes names of at most {NAME_MAX} bytes "
            "(a path 4,096). Give a shorter name."
        )
    return f"Failed while {action}: {exc.strerror or exc}. Check the disk and try again."


class NotDurableError(StudioError):
    """The change is in place and visible, but flushing it to disk failed: it may not survive a power loss."""


STAGING_ROOT = "rbln-studio-staging"  # below the system's temp folder (TMPDIR), private to the user


def staging_root() -> Path:
    """This user's folder for work passing through this computer (a compile delivered elsewhere, a copy between a
    bucket and a server): its staging folders are cleaned when stale."""
    root = Path(tempfile.gettempdir()) / f"{STAGING_ROOT}-{os.getuid()}"
    try:
        root.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise StudioError(describe_os_error(exc, f"creating {root}") + " Set TMPDIR to a folder with room.") from None
    return root


def not_durable(exc: OSError, done: str) -> NotDurableError:
    """The error for a flush that failed after the commit rename (the change is already visible)."""
    fix = {
        errno.ENOSPC: "free some space",
        errno.EACCES: "check its permissions",
        errno.EPERM: "check its permissions",
        errno.EROFS: "remount it writable",
    }.get(exc.errno or 0, "check it")
    return NotDurableError(
        f"{done}, but flushing it to disk failed ({exc.strerror or exc}), so it may not survive a power loss. "
        f"Fix the disk ({fix}), then run `sync`."
    )


def write_synced(path: Path, data: bytes) -> None:
    """Write a new file and flush it to disk (inside a staging folder, before the publishing rename)."""
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def atomic_write_bytes(path: Path, data: bytes, step: str = "file") -> None:
    """Replace path with data so that a crash leaves either the old or the new content, never a mix."""

    def fill(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    replace_via_temp(path, fill, f"{step}.tmp_written", f"{step}.renamed", "was replaced")


def owner_not_kept(path: Path) -> str | None:
    """Why a file replaced by a rename would not keep its owner and group (this process may not give them to the
    new file), in words; None when it would (or path is not there). A caller refuses before it writes anything."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    euid = os.geteuid() if hasattr(os, "geteuid") else 0
    if euid == 0:  # root may give any owner (CAP_CHOWN)
        return None
    if st.st_uid != euid:
        return f"{path} belongs to {_user_name(st.st_uid)}, and a file this login writes would belong to it instead"
    if st.st_gid != os.getegid() and st.st_gid not in os.getgroups():
        return f"{path} has the group {_group_name(st.st_gid)}, which this login is not in (the new file would lose it)"
    return None


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"user {uid}"


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return f"group {gid}"


def _keep_owner(path: Path, tmp: Path) -> None:
    """Give the new file the owner and group of the one it replaces (a resize run as root left root:root)."""
    try:
        old = os.stat(path)
    except FileNotFoundError:
        return  # a new file: the writer's
    new = os.stat(tmp)
    if (old.st_uid, old.st_gid) != (new.st_uid, new.st_gid) and hasattr(os, "chown"):
        try:
            os.chown(tmp, old.st_uid, old.st_gid)
        except PermissionError:
            raise PermissionError(
                errno.EPERM,
                f"{owner_not_kept(path) or 'its owner cannot be kept'}; the file was not replaced",
                str(path),
            ) from None


def replace_via_temp(path: Path, fill: Callable[[Path], None], written: str, renamed: str, done: str) -> None:
    """Replace path by a temp file beside it that fill writes and fsyncs, renamed over it (old or new, never a mix).

    written and renamed name the crash-test steps after the temp file is complete and after the rename; done says
    what happened to path in the error raised when the folder cannot be made durable.
    """
    tmp = path.with_name(hidden_sibling_name(path.name, TMP_TAG))
    try:
        fill(tmp)
        _keep_owner(path, tmp)
        with contextlib.suppress(OSError):
            shutil.copymode(path, tmp)  # after the owner: chown clears set-id bits
        faults.checkpoint(written)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    faults.checkpoint(renamed)
    try:
        fsync_dir(path.parent)
    except OSError as exc:
        raise not_durable(exc, f"{path} {done}") from None


def remove_stale_temp_files(folder: Path) -> None:
    """Delete temp files a killed writer left in folder (they are never the current content)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.name.startswith(".") and TMP_TAG in entry.name and entry.is_file(follow_symlinks=False):
                _, _, rest = entry.name.rpartition(TMP_TAG)
                pid = rest.split("-", 1)[0]
                if pid.isdigit() and not staging.pid_alive(int(pid)):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


def is_empty_dir(path: Path) -> bool:
    with os.scandir(path) as entries:
        return next(entries, None) is None


def enclosing_artifact(path: Path) -> Path | None:
    """The nearest folder above path (by real path, whole components) that is an artifact, or None."""
    real = Path(os.path.realpath(path))
    for parent in real.parents:
        if (parent / CONFIG_NAME).is_file() and not (parent / INCOMPLETE_MARKER).exists():
            return parent
    return None


def check_new_output_dir(output: Path, source: Path | None = None) -> Path:
    """Refuse an output folder that exists with content, is the source, or lies inside the source, or whose
    nearest existing folder cannot be written; writes nothing (its missing parents are made by StagingDir)."""
    output = Path(os.path.abspath(output))
    if source is not None:
        src = Path(os.path.realpath(source))
        real = Path(os.path.realpath(output))
        if real == src:
            raise StudioError(f"The output folder {output} is the source artifact; choose a new folder.")
        if src in real.parents:
            raise StudioError(f"The output folder {output} lies inside the source artifact {src}; choose another.")
    holder = enclosing_artifact(output)
    if holder is not None:
        raise StudioError(
            f"The output folder {output} lies inside the artifact {holder}; a copy there would be hidden from "
            "scans (an artifact's subfolders belong to it). Choose a folder outside every artifact."
        )
    if output.exists() or output.is_symlink():
        if not output.is_dir():
            raise StudioError(f"{output} exists and is not a folder; choose a new output folder.")
        if not is_empty_dir(output):
            raise StudioError(f"The output folder {output} exists and is not empty; choose a new folder.")
    parent = output.parent
    while not parent.is_dir() and parent != parent.parent:  # made when the copy is written: its first folder here
        if os.path.lexists(parent):
            raise StudioError(f"{parent} exists and is not a folder; choose another place for the output.")
        parent = parent.parent
    if not os.access(parent, os.W_OK | os.X_OK):
        with contextlib.suppress(OSError):  # access() says no for both; the fix differs
            if os.statvfs(parent).f_flag & os.ST_RDONLY:
                raise StudioError(
                    f"Cannot write into {parent}: it is on a read-only file system. "
                    "Remount it writable or choose a folder on another file system."
                )
        raise StudioError(f"Cannot write into {parent}: permission denied. Choose a folder you can write to.")
    return output


class DestinationClaim(FolderLock):
    """One writer per destination folder: an flock on `.NAME{CLAIM_TAG}` beside it, naming its holder. The kernel
    drops it when its process dies, so a killed writer's claim never blocks the next; a release removes the file."""

    def __init__(self, final: Path, purpose: str) -> None:
        super().__init__(final.parent, purpose)
        self.path = str(final.parent / claim_name(final.name, CLAIM_TAG))
        self.final = final

    def acquire(self) -> None:
        try:
            super().acquire()
        except LockHeld as exc:
            raise StudioError(
                f"{self.final} is being written by {exc.holder}. Try again when it is done, or choose another folder",
                unchanged=True,
            ) from None
        except LockContended:
            raise StudioError(f"{self.final} is contended by other writers. Try again", unchanged=True) from None


class StagingDir:
    """A hidden, marked folder beside the destination; published by one rename, removed on failure. claim: hold the
    destination's DestinationClaim meanwhile, so a second writer is refused before it writes (False for a private
    working folder whose name says nothing about where its result goes). what: the kind of write ("compile", "copy",
    "download", "resize to a copy"), recorded in the claim and the marker (by default this process's command)."""

    def __init__(self, final: Path, claim: bool = True, what: str = "") -> None:
        self.final = Path(os.path.abspath(final))
        self.path = self.final.parent / hidden_sibling_name(self.final.name, PARTIAL_TAG)
        self._published = False
        self.what = what or _what()
        self._claim = DestinationClaim(self.final, self.what) if claim else None

    def __enter__(self) -> StagingDir:
        try:  # the destination's missing parents, made now that it is written (check_new_output_dir makes none)
            self.final.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StudioError(describe_os_error(exc, f"creating {self.final.parent}")) from None
        if self._claim is not None:
            self._claim.acquire()
        try:
            remove_stale_partials(self.final.parent)
            self.path.mkdir()
            try:
                marker = {"pid": os.getpid(), "host": host_name(), "target": str(self.final), "what": self.what}
                (self.path / INCOMPLETE_MARKER).write_text(json.dumps(marker))
            except BaseException:
                shutil.rmtree(self.path, ignore_errors=True)  # __exit__ does not run when __enter__ fails
                raise
        except BaseException:
            self._release_claim()
            raise
        faults.checkpoint("staging.created")
        return self

    def publish(self) -> None:
        """Make the staged folder the destination: everything synced, marker removed, one rename.

        Writers into the staging folder need not fsync (copy_tree does not): publish fsyncs every file and
        folder once, so a file written and then rewritten costs one fsync, and nothing reaches the final name
        before all of it is on disk.
        """
        faults.checkpoint("publish.before")
        sync_tree(self.path, skip=(INCOMPLETE_MARKER,))  # the marker goes next: no need to make it durable
        (self.path / INCOMPLETE_MARKER).unlink()
        fsync_dir(self.path)
        faults.checkpoint("publish.marker_removed")
        self._release_claim()
        if self.final.is_dir() and is_empty_dir(self.final):
            self.final.rmdir()  # rename(2) cannot replace a directory on every platform; it was empty
        try:
            os.rename(self.path, self.final)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise StudioError(
                    f"{self.final} appeared while the work ran; the work was not put there", unchanged=True
                ) from None
            raise
        self._published = True
        try:
            fsync_dir(self.final.parent)
        except OSError as exc:
            raise not_durable(exc, f"{self.final} was written") from None
        faults.checkpoint("publish.renamed")

    def swap_in(self) -> None:
        """Replace the existing destination folder by the staged one with one atomic exchange, then delete the
        old one (now at the staging path, unmarked: a killed run's leftover is removed as a stale partial)."""
        faults.checkpoint("swap.before")
        sync_tree(self.path, skip=(INCOMPLETE_MARKER,))  # as publish: whoever wrote the files, they are on disk
        (self.path / INCOMPLETE_MARKER).unlink()
        fsync_dir(self.path)
        self._release_claim()
        exchange(self.path, self.final)
        self._published = True
        faults.checkpoint("swap.exchanged")
        try:
            fsync_dir(self.final.parent)
        except OSError as exc:
            raise not_durable(exc, f"{self.final} was replaced") from None
        shutil.rmtree(self.path, ignore_errors=True)  # the old artifact
        faults.checkpoint("swap.old_removed")

    def _release_claim(self) -> None:
        """Give the destination's claim back (its file removed): just before the publishing rename, so a writer
        killed after it leaves no claim beside a finished output. One that takes the claim then finds the output
        there (its check, or its own rename, refuses it)."""
        if self._claim is not None:
            self._claim.release()

    def __exit__(self, *exc_info: object) -> None:
        try:
            if not self._published:
                shutil.rmtree(self.path, ignore_errors=True)
        finally:
            self._release_claim()


def _what() -> str:
    """What this process is doing, for a claim's holder ("rbln-studio-cli compile"), from its command line."""
    return " ".join(os.path.basename(a) for a in sys.argv[:2]) or "a write"


def remove_stale_partials(folder: Path) -> None:
    """Delete staging folders that a killed process of this host left behind in folder."""
    staging.remove_stale_partials(folder, PARTIAL_TAG, INCOMPLETE_MARKER)


def iter_files(root: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Every file and symlink below root (not following links), skipping this tool's own files."""
    stack = [root]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if is_internal_name(entry.name):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                else:
                    yield Path(entry.path), entry.stat(follow_symlinks=False)


def sync_tree(root: Path, skip: Collection[str] = ()) -> None:
    """fsync every regular file and every folder below root (root itself excepted, and files named in skip)."""
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            if name in skip:
                continue
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path):
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                fsync_dir(Path(path))


def tree_size(root: Path, dereference: bool = False) -> int:
    """Bytes of the regular files below root; with dereference, a symlinked file counts its target's bytes."""
    total = 0
    for path, st in iter_files(root):
        if dereference and stat.S_ISLNK(st.st_mode):
            with contextlib.suppress(OSError):
                st = os.stat(path)
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
    return total


def _clone(src_fd: int, dst_fd: int) -> bool:
    try:
        fcntl.ioctl(dst_fd, _FICLONE, src_fd)
    except OSError:
        return False
    return True


class _Flusher:
    """fdatasyncs a file in a helper thread while the copy goes on, never more than `lag` bytes behind it.

    The disk writes while the next chunks are copied (a serial fdatasync per chunk was ~20% slower here),
    and the closing fsync has at most `lag` bytes left, so progress never stalls on one long fsync.
    """

    def __init__(self, fd: int, lag: int) -> None:
        self._fd, self._lag = fd, lag
        self._cond = threading.Condition()
        self._copied = self._flushed = 0
        self._done = False
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._run, name="rbln-studio-flush", daemon=True)
        self._thread.start()

    def copied(self, amount: int) -> None:
        """Count copied bytes; wait while the disk is more than `lag` behind."""
        with self._cond:
            self._copied += amount
            self._cond.notify_all()
            while self._copied - self._flushed > self._lag and self._error is None:
                self._cond.wait()
            if self._error is not None:
                raise self._error

    def close(self) -> None:
        with self._cond:
            self._done = True
            self._cond.notify_all()
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._copied == self._flushed and not self._done:
                    self._cond.wait()
                if self._copied == self._flushed:
                    return
                target = self._copied
            try:
                os.fdatasync(self._fd)
            except OSError as exc:
                with self._cond:
                    self._error = exc
                    self._cond.notify_all()
                return
            with self._cond:
                self._flushed = target
                self._cond.notify_all()


def copy_file(src: Path, dst: Path, on_bytes: Callable[[int], None], sync: bool = True) -> None:
    """Copy one file: a reflink where the file system offers one, else direct writes, else copy_file_range.

    Where the file system takes O_DIRECT (ext4, XFS without reflinks, ...), a file over COPY_CHUNK goes through
    _copy_direct: each chunk is on the device when on_bytes reports it, and nothing is left in the page cache to
    write back. Elsewhere copy_file_range copies in COPY_CHUNK steps while a helper thread flushes them (see
    _Flusher), so on_bytes runs with the disk at most two chunks behind instead of racing through the page cache
    and then sitting in one long fsync (4 s for 4 GiB here, without progress). sync=False leaves the closing
    fsync (the device's cache, metadata, at most two chunks, or a clone's metadata) to the caller, e.g.
    StagingDir.publish.
    """
    with open(src, "rb") as fsrc, open(dst, "wb") as fdst:
        size = os.fstat(fsrc.fileno()).st_size
        if size and _clone(fsrc.fileno(), fdst.fileno()):
            on_bytes(size)
        elif size:
            done = _copy_direct(fsrc, dst, size, on_bytes) if size > COPY_CHUNK else 0
            left = size - done  # all of it, or the tail below the block size after a direct copy
            fsrc.seek(done)
            fdst.seek(done)
            flusher = _Flusher(fdst.fileno(), 2 * COPY_CHUNK) if left > COPY_CHUNK else None
            try:
                _copy_chunks(fsrc, fdst, left, flusher, on_bytes)
            finally:
                if flusher is not None:
                    flusher.close()
        fdst.flush()
        if sync:
            os.fsync(fdst.fileno())
    shutil.copystat(src, dst)


def _open_direct(path: Path) -> int | None:
    """path opened for writes that bypass the page cache, or None where the file system refuses them (tmpfs)."""
    flag = getattr(os, "O_DIRECT", 0)
    if not flag:
        return None
    try:
        return os.open(path, os.O_WRONLY | os.O_CLOEXEC | flag)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.EOPNOTSUPP):
            return None
        raise


def _write_at(fd: int, data: memoryview, offset: int) -> int:
    """Write all of data at offset (a direct write is whole unless the disk fills; then os.pwrite raises)."""
    written = 0
    while written < len(data):
        written += os.pwrite(fd, data[written:], offset + written)
    return written


def _read_at(fsrc: BinaryIO, into: memoryview, offset: int) -> None:
    """Fill into from fsrc at offset (a read may return less than asked on some file systems: read on)."""
    done = 0
    while done < len(into):
        n = os.preadv(fsrc.fileno(), [into[done:]], offset + done)
        if n == 0:
            raise StudioError(f"{fsrc.name} shrank while it was being copied; try again.")
        done += n


def _first_direct_write(fd: int, data: memoryview) -> bool:
    """Write the first chunk (before any progress is reported); False when the device refuses the alignment."""
    try:
        _write_at(fd, data, 0)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return False
        raise
    return True


def _copy_direct(fsrc: BinaryIO, dst: Path, size: int, on_bytes: Callable[[int], None]) -> int:
    """Copy the block-aligned bulk of fsrc into dst with O_DIRECT writes; the bytes copied (0: not possible here).

    copy_file_range copies page cache to page cache and the kernel then writes the dirty pages back (and a
    concurrent fdatasync per chunk competes with the copy for the CPU): about twice the CPU of reading into a
    buffer and writing it straight to the device. The next chunk is read while DIRECT_WRITERS helper threads
    write the previous ones (two writes in flight keep the device's queue full), and on_bytes reports each
    chunk, in order, once its write has returned. The caller copies the tail below DIRECT_ALIGN and fsyncs (the
    device's cache and the file's metadata).
    """
    # A scan and the desktop's first paint load this module and copy nothing (tests/gui/test_gui_startup.py).
    # deferred: concurrent.futures brings logging (~10 ms), which only a copy's direct writes need
    from concurrent.futures import Future, ThreadPoolExecutor

    bulk = size - size % DIRECT_ALIGN
    dst_fd = _open_direct(dst) if bulk else None
    if dst_fd is None:
        return 0
    try:
        # page-aligned, as O_DIRECT needs; one more than the writes in flight, for the chunk being read
        buffers = [mmap.mmap(-1, COPY_CHUNK) for _ in range(DIRECT_WRITERS + 1)]
        pending: deque[Future[int]] = deque()
        with ThreadPoolExecutor(DIRECT_WRITERS, thread_name_prefix="rbln-studio-copy") as writers:
            for i, offset in enumerate(range(0, bulk, COPY_CHUNK)):
                view = memoryview(buffers[i % len(buffers)])[: min(COPY_CHUNK, bulk - offset)]  # not in flight
                _read_at(fsrc, view, offset)
                if i == 0:  # written here, before any progress: the device may want a larger alignment
                    if not _first_direct_write(dst_fd, view):
                        return 0  # the caller copies through the page cache
                    on_bytes(len(view))
                    continue
                while len(pending) >= DIRECT_WRITERS:
                    on_bytes(pending.popleft().result())
                pending.append(writers.submit(_write_at, dst_fd, view, offset))
            while pending:
                on_bytes(pending.popleft().result())
    finally:
        os.close(dst_fd)
    return bulk


def _copy_chunks(
    fsrc: BinaryIO, fdst: BinaryIO, size: int, flusher: _Flusher | None, on_bytes: Callable[[int], None]
) -> None:
    """copy_file_range in COPY_CHUNK steps (read/write where the kernel cannot), reporting each step."""
    left = size
    use_range = hasattr(os, "copy_file_range")
    while left > 0:
        n = 0
        if use_range:
            try:
                n = os.copy_file_range(fsrc.fileno(), fdst.fileno(), min(COPY_CHUNK, left))
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                    raise
                use_range = False
                continue
        else:
            chunk = fsrc.read(min(COPY_CHUNK, left))
            n = len(chunk)
            fdst.write(chunk)
            fdst.flush()
        if n == 0:
            raise StudioError(f"{fsrc.name} shrank while it was being copied; try again.")
        left -= n
        if flusher is not None:
            flusher.copied(n)
        on_bytes(n)


def copy_tree(src: Path, dst: Path, on_bytes: Callable[[int], None], dereference: bool = False) -> None:
    """Copy every file and folder of src into the existing folder dst (symlinks stay symlinks), not yet durable.

    dst is a staging folder: its publish fsyncs every file and folder once, after the resize has rewritten
    what it rewrites (a graph copied, then given a new header, is synced once; the copied rbln_config.json,
    replaced by a new one, never). With dereference, a symlink to a file is copied as the file it points to: an
    artifact copy that is then written to must own its files (a link into a Hugging Face cache's blobs would be
    written through).
    """
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if not is_internal_name(d)]
        here = dst / Path(dirpath).relative_to(src)
        for name in sorted(dirnames + filenames):
            if is_internal_name(name):
                continue
            source, target = Path(dirpath) / name, here / name
            if source.is_symlink() and not (dereference and source.is_file()):
                os.symlink(os.readlink(source), target)
            elif source.is_dir():
                target.mkdir()
            elif source.is_file():
                copy_file(source, target, on_bytes, sync=False)
            else:  # opening a named pipe to copy it would wait forever
                raise StudioError(
                    f"Cannot copy {source}: it is not a regular file (a pipe, socket or device). "
                    "Move it out of the artifact, then try again."
                )
