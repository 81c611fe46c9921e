"""The status bar's permanent parts: how many artifacts are shown, what the disk watcher left out, failed jobs."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QObject, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from rbln_artifact_studio.gui.app.errors import show_error
from rbln_artifact_studio.gui.models import disk_watcher
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.models.jobs import Job, JobFailure, JobManager
from rbln_artifact_studio.gui.models.workspace import Workspace


class StatusLine(QObject):
    """The artifact count and the watcher's limit in the status bar; a failed job's message there too."""

    def __init__(
        self,
        status: QStatusBar,
        model: ArtifactTableModel,
        shown: QAbstractItemModel,
        workspace: Workspace,
        jobs: JobManager,
        parent: QWidget,
    ) -> None:
        """shown: the rows the filter lets through; parent: the window a failed job's error box belongs to."""
        super().__init__(parent)
        self.status, self.model, self.shown, self.workspace, self.jobs = status, model, shown, workspace, jobs
        self.parent_widget = parent
        self.refresh: QAction | None = None  # the action the watcher's note names (connect_to)
        self.count_label = QLabel()
        self.count_label.setObjectName("artifactCount")
        status.addPermanentWidget(self.count_label)
        self.watch_label = QLabel()  # shown only when the disk watcher had to leave artifact folders out
        self.watch_label.setObjectName("watchLimit")
        self.watch_label.hide()
        status.addPermanentWidget(self.watch_label)

    def connect_to(self, refresh: QAction) -> None:
        """Follow the rows, the watcher and the jobs; refresh is the action whose keys the watcher's note names."""
        self.refresh = refresh
        for signal in (self.model.rowsInserted, self.model.rowsRemoved, self.model.modelReset):
            signal.connect(self.update_count)
        self.workspace.scanFinished.connect(self.update_count)
        for signal in (self.shown.rowsInserted, self.shown.rowsRemoved, self.shown.layoutChanged):
            signal.connect(self.update_count)
        self.workspace.watcher.limited.connect(self._on_watch_limit)
        self.jobs.jobFailed.connect(self.on_job_failed)
        self.update_count()

    @Slot()
    def update_count(self) -> None:
        total, shown = self.model.rowCount(), self.shown.rowCount()
        text = f"{total:,} artifact(s)" if shown == total else f"{shown:,} of {total:,} artifact(s) shown"
        self.count_label.setText(text)

    @Slot(int)
    def _on_watch_limit(self, left_out: int) -> None:
        self.watch_label.setVisible(left_out > 0)
        keys = self.refresh.shortcut() if self.refresh is not None else QKeySequence()
        shortcut = keys.toString(QKeySequence.SequenceFormat.NativeText)
        self.watch_label.setText(f"Changes inside {left_out:,} artifact(s) show after {shortcut or 'Refresh'}")
        self.watch_label.setToolTip(
            f"Only {disk_watcher.MAX_ARTIFACT_WATCHES:,} artifact folders are watched for changes made outside the app (each "
            "watch slows the next). Artifacts created or deleted anywhere still show up on their own; a resize or "
            f"edit inside one of the other {left_out:,} shows after File ▸ Refresh."
        )

    @Slot(object, object)
    def on_job_failed(self, job: Job, failure: JobFailure) -> QWidget | None:
        if not job.visible:
            return None
        self.status.showMessage(f"{job.title} failed: {failure.reason}", 10_000)
        if job.surfaced:
            return None  # background work the user did not start: the jobs panel lists it, no modal box
        return show_error(self.parent_widget, f"{job.title} failed", failure.reason, failure.details)
