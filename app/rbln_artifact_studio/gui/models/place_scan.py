"""The row source of an opened place read in this process (a bucket's prefix, or any kind registered beside the
built-in ones): read whole when opened and on Refresh, in part after a write there, one read at a time, through the
same reader as a folder's scan process (folder_scan.scan_folders)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Slot

from rbln_artifact_studio.core.location import Location
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobManager, JobState
from rbln_artifact_studio.gui.models.scan_messages import Logged, Progress, RowsFound, RowsRemoved, ScanRequest
from rbln_artifact_studio.gui.models.table_rows import TableRow

Then = Callable[[bool], None]  # told whether a read of what was asked ended well (False: it failed)


def read_in_process(request: ScanRequest, ctx: JobContext) -> int:
    """Worker side: scan_folders in this thread (a place elsewhere: its reads wait on the network, not on this
    interpreter), each message handed to the GUI thread; how many artifacts it read."""
    # deferred: the reader of places (folder_scan.scan_folders) loads in the worker of the first place read elsewhere
    from rbln_artifact_studio.gui.models.folder_scan import scan_folders

    def send(message: object) -> None:
        if isinstance(message, Progress):
            ctx.progress(message.done, message.total, message.message)
        elif isinstance(message, Logged):
            ctx.log(message.line)
        else:
            ctx.partial(message)

    found = scan_folders(request, send, ctx.cancel)
    ctx.progress(found, found, f"{found:,} artifacts read in {request.root}")
    return found


def apply_rows(model: ArtifactTableModel, rows: dict[str, TableRow], message: object) -> None:
    """A message of scan_folders applied to the table and to the rows a source keeps (shown again after a clear)."""
    if isinstance(message, RowsFound):
        rows.update((row.path, row) for row in message.rows)
        model.upsert(message.rows)
    elif isinstance(message, RowsRemoved):
        for path in message.paths:
            rows.pop(path, None)
        model.remove_paths(message.paths)


def tell(job: Job, told: list[Then]) -> None:
    """How job's read ended, to those waiting for it (a cancelled read tells nothing). Through `finished`, not
    `failed`: a hidden job's failure nobody else listens to joins the jobs panel (JobManager)."""
    if job.state is not JobState.CANCELLED:
        for then in told:
            then(job.state is JobState.SUCCEEDED)


class PlaceSource(QObject):
    """One opened place's rows: a read runs at a time; parts asked for meanwhile are read together after it."""

    def __init__(self, jobs: JobManager, model: ArtifactTableModel, root: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs, self.model, self.root = jobs, model, root
        self.rows: dict[str, TableRow] = {}  # path -> row, as last read
        self._job: Job | None = None
        self._pending: dict[str, list[Then]] = {}  # part (the root: all of it) -> told when it has been read
        self._visible = False

    def read(self, part: str | None = None, then: Then | None = None, visible: bool = False) -> Job:
        """Read part (None: the whole place) again; then is told how that read ended. The read starts
        now, or after the one running (returned: the job running now)."""
        told = self._pending.setdefault(part or self.root, [])
        if then is not None:
            told.append(then)
        self._visible = self._visible or visible
        self._start_next()
        assert self._job is not None  # started now, or the one it waits for
        return self._job

    def _start_next(self) -> None:
        if self._job is not None or not self._pending:
            return
        parts = [self.root] if self.root in self._pending else sorted(self._pending)  # the whole holds every part
        told = [then for waiting in self._pending.values() for then in waiting]
        self._pending.clear()
        request = ScanRequest(self.root, parts, list(self.rows), whole=True)
        title = f"Scan {self.root}" if parts == [self.root] else f"Read {', '.join(parts)} again"
        job = self._job = self.jobs.submit(title, lambda ctx: read_in_process(request, ctx), visible=self._visible)
        self._visible = False
        job.partial.connect(self._on_message)
        job.finished.connect(lambda: tell(job, told))
        job.finished.connect(self._on_finished)

    @Slot(object)
    def _on_message(self, message: object) -> None:
        if self.sender() is self._job:
            apply_rows(self.model, self.rows, message)

    @Slot()
    def _on_finished(self) -> None:
        if self.sender() is self._job:
            self._job = None
            self._start_next()


class PlaceSources(QObject):
    """The places opened beside the folders and the servers, one PlaceSource each (a child of the table's model,
    so whoever opens a place with the model finds them)."""

    def __init__(self, jobs: JobManager, model: ArtifactTableModel) -> None:
        super().__init__(model)
        self.setObjectName("placeSources")
        self.jobs, self.model = jobs, model
        self.sources: dict[str, PlaceSource] = {}

    @staticmethod
    def of(jobs: JobManager, model: ArtifactTableModel) -> PlaceSources:
        found = model.findChild(PlaceSources, "placeSources")
        return found if isinstance(found, PlaceSources) else PlaceSources(jobs, model)

    def open(self, root: Location) -> Job:
        """Show root's rows beside the others (opened again: read again); the first read's failure is its job's."""
        key = str(root)
        source = self.sources.get(key)
        if source is None:
            source = self.sources[key] = PlaceSource(self.jobs, self.model, key, self)
            self.model.add_root("places", key)  # a second prefix of one bucket: each row names its own
        return source.read(visible=True)

    @Slot()
    def show_again(self) -> None:
        """The folders were opened again and the table cleared: put the places' rows back."""
        for source in self.sources.values():
            self.model.upsert(list(source.rows.values()))


def open_place(jobs: JobManager, model: ArtifactTableModel, root: Location) -> Job:
    """Scan root in a job; its rows join the table beside the others (a failure is the job's)."""
    return PlaceSources.of(jobs, model).open(root)
