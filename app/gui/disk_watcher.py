"""Watch the open folder and its artifacts; collect changed folders and hand them over after a quiet spell."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal, Slot

# Folders added to the watcher per event-loop turn: a 256-row scan batch added at once (~260 inotify watches)
# held the GUI thread ~20 ms; slices keep each turn to a few ms.
WATCH_SLICE = 64


class DiskWatcher(QObject):
    """A QFileSystemWatcher with a debounce; its callbacks only record paths, never touch the disk."""

    changed = Signal(list)  # folders whose entries changed, sorted

    def __init__(self, debounce_ms: int = 300, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watcher = self._new_watcher()
        self._watched: set[str] = set()
        self._queue: list[str] = []  # to add, a slice per event-loop turn
        self._queued: set[str] = set()
        self._pending: set[str] = set()
        self._adder = QTimer(self)
        self._adder.setSingleShot(True)
        self._adder.setInterval(0)
        self._adder.timeout.connect(self._add_slice)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._flush)

    def _new_watcher(self) -> QFileSystemWatcher:
        watcher = QFileSystemWatcher(self)
        watcher.directoryChanged.connect(self._on_changed)
        return watcher

    @property
    def watched(self) -> frozenset[str]:
        """Folders watched, or queued to be within a few event-loop turns."""
        return frozenset(self._watched | self._queued)

    def watch(self, folders: Iterable[str]) -> None:
        for f in folders:
            if f and f not in self._watched and f not in self._queued:
                self._queued.add(f)
                self._queue.append(f)
        if self._queue and not self._adder.isActive():
            self._adder.start()

    @Slot()
    def _add_slice(self) -> None:
        batch, self._queue = self._queue[:WATCH_SLICE], self._queue[WATCH_SLICE:]
        self._queued.difference_update(batch)
        failed = set(self._watcher.addPaths(batch))
        self._watched.update(f for f in batch if f not in failed)
        if self._queue:
            self._adder.start()

    def unwatch(self, folders: Iterable[str]) -> None:
        folders = set(folders)
        if folders & self._queued:
            self._queue = [f for f in self._queue if f not in folders]
            self._queued.difference_update(folders)
        gone = sorted(folders & self._watched)
        if gone:
            self._watcher.removePaths(gone)
            self._watched.difference_update(gone)

    def clear(self) -> None:
        """Forget every folder at once: a new watcher (removing 10,000 watches one by one stalled the GUI)."""
        self._watcher.directoryChanged.disconnect(self._on_changed)
        self._watcher.deleteLater()
        self._watcher = self._new_watcher()
        self._watched.clear()
        self._queue, self._queued = [], set()
        self._adder.stop()
        self._pending.clear()
        self._timer.stop()

    @Slot(str)
    def _on_changed(self, folder: str) -> None:
        self._pending.add(folder)
        self._timer.start()

    @Slot()
    def _flush(self) -> None:
        pending, self._pending = sorted(self._pending), set()
        if pending:
            self.changed.emit(pending)
