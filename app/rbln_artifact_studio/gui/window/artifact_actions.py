"""What a user does to the selected artifacts, as actions for the menu bar, the toolbar and the table's context menu.

Resize, Resize to a Copy, Plan Co-location, Serving check, Show in File Manager, Copy Path, Copy the
rbln-studio-cli command, Move to Trash (confirmed, refused while a job uses the artifact) and Compare. Enter
opens the details, Delete moves to the Trash; both only while the table has the focus, so typing in a field
never triggers them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QUrl, Slot
from PySide6.QtGui import QAction, QActionEvent, QContextMenuEvent, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QMessageBox, QSplitter, QToolBar, QToolButton, QWidget

from rbln_artifact_studio.core.errors import NOTHING_CHANGED, StudioError
from rbln_artifact_studio.core.location import Location, is_local, parse_location
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.models import operations
from rbln_artifact_studio.gui.models.artifact_model import PATH_ROLE, ArtifactTableModel, is_under
from rbln_artifact_studio.gui.models.jobs import Job, JobManager
from rbln_artifact_studio.gui.models.row_sources import RowSources
from rbln_artifact_studio.gui.models.workspace import Workspace
from rbln_artifact_studio.gui.widgets.viewport import viewport_of
from rbln_artifact_studio.gui.window.artifact_browser import ArtifactBrowser
from rbln_artifact_studio.gui.window.detail_panel import DetailPanel
from rbln_artifact_studio.gui.window.download_action import DownloadAction
from rbln_artifact_studio.gui.window.selection_details import Selection
from rbln_artifact_studio.places.dispatch import capabilities

if TYPE_CHECKING:  # types only: the artifact reader and the dialogs load after the window's first paint
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog

Shortcut = QKeySequence | QKeySequence.StandardKey | Qt.Key | str | None


class ButtonFollowsAction(QObject):
    """Keeps a toolbar button in step with its action without Qt's own update, which leaks.

    On every change of its action (enabled, tooltip) Qt 6.11's QToolButton calls setDefaultAction again, and each
    call connects the action's changed() once more: the selection enables and disables the toolbar's actions twice
    a Refresh, so a long session piled up connections (about 144 bytes each, and one more slot run per change).
    This filter takes the change event and copies what setDefaultAction would.
    """

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ActionChanged
            and isinstance(watched, QToolButton)
            and isinstance(event, QActionEvent)
            and event.action() is watched.defaultAction()
        ):
            action = event.action()
            watched.setText(action.iconText())
            watched.setIcon(action.icon())
            watched.setToolTip(action.toolTip())
            watched.setStatusTip(action.statusTip())
            watched.setWhatsThis(action.whatsThis())
            watched.setCheckable(action.isCheckable())
            watched.setChecked(action.isChecked())
            watched.setEnabled(action.isEnabled())
            return True
        return False


def on_this_computer(path: str) -> bool:
    """Whether a row's artifact is files on this computer, as its kind of place says (its capabilities)."""
    try:
        return capabilities(parse_location(path)).on_this_computer
    except StudioError:
        return False  # a place this build cannot reach is not here either


def _absolute(path: str | Path) -> str:
    """A folder here made absolute; a place elsewhere (a server, a bucket) as it is."""
    return os.path.abspath(path) if is_local(path) else str(path)


class BusyPaths(QObject):
    """Which artifact folders running jobs read or write (a resize's source and copy, a compile's output); the
    places they write are told to the row sources, whose rows are stale until read again after the job."""

    def __init__(self, parent: QObject | None = None, sources: RowSources | None = None) -> None:
        super().__init__(parent)
        self.sources = sources
        self._jobs: dict[Job, tuple[str, ...]] = {}

    def track(self, job: Job, *paths: str | Path, writes: tuple[str | Path, ...] = ()) -> None:
        """job uses paths and writes at writes (both busy until it ends)."""
        if job.state.ended:
            return
        self._jobs[job] = tuple(_absolute(p) for p in (*paths, *writes))
        job.finished.connect(lambda j=job: self._jobs.pop(j, None))
        if writes and self.sources is not None:
            self.sources.writing(job, [_absolute(p) for p in writes])

    def job_using(self, path: str) -> Job | None:
        """A running job whose folders are this one, inside it, or hold it."""
        path = _absolute(path)
        for job, used in self._jobs.items():
            for p in used:
                if is_under(p, path) or is_under(path, p):
                    return job
        return None


