"""Watch the open folder and its artifacts; collect changed folders and hand them over after a quiet spell."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal, Slot

# Folders are added and dropped a slice per event-loop turn, so the GUI thread never holds still for long.
# QFileSystemWatcher checks each new or removed path against every path it holds (~7 us a path into an empty
# watcher, ~30 us into one of 4,000 here; removing 5,000 in one call took 73 ms), and destroying a watcher
# blocks ~10-20 ms while the kernel closes its inotify instance. So one watcher serves the whole session:
# clear() only marks its folders to drop, and they are dropped once no folder was added for DROP_AFTER_MS
# (after the scan that follows), so a folder watched again in the meantime (the same folder re-opened) simply
# stays. A slice starts at FIRST_SLICE folders, doubles up to WATCH_SLICE (DROP_SLICE to drop) while a call
# takes under SLICE_SECONDS / 2 and halves when it takes longer than SLICE_SECONDS: on a busy machine one
# addPaths call of 64 folders took 19 ms. If the kernel refuses a watch (fs.inotify.max_user_watches) while old
# folders wait to be dropped, the drops go first and the refused folders are tried once more.
WATCH_SLICE = 64
DROP_SLICE = 256
FIRST_SLICE = 8
SLICE_SECONDS = 0.002
DROP_AFTER_MS = 1000
# Each watch costs QFileSystemWatcher time proportional to the watches it holds (above: 0.35 ms per folder at
# 40,000, 15 s of GUI-thread time to watch 50,000 artifacts, and 39 ms to drop 64 of them), and the kernel caps
# inotify watches per user (fs.inotify.max_user_watches, 8,192 on older systems). So artifact folders, whose own
# changes are resizes and edits inside them, are watched up to this many; the folders above them (where artifacts
# appear and vanish) always are. `limited` says how many artifact folders are left out; the window tells the user.
MAX_ARTIFACT_WATCHES = 8192


class _Slices:
    """How many folders the next call may take: halved after a slow call, doubled after a quick one."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.size = min(most, FIRST_SLICE)

    def take(self, queue: list[str]) -> list[str]:
        batch = queue[: self.size]
        del queue[: self.size]
        return batch

    def timed(self, call: Callable[[list[str]], list[str]], folders: list[str]) -> list[str]:
        started = time.perf_counter()
        result = call(folders)
        took = time.perf_counter() - started
        if took > SLICE_SECONDS:
            self.size = max(1, self.size // 2)
        elif took < SLICE_SECONDS / 2:
            self.size = min(self.most, self.size * 2)
        return result


class DiskWatcher(QObject):
    """A QFileSystemWatcher with a debounce; its callbacks only record paths, never touch the disk."""

    changed = Signal(list)  # folders whose entries changed, sorted
    limited = Signal(int)  # artifact folders left unwatched because of MAX_ARTIFACT_WATCHES (0: none)

    def __init__(self, debounce_ms: int = 300, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._on_changed)
        self._watched: set[str] = set()
        self._queue: list[str] = []  # to add, a slice per event-loop turn
        self._queued: set[str] = set()
        self._drop_queue: list[str] = []  # watched but no longer wanted (after clear()), dropped a slice a turn
        self._dropping: set[str] = set()
        self._drop_now = False  # a watch was refused while drops wait: drop before adding more
        self._retried: set[str] = set()  # refused once already; not queued again
        self._lost: set[str] = set()  # Qt dropped their watch (deleted, maybe made again): report once re-watched
        self._adding, self._dropping_slices = _Slices(WATCH_SLICE), _Slices(DROP_SLICE)
        self._pending: set[str] = set()
        self._artifacts: set[str] = set()  # artifact folders watched or queued: they count against the cap
        self._left_out: set[str] = set()  # artifact folders over the cap
        self._adder = QTimer(self)
        self._adder.setSingleShot(True)
        self._adder.setInterval(0)
        self._adder.timeout.connect(self._next_slice)
        self._drop_timer = QTimer(self)  # drops wait until folders stop coming in
        self._drop_timer.setSingleShot(True)
        self._drop_timer.setInterval(DROP_AFTER_MS)
        self._drop_timer.timeout.connect(self._schedule)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._flush)

    @property
    def watched(self) -> frozenset[str]:
        """Folders watched, or queued to be within a few event-loop turns."""
        return frozenset(self._watched | self._queued)

    @property
    def left_out(self) -> int:
        """Artifact folders not watched because of MAX_ARTIFACT_WATCHES."""
        return len(self._left_out)

    def watch(self, folders: Iterable[str], artifacts: Collection[str] = ()) -> None:
        """Watch folders; those also in artifacts are watched only while fewer than MAX_ARTIFACT_WATCHES are."""
        if self._drop_queue and not self._drop_now:
            self._drop_timer.start()
        left_out = len(self._left_out)
        for f in folders:
            if not f or f in self._watched or f in self._queued:
                continue
            if f in artifacts and f not in self._artifacts:
                if len(self._artifacts) >= MAX_ARTIFACT_WATCHES:
                    self._left_out.add(f)
                    continue
                self._artifacts.add(f)
            if f in self._dropping:  # still watched from before clear(): keep it
                self._dropping.discard(f)
                self._watched.add(f)
            else:
                self._queued.add(f)
                self._queue.append(f)
        self._schedule()
        if len(self._left_out) != left_out:
            self.limited.emit(len(self._left_out))

    def _may_drop(self) -> bool:
        return bool(self._drop_queue) and (self._drop_now or not self._drop_timer.isActive())

    @Slot()
    def _schedule(self) -> None:
        if (self._queue or self._may_drop()) and not self._adder.isActive():
            self._adder.start()

    @Slot()
    def _next_slice(self) -> None:
        if self._may_drop() and (self._drop_now or not self._queue):
            self._drop_slice()
        elif self._queue:
            self._add_slice()
        self._schedule()

    def _add_slice(self) -> None:
        batch = self._adding.take(self._queue)
        self._queued.difference_update(batch)
        failed = set(self._adding.timed(self._watcher.addPaths, batch))
        added = [f for f in batch if f not in failed]
        self._watched.update(added)
        rewatched = self._lost.intersection(added)
        if rewatched:  # what changed between the rescan and this watch would go unseen: rescan once more
            self._lost.difference_update(rewatched)
            self._pending.update(rewatched)
            self._timer.start()
        retry = sorted(failed - self._retried) if self._drop_queue else []
        if retry:  # maybe the watch limit: free the old folders' watches first, then try these once more
            self._retried.update(retry)
            self._queue.extend(retry)
            self._queued.update(retry)
            self._drop_now = True
            self._drop_timer.stop()

    def _drop_slice(self) -> None:
        batch = [f for f in self._dropping_slices.take(self._drop_queue) if f in self._dropping]
        if batch:
            self._dropping_slices.timed(self._watcher.removePaths, batch)
            self._dropping.difference_update(batch)
        if not self._drop_queue:
            self._drop_now = False

    def unwatch(self, folders: Iterable[str]) -> None:
        folders = set(folders)
        self._artifacts.difference_update(folders)
        if folders & self._left_out:
            self._left_out.difference_update(folders)
            self.limited.emit(len(self._left_out))
        if folders & self._queued:
            self._queue = [f for f in self._queue if f not in folders]
            self._queued.difference_update(folders)
        gone = sorted(folders & self._watched)
        if gone:
            self._watcher.removePaths(gone)
            self._watched.difference_update(gone)

    def clear(self) -> None:
        """Forget every folder at once: none is reported from now on; their watches go later, a slice per turn."""
        self._queue, self._queued = [], set()
        self._retried.clear()
        self._lost.clear()
        self._artifacts.clear()
        if self._left_out:
            self._left_out.clear()
            self.limited.emit(0)
        self._drop_now = False  # the next folder's scan may want some of these watches again
        # A folder that changed since the last report may have been deleted, and Qt then dropped its watch: such
        # folders are not kept for a quick re-watch (that would trust a watch Qt no longer has) but dropped now.
        changed = sorted(self._pending & self._watched)
        if changed:
            self._watcher.removePaths(changed)
            self._watched.difference_update(changed)
        self._pending.clear()
        self._timer.stop()
        if self._watched:
            self._drop_queue.extend(self._watched)
            self._dropping.update(self._watched)
            self._watched.clear()
            self._drop_timer.start()

    @Slot(str)
    def _on_changed(self, folder: str) -> None:
        if folder in self._dropping:  # a folder of what was shown before clear(): not reported
            self._dropping.discard(folder)  # and not kept for a re-watch: it may be gone, its watch with it
            self._watcher.removePaths([folder])
            return
        self._pending.add(folder)
        self._timer.start()

    @Slot()
    def _flush(self) -> None:
        pending, self._pending = sorted(self._pending), set()
        if not pending:
            return
        # Qt drops the watch of a folder that was deleted or moved away (and says so as a change): forget those,
        # so that the rescan this signal starts watches a folder made again under the same name.
        ours = [f for f in pending if f in self._watched]
        if ours:
            lost = set(ours) - set(self._watcher.directories())
            self._watched.difference_update(lost)
            self._lost.update(lost)
        self.changed.emit(pending)
