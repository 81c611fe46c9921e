"""The selected artifact: reads its details in a job, shows them in the detail panel, keeps the actions in step."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QModelIndex, QObject, Slot
from PySide6.QtGui import QAction

from rbln_artifact_studio.gui.models.jobs import Job, JobFailure

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.core.model.kinds import ModelDescription
    from rbln_artifact_studio.gui.window.main_window import MainWindow


class Selection(Protocol):
    """What the table has selected, as the window's helpers ask it (SelectionDetails is one)."""

    @property
    def artifact(self) -> Artifact | None:
        """The artifact read behind the current row (None while it loads, or for a model without KV cache)."""
        ...

    def selected_paths(self) -> list[str]:
        """The selected rows' paths, in the table's order."""
        ...


NOTHING_SELECTED = "Select an artifact to see its KV cache and DRAM breakdown."


class SelectionDetails(QObject):
    """The artifact behind the table's current row, read in a job; None while it loads or offers no resize."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.artifact: Artifact | None = None
        self.no_resize_reason: str | None = None  # why the selected model offers no resize (no KV cache)
        self.select_when_shown: str | None = None  # a path just written: select it once the table has its row
        self._base_tips: dict[QAction, str] = {}  # the KV actions' own tooltips, before a reason is added
        self._detail_job: Job | None = None
        self._user_moved = False  # the user filtered, scrolled or clicked since the folder opened: no auto-select

    def connect_to(self) -> None:
        """Follow the table's current row, rows changed on disk, and the scans (called once the actions exist)."""
        w = self.window
        w.browser.currentPathChanged.connect(self._on_current_path)
        w.model.dataChanged.connect(self._on_rows_changed)
        w.model.rowsInserted.connect(self._on_rows_inserted)
        w.workspace.rootChanged.connect(self._on_root_changed)
        w.workspace.scanFinished.connect(self._select_first_row)
        # The first row is shown once every row is read, not after the full checks (seconds on a large fleet).
        w.workspace.rowsRead.connect(self._select_first_row)
        w.browser.view.selectionModel().selectionChanged.connect(self.update_actions)
        # What the user does to the table during a scan is theirs: the first row is not selected over it.
        w.browser.filter_edit.textEdited.connect(self._on_user_moved)
        w.browser.view.verticalScrollBar().actionTriggered.connect(self._on_user_moved)
        w.browser.view.pressed.connect(self._on_user_moved)

    def selected_paths(self) -> list[str]:
        """The selected rows' paths, in the table's order."""
        return self.window.browser.selected_paths()

    @Slot()
    def _on_user_moved(self) -> None:
        self._user_moved = True

    def select_once_shown(self, path: str) -> None:
        """Select path as soon as the table has its row (a compile's or resize's output)."""
        self.select_when_shown = path
        self._on_rows_inserted()

    @Slot(str)
    def _on_root_changed(self, _root: str) -> None:
        self._user_moved = False
        self.window.detail.show_message(NOTHING_SELECTED)
        self.artifact = None
        self.update_actions()

    @Slot(str)
    def _on_current_path(self, path: str) -> None:
        self.artifact, self.no_resize_reason = None, None
        self.update_actions()
        if not path:
            self._detail_job = None
            self.window.detail.show_message(NOTHING_SELECTED)
            return
        self.window.detail.show_loading(Path(path).name)
        self._load_details(path)

    def _load_details(self, path: str) -> None:
        from rbln_artifact_studio.gui.models import operations

        w = self.window
        job = self._detail_job = operations.read_artifact(w.jobs, path, w.settings.toolchain().settings())
        job.succeeded.connect(self._on_details)
        job.failed.connect(self._on_details_failed)

    @Slot(object)
    def _on_details(self, artifact: Artifact | ModelDescription) -> None:
        from rbln_artifact_studio.core.model.kinds import ModelDescription

        w = self.window
        if self.sender() is not self._detail_job or str(artifact.where) != w.browser.current_path():
            return  # the selection moved on while it was read
        self._detail_job = None
        if isinstance(artifact, ModelDescription):  # no resizable KV cache: describe it, offer no resize
            self.artifact, self.no_resize_reason = None, artifact.kv_note
            w.detail.show_description(artifact)
        else:
            self.artifact, self.no_resize_reason = artifact, None
            w.detail.show_artifact(artifact)
        row = w.model.row_of(str(artifact.path))
        if row is not None:  # what the scan found (no disk access here): size on disk, when it last changed
            w.detail.show_on_disk(w.model.summary(row))
        self.update_actions()

    @Slot(object)
    def _on_details_failed(self, failure: JobFailure) -> None:
        if self.sender() is not self._detail_job:
            return
        self._detail_job = None
        self.window.detail.show_error(Path(self.window.browser.current_path()).name, failure.reason)

    @Slot(QModelIndex, QModelIndex)
    def _on_rows_changed(self, top: QModelIndex, bottom: QModelIndex) -> None:
        current = self.window.browser.current_path()
        row = self.window.model.row_of(current) if current else None
        if row is not None and top.row() <= row <= bottom.row():
            self._load_details(current)  # changed on disk (e.g. resized from a terminal): read it again

    @Slot()
    def _on_rows_inserted(self) -> None:
        wanted = self.select_when_shown
        if wanted and self.window.browser.select_path(wanted):
            self.select_when_shown = None

    @Slot()
    def _select_first_row(self) -> None:
        w = self.window
        if self._user_moved or w.browser.current_path() or self.select_when_shown is not None:
            return
        if w.model.rowCount():
            w.browser.view.selectRow(0)

    @Slot()
    def update_actions(self) -> None:
        """Enable what the selection allows; the KV actions' tooltips say why they are off."""
        w = self.window
        w.action_resize.setEnabled(self.artifact is not None)
        w.action_explore.setEnabled(self.artifact is not None)
        w.action_plan.setEnabled(len(w.browser.selected_paths()) >= 2)
        w.action_copy_path.setEnabled(bool(w.browser.current_path()))
        w.artifact_actions.update()
        # A model without a resizable KV cache: the KV actions stay off and their tooltips say why.
        reason = self.no_resize_reason if self.artifact is None else None
        kv_actions = (w.action_resize, w.action_explore, w.artifact_actions.resize_copy, w.artifact_actions.serving)
        for action in kv_actions:
            base = self._base_tips.setdefault(action, action.toolTip())
            tip = f"{base}: not offered. {reason}" if reason else base
            action.setToolTip(tip)
            action.setStatusTip(tip)
