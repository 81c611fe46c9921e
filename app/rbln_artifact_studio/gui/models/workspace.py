"""The open folders: each scanned through its Kind in a process of its own (folder_scan), filling the table in
batches; what changes is rescanned. The first folder is the one opened; others are added beside it (a result written
elsewhere)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from rbln_artifact_studio.core.portable.walk import is_inside
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.models.disk_watcher import DiskWatcher
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobManager
from rbln_artifact_studio.gui.models.scan_messages import (
    Finished,
    Logged,
    Progress,
    RowsFound,
    RowsRead,
    RowsRemoved,
    ScanRequest,
)

ACK_FALLBACK_MS = 100  # when the table is hidden and never paints


def _scan_in_process(
    root: str, folders: list[str], known: list[str], opening: bool, ctx: JobContext, whole: bool = False
) -> int:
    """Worker thread: run the scan in its own process (folder_scan) and hand its messages to the GUI thread.

    This thread only waits: for the scan process's messages (read and unpickled by ScanProcess's reader) and for the
    table to paint each batch (partial with wait); rows that arrive meanwhile come together in the next batch.
    """
    # humanfriendly is loaded here for the GUI thread, which needs it once rows arrive (core.sizes, for the details)
    # deferred: in the scan's worker, not before the window's first paint (the scan process's side: subprocess, pickle)
    import humanfriendly  # noqa: F401

    from rbln_artifact_studio.gui.models.folder_scan import ScanProcess

    process = ScanProcess(ScanRequest(root, folders, known, opening, whole))
    found = 0
    try:
        for message in process.messages(ctx.cancel):
            if isinstance(message, Progress):
                ctx.progress(message.done, message.total, message.message)
            elif isinstance(message, Logged):
                ctx.log(message.line)
            elif isinstance(message, Finished):
                found = message.artifacts
            else:
                ctx.partial(message, wait=isinstance(message, RowsFound))
    finally:
        process.stop()
    ctx.progress(found, found, f"{found:,} artifacts read")
    return found


class Workspace(QObject):
    """The opened root folder and the folders added beside it; at most one scan job runs, later ones queue."""

    rootChanged = Signal(str)
    rootsChanged = Signal(list)  # every folder shown: the opened one first, then those added beside it
    scanFinished = Signal()  # the table reflects the disk as of the last scan or rescan
    rowsRead = Signal()  # every artifact of the scan has its row (some may still say "checking")

    def __init__(
        self, jobs: JobManager, model: ArtifactTableModel, debounce_ms: int = 300, parent: QObject | None = None
    ):
        super().__init__(parent)
        self.jobs = jobs
        self.model = model
        self.root: str | None = None
        self.beside: list[str] = []  # folders added beside the root (add()), in the order added
        self._queued: list[str] = []  # added folders whose first scan waits for the running one
        self._whole: list[str] = []  # shown folders to read again whole (Refresh), after the running scan
        self.rootsChanged.connect(model.set_folders)  # several folders: each row's Host cell names its own
        self.watcher = DiskWatcher(debounce_ms, self)
        self.watcher.changed.connect(self.rescan)
        self._job: Job | None = None
        self._pending: set[str] = set()
        self._to_ack: list[Job] = []

        self._ack_timer = QTimer(self)
        self._ack_timer.setSingleShot(True)
        self._ack_timer.setInterval(ACK_FALLBACK_MS)
        self._ack_timer.timeout.connect(self.batch_shown)

    @Slot()
    def batch_shown(self) -> None:
        """The table has painted the last batch: let waiting scan workers go on."""
        self._ack_timer.stop()
        jobs, self._to_ack = self._to_ack, []
        for job in jobs:
            job.ack()

    @property
    def busy(self) -> bool:
        return self._job is not None

    @property
    def scan_job(self) -> Job | None:
        """The scan (or rescan) running now: read-only, so closing the window may cancel it without asking."""
        return self._job

    def open(self, root: str | Path) -> None:
        """Show the artifacts under root (replacing whatever was shown) and start watching it."""
        root = os.path.abspath(root)
        self._forget()
        self.root = root
        self.rootChanged.emit(root)
        self.rootsChanged.emit(self.roots)
        self.watcher.watch([root])
        self._start([root], visible=True)

    @property
    def roots(self) -> list[str]:
        """Every folder shown: the opened one, then those added beside it."""
        return ([self.root] if self.root else []) + list(self.beside)

    def root_of(self, path: str) -> str | None:
        """The shown folder that holds path (None: outside every one)."""
        path = os.path.abspath(path)
        return next((r for r in self.roots if is_inside(path, r)), None)

    def add(self, folder: str | Path) -> None:
        """Show folder's artifacts beside those shown (the first folder, with nothing open); one inside a shown
        folder is read again instead."""
        folder = os.path.abspath(folder)
        if self.root is None:
            self.open(folder)
            return
        if self.root_of(folder) is not None:
            self.rescan([folder])
            return
        self.beside.append(folder)
        self.rootsChanged.emit(self.roots)
        self.watcher.watch([folder])
        self._queued.append(folder)
        self._start_next()

    def _forget(self) -> None:
        """Stop the scan, drop what was queued, shown and watched (before another folder, or none, is shown)."""
        if self._job is not None:
            self._job.cancel()
            self._job = None
        self._pending.clear()
        self._queued.clear()
        self._whole.clear()
        self.beside.clear()
        self.watcher.clear()
        self.model.clear()

    def close_root(self) -> None:
        """Show no folder (the opened one is gone): its scan stops, the table empties, nothing is watched."""
        self._forget()
        self.root = None
        self.rootsChanged.emit(self.roots)

    def refresh(self, folders: Iterable[str] | None = None) -> None:
        """Read these shown folders (None: every one) again whole, each in a scan of its own: every artifact read
        anew, rows no longer there removed; the table is not cleared, so rows of other places stay."""
        chosen = self.roots if folders is None else [os.path.abspath(f) for f in folders]
        self._whole += [f for f in chosen if f in self.roots and f not in self._whole]
        self._start_next()

    @Slot(list)
    def rescan(self, folders: Iterable[str]) -> None:
        """Read these folders again (after a change on disk or a job that wrote there)."""
        if self.root is None:
            return
        self._pending.update(os.path.abspath(f) for f in folders if self.root_of(f) is not None)
        self._start_next()

    def _start_next(self) -> None:
        """The next scan, when none runs: a folder added beside, else the changed folders of one shown folder."""
        if self._job is not None:
            return
        if self._queued:
            folder = self._queued.pop(0)
            self._start([folder], visible=True, root=folder)
            return
        if self._whole:
            folder = self._whole.pop(0)
            self._pending = {f for f in self._pending if self.root_of(f) != folder}  # read with it
            self._start([folder], visible=True, root=folder, whole=True)
            return
        if not self._pending:
            return
        folders = sorted(self._pending)
        root = self.root_of(folders[0]) or folders[0]
        mine = [f for f in folders if self.root_of(f) == root]  # one scan reads below one root
        self._pending.difference_update(mine)
        self._start(mine, visible=False, root=root)

    def _start(self, folders: list[str], visible: bool, root: str | None = None, whole: bool = False) -> None:
        known = self.model.paths()
        title = f"Scanning {folders[0]}" if visible else f"Rescanning {len(folders)} folder(s)"
        root = root or self.root or folders[0]
        opening = visible and not whole
        job = self.jobs.submit(
            title, lambda ctx: _scan_in_process(root, folders, known, opening, ctx, whole), visible=visible
        )
        self._job = job
        job.partial.connect(self._on_partial)
        job.finished.connect(self._on_finished)

    @Slot(object)
    def _on_partial(self, message: RowsRemoved | RowsFound | RowsRead) -> None:
        job = self.sender()
        if isinstance(job, Job):
            # The worker waits until this batch is painted (batch_shown), or a short while if nothing paints.
            self._to_ack.append(job)
            self._ack_timer.start()
        if job is not self._job or self.root is None:
            return  # a cancelled scan of a folder that is no longer shown
        if isinstance(message, RowsRead):
            self.rowsRead.emit()
        elif isinstance(message, RowsRemoved):
            self.model.remove_paths(message.paths)
            self.watcher.unwatch(message.paths)
            self.watcher.watch(message.watch)
        else:
            self.model.upsert(message.rows)
            self.watcher.watch(message.watch, artifacts={row.path for row in message.rows})

    @Slot()
    def _on_finished(self) -> None:
        if self.sender() is not self._job:
            return
        self._job = None
        if self._pending or self._queued or self._whole:
            self._start_next()
            return
        self.scanFinished.emit()
