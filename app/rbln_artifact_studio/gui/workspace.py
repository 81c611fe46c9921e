"""The open folder: scans it in a worker, fills the table in batches, and rescans folders that change on disk."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.gui.artifact_model import ArtifactTableModel, TableRow
from rbln_artifact_studio.gui.disk_watcher import DiskWatcher
from rbln_artifact_studio.gui.jobs import WORKERS, Job, JobContext, JobManager
from rbln_artifact_studio.gui.long_lived import LongLivedRows

if TYPE_CHECKING:  # the scan (~30 ms of imports) loads in the scan's worker, not before the window shows
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary

ACK_FALLBACK_MS = 100  # when the table is hidden and never paints
BATCH_ROWS = 256
BATCH_SECONDS = 0.1


def folders_to_watch(root: str, artifact: str) -> list[str]:
    """The artifact folder and every folder between it and the root (pure path arithmetic)."""
    out = [artifact]
    parent = os.path.dirname(artifact)
    while len(parent) >= len(root) and parent != out[-1]:
        out.append(parent)
        if parent == root:
            break
        parent = os.path.dirname(parent)
    return out


@dataclass(frozen=True)
class RowsRemoved:
    """Scan message: artifacts gone from a rescanned folder, and folders to watch."""

    paths: list[str]
    watch: list[str]


@dataclass(frozen=True)
class RowsFound:
    """Scan message: a batch of rows to add or update, and the folders above them to watch."""

    rows: list[TableRow]
    watch: list[str]


@dataclass(frozen=True)
class RowsRead:
    """Scan message: every artifact has its row; the full checks of the rows still "checking" follow."""

    count: int


def _scan_folders(root: str, folders: list[str], known: frozenset[str], ctx: JobContext, opening: bool = False) -> int:
    """Worker side: rescan each folder, sending RowsRemoved and RowsFound messages to the GUI.

    Everything the GUI thread would otherwise work out per row is done here: the cell texts (TableRow) and
    the folders to watch (each artifact and the folders above it, each sent once).
    """
    from rbln_artifact_studio.core.fleet.rescan import rescan_folder

    if opening and not os.path.isdir(folders[0]):
        raise StudioError(f"{folders[0]} is not a folder; open a folder that holds compiled artifacts.")
    found = 0
    sent: set[str] = set()
    checking: list[ArtifactSummary] = []
    for folder in folders:
        ctx.cancel.raise_if_cancelled()
        result = rescan_folder(folder, known, root)
        if result.removed or result.watch:
            ctx.partial(RowsRemoved(result.removed, result.watch))
        batch = _Batch(ctx)
        for summary in result.summaries(ctx.cancel, lambda _path, message: ctx.log(message), verify=False):
            ctx.checkpoint()  # parks here while the table paints
            watch = []
            # A row for an entry that failed (a link to itself) is watched through its folder: Qt cannot watch it.
            watched = summary.path if os.path.isdir(summary.path) else os.path.dirname(summary.path)
            for f in folders_to_watch(root, watched):
                if f in sent:
                    break  # its parents were sent with it
                sent.add(f)
                watch.append(f)
            found += 1
            if summary.status is Status.CHECKING:
                checking.append(summary)
            batch.add(TableRow.of(summary), watch, f"{found:,} artifacts read")
        batch.flush()
    ctx.partial(RowsRead(found))
    # The full check (inspect's) of every row the fast pass could not settle; until then it says "checking".
    # Imported here, in the worker: the window paints before pydantic and the backends load.
    from rbln_artifact_studio.backends.registry import inspector_for
    from rbln_artifact_studio.core.fleet.verify import verify_rows

    batch = _Batch(ctx)
    inspector = inspector_for(cancel=ctx.cancel)
    # WORKERS.checkpoint: the cache's save at the end gives way while the window paints, as the rows do.
    for i, verified in enumerate(verify_rows(Path(root), checking, inspector, ctx.cancel, pause=WORKERS.checkpoint), 1):
        ctx.checkpoint()
        batch.add(TableRow.of(verified), [], f"Checked {i:,} of {len(checking):,} artifacts")
    batch.flush()
    while checking:  # freed a row at a time (see ScanCache.release): the GUI thread gets the lock in between
        checking.pop()
        if len(checking) % 256 == 0:
            WORKERS.checkpoint()
    ctx.progress(found, found, f"{found:,} artifacts read")
    return found


class _Batch:
    """Rows sent to the table in batches of BATCH_ROWS or every BATCH_SECONDS, waiting for each to be painted."""

    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self.rows: list[TableRow] = []
        self.watch: list[str] = []
        self.last = time.monotonic()
        self.count = 0

    def add(self, row: TableRow, watch: list[str], message: str) -> None:
        self.rows.append(row)
        self.watch += watch
        self.count += 1
        if len(self.rows) >= BATCH_ROWS or time.monotonic() - self.last >= BATCH_SECONDS:
            self.ctx.progress(self.count, 0, message)
            self.flush()

    def flush(self) -> None:
        if self.rows or self.watch:
            self.ctx.partial(RowsFound(self.rows, self.watch), wait=True)
        self.rows, self.watch, self.last = [], [], time.monotonic()


class Workspace(QObject):
    """One root folder at a time; at most one scan job runs, later changes queue behind it."""

    rootChanged = Signal(str)
    scanFinished = Signal()  # the table reflects the disk as of the last scan or rescan
    rowsRead = Signal()  # every artifact of the scan has its row (some may still say "checking")

    def __init__(
        self, jobs: JobManager, model: ArtifactTableModel, debounce_ms: int = 300, parent: QObject | None = None
    ):
        super().__init__(parent)
        self.jobs = jobs
        self.model = model
        self.root: str | None = None
        self.watcher = DiskWatcher(debounce_ms, self)
        self.watcher.changed.connect(self.rescan)
        self._job: Job | None = None
        self._pending: set[str] = set()
        self._to_ack: list[Job] = []
        self.long_lived = LongLivedRows()
        self._rows_received = 0  # rows the table took, new or replacing one (the verdicts replace every row)

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
        if self._job is not None:
            self._job.cancel()
            self._job = None
        self._pending.clear()
        self.watcher.clear()
        self.model.clear()
        self.root = root
        self.rootChanged.emit(root)
        self.watcher.watch([root])
        self._start([root], visible=True)

    def close_root(self) -> None:
        """Show no folder (the opened one is gone): its scan stops, the table empties, nothing is watched."""
        if self._job is not None:
            self._job.cancel()
            self._job = None
        self._pending.clear()
        self.watcher.clear()
        self.model.clear()
        self.root = None

    def refresh(self) -> None:
        if self.root is not None:
            self.open(self.root)

    @Slot(list)
    def rescan(self, folders: Iterable[str]) -> None:
        """Read these folders again (after a change on disk or a job that wrote there)."""
        if self.root is None:
            return
        root = self.root
        from rbln_artifact_studio.core.fleet.scan import is_inside  # loaded: the folder's scan read it

        self._pending.update(os.path.abspath(f) for f in folders if is_inside(os.path.abspath(f), root))
        if self._job is None and self._pending:
            folders, self._pending = sorted(self._pending), set()
            self._start(folders, visible=False)

    def _start(self, folders: list[str], visible: bool) -> None:
        known = frozenset(self.model.paths())
        title = f"Scanning {folders[0]}" if visible else f"Rescanning {len(folders)} folder(s)"
        root = self.root or folders[0]
        job = self.jobs.submit(title, lambda ctx: _scan_folders(root, folders, known, ctx, visible), visible=visible)
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
            # Counted as received, not as the table's size: the full check's verdicts replace each row with a new
            # one, and those too must leave the collector's sight, or its full passes walk them all again.
            self._rows_received += len(message.rows)
            self.long_lived.grown_to(self._rows_received)
            self.watcher.watch(message.watch, artifacts={row.summary.path for row in message.rows})

    @Slot()
    def _on_finished(self) -> None:
        if self.sender() is not self._job:
            return
        self._job = None
        if self._pending:
            folders, self._pending = sorted(self._pending), set()
            self._start(folders, visible=False)
            return
        self.scanFinished.emit()
