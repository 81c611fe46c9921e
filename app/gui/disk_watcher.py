"""Watch the open folder and its artifacts; collect changed folders and hand them over after a quiet spell."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal, Slot


class DiskWatcher(QObject):
    """A QFileSystemWatcher with a debounce; its callbacks only record paths, never touch the disk."""

    changed = Signal(list)  # folders whose entries changed, sorted

    def __init__(self, debounce_ms: int = 300, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._on_changed)
        self._watched: set[str] = set()
        self._pending: set[str] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._flush)

    @property
    def watched(self) -> frozenset[str]:
        return frozenset(self._watched)

    def watch(self, folders: Iterable[str]) -> None:
        new = sorted({f for f in folders if f and f not in self._watched})
        if new:
            failed = set(self._watcher.addPaths(new))
            self._watched.update(f for f in new if f not in failed)

    def unwatch(self, folders: Iterable[str]) -> None:
        gone = sorted({f for f in folders if f in self._watched})
        if gone:
            self._watcher.removePaths(gone)
            self._watched.difference_update(gone)

    def clear(self) -> None:
        self.unwatch(list(self._watched))
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
