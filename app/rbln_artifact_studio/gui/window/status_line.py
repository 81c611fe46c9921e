"""The status bar's permanent parts: how many artifacts are shown, what the disk watcher left out, failed jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QLabel, QWidget

from rbln_artifact_studio.gui.app.errors import show_error
from rbln_artifact_studio.gui.models import disk_watcher
from rbln_artifact_studio.gui.models.jobs import Job, JobFailure

if TYPE_CHECKING:
    from rbln_artifact_studio.gui.window.main_window import MainWindow


class StatusLine(QObject):
    """The artifact count and the watcher's limit in the status bar; a failed job's message there too."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.count_label = QLabel()
        self.count_label.setObjectName("artifactCount")
        window.statusBar().addPermanentWidget(self.count_label)
        self.watch_label = QLabel()  # shown only when the disk watcher had to leave artifact folders out
        self.watch_label.setObjectName("watchLimit")
        self.watch_label.hide()
        window.statusBar().addPermanentWidget(self.watch_label)

    def connect_to(self) -> None:
        w = self.window
        for signal in (w.model.rowsInserted, w.model.rowsRemoved, w.model.modelReset, w.workspace.scanFinished):
            signal.connect(self.update_count)
        for signal in (w.browser.proxy.rowsInserted, w.browser.proxy.rowsRemoved, w.browser.proxy.layoutChanged):
            signal.connect(self.update_count)
        w.workspace.watcher.limited.connect(self._on_watch_limit)
        w.jobs.jobFailed.connect(self.on_job_failed)
        self.update_count()

    @Slot()
    def update_count(self) -> None:
        total, shown = self.window.model.rowCount(), self.window.browser.proxy.rowCount()
        text = f"{total:,} artifact(s)" if shown == total else f"{shown:,} of {total:,} artifact(s) shown"
        self.count_label.setText(text)

    @Slot(int)
    def _on_watch_limit(self, left_out: int) -> None:
        self.watch_label.setVisible(left_out > 0)
        shortcut = self.window.action_refresh.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
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
        self.window.statusBar().showMessage(f"{job.title} failed: {failure.reason}", 10_000)
        if job.surfaced:
            return None  # background work the user did not start: the jobs panel lists it, no modal box
        return show_error(self.window, f"{job.title} failed", failure.reason, failure.details)
