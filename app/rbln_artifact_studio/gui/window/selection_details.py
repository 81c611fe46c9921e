"""The selected artifact: reads its details in a job, shows them in the detail panel, says when the actions it
allows change."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QModelIndex, QObject, Signal, Slot

from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.models import operations
from rbln_artifact_studio.gui.models.artifact_model import STALE_ROLES, ArtifactTableModel
from rbln_artifact_studio.gui.models.jobs import Job, JobFailure, JobManager
from rbln_artifact_studio.gui.models.operations import NotResizable
from rbln_artifact_studio.gui.models.workspace import Workspace
from rbln_artifact_studio.gui.window.artifact_browser import ArtifactBrowser
from rbln_artifact_studio.gui.window.detail_panel import DetailPanel

if TYPE_CHECKING:  # types only: they load in the worker that reads the details
    from rbln_artifact_studio.core.fleet.artifact import Artifact


class Selection(Protocol):
    """What the table has selected, as the window's helpers ask it (SelectionDetails is one)."""

    @property
    def artifact(self) -> Artifact | None:
        """The artifact read behind the current row (None while it loads, or for a model without KV cache)."""
        ...

    def selected_paths(self) -> list[str]:
        """The selected rows' paths, in the table's order."""
        ...

    @property
    def no_resize_reason(self) -> str | None:
        """Why the selected model offers no resize (it has no KV cache), else None."""
        ...


NOTHING_SELECTED = "Select an artifact to see its KV cache and DRAM breakdown."


class SelectionDetails(QObject):
    """The artifact behind the table's current row, read in a job; None while it loads or offers no resize."""

    changed = Signal()  # the selection, the artifact read behind it or its reason changed: the actions follow

    def __init__(
        self,
        browser: ArtifactBrowser,
        model: ArtifactTableModel,
        workspace: Workspace,
        detail: DetailPanel,
        jobs: JobManager,
        settings: Settings,
        parent: QObject | None = None,
    ) -> None:
        """browser: the table whose current row is followed; detail: where the artifact read is shown."""
        super().__init__(parent)
        self.browser, self.model, self.workspace, self.detail = browser, model, workspace, detail
        self.jobs, self.settings = jobs, settings
        self.artifact: Artifact | None = None
        self.no_resize_reason: str | None = None  # why the selected model offers no resize (no KV cache)
        self.select_when_shown: str | None = None  # a path just written: select it once the table has its row
        self._detail_job: Job | None = None
        self._user_moved = False  # the user filtered, scrolled or clicked since the folder opened: no auto-select

    def connect_to(self) -> None:
        """Follow the table's current row, rows changed on disk, and the scans (called once the actions exist)."""
        self.browser.currentPathChanged.connect(self._on_current_path)
        self.model.dataChanged.connect(self._on_rows_changed)
        self.model.rowsInserted.connect(self._on_rows_inserted)
        self.workspace.rootChanged.connect(self._on_root_changed)
        self.workspace.scanFinished.connect(self._select_first_row)
        # The first row is shown once every row is read, not after the full checks (seconds on a large fleet).
        self.workspace.rowsRead.connect(self._select_first_row)
        self.browser.view.selectionModel().selectionChanged.connect(self._on_selection_changed)
        # What the user does to the table during a scan is theirs: the first row is not selected over it.
        self.browser.filter_edit.textEdited.connect(self._on_user_moved)
        self.browser.view.verticalScrollBar().actionTriggered.connect(self._on_user_moved)
        self.browser.view.pressed.connect(self._on_user_moved)

    def selected_paths(self) -> list[str]:
        """The selected rows' paths, in the table's order."""
        return self.browser.selected_paths()

    @Slot()
    def _on_selection_changed(self) -> None:
        self.changed.emit()

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
        self.detail.show_message(NOTHING_SELECTED)
        self.artifact = None
        self.changed.emit()

    @Slot(str)
    def _on_current_path(self, path: str) -> None:
        self.artifact, self.no_resize_reason = None, None
        self.changed.emit()
        if not path:
            self._detail_job = None
            self.detail.show_message(NOTHING_SELECTED)
            return
        self.detail.show_loading(Path(path).name)
        self._load_details(path)

    def _load_details(self, path: str) -> None:
        job = self._detail_job = operations.read_artifact(self.jobs, path, self.settings.toolchain().settings())
        job.succeeded.connect(self._on_details)
        job.failed.connect(self._on_details_failed)

    @Slot(object)
    def _on_details(self, read: Artifact | NotResizable) -> None:
        shown = read.description if isinstance(read, NotResizable) else read
        if self.sender() is not self._detail_job or str(shown.where) != self.browser.current_path():
            return  # the selection moved on while it was read
        self._detail_job = None
        if isinstance(read, NotResizable):  # no resizable KV cache: describe it, offer no resize
            self.artifact, self.no_resize_reason = None, read.description.kv_note
            self.detail.show_description(read.description)
        else:
            self.artifact, self.no_resize_reason = read, None
            self.detail.show_artifact(read)
        row = self.model.row_of(str(shown.path))
        if row is not None:  # what the scan found (no disk access here): size on disk, when it last changed
            self.detail.show_on_disk(self.model.summary(row))
        self.changed.emit()

    @Slot(object)
    def _on_details_failed(self, failure: JobFailure) -> None:
        if self.sender() is not self._detail_job:
            return
        self._detail_job = None
        self.detail.show_error(Path(self.browser.current_path()).name, failure.reason)

    @Slot(QModelIndex, QModelIndex, list)
    def _on_rows_changed(self, top: QModelIndex, bottom: QModelIndex, roles: list[int] | None = None) -> None:
        if roles == STALE_ROLES:
            return  # only marked stale or read again unchanged: the artifact behind it is read once its row is
        current = self.browser.current_path()
        row = self.model.row_of(current) if current else None
        if row is not None and top.row() <= row <= bottom.row():
            self._load_details(current)  # changed on disk (e.g. resized from a terminal): read it again

    @Slot()
    def _on_rows_inserted(self) -> None:
        wanted = self.select_when_shown
        if wanted and self.browser.select_path(wanted):
            self.select_when_shown = None

    @Slot()
    def _select_first_row(self) -> None:
        if self._user_moved or self.browser.current_path() or self.select_when_shown is not None:
            return
        if self.model.rowCount():
            self.browser.view.selectRow(0)