@dataclass(frozen=True)
class WindowActions:
    """The main window's own actions that the toolbar and menus show beside these; the selection enables all but
    compile."""

    compile: QAction
    resize: QAction
    plan: QAction
    explore: QAction
    copy_path: QAction


class ArtifactActions(QObject):
    """The actions on the selection; the main window puts them in its menus, toolbar and the table's context menu."""

    def __init__(
        self,
        window: QMainWindow,
        *,
        browser: ArtifactBrowser,
        selection: Selection,
        actions: WindowActions,
        open_resize: Callable[[Artifact], ResizeDialog],
        detail: DetailPanel,
        splitter: QSplitter,
        jobs: JobManager,
        model: ArtifactTableModel,
        workspace: Workspace,
        settings: Settings,
        busy: BusyPaths,
        offer: Callable[[Location], None],
        open_compare: Callable[[str, str], QWidget] | None = None,
    ) -> None:
        """window: owns the actions and parents the boxes; open_resize: the resize dialog for an artifact; splitter:
        the table and the detail panel, which Open Details brings into view; busy: the folders jobs use; offer: shows
        a written result (a download's) in the window; open_compare: the compare dialog for two paths (None: Compare
        is not offered)."""
        super().__init__(window)
        self.window, self.browser, self.selection, self.actions = window, browser, selection, actions
        self.open_resize, self.open_compare_dialog = open_resize, open_compare
        self.detail, self.splitter = detail, splitter
        self.jobs, self.model, self.workspace, self.settings, self.busy = jobs, model, workspace, settings, busy
        self._base_tips: dict[QAction, str] = {}  # the KV actions' own tooltips, before a reason is added
        self._create_actions()
        self.download = DownloadAction(window, jobs, settings, browser.selected_paths, offer)
        self._bind_keys()
        self.toolbar = self._build_toolbar()
        self.toolbar_action = self.toolbar.toggleViewAction()
        self.toolbar_action.setObjectName("actionShowToolbar")
        self.toolbar_action.setText("&Toolbar")
        # The menu key and Shift+F10 open the menu at the current row; a right-click at the row clicked.
        view = browser.view
        view.installEventFilter(self)
        viewport_of(view).installEventFilter(self)

    # ---- construction, step by step -----------------------------------------------------------------

    def _action(self, name: str, text: str, slot: object, shortcut: Shortcut = None) -> QAction:
        a = QAction(text, self.window)
        a.setObjectName(name)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        a.triggered.connect(slot)
        return a

    def _create_actions(self) -> None:
        action = self._action
        self.resize_copy = action("actionResizeCopy", "Resize to a &Copy…", self.open_resize_copy, "Ctrl+Shift+R")
        self.serving = action("actionServing", "&Serving Check", self.show_serving, "Ctrl+Shift+S")
        self.show_in_folder = action("actionShowInFolder", "Show in &File Manager", self.show_in_file_manager)
        self.copy_command = action("actionCopyCommand", "Copy rbln-studio-cli &Command", self.copy_cli_command)
        self.trash = action("actionTrash", "Move to &Trash…", self.move_to_trash, QKeySequence.StandardKey.Delete)
        self.compare = action("actionCompare", "Co&mpare…", self.open_compare, "Ctrl+Shift+M")
        self.open_details = action("actionOpenDetails", "Open &Details", self.show_details, Qt.Key.Key_Return)
        self.open_details.setShortcuts([QKeySequence(Qt.Key.Key_Return), QKeySequence(Qt.Key.Key_Enter)])

    def _bind_keys(self) -> None:
        """Delete and Enter only while the table has the focus (a text field needs them); the others window-wide."""
        view = self.browser.view
        for a in (self.trash, self.open_details):
            a.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            view.addAction(a)
        for a in (self.resize_copy, self.serving, self.compare):
            self.window.addAction(a)

    def _build_toolbar(self) -> QToolBar:
        w = self.actions
        toolbar = QToolBar("Artifact toolbar", self.window)
        toolbar.setObjectName("artifactToolbar")
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for a in (
            w.compile,
            w.resize,
            self.resize_copy,
            w.plan,
            w.explore,
            self.compare,
            self.serving,
            self.trash,
        ):
            toolbar.addAction(a)
        follow = ButtonFollowsAction(toolbar)
        for a in toolbar.actions():
            button = toolbar.widgetForAction(a)
            if button is not None:
                button.installEventFilter(follow)
        return toolbar

    # ---- menus and the state of the actions ----------------------------------------------------------

    def menu_actions(self) -> list[QAction | None]:
        """The context menu, top to bottom (None: a separator); the Artifact menu shows the same."""
        w = self.actions
        return [
            self.open_details,
            w.resize,
            self.resize_copy,
            w.plan,
            self.compare,
            self.serving,
            w.explore,
            None,
            self.show_in_folder,
            self.download.action,
            w.copy_path,
            self.copy_command,
            None,
            self.trash,
        ]

    def fill_menu(self, menu: QMenu) -> None:
        for a in self.menu_actions():
            if a is None:
                menu.addSeparator()
            else:
                menu.addAction(a)

    @Slot()
    def update(self) -> None:
        """Enable what the selection allows (when the selection or its details change); the KV actions' tooltips
        say why they are off."""
        paths = self.browser.selected_paths()
        one = self.selection.artifact is not None
        w = self.actions
        w.resize.setEnabled(one)
        w.explore.setEnabled(one)
        w.plan.setEnabled(len(paths) >= 2)
        w.copy_path.setEnabled(bool(self.browser.current_path()))
        self.resize_copy.setEnabled(one)
        self.serving.setEnabled(one)
        self.open_details.setEnabled(bool(paths))
        for a in (self.show_in_folder, self.copy_command, self.trash):
            a.setEnabled(bool(paths))
        self.compare.setEnabled(len(paths) == 2 and self.open_compare_dialog is not None)
        self.download.update()
        # A model without a resizable KV cache: the KV actions stay off and their tooltips say why.
        reason = self.selection.no_resize_reason if self.selection.artifact is None else None
        for action in (w.resize, w.explore, self.resize_copy, self.serving):
            base = self._base_tips.setdefault(action, action.toolTip())
            tip = f"{base}: not offered. {reason}" if reason else base
            action.setToolTip(tip)
            action.setStatusTip(tip)

    # ---- the actions ---------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ContextMenu and isinstance(event, QContextMenuEvent):
            view = self.browser.view
            if event.reason() == QContextMenuEvent.Reason.Mouse and isinstance(watched, QWidget):
                self.show_context_menu(view.viewport().mapFrom(watched, event.pos()))
            else:
                rect = view.visualRect(view.currentIndex())
                self.show_context_menu(rect.center() if rect.isValid() else QPoint(0, 0), select=False)
            return True
        return False

    def show_context_menu(self, pos: QPoint, select: bool = True) -> QMenu:
        """The menu at pos (viewport coordinates); with select, a click on an unselected row selects that row first
        (as file managers do); from the keyboard the selection stays as it is."""
        view = self.browser.view
        index = view.indexAt(pos)
        if select and index.isValid() and not view.selectionModel().isRowSelected(index.row(), index.parent()):
            # That row alone: selectRow would add to the selection while the platform still reports a Ctrl or
            # Shift held from an earlier click.
            path = index.data(PATH_ROLE)
            if path:
                self.browser.select_path(path)
        menu = QMenu(view)
        menu.setObjectName("artifactContextMenu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.fill_menu(menu)
        menu.popup(view.viewport().mapToGlobal(pos))
        return menu

    @Slot()
    def show_details(self) -> None:
        """Bring the detail panel into view (the splitter may have collapsed it) and give it the focus."""
        sizes = self.splitter.sizes()
        if len(sizes) == 2 and sizes[1] == 0:
            self.splitter.setSizes([max(sizes[0] - 480, 200), 480])
        self.detail.setFocus(Qt.FocusReason.OtherFocusReason)

    @Slot()
    def open_resize_copy(self) -> QWidget | None:
        """The resize dialog on 'to a copy', the focus in the count."""
        artifact = self.selection.artifact
        if artifact is None:
            return None
        dialog = self.open_resize(artifact)
        dialog.mode_copy.setChecked(True)
        dialog.by_count.setChecked(True)
        dialog.target_spin.setFocus(Qt.FocusReason.OtherFocusReason)
        dialog.target_spin.selectAll()
        return dialog

    @Slot()
    def show_serving(self) -> None:
        """What vllm-rbln sets for the current artifact: the detail panel's serving section, scrolled into view."""
        self.show_details()
        detail = self.detail
        detail.ensureWidgetVisible(detail.prepare().serving)

    @Slot()
    def show_in_file_manager(self) -> bool:
        """Open the folder that holds the artifact in the desktop's file manager."""
        paths = self.browser.selected_paths()
        if not paths:
            return False
        if not on_this_computer(paths[0]):  # a server's folder or a bucket's prefix: no folder here to show
            self.window.statusBar().showMessage(
                f"{paths[0]} is not on this computer: there is no folder to show.", 10_000
            )
            return False
        opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(paths[0]).parent)))
        if not opened:
            self.window.statusBar().showMessage("No file manager is set up to open folders on this desktop.", 10_000)
        return opened

    @Slot()
    def copy_cli_command(self) -> str:
        paths = self.browser.selected_paths()
        if not paths:
            return ""
        # deferred: core.display.commandline loads the compiler (pydantic, ~90 ms): when a command is copied only
        from rbln_artifact_studio.core.display.commandline import inspect_argv, shell_text

        text = shell_text(inspect_argv(paths))
        QGuiApplication.clipboard().setText(text)
        self.window.statusBar().showMessage(f"Copied: {text}", 5_000)
        return text

    @Slot()
    def open_compare(self) -> QWidget | None:
        paths = self.browser.selected_paths()
        if len(paths) != 2 or self.open_compare_dialog is None:
            return None
        return self.open_compare_dialog(paths[0], paths[1])

    @Slot()
    def move_to_trash(self) -> QMessageBox | None:
        """Ask first (with the size it frees); refuse while a job uses an artifact; then trash in a job."""
        paths = self.browser.selected_paths()
        if not paths:
            return None
        elsewhere = [p for p in paths if not on_this_computer(p)]
        if elsewhere:  # the Trash is this computer's: a server's or a bucket's artifact is deleted with its tools
            box = self._box(
                "trashRefused",
                QMessageBox.Icon.Warning,
                "Not on this computer",
                f"{elsewhere[0]} is not on this computer, so it cannot go to the Trash here; delete it where it "
                f"lives (on the server, or with the bucket's tools). {NOTHING_CHANGED}",
                QMessageBox.StandardButton.Ok,
            )
            box.open()
            return box
        for path in paths:
            job = self.busy.job_using(path)
            if job is not None:
                box = self._box(
                    "trashRefused",
                    QMessageBox.Icon.Warning,
                    "Artifact in use",
                    f"{Path(path).name} is in use by the job “{job.title}”. Wait for it to finish or cancel it "
                    f"(View ▸ Jobs, Ctrl+J), then try again. {NOTHING_CHANGED}",
                    QMessageBox.StandardButton.Ok,
                )
                box.open()
                return box
        sizes = [self.model.summary(r).size_on_disk for p in paths if (r := self.model.row_of(p)) is not None]
        total = sum(sizes)
        names = ", ".join(Path(p).name for p in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        box = self._box(
            "trashConfirm",
            QMessageBox.Icon.Question,
            "Move to Trash",
            f"Move {names} to the Trash? This frees {format_bytes(total)} ({total:,} bytes) once the Trash is "
            "emptied; until then it can be restored from the Trash.",
            QMessageBox.StandardButton.Cancel,
        )
        move = box.addButton("Move to Trash", QMessageBox.ButtonRole.DestructiveRole)
        move.setObjectName("trashConfirmButton")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.buttonClicked.connect(lambda button: self._trash(paths, total) if button is move else None)
        box.open()
        return box

    def _box(
        self, name: str, icon: QMessageBox.Icon, title: str, text: str, buttons: QMessageBox.StandardButton
    ) -> QMessageBox:
        box = QMessageBox(icon, title, text, buttons, self.window)
        box.setObjectName(name)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        return box

    def _trash(self, paths: list[str], total: int) -> Job:
        job = operations.move_to_trash(self.jobs, paths)
        self.busy.track(job, writes=tuple(paths))  # read again when it ends: the rows of what moved go
        job.succeeded.connect(
            lambda _result: self.window.statusBar().showMessage(
                f"Moved {len(paths)} artifact(s) to the Trash; {format_bytes(total)} freed once it is emptied.", 10_000
            )
        )
        return job
