"""The jobs dock: running and finished jobs with progress bars, cancel buttons, elapsed time and their log.

A row's title gives way (elided, whole in its tooltip) so its Cancel button stays in view; a row's context menu
offers Cancel, Show Log, Copy Command and Show Output in File Manager.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QSize, Qt, QTimer, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.models.jobs import Job, JobManager, JobState

KEEP_FINISHED = 50  # finished jobs the panel lists; older ones go (Clear finished drops them all)


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


class ElidedLabel(QLabel):
    """A label that shortens its text with '…' to the width it gets (the whole text in its tooltip)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.full_text = text
        self.setToolTip(text)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("Copy a…"))
        self._elide()

    def sizeHint(self) -> QSize:  # the text shown: the layout gives the label the room there is (Ignored policy)
        return QSize(self.fontMetrics().horizontalAdvance(self.text()) + 4, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self.minimumWidth(), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(self.fontMetrics().elidedText(self.full_text, Qt.TextElideMode.ElideMiddle, self.width()))


class JobRow(QWidget):
    """One job: title, state, progress bar, elapsed time and a cancel button."""

    def __init__(self, job: Job, parent: QWidget | None = None, manager: JobManager | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.manager = manager  # says what a queued job waits for
        self.setObjectName("jobRow")
        self.title = ElidedLabel(job.title)
        self.state = QLabel()
        self.state.setObjectName("jobState")
        self.bar = QProgressBar()
        self.bar.setObjectName("jobProgress")
        # Wide enough for the longest text it shows ("100% of 999.99 GiB"), so the text is never cut.
        self.bar.setFixedWidth(self.bar.fontMetrics().horizontalAdvance("cancelled at 100% of 999.99 GiB") + 32)
        self.time = QLabel("0:00")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("jobCancel")
        self.cancel_button.clicked.connect(job.cancel)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.title, 1)
        layout.addWidget(self.state)
        layout.addWidget(self.bar)
        layout.addWidget(self.time)
        layout.addWidget(self.cancel_button)
        job.progressed.connect(self.refresh)
        job.started.connect(self.refresh)
        job.finished.connect(self.refresh)
        job.askedChanged.connect(self.refresh)
        self.refresh()

    @Slot()
    def _on_cancel_clicked(self) -> None:
        self.cancel_button.setEnabled(False)
        self.state.setText("cancelling…")

    @Slot()
    def refresh(self) -> None:
        job = self.job
        self.time.setText(_elapsed(job.elapsed))
        if job.state.ended:
            self.cancel_button.hide()
            if job.state is JobState.SUCCEEDED:
                self.bar.setRange(0, 1)
                self.bar.setValue(1)
                self.bar.setFormat(f"%p% of {format_bytes(job.total)}" if job.total > 10_000 else "%p%")
            elif self.bar.maximum() == 0:  # ended while its amount of work was unknown: stop the busy indicator
                self.bar.setRange(0, 1)
                self.bar.setValue(0)
                self.bar.setFormat(job.state.value)
            else:  # cancelled or failed: the bar stays where the work stopped
                self.bar.setFormat(f"{job.state.value} at %p%")
            self.state.setText(job.state.value)
            if job.asking:  # its work waits on the user: not "succeeded" while the question is open
                self.bar.setFormat("waiting for you")
                self.state.setText(f"waiting for your answer: {job.asking}")
            elif job.answer:
                self.bar.setFormat(job.answer)
                self.state.setText(job.answer)
            self.setToolTip(job.failure.reason if job.failure else job.asking or job.answer or job.message)
            return
        if not job.token.cancelled:
            waiting = self.manager.waiting_for(job) if self.manager is not None else ""
            self.state.setText(f"{job.state.value}: {waiting}" if waiting else job.state.value)
        if job.total > 0:
            # QProgressBar holds ints: show bytes as a per-mille so large copies fit.
            self.bar.setRange(0, 1000)
            self.bar.setValue(min(1000, job.done * 1000 // job.total))
            self.bar.setFormat(f"%p% of {format_bytes(job.total)}" if job.total > 10_000 else "%p%")
        else:
            self.bar.setRange(0, 0)  # busy indicator: the amount of work is unknown
        self.setToolTip(job.message)


class JobsPanel(QDockWidget):
    """Lists the visible jobs of a JobManager, newest first; the log of the selected one below."""

    def __init__(self, manager: JobManager, parent: QWidget | None = None) -> None:
        super().__init__("Jobs", parent)
        self.setObjectName("jobsPanel")
        self.manager = manager
        self.list = QListWidget()
        self.list.setObjectName("jobsList")
        # Rows are as wide as the list, never wider: the Cancel button is in view without scrolling.
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._on_context_menu)
        self.log = QPlainTextEdit()
        self.log.setObjectName("jobLog")
        self.log.setReadOnly(True)
        self.log.setPlaceholderText("Select a job to see its log.")
        clear = QPushButton("Clear finished")
        clear.clicked.connect(self.clear_finished)
        splitter = QSplitter()
        splitter.setObjectName("jobsSplitter")
        splitter.addWidget(self.list)
        splitter.addWidget(self.log)
        splitter.setSizes([600, 400])
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(splitter)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(clear)
        layout.addLayout(buttons)
        self.setWidget(body)
        self.rows: dict[int, JobRow] = {}
        manager.jobAdded.connect(self.add_job)
        manager.activeChanged.connect(self._refresh_queued)  # a job ended or came: what the queued wait for changed
        self.list.currentItemChanged.connect(self._show_log)
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    @Slot(object)
    def add_job(self, job: Job) -> None:
        if not job.visible:
            return
        item = QListWidgetItem()
        row = JobRow(job, manager=self.manager)
        item.setSizeHint(QSize(row.minimumSizeHint().width(), row.sizeHint().height()))
        self.list.insertItem(0, item)
        self.list.setItemWidget(item, row)
        self.rows[id(job)] = row
        job.logged.connect(self._on_log)
        job.finished.connect(self._on_log)
        job.finished.connect(self._keep_recent)

    def row_for(self, job: Job) -> JobRow | None:
        return self.rows.get(id(job))

    def _row_at(self, pos: QPoint) -> JobRow | None:
        item = self.list.itemAt(pos)
        row = self.list.itemWidget(item) if item is not None else None
        return row if isinstance(row, JobRow) else None

    @Slot(QPoint)
    def _on_context_menu(self, pos: QPoint) -> None:
        row = self._row_at(pos)
        if row is not None:
            self.context_menu(row).popup(self.list.viewport().mapToGlobal(pos))

    def context_menu(self, row: JobRow) -> QMenu:
        """Cancel, Show Log, Copy Command, Show Output in File Manager: each offered where the job allows it."""
        job = row.job
        menu = QMenu(self.list)
        menu.setObjectName("jobContextMenu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        cancel = menu.addAction("&Cancel", row.cancel_button.click)
        cancel.setEnabled(not job.state.ended and row.cancel_button.isEnabled())
        menu.addAction("Show &Log", lambda: self._select(row))
        copy = menu.addAction("Copy &Command", lambda: self.copy_command(job))
        copy.setEnabled(job.command is not None)
        show = menu.addAction("Show Output in &File Manager", lambda: self.show_output(job))
        show.setEnabled(job.output is not None and job.state is JobState.SUCCEEDED)
        return menu

    def _select(self, row: JobRow) -> None:
        for i in range(self.list.count()):
            if self.list.itemWidget(self.list.item(i)) is row:
                self.list.setCurrentRow(i)
        self.log.setFocus(Qt.FocusReason.OtherFocusReason)

    def copy_command(self, job: Job) -> str:
        # A job with a command loaded it already (the compile's or the resize's command line)
        # deferred: core.display.commandline loads the compiler (pydantic): not before the first paint
        from rbln_artifact_studio.core.display.commandline import shell_text

        text = shell_text(job.command) if job.command else ""
        if text:
            QGuiApplication.clipboard().setText(text)
        return text

    def show_output(self, job: Job) -> bool:
        """The folder that holds the job's output, in the desktop's file manager."""
        if job.output is None:
            return False
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(job.output).parent)))

    @Slot()
    def _refresh_queued(self) -> None:
        for row in self.rows.values():
            if row.job.state is JobState.QUEUED:
                row.refresh()

    @Slot()
    def _tick(self) -> None:
        for row in self.rows.values():
            if not row.job.state.ended:
                row.refresh()

    @Slot()
    def _on_log(self) -> None:
        item = self.list.currentItem()
        if item is not None and self.list.itemWidget(item) is not None:
            self._show_log(item)

    def _show_log(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None = None) -> None:
        row = self.list.itemWidget(item) if item is not None else None
        self.log.setPlainText("\n".join(row.job.log_lines) if isinstance(row, JobRow) else "")

    @Slot()
    def _keep_recent(self) -> None:
        """Drop the oldest finished rows beyond KEEP_FINISHED: a long session (a Refresh each adds a finished scan)
        grew by a row of widgets and its job's log a cycle, for good (issue 28: 43 KB a cycle, 800 cycles)."""
        finished = 0
        for i in range(self.list.count()):  # newest first
            row = self.list.itemWidget(self.list.item(i))
            if isinstance(row, JobRow) and row.job.state.ended:
                finished += 1
                if finished > KEEP_FINISHED:
                    self._drop_row(i, row)
                    return  # one ends at a time, so at most one is over

    def _drop_row(self, index: int, row: JobRow) -> None:
        self.rows.pop(id(row.job), None)
        self.manager.forget(row.job)
        item = self.list.takeItem(index)
        row.deleteLater()
        del item

    @Slot()
    def clear_finished(self) -> None:
        for i in reversed(range(self.list.count())):
            row = self.list.itemWidget(self.list.item(i))
            if isinstance(row, JobRow) and row.job.state.ended:
                self._drop_row(i, row)
        self.log.clear()
