"""Copies: exact bytes, progress once per chunk as the data reaches the disk, and every fallback path."""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from pathlib import Path

import pytest
from conftest import threads_started_since

import rbln_artifact_studio.core.storage.fsutil as fsutil
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.storage.fsutil import copy_file, copy_tree

CHUNK = 64 * 1024


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(fsutil, "COPY_CHUNK", CHUNK)
    path = tmp_path / "prefill.rbln"
    path.write_bytes(os.urandom(16 * CHUNK + 123))
    os.utime(path, ns=(1_000_000_000, 2_000_000_000))
    return path


def copied(source: Path, tmp_path: Path) -> list[int]:
    steps: list[int] = []
    copy_file(source, tmp_path / "copy.rbln", steps.append)
    assert (tmp_path / "copy.rbln").read_bytes() == source.read_bytes()
    assert (tmp_path / "copy.rbln").stat().st_mtime_ns == 2_000_000_000
    return steps


def no_clone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fsutil, "_clone", lambda src, dst: False)


def no_direct(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a file system that refuses O_DIRECT (tmpfs): copy_file_range with the flusher."""
    monkeypatch.setattr(fsutil, "_open_direct", lambda path: None)


def require_direct(tmp_path: Path) -> None:
    (tmp_path / "probe").touch()
    fd = fsutil._open_direct(tmp_path / "probe")
    if fd is None:
        pytest.skip(f"{tmp_path}'s file system refuses O_DIRECT")
    os.close(fd)


def test_direct_writes_report_each_chunk_once_it_is_written(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the file system takes O_DIRECT the chunks bypass the page cache: progress per chunk, each reported
    after its write returned (on the device), the tail below the block size copied after them, no fdatasync."""
    no_clone(monkeypatch)
    written = tmp_path / "copy.rbln"
    require_direct(tmp_path)
    on_device: list[int] = []
    real_pwrite = os.pwrite

    def pwrite(fd: int, data: memoryview, offset: int) -> int:
        n = real_pwrite(fd, data, offset)
        on_device.append(n)
        return n

    def no_fdatasync(fd: int) -> None:
        raise AssertionError("a direct copy leaves nothing to write back")

    monkeypatch.setattr(os, "pwrite", pwrite)
    monkeypatch.setattr(os, "fdatasync", no_fdatasync)
    progress: list[tuple[int, int]] = []
    copy_file(source, written, lambda n: progress.append((n, sum(on_device))))
    assert [n for n, _ in progress] == [CHUNK] * 16 + [123]
    done = 0
    for n, on_disk in progress[:16]:
        done += n
        assert done <= on_disk  # never ahead of the writes
    assert on_device == [CHUNK] * 16
    assert written.read_bytes() == source.read_bytes()
    assert written.stat().st_mtime_ns == 2_000_000_000


def test_short_reads_are_read_on_and_a_shrunk_source_is_named(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_clone(monkeypatch)
    require_direct(tmp_path)
    real_preadv = os.preadv

    def short_preadv(fd: int, buffers: list[memoryview], offset: int) -> int:
        return real_preadv(fd, [buffers[0][:1000]], offset)  # at most 1,000 bytes a call

    monkeypatch.setattr(os, "preadv", short_preadv)
    assert copied(source, tmp_path) == [CHUNK] * 16 + [123]

    def at_end(fd: int, buffers: list[memoryview], offset: int) -> int:
        return 0 if offset >= 3 * CHUNK else real_preadv(fd, buffers, offset)

    monkeypatch.setattr(os, "preadv", at_end)
    with pytest.raises(StudioError, match="shrank while it was being copied"):
        copy_file(source, tmp_path / "again.rbln", lambda n: None)


def test_a_device_that_refuses_the_alignment_gets_a_page_cache_copy(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_clone(monkeypatch)
    real_pwrite = os.pwrite

    def pwrite(fd: int, data: memoryview, offset: int) -> int:
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", pwrite)
    assert copied(source, tmp_path) == [CHUNK] * 16 + [123]


def test_a_failing_direct_write_fails_the_copy_and_stops_the_writer(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_clone(monkeypatch)
    require_direct(tmp_path)
    real_pwrite = os.pwrite

    def pwrite(fd: int, data: memoryview, offset: int) -> int:
        if offset >= 5 * CHUNK:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", pwrite)
    before = set(threading.enumerate())  # other tests' threads may end meanwhile: only new ones count
    progress: list[int] = []
    with pytest.raises(OSError, match="No space"):
        copy_file(source, tmp_path / "copy.rbln", progress.append)
    assert progress == [CHUNK] * 5  # only what was written
    assert threads_started_since(before) == []  # the copy's writer threads have ended


def test_the_disk_never_lags_more_than_two_chunks(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without O_DIRECT, progress comes per chunk while a helper thread flushes; the copier waits when the disk
    falls behind."""
    no_clone(monkeypatch)
    no_direct(monkeypatch)
    flushed_at: list[int] = []
    written = tmp_path / "copy.rbln"
    real = os.fdatasync

    def slow_fdatasync(fd: int) -> None:
        size = written.stat().st_size  # what this call puts on disk (at least)
        time.sleep(0.002)  # a slow disk: the copier must wait for it
        real(fd)
        flushed_at.append(size)

    monkeypatch.setattr(os, "fdatasync", slow_fdatasync)
    progress: list[tuple[int, int]] = []

    def on_bytes(n: int) -> None:
        progress.append((n, max(flushed_at, default=0)))

    copy_file(source, written, on_bytes)
    assert [n for n, _ in progress] == [CHUNK] * 16 + [123]
    done = 0
    for n, flushed in progress:
        done += n
        assert done - flushed <= 2 * CHUNK + n  # at most two chunks (and this one) not yet on disk
    assert flushed_at and written.read_bytes() == source.read_bytes()


def test_a_failing_flush_fails_the_copy(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    no_clone(monkeypatch)
    no_direct(monkeypatch)

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdatasync", full_disk)
    with pytest.raises(OSError, match="No space"):
        copy_file(source, tmp_path / "copy.rbln", lambda n: None)


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "page-cache"])
def test_a_cancel_mid_copy_stops_the_helper_thread(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    no_clone(monkeypatch)
    if not direct:
        no_direct(monkeypatch)
    seen: list[int] = []

    def cancel(n: int) -> None:
        seen.append(n)
        if len(seen) == 3:  # a later chunk is being written or flushed meanwhile
            raise KeyboardInterrupt

    before = set(threading.enumerate())  # other tests' threads may end meanwhile: only new ones count
    with pytest.raises(KeyboardInterrupt):
        copy_file(source, tmp_path / "copy.rbln", cancel)
    assert threads_started_since(before) == []


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "page-cache"])
def test_across_file_systems_falls_back_to_read_write(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    no_clone(monkeypatch)
    if not direct:
        no_direct(monkeypatch)

    def cross_device(*args: object) -> int:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "copy_file_range", cross_device)
    assert copied(source, tmp_path) == [CHUNK] * 16 + [123]


def test_a_reflink_reports_the_whole_file_at_once(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def clone(src: int, dst: int) -> bool:
        os.sendfile(dst, src, 0, os.fstat(src).st_size)  # what a reflink leaves: the same bytes
        return True

    monkeypatch.setattr(fsutil, "_clone", clone)
    assert copied(source, tmp_path) == [16 * CHUNK + 123]


def test_empty_files_and_trees(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "empty.json").write_bytes(b"")
    (src / "sub" / "a.txt").write_text("a")
    (src / "link").symlink_to("sub/a.txt")
    (src / fsutil.LOCK_NAME).write_text("held")
    dst = tmp_path / "dst"
    dst.mkdir()
    seen: list[int] = []
    copy_tree(src, dst, seen.append)
    assert sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*")) == ["empty.json", "link", "sub", "sub/a.txt"]
    assert os.readlink(dst / "link") == "sub/a.txt" and (dst / "empty.json").read_bytes() == b""
    assert sum(seen) == 1


def test_a_resized_copy_is_synced_once_before_it_is_published(
    cr13_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file and folder of the copy is fsynced before the rename that publishes it (crash-safety.md), but
    the copied graphs are not synced twice (before and after their new header) nor the copied rbln_config.json that
    the resize replaces."""
    from rbln_artifact_studio.core.operations.resize import resize_to_copy

    events: list[tuple[str, str, int]] = []
    real_fsync, real_rename = os.fsync, os.rename
    unchanged_copies_synced: list[str] = []  # a file synced while it is still a byte-for-byte copy of its source
    sources = {
        p.name: p.read_bytes() for p in cr13_artifact.iterdir() if p.name in ("rbln_config.json", "prefill.rbln")
    }

    def fsync(fd: int) -> None:
        real_fsync(fd)
        path = os.readlink(f"/proc/self/fd/{fd}")
        events.append(("fsync", path, os.fstat(fd).st_ino))
        name = os.path.basename(path)
        if name in sources and "partial" in path and Path(path).read_bytes() == sources[name]:
            unchanged_copies_synced.append(name)

    def rename(src: str | Path, dst: str | Path) -> None:
        real_rename(src, dst)
        events.append(("rename", os.fspath(dst), 0))

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "rename", rename)
    output = tmp_path / "copy-12"
    resize_to_copy(cr13_artifact, output, target=12)
    publish = events.index(("rename", str(output), 0))
    synced_before = {
        ino for kind, _, ino in events[:publish] if kind == "fsync"
    }  # a file may be synced under a temp name
    staging = events[publish - 1][1] if events[publish - 1][0] == "fsync" else ""
    assert staging.startswith(str(tmp_path / ".copy-12.partial-"))
    for item in [output, *output.rglob("*")]:
        assert item.stat().st_ino in synced_before, f"{item} was not synced before publishing"
    assert unchanged_copies_synced == []  # both are rewritten (a new header, a new file) and synced once after
    assert events[-1][0] == "fsync" and events[-1][1] == str(tmp_path)  # the rename itself made durable
